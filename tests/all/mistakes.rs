//! A corpus of realistic model mistakes, each through the real component on
//! a real file: the file stays byte for byte as it was, and the answer names
//! the cause, the fix and the place in one round trip.

mod artefacts;
mod long;
mod paths;
mod slips;
mod spelt;
mod streamed;

use crate::{Workspace, call, code, ok};
use serde_json::{Value, json};

/// The fixture files, by name (`tests/fixtures/mistakes/`). `install.ps1` is
/// given CRLF line endings and `legacy.txt` bare CRs when written.
const FIXTURES: &[(&str, &[u8])] = &[
    (
        "inventory.rs",
        include_bytes!("../fixtures/mistakes/inventory.rs"),
    ),
    (
        "server.go",
        include_bytes!("../fixtures/mistakes/server.go"),
    ),
    (
        "report.py",
        include_bytes!("../fixtures/mistakes/report.py"),
    ),
    ("ring.c", include_bytes!("../fixtures/mistakes/ring.c")),
    ("cart.js", include_bytes!("../fixtures/mistakes/cart.js")),
    (
        "deploy.yaml",
        include_bytes!("../fixtures/mistakes/deploy.yaml"),
    ),
    ("NOTES.md", include_bytes!("../fixtures/mistakes/NOTES.md")),
    ("Makefile", include_bytes!("../fixtures/mistakes/Makefile")),
    (
        "settings.toml",
        include_bytes!("../fixtures/mistakes/settings.toml"),
    ),
    (
        "install.ps1",
        include_bytes!("../fixtures/mistakes/install.ps1"),
    ),
    ("table.rs", include_bytes!("../fixtures/mistakes/table.rs")),
    ("data.js", include_bytes!("../fixtures/mistakes/data.js")),
    ("legacy.txt", b"line one\nline two\nline three\n"),
    ("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00"),
];

pub(crate) fn fixture(name: &str) -> Vec<u8> {
    let (_, bytes) = FIXTURES
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no fixture {name}"));
    let text = String::from_utf8_lossy(bytes);
    match name {
        "install.ps1" => text.replace('\n', "\r\n").into_bytes(),
        "legacy.txt" => text.replace('\n', "\r").into_bytes(),
        _ => bytes.to_vec(),
    }
}

/// One mistake: a call on a fixture and what the answer must say.
pub(crate) struct Case {
    pub(crate) name: &'static str,
    /// The fixture the call is about (read first when `read` is set).
    pub(crate) file: &'static str,
    pub(crate) read: bool,
    pub(crate) tool: &'static str,
    pub(crate) args: fn() -> Value,
    pub(crate) code: &'static str,
    /// Phrases the answer must contain: the cause, the fix, the place.
    cause: &'static str,
    fix: &'static str,
    place: &'static [&'static str],
}

const COPY: &str = "Copy old_string from these lines exactly";

fn edit(file: &str, old: &str, new: &str) -> Value {
    json!({"file_path": file, "old_string": old, "new_string": new})
}

