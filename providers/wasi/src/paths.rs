//! Lexical path handling: model paths to root-relative keys, and back to the
//! text shown to the model. No filesystem access happens here.

use dsh_fs_core::{ErrorCode, FsError};
use std::path::Path;

/// Turns a model path into a normalized root-relative path with `/`
/// separators, purely lexically: `.` dropped, `..` applied, absolute paths
/// accepted only under `root`. Leaving the root is `sandbox-denied`.
pub(crate) fn normalize(path: &str, root: &Path) -> Result<String, FsError> {
    if path.is_empty() {
        return Err(FsError::new(ErrorCode::InvalidInput, "the path is empty"));
    }
    if path.contains('\0') {
        return Err(FsError::new(
            ErrorCode::InvalidInput,
            "the path contains a NUL byte",
        ));
    }
    let relative = if path.starts_with('/') {
        let rel = Path::new(path)
            .strip_prefix(root)
            .map_err(|_| FsError::sandbox_denied(path))?;
        rel.to_str().expect("a suffix of a str is a str")
    } else {
        path
    };
    let mut parts: Vec<&str> = Vec::new();
    push_parts(&mut parts, relative).map_err(|()| FsError::sandbox_denied(path))?;
    Ok(parts.join("/"))
}

/// Appends the components of the relative path `rel` to `parts`, applying
/// `.` and `..`; `Err` when a `..` would climb above the start.
pub(crate) fn push_parts<'a>(parts: &mut Vec<&'a str>, rel: &'a str) -> Result<(), ()> {
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop().ok_or(())?;
            }
            name => parts.push(name),
        }
    }
    Ok(())
}

/// The display form of a root-relative key (`.` for the root itself).
pub(crate) fn display(key: &str) -> String {
    if key.is_empty() {
        ".".to_owned()
    } else {
        key.to_owned()
    }
}

/// The last component of a key; `None` for the root.
pub(crate) fn file_name(key: &str) -> Option<&str> {
    key.rsplit('/').next().filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_is_lexical_and_confined() {
        let root = Path::new("/work");
        let ok = |p: &str| normalize(p, root).unwrap();
        let denied = |p: &str| normalize(p, root).unwrap_err().code;
        assert_eq!(ok("a/./b//c.txt"), "a/b/c.txt");
        assert_eq!(ok("a/../b.txt"), "b.txt");
        assert_eq!(ok("/work/x/y"), "x/y");
        assert_eq!(ok("/work"), "");
        assert_eq!(ok("."), "");
        assert_eq!(denied("../x"), ErrorCode::SandboxDenied);
        assert_eq!(denied("a/../../x"), ErrorCode::SandboxDenied);
        assert_eq!(denied("/etc/passwd"), ErrorCode::SandboxDenied);
        assert_eq!(denied("/workx/y"), ErrorCode::SandboxDenied);
        assert_eq!(denied("/work/../x"), ErrorCode::SandboxDenied);
        assert_eq!(denied(""), ErrorCode::InvalidInput);
        assert_eq!(denied("a\0b"), ErrorCode::InvalidInput);
    }

    #[test]
    fn names_and_display() {
        assert_eq!(file_name("a/b.txt"), Some("b.txt"));
        assert_eq!(file_name("b.txt"), Some("b.txt"));
        assert_eq!(file_name(""), None);
        assert_eq!(display(""), ".");
        assert_eq!(display("a/b"), "a/b");
    }
}
