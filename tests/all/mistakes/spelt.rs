//! A one-word old_string the file does not hold, misspelt: the answer names
//! the word it is nearest to, how often the file has it and where first;
//! nothing is applied and the file stays as it was.

use super::fixture;
use crate::{Workspace, call, fails, ok};
use serde_json::json;

#[test]
fn replace_all_of_a_misspelt_word_names_the_word_and_its_count() {
    let ws = Workspace::new();
    ws.write("web/cart.js", fixture("cart.js"));
    let before = Workspace::snapshot(&ws.root);
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "web/cart.js"})));
    let args = json!({
        "file_path": "web/cart.js",
        "old_string": "quantitiy",
        "new_string": "count",
        "replace_all": true,
    });
    let got = fails(call(&mut s, "edit", args), "FS_EDIT_NOT_FOUND");
    assert_eq!(Workspace::snapshot(&ws.root), before);
    assert_eq!(
        got,
        "FS_EDIT_NOT_FOUND: old_string was not found in web/cart.js; `quantitiy` is not in the \
file, but `quantity` is, 6 times (first at line 10): if that is the word meant, send it as \
old_string:\n10:   add(product, quantity = 1) {"
    );
}

/// A one-line old_string with a misspelt word and too few words besides to
/// look like any line: the word is respelt as the file spells it, and the
/// line that then matches is named.
#[test]
fn a_short_line_with_a_misspelt_word_is_found_spelt_the_files_way() {
    let ws = Workspace::new();
    ws.write(
        "src/main.rs",
        b"fn main() {\n    let total = 3;\n    println!(\"{total}\");\n}\n",
    );
    ws.write("web/cart.js", fixture("cart.js"));
    let before = Workspace::snapshot(&ws.root);
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "src/main.rs"})));
    ok(call(&mut s, "read", json!({"file_path": "web/cart.js"})));
    let edit =
        |path: &str, old: &str| json!({"file_path": path, "old_string": old, "new_string": "x"});

    let got = fails(
        call(&mut s, "edit", edit("src/main.rs", "println!(\"{totl}\");")),
        "FS_EDIT_NOT_FOUND",
    );
    assert_eq!(
        got,
        "FS_EDIT_NOT_FOUND: old_string was not found in src/main.rs; old_string with `total` for \
`totl` (the file's spelling) is at line 3: if that is the text meant, send it as old_string:\n\
3:     println!(\"{total}\");"
    );
    // No word of it is in the file at all.
    let got = fails(
        call(&mut s, "edit", edit("src/main.rs", "{totl}")),
        "FS_EDIT_NOT_FOUND",
    );
    assert!(got.contains("old_string with `total` for `totl` (the file's spelling) is at line 3"));

    let got = fails(
        call(
            &mut s,
            "edit",
            edit("web/cart.js", "{ product, quantitiy }"),
        ),
        "FS_EDIT_NOT_FOUND",
    );
    assert_eq!(
        got,
        "FS_EDIT_NOT_FOUND: old_string was not found in web/cart.js; old_string with `quantity` \
for `quantitiy` (the file's spelling) is in the file 2 times, first at line 15: if that is the \
text meant, send it with enough lines to be unique, or with replace_all:\n\
15:       this.lines.set(product.id, { product, quantity });"
    );
    // Respelt, it is still not there: the word is named.
    let got = fails(
        call(&mut s, "edit", edit("web/cart.js", "{ produkt, count }")),
        "FS_EDIT_NOT_FOUND",
    );
    assert_eq!(
        got,
        "FS_EDIT_NOT_FOUND: old_string was not found in web/cart.js; `produkt` is not in the \
file, but `product` is, 6 times (first at line 10); copy old_string from the file's text:\n\
10:   add(product, quantity = 1) {"
    );
    // Nothing spelt near: still nothing similar.
    let got = fails(
        call(&mut s, "edit", edit("web/cart.js", "qwerty zzzz")),
        "FS_EDIT_NOT_FOUND",
    );
    assert!(got.contains("nothing similar"), "{got}");
    assert_eq!(Workspace::snapshot(&ws.root), before);
}