/// The corpus. Line numbers refer to the fixtures as `read` numbers them.
pub(crate) const CASES: &[Case] = &[
    // --- What the file cannot hold ---------------------------------------
    Case {
        name: "rust: a placeholder comment for the lines in between",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "    pub fn new(sku: &str, name: &str, price_cents: u64) -> Self {\n        // ... existing code ...\n    }",
                "    pub fn new(sku: &str, name: &str, price_cents: u64) -> Self {\n        todo!()\n    }",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "`// ... existing code ...`, is a placeholder for lines it leaves out",
        fix: "copy the lines it stands for from read's output, or make one edit before it and one after",
        place: &[
            "the lines before it match at line 16",
            "\n16:     pub fn new(sku: &str, name: &str, price_cents: u64) -> Self {",
        ],
    },
    Case {
        name: "rust: old_string in a markdown fence",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "```rust\n    pub sku: String,\n    pub name: String,\n```",
                "    pub sku: String,\n    pub title: String,",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "old_string is wrapped in a markdown fence (```rust … ```)",
        fix: "send only the lines between the fences",
        place: &[],
    },
    // --- Rust, 4-space indentation -------------------------------------
    Case {
        name: "rust: tabs where the file has spaces",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "\tpub fn add(&mut self, item: Item) {\n\t\tself.items.insert(item.sku.clone(), item);\n\t}",
                "\tpub fn add(&mut self, item: Item) {\n\t\tself.items.insert(item.sku.clone(), item);\n\t\tself.dirty = true;\n\t}",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "the file indents with spaces, old_string with tabs",
        fix: COPY,
        place: &[
            "lines 44-46",
            "\n44:     pub fn add(&mut self, item: Item) {",
        ],
    },
    Case {
        name: "rust: 2-space indentation for 4",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "  pub fn total_value(&self) -> u64 {\n    self.items.values().map(|i| i.stock_value()).sum()\n  }",
                "  pub fn total_value(&self) -> u64 {\n    0\n  }",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "the file indents by 4 spaces per level, old_string by 2",
        fix: COPY,
        place: &["lines 57-59", "\n58:         self.items"],
    },
    Case {
        name: "rust: common indentation stripped from a block",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "let item = self\n    .items\n    .get_mut(sku)",
                "let item = self.items.get_mut(sku)",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "old_string is indented 8 spaces less than the file",
        fix: COPY,
        place: &["lines 49-51", "\n50:             .items"],
    },
    Case {
        name: "rust: one misremembered token",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "self.items.values().map(|item| item.stock_value()).sum()",
                "self.items.values().map(Item::stock_value).sum()",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "line 58 has `().map(|i| i.stock_value` where old_string has `().map(|item| item.stock_value`",
        fix: COPY,
        place: &["the nearest text is line 58", "\n58: "],
    },
    Case {
        name: "rust: misremembered call in a multi-line block",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "    pub fn restock(&mut self, sku: &str, amount: u32) -> Result<u32, String> {\n        let item = self\n            .items\n            .get(sku)\n            .ok_or_else(|| format!(\"unknown SKU {sku}\"))?;",
                "    pub fn restock(&mut self, sku: &str, amount: u32) -> Result<u32, String> {\n        let item = self.find(sku)?;",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "line 51 has `.get_mut(sku)` where old_string has `.get(sku)`",
        fix: COPY,
        place: &["lines 48-52", "\n51:             .get_mut(sku)"],
    },
    Case {
        name: "rust: read's prefixes on every line",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "57:     pub fn total_value(&self) -> u64 {\n58:         self.items.values().map(|i| i.stock_value()).sum()\n59:     }",
                "    pub fn total_value(&self) -> u64 {\n        0\n    }",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "line-number prefixes on every line",
        fix: "remove the `N: ` prefixes",
        place: &["matches lines 57-59"],
    },
    Case {
        name: "rust: read's prefix on the first line only",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "45:         self.items.insert(item.sku.clone(), item);\n    }",
                "        self.items.insert(item.sku.clone(), item);\n        self.dirty = true;\n    }",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "on its first line only",
        fix: "remove the `N: ` prefix",
        place: &["matches lines 45-46", "\n45: "],
    },
    Case {
        name: "rust: the edit was already applied",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "            quantity: 1,",
                "            quantity: 0,",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "looks already applied",
        fix: "Check the lines below",
        place: &[
            "already present at line 21",
            "\n21:             quantity: 0,",
        ],
    },
    Case {
        name: "rust: \\n written as two characters",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "    pub fn add(&mut self, item: Item) {\\n        self.items.insert(item.sku.clone(), item);\\n    }",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "literal escape sequences",
        fix: "use real line breaks",
        place: &["matches lines 44-46"],
    },
    Case {
        name: "rust: nothing like it in the file",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "fn checkout(cart: &Cart) -> Receipt {",
                "fn checkout(cart: &Cart) -> Result<Receipt> {",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "nothing similar",
        fix: "Read the file again",
        place: &["the file has 71 lines"],
    },
    Case {
        name: "rust: a line of the block forgotten",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "        let item = self\n            .get_mut(sku)\n            .ok_or_else(|| format!(\"unknown SKU {sku}\"))?;",
                "        let item = self.lookup(sku)?;",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "the file has line 50 (`.items`) that old_string lacks",
        fix: COPY,
        place: &["lines 49-52"],
    },
    Case {
        name: "rust: a line that is not there",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "    pub fn total_value(&self) -> u64 {\n        debug_assert!(!self.items.is_empty());\n        self.items.values().map(|i| i.stock_value()).sum()\n    }",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "old_string has a line the file lacks after line 57: `debug_assert!(!self.items.is_empty());`",
        fix: COPY,
        place: &["lines 57-59"],
    },
    Case {
        name: "rust: a doc comment misquoted",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "    /// Items whose quantity is below `threshold`, sorted by SKU.",
                "    /// Items below `threshold`.",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "line 61 has `fell` where old_string has `is`",
        fix: COPY,
        place: &["\n61:     /// Items whose quantity fell below"],
    },
    // --- Go, tabs ------------------------------------------------------------
    Case {
        name: "go: spaces where gofmt put tabs",
        file: "server.go",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "server.go",
                "func (s *Server) health(w http.ResponseWriter, r *http.Request) {\n    w.WriteHeader(http.StatusOK)\n    w.Write([]byte(\"ok\"))\n}",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "the file indents with tabs, old_string with spaces",
        fix: COPY,
        place: &["lines 32-35", "\n33: \tw.WriteHeader(http.StatusOK)"],
    },
    Case {
        name: "go: two levels of spaces for tabs",
        file: "server.go",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "server.go",
                "    if err := json.NewEncoder(w).Encode(body); err != nil {\n        log.Printf(\"status: %v\", err)\n        http.Error(w, \"internal error\", http.StatusInternalServerError)\n    }",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "the file indents with tabs, old_string with spaces",
        fix: COPY,
        place: &["lines 42-45"],
    },
    Case {
        name: "go: route path misremembered",
        file: "server.go",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "server.go",
                "\ts.mux.HandleFunc(\"/health\", s.health)",
                "\ts.mux.HandleFunc(\"/livez\", s.health)",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "line 27 has `(\"/healthz\",` where old_string has `(\"/health\",`",
        fix: COPY,
        place: &["the nearest text is line 27"],
    },
    Case {
        name: "go: gofmt's alignment collapsed",
        file: "server.go",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "server.go",
                "\t\tAddr: s.cfg.Addr,\n\t\tHandler: s.mux,",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "spacing differs on line 51",
        fix: COPY,
        place: &["lines 51-52"],
    },
    Case {
        name: "go: the edit was already applied",
        file: "server.go",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "server.go",
                "\t\tlog.Println(\"status:\", err)",
                "\t\tlog.Printf(\"status: %v\", err)",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "looks already applied",
        fix: "Check the lines below",
        place: &["already present at line 43"],
    },
    Case {
        name: "go: read's prefixes with tabs",
        file: "server.go",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "server.go",
                "33: \tw.WriteHeader(http.StatusOK)\n34: \tw.Write([]byte(\"ok\"))",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "line-number prefixes on every line",
        fix: "remove the `N: ` prefixes",
        place: &["matches lines 33-34"],
    },
    // --- Python, 4 spaces ----------------------------------------------------
    Case {
        name: "python: 2-space indentation for 4",
        file: "report.py",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "report.py",
                "def by_region(orders: list[Order]) -> dict[str, list[float]]:\n  groups: dict[str, list[float]] = {}\n  for order in orders:\n    groups.setdefault(order.region, []).append(order.amount)\n  return groups",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "the file indents by 4 spaces per level, old_string by 2",
        fix: COPY,
        place: &["lines 24-28"],
    },
    Case {
        name: "python: a method body dedented",
        file: "report.py",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "report.py",
                "summary = {}\nfor region, amounts in by_region(orders).items():\n    if not amounts:\n        continue",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "old_string is indented 4 spaces less than the file",
        fix: COPY,
        place: &["lines 32-35"],
    },
    Case {
        name: "python: quotes swapped",
        file: "report.py",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "report.py",
                "    return '\\n'.join(lines) + '\\n'",
                "    return \"\\r\\n\".join(lines)",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "line 49 has",
        fix: COPY,
        place: &["\n49:     return \"\\n\".join(lines) + \"\\n\""],
    },
    Case {
        name: "python: an argument forgotten",
        file: "report.py",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "report.py",
                "with path.open() as fh:",
                "with path.open(encoding=\"utf-8\") as fh:",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "line 18 has `path.open(newline=\"\")` where old_string has `path.open()`",
        fix: COPY,
        place: &["the nearest text is line 18"],
    },
    Case {
        name: "python: a function recalled loosely",
        file: "report.py",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "report.py",
                "def render(summary):\n    lines = [\"region,total,mean,max\"]\n    for region in summary:\n        s = summary[region]",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "line 44 has",
        fix: COPY,
        place: &["lines 44-47"],
    },
    Case {
        name: "python: the edit was already applied",
        file: "report.py",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "report.py",
                "            \"mean\": sum(amounts) / len(amounts),",
                "            \"mean\": statistics.mean(amounts),",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "looks already applied",
        fix: "Check the lines below",
        place: &["already present at line 38"],
    },
    // --- C, tabs ---------------------------------------------------------
    Case {
        name: "c: spaces for kernel-style tabs",
        file: "ring.c",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "ring.c",
                "    while (written < n && r->len < r->cap) {\n        size_t tail = (r->head + r->len) % r->cap;\n        r->buf[tail] = p[written++];",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "the file indents with tabs, old_string with spaces",
        fix: COPY,
        place: &["lines 36-38"],
    },
    Case {
        name: "c: the allocator misremembered",
        file: "ring.c",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "ring.c",
                "\tr->buf = calloc(1, cap);",
                "\tr->buf = calloc(cap, 1);",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "line 20 has `malloc(cap);` where old_string has `calloc(1, cap);`",
        fix: COPY,
        place: &["\n20: \tr->buf = malloc(cap);"],
    },
    Case {
        name: "c: prefixes, an empty line's trimmed",
        file: "ring.c",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "ring.c",
                "16: \tstruct ring *r = malloc(sizeof(*r));\n17:\n18: \tif (!r)",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "line-number prefixes on every line",
        fix: "remove the `N: ` prefixes",
        place: &["matches lines 16-18"],
    },
    Case {
        name: "c: a blank line dropped",
        file: "ring.c",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "ring.c",
                "\tstruct ring *r = malloc(sizeof(*r));\n\tif (!r)\n\t\treturn NULL;",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "the file has a blank line 17 that old_string lacks",
        fix: COPY,
        place: &["lines 16-19"],
    },
    // --- JavaScript, 2 spaces ------------------------------------------------
    Case {
        name: "js: 4-space indentation for 2",
        file: "cart.js",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "cart.js",
                "    add(product, quantity = 1) {\n        const line = this.lines.get(product.id);\n        if (line) {",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "the file indents by 2 spaces per level, old_string by 4",
        fix: COPY,
        place: &["lines 10-12"],
    },
    Case {
        name: "js: the whole block as one escaped line",
        file: "cart.js",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "cart.js",
                "export function formatPrice(cents) {\\n  return `$${(cents / 100).toFixed(2)}`;\\n}",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "literal escape sequences",
        fix: "use real line breaks",
        place: &["matches lines 37-39"],
    },
    Case {
        name: "js: trailing spaces in old_string",
        file: "cart.js",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "cart.js",
                "  remove(productId) {  \n    this.lines.delete(productId);\n  }",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "old_string has trailing whitespace where line 19 has none",
        fix: COPY,
        place: &["lines 19-21"],
    },
    Case {
        name: "js: the formula recalled differently",
        file: "cart.js",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "cart.js",
                "    return Math.round(subtotal * (1 + TAX_RATE) * 100) / 100;",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "line 33 has",
        fix: COPY,
        place: &["the nearest text is line 33"],
    },
    // --- YAML, 2 spaces ------------------------------------------------------
    Case {
        name: "yaml: tabs",
        file: "deploy.yaml",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "deploy.yaml",
                "\t\t\t- name: LOG_LEVEL\n\t\t\t  value: info",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "the file indents with spaces, old_string with tabs",
        fix: COPY,
        place: &["lines 24-25"],
    },
    Case {
        name: "yaml: the image tag misremembered",
        file: "deploy.yaml",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "deploy.yaml",
                "image: registry.example.com/api:1.14.1",
                "image: registry.example.com/api:1.15.0",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "line 20 has `/api:1.14.2` where old_string has `/api:1.14.1`",
        fix: COPY,
        place: &["the nearest text is line 20"],
    },
    Case {
        name: "yaml: a nested list at the wrong depth",
        file: "deploy.yaml",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "deploy.yaml",
                "env:\n  - name: LOG_LEVEL\n    value: info",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "old_string is indented 10 spaces less than the file (line 24 starts with 12 spaces)",
        fix: COPY,
        place: &["lines 23-25"],
    },
    // --- Markdown, typography --------------------------------------------
    Case {
        name: "markdown: straight quotes and -- for typographic ones",
        file: "NOTES.md",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "NOTES.md",
                "This release doesn't change the on-disk format -- upgrades are in place.",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "the file has `’` (U+2019) where old_string has `'`",
        fix: COPY,
        place: &[
            "typographic characters differ on line 5",
            "`—` (U+2014) where it has `--`",
        ],
    },
    Case {
        name: "markdown: straight double quotes and a hyphen",
        file: "NOTES.md",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "NOTES.md",
                "## 2.3.0 - \"Heron\"",
                "## 2.3.0 - \"Heron\" (LTS)",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "`“` (U+201C) where it has `\"`",
        fix: COPY,
        place: &["line 3"],
    },
    Case {
        name: "markdown: a hyphen for an en dash",
        file: "NOTES.md",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "NOTES.md",
                "is now configurable - see below.",
                "is now configurable (see below).",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "the file has `–` (U+2013) where old_string has `-`",
        fix: COPY,
        place: &["line 8"],
    },
    Case {
        name: "markdown: spaces for non-breaking spaces",
        file: "NOTES.md",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "NOTES.md",
                "Price: 100 EUR per seat",
                "Price: 120 EUR per seat",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "the file has a non-breaking space (U+00A0) where old_string has a space",
        fix: COPY,
        place: &["line 20"],
    },
    Case {
        name: "markdown: an ASCII hyphen for a non-breaking hyphen",
        file: "NOTES.md",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "NOTES.md",
                "contained a non-ASCII character.",
                "contained non-ASCII characters.",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "(U+2011)",
        fix: COPY,
        place: &["line 9"],
    },
    // --- Makefile, tabs and trailing whitespace ------------------------------
    Case {
        name: "make: a recipe indented with spaces",
        file: "Makefile",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "Makefile",
                "ringtool: $(OBJS)\n    $(CC) $(CFLAGS) -o $@ $(OBJS)",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "the file indents with tabs, old_string with spaces",
        fix: COPY,
        place: &["lines 9-10"],
    },
    Case {
        name: "make: trailing whitespace in the file",
        file: "Makefile",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "Makefile",
                "CFLAGS ?= -O2 -Wall -Wextra\nOBJS = ring.o main.o",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "line 4 has trailing whitespace that old_string lacks",
        fix: COPY,
        place: &["lines 4-5"],
    },
    Case {
        name: "make: a trailing tab in the file",
        file: "Makefile",
        read: true,
        tool: "edit",
        args: || edit("Makefile", "test: ringtool\n\t./ringtool --self-test", "x"),
        code: "FS_EDIT_NOT_FOUND",
        cause: "line 12 has trailing whitespace that old_string lacks",
        fix: COPY,
        place: &["lines 12-13"],
    },
    // --- line endings ----------------------------------------------------------
    Case {
        name: "toml: a final line break the file does not have",
        file: "settings.toml",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "settings.toml",
                "timeout_secs = 30\n",
                "timeout_secs = 60\n",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "the file's last line (7) has none",
        fix: "drop the final line break",
        place: &["matches line 7", "\n7: timeout_secs = 30"],
    },
    Case {
        name: "crlf: a path misremembered in a CRLF file",
        file: "install.ps1",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "install.ps1",
                "    [string]$Target = \"C:\\Program Files\\RingTool\",",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "line 3 has",
        fix: COPY,
        place: &["\n3:     [string]$Target = \"C:\\Program Files\\Ringtool\","],
    },
    Case {
        name: "crlf: indentation in a CRLF file",
        file: "install.ps1",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "install.ps1",
                "if (-not (Test-Path $Target)) {\n  New-Item -ItemType Directory -Path $Target | Out-Null\n}",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "old_string is indented 2 spaces less than the file (line 8 starts with 4 spaces)",
        fix: COPY,
        place: &["lines 7-9"],
    },
    Case {
        name: "crlf: old_string with bare CRs",
        file: "install.ps1",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "install.ps1",
                "if (-not (Test-Path $Target)) {\r    New-Item -ItemType Directory -Path $Target | Out-Null\r}",
                "x",
            )
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "bare CR characters",
        fix: "use \\n line breaks",
        place: &["matches lines 7-9"],
    },
    Case {
        name: "cr: a file with old Mac line endings",
        file: "legacy.txt",
        read: true,
        tool: "edit",
        args: || edit("legacy.txt", "line two\nline three", "x"),
        code: "FS_EDIT_NOT_FOUND",
        cause: "bare CR characters (old Mac line endings)",
        fix: "Rewrite the file with write",
        place: &["inside line 1"],
    },
    // --- what the target is, before the policy -------------------------------
    Case {
        name: "order: an edit of a file that does not exist",
        file: "inventory.rs",
        read: false,
        tool: "edit",
        args: || edit("src/inventory.rs", "pub fn add", "pub fn insert"),
        code: "FS_NOT_FOUND",
        cause: "src/inventory.rs does not exist",
        fix: "use write to create a new file",
        place: &["src/inventory.rs"],
    },
    Case {
        name: "order: an edit of a directory",
        file: "inventory.rs",
        read: false,
        tool: "edit",
        args: || edit(".", "pub fn add", "pub fn insert"),
        code: "FS_NOT_REGULAR_FILE",
        cause: "is a directory",
        fix: "Give the path of a regular file",
        place: &[". is a directory"],
    },
    Case {
        name: "order: an edit of a binary file",
        file: "logo.png",
        read: false,
        tool: "edit",
        args: || edit("logo.png", "IHDR", "IDAT"),
        code: "FS_NOT_TEXT",
        cause: "is not UTF-8 text",
        fix: "UTF-8 text files only",
        place: &["logo.png"],
    },
    Case {
        name: "order: a write over a binary file",
        file: "logo.png",
        read: false,
        tool: "write",
        args: || json!({"file_path": "logo.png", "content": "not a png\n"}),
        code: "FS_NOT_TEXT",
        cause: "is not UTF-8 text",
        fix: "UTF-8 text files only",
        place: &["logo.png"],
    },
    // --- paths one normalisation away, searches in the other syntax ------------
    Case {
        name: "paths: `\\` separators",
        file: "inventory.rs",
        read: false,
        tool: "read",
        args: || json!({"file_path": ".\\inventory.rs"}),
        code: "FS_NOT_FOUND",
        cause: "paths use `/`, not `\\`",
        fix: "Use file_path inventory.rs.",
        place: &[".\\inventory.rs does not exist"],
    },
    Case {
        name: "paths: the wrong case",
        file: "NOTES.md",
        read: false,
        tool: "read",
        args: || json!({"file_path": "notes.md"}),
        code: "FS_NOT_FOUND",
        cause: "names are case-sensitive",
        fix: "Use file_path NOTES.md.",
        place: &["notes.md does not exist"],
    },
    Case {
        name: "paths: a file:// URI",
        file: "server.go",
        read: false,
        tool: "edit",
        args: || edit("file://server.go", "http.StatusOK", "http.StatusNoContent"),
        code: "FS_NOT_FOUND",
        cause: "a `file://` URI is not a path",
        fix: "Use file_path server.go.",
        place: &["file://server.go does not exist"],
    },
    Case {
        name: "paths: a trailing space",
        file: "Makefile",
        read: false,
        tool: "read",
        args: || json!({"file_path": "Makefile "}),
        code: "FS_NOT_FOUND",
        cause: "the path has spaces around it",
        fix: "Use file_path Makefile.",
        place: &["Makefile  does not exist"],
    },
    Case {
        name: "glob: a regular expression for a glob",
        file: "server.go",
        read: false,
        tool: "glob",
        args: || json!({"pattern": ".*\\.go$"}),
        code: "OK",
        cause: "`.*\\.go$` is a regular expression, but glob takes wildcards",
        fix: "e.g. `*.go`",
        place: &["No files found"],
    },
    Case {
        name: "glob: the wrong case",
        file: "Makefile",
        read: false,
        tool: "glob",
        args: || json!({"pattern": "makefile"}),
        code: "OK",
        cause: "glob matching is case-sensitive",
        fix: "ignoring case, `makefile` matches:",
        place: &["\n  Makefile"],
    },
    Case {
        name: "grep: a glob for a regex",
        file: "report.py",
        read: false,
        tool: "grep",
        args: || json!({"pattern": "*.py"}),
        code: "FS_INVALID_INPUT",
        cause: "`*.py` is a glob, but grep's pattern is a regex matched against file contents",
        fix: "find files by name with glob",
        place: &["include `*.py`"],
    },
    // --- writes that would destroy silently --------------------------------------
    Case {
        name: "write: a placeholder for the rest of the file",
        file: "report.py",
        read: true,
        tool: "write",
        args: || json!({"file_path": "report.py", "content": "import csv\n\n# ... rest of the file unchanged ...\n"}),
        code: "INVALID_ARGS",
        cause: "line 3 of `content` is a placeholder, `# ... rest of the file unchanged ...`",
        fix: "Write the whole content, or use edit",
        place: &["report.py would lose"],
    },
    Case {
        name: "write: a twin of a name in another case",
        file: "NOTES.md",
        read: false,
        tool: "write",
        args: || json!({"file_path": "notes.md", "content": "# Notes\n"}),
        code: "INVALID_ARGS",
        cause: "notes.md would add a name beside NOTES.md, differing from it in case only",
        fix: "use file_path NOTES.md",
        place: &["send the same call again"],
    },
    // --- long old_strings, cut lines, misspellings ---------------------------
    Case {
        name: "long: one slip far down a whole-file old_string",
        file: "table.rs",
        read: true,
        tool: "edit",
        args: || {
            let text = String::from_utf8(fixture("table.rs")).unwrap();
            edit("table.rs", &text.replace("item 150", "itme 150"), "")
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "its first 149 lines match lines 1-149; its line 150 is the first that differs",
        fix: COPY,
        place: &["150:     let value_150 = compute(150, \"item 150\");"],
    },
    Case {
        name: "artefacts: read's cut marker of a long line",
        file: "data.js",
        read: true,
        tool: "edit",
        args: || {
            let text = String::from_utf8(fixture("data.js")).unwrap();
            let line = text.lines().nth(1).unwrap();
            let cut = format!(
                "{}… [line cut: {} more characters]",
                &line[..2000],
                line.len() - 2000
            );
            edit("data.js", &cut, "x")
        },
        code: "FS_EDIT_NOT_FOUND",
        cause: "ends with read's cut marker `… [line cut: 1016 more characters]`",
        fix: "send that part, and the change to it as new_string",
        place: &["matches once, at line 2"],
    },
    Case {
        name: "spelt: replace_all of a misspelt word",
        file: "cart.js",
        read: true,
        tool: "edit",
        args: || json!({"file_path": "cart.js", "old_string": "quantitiy", "new_string": "count", "replace_all": true}),
        code: "FS_EDIT_NOT_FOUND",
        cause: "`quantitiy` is not in the file, but `quantity` is, 6 times",
        fix: "if that is the word meant, send it as old_string",
        place: &["10:   add(product, quantity = 1) {"],
    },
    Case {
        name: "spelt: a short line with a misspelt word",
        file: "cart.js",
        read: true,
        tool: "edit",
        args: || edit("cart.js", "{ product, quantitiy }", "{ product, count }"),
        code: "FS_EDIT_NOT_FOUND",
        cause: "old_string with `quantity` for `quantitiy` (the file's spelling) is in the file 2 times",
        fix: "send it with enough lines to be unique, or with replace_all",
        place: &[
            "first at line 15",
            "15:       this.lines.set(product.id, { product, quantity });",
        ],
    },
    // --- arguments ------------------------------------------------------------
    Case {
        name: "args: read's prefixes pasted into new_string",
        file: "inventory.rs",
        read: true,
        tool: "edit",
        args: || {
            edit(
                "inventory.rs",
                "    pub fn add(&mut self, item: Item) {\n        self.items.insert(item.sku.clone(), item);",
                "44:     pub fn add(&mut self, item: Item) {\n45:         self.items.insert(item.sku.clone(), item);\n46:         self.dirty = true;",
            )
        },
        code: "INVALID_ARGS",
        cause: "every line of `new_string` starts with read's line-number prefix (`44: ` to `46: `)",
        fix: "remove the `N: ` prefixes",
        place: &["new_string"],
    },
    Case {
        name: "args: read's output pasted as content",
        file: "cart.js",
        read: true,
        tool: "write",
        args: || json!({"file_path": "cart.js", "content": "File: cart.js\n1: // Shopping cart state for the checkout page.\n2: \n3: const TAX_RATE = 0.08;\n(Lines 1-3 of 39 shown. Continue with offset=4.)"}),
        code: "INVALID_ARGS",
        cause: "every line of `content` starts with read's line-number prefix (`1: ` to `3: `)",
        fix: "remove the `N: ` prefixes",
        place: &["content"],
    },
    Case {
        name: "args: new_string left out",
        file: "cart.js",
        read: true,
        tool: "edit",
        args: || json!({"file_path": "cart.js", "old_string": "  remove(productId) {"}),
        code: "INVALID_ARGS",
        cause: "missing required field `new_string`",
        fix: "an empty string \"\" deletes old_string",
        place: &["new_string"],
    },
    Case {
        name: "args: new_string given as null",
        file: "cart.js",
        read: true,
        tool: "edit",
        args: || json!({"file_path": "cart.js", "old_string": "  remove(productId) {", "new_string": null}),
        code: "INVALID_ARGS",
        cause: "missing required field `new_string`",
        fix: "an empty string \"\" deletes old_string",
        place: &["new_string"],
    },
    Case {
        name: "args: an offset past the end",
        file: "inventory.rs",
        read: false,
        tool: "read",
        args: || json!({"file_path": "inventory.rs", "offset": 120}),
        code: "INVALID_ARGS",
        cause: "offset 120 is past the end",
        fix: "valid offsets are 1–71",
        place: &["inventory.rs has 71 lines"],
    },
    Case {
        name: "args: an offset one past the last line",
        file: "settings.toml",
        read: true,
        tool: "read",
        args: || json!({"file_path": "settings.toml", "offset": 8, "limit": 5}),
        code: "INVALID_ARGS",
        cause: "offset 8 is past the end",
        fix: "valid offsets are 1–7",
        place: &["settings.toml has 7 lines"],
    },
];

