//! The fast path agrees with the portable path byte for byte on a generated
//! tree that has every rule in it: ignore files at several depths, whitelists,
//! hidden and VCS directories, binary, CRLF and long multi-byte lines, links
//! that loop or leave the root, and more results than the caps show.

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use dsh_fs_core::{FsError, SearchQuery};
use dsh_fs_search::{Budget, LocalTree};
use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A small deterministic generator (no seed file, no new dependency).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}

fn write(root: &Path, path: &str, content: &[u8], age: u64) {
    let full = root.join(path);
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    fs::write(&full, content).unwrap();
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + age);
    fs::File::options()
        .write(true)
        .open(&full)
        .unwrap()
        .set_modified(at)
        .unwrap();
}

fn generate(root: &Path) {
    let mut rng = Lcg(7);
    let dirs = [
        "",
        "a",
        "a/b",
        "a.b",
        "src",
        "src/deep/er",
        ".hidden",
        "target",
        "vendor/x",
        ".git",
    ];
    let exts = ["rs", "txt", "log", "md", "bin"];
    for i in 0..1500u64 {
        let dir = dirs[rng.next(dirs.len() as u64) as usize];
        let ext = exts[rng.next(exts.len() as u64) as usize];
        let name = format!("f{}.{ext}", rng.next(400));
        let path = if dir.is_empty() {
            name
        } else {
            format!("{dir}/{name}")
        };
        let mut body = Vec::new();
        for line in 0..rng.next(12) {
            match rng.next(6) {
                0 => body.extend_from_slice(format!("needle {i} {line}\r\n").as_bytes()),
                1 => body.extend_from_slice(format!("{}é needle\n", "x".repeat(1998)).as_bytes()),
                2 => body.extend_from_slice(b"fn main() { needle(); }\n"),
                3 if ext == "bin" => body.extend_from_slice(b"needle\x00needle\n"),
                _ => body.extend_from_slice(b"nothing here\n"),
            }
        }
        write(root, &path, &body, rng.next(50));
    }
    write(root, ".gitignore", b"target/\n*.log\n!keep*.log\n", 0);
    write(root, "a/.gitignore", b"f1*.rs\n!.hidden\n", 0);
    write(root, "a/.hidden/f.rs", b"needle whitelisted\n", 3);
    write(root, "src/.ignore", b"!*.log\n", 0);
    write(root, "vendor/.git/HEAD", b"needle\n", 0);
    write(root, "vendor/.gitignore", b"*.md\n", 0);
    std::os::unix::fs::symlink(root, root.join("src/loop")).unwrap();
    std::os::unix::fs::symlink("/etc", root.join("escape")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", root.join("a/leak.rs")).unwrap();
}

#[test]
fn fast_and_portable_paths_render_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    generate(root);
    let tree = LocalTree::new(root);
    let b = || Budget::default();
    let greps: [(&str, &str, Option<&str>); 8] = [
        ("needle", "", None),
        (r"needle \d+ 1$", "", None),
        ("fn main", "a", Some("*.{rs,md}")),
        ("needle", "src", Some("deep/**")),
        ("needle", "a/b", None),
        ("whitelisted", "", None),
        ("absent", "", None),
        ("needle", "a/f1.rs", None),
    ];
    for (regex, path, include) in greps {
        let portable = dsh_fs_search::grep(&tree, path, regex, include, &b());
        let fast = grep(root, path, regex, include);
        same(
            &fast,
            &portable,
            &format!("grep {regex:?} in {path:?} include {include:?}"),
        );
    }
    let globs = [
        ("*.rs", ""),
        ("**/*.rs", ""),
        ("a/**", ""),
        ("*.log", "src"),
        ("f1*", "a"),
        ("*.zz", ""),
    ];
    for (pattern, path) in globs {
        let portable = dsh_fs_search::glob(&tree, path, pattern, &b());
        let fast = glob(root, path, pattern);
        same(&fast, &portable, &format!("glob {pattern:?} in {path:?}"));
    }
    // The tree exercises what it claims to.
    let all = grep(root, "", "needle", None).unwrap();
    assert!(all.contains("(Showing the first 250 of"), "{all}");
    assert!(all.contains("… [line cut: "));
    assert!(!all.contains("target/") && !all.contains(".git/"));
    let rs = glob(root, "", "*.rs").unwrap();
    assert!(rs.contains("(Showing the 100 newest of"));
    assert!(!rs.contains("loop") && !rs.contains("leak"));
}

/// The fast path's grep below `path` of `root`.
fn grep(root: &Path, path: &str, regex: &str, include: Option<&str>) -> Result<String, FsError> {
    let query = SearchQuery::Grep {
        pattern: regex.to_owned(),
        include: include.map(str::to_owned),
    };
    fast(root, path, &query)
}

/// The fast path's glob below `path` of `root`.
fn glob(root: &Path, path: &str, pattern: &str) -> Result<String, FsError> {
    fast(root, path, &SearchQuery::Glob(pattern.to_owned()))
}

fn fast(root: &Path, path: &str, query: &SearchQuery) -> Result<String, FsError> {
    let dir = Dir::open_ambient_dir(root, ambient_authority()).unwrap();
    super::search(&dir, path, query, false, &Budget::default())
}

/// Asserts equal results, naming the first line that differs (the texts are long).
fn same(fast: &Result<String, FsError>, portable: &Result<String, FsError>, what: &str) {
    let (Ok(f), Ok(p)) = (fast, portable) else {
        assert_eq!(fast, portable, "{what}");
        return;
    };
    if f != p {
        let short = |l: Option<&str>| l.map(|l| l.chars().take(120).collect::<String>());
        let i = (0..)
            .find(|&i| f.lines().nth(i) != p.lines().nth(i))
            .unwrap_or(0);
        panic!(
            "{what}: line {i} differs\nfast:     {:?}\nportable: {:?}\nfirst lines: {:?} / {:?}",
            short(f.lines().nth(i)),
            short(p.lines().nth(i)),
            f.lines().next(),
            p.lines().next()
        );
    }
}