#[test]
fn every_mistake_is_answered_with_the_cause_the_fix_and_the_place() {
    let mut failures = Vec::new();
    let edits = CASES
        .iter()
        .filter(|c| c.code == "FS_EDIT_NOT_FOUND")
        .count();
    assert!(edits >= 40, "the corpus has {edits} edit misses");
    for case in CASES {
        let ws = Workspace::new();
        ws.write(case.file, fixture(case.file));
        let before = Workspace::snapshot(&ws.root);
        let mut s = ws.session();
        if case.read {
            ok(call(&mut s, "read", json!({"file_path": case.file})));
        }
        let result = call(&mut s, case.tool, (case.args)());
        let text = result.text.clone();
        let first_line = text.lines().next().unwrap_or_default();
        let mut problems = Vec::new();
        if code(&result) != case.code {
            problems.push(format!("code {} instead of {}", code(&result), case.code));
        }
        for (what, phrase) in [("cause", case.cause), ("fix", case.fix)]
            .into_iter()
            .chain(case.place.iter().map(|p| ("place", *p)))
        {
            if !text.contains(phrase) {
                problems.push(format!("no {what} {phrase:?}"));
            }
        }
        if first_line.len() > 600 {
            problems.push(format!("first line is {} bytes", first_line.len()));
        }
        if Workspace::snapshot(&ws.root) != before {
            problems.push("the file changed".to_owned());
        }
        if !problems.is_empty() {
            failures.push(format!("{}: {}\n{text}\n", case.name, problems.join("; ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

#[test]
fn ordinary_numbered_text_and_identical_writes() {
    let ws = Workspace::new();
    ws.write("steps.md", "1. install\n2. run\n");
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "steps.md"})));
    // Numbered text that is not read's output is content like any other.
    ok(call(
        &mut s,
        "write",
        json!({"file_path": "steps.md", "content": "1. install\n2. configure\n3. run\n"}),
    ));
    ok(call(
        &mut s,
        "edit",
        json!({"file_path": "steps.md", "old_string": "3. run", "new_string": "1: one"}),
    ));
    ok(call(
        &mut s,
        "write",
        json!({"file_path": "codes.yaml", "content": "1: one\n3: three\n"}),
    ));
    // Identical content is not written again, and says so.
    let content = "1. install\n2. configure\n1: one\n";
    assert_eq!(ws.bytes("steps.md"), content.as_bytes());
    let out = ok(call(
        &mut s,
        "write",
        json!({"file_path": "steps.md", "content": content}),
    ));
    assert_eq!(
        out,
        "Unchanged steps.md: the content is identical (3 lines)."
    );
    // Even for a session that never read it: nothing can be lost.
    let mut other = ws.session();
    let out = ok(call(
        &mut other,
        "write",
        json!({"file_path": "steps.md", "content": content}),
    ));
    assert!(out.starts_with("Unchanged steps.md"), "{out}");
    // ... and that session may now edit it.
    ok(call(
        &mut other,
        "edit",
        json!({"file_path": "steps.md", "old_string": "1: one", "new_string": "3. run"}),
    ));
    let out = ok(call(&mut s, "read", json!({"file_path": "steps.md"})));
    assert!(out.contains("3: 3. run"), "{out}");
    let out = ok(call(
        &mut s,
        "write",
        json!({"file_path": "steps.md", "content": "done\n"}),
    ));
    assert!(out.starts_with("Updated steps.md"), "{out}");
}

#[test]
fn a_miss_in_a_large_file_is_diagnosed_in_bounded_memory() {
    // 100 MiB of LF lines, streamed; the misremembered line is near the end.
    let ws = Workspace::new();
    let lines = (100 << 20) / 64;
    let mut text = String::with_capacity(100 << 20);
    for i in 0..lines {
        use std::fmt::Write;
        let _ = writeln!(
            text,
            "    let value_{i:08} = compute({i:08}, \"alpha\");{:>10}",
            ""
        );
    }
    let target = lines - 1000;
    ws.write("big.rs", &text);
    drop(text);
    let old = format!("let value_{target:08} = compute({target:08}, \"beta\");");
    let args = json!({"file_path": "big.rs", "old_string": old, "new_string": "x"}).to_string();
    let root = ws.root.to_str().unwrap();
    // The component compiled and cached first: a compile is over the bound itself.
    crate::runtime();
    let started = std::time::Instant::now();
    let run = crate::cli::dsh_fs()
        .args(["call", "edit", &args, "--no-policy", "--root", root])
        .env("DSH_FS_STATS", "1")
        .output()
        .unwrap();
    assert!(!run.status.success());
    let out = String::from_utf8(run.stdout).unwrap();
    let stderr = String::from_utf8(run.stderr).unwrap();
    let rss: u64 = stderr
        .split_once("peak_rss_kib=")
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS in {stderr:?}"));
    eprintln!(
        "diagnosing a miss in 100 MiB: {:?}, peak RSS {rss} KiB",
        started.elapsed()
    );
    let line = target + 1;
    assert!(
        out.contains(&format!(
            "the nearest text is line {line}: line {line} has `\"alpha\");`"
        )),
        "{out}"
    );
    assert!(out.contains(&format!("\n{line}:     let value_")), "{out}");
    assert!(rss < 64 * 1024, "the diagnosis peaked at {rss} KiB");
}
