//! The state directory under pressure, through the components: a directory
//! too small for what the journal keeps, and one filled to the last byte.

use super::Grants;
use crate::Workspace;
use serde_json::json;
use std::fs;
use std::path::{Path, PathBuf};

/// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    /// `None`, saying why, where mounting is not permitted (not root).
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match out {
            Ok(out) if out.status.success() => Some(Tmpfs(dir)),
            Ok(out) => {
                println!(
                    "skipped: mount -t tmpfs failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                None
            }
            Err(e) => {
                println!("skipped: mount cannot be run: {e}");
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    /// Fills what is left; the filler's path.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.path().join("filler");
        let mut file = fs::File::create(&path).unwrap();
        while file.write_all(&[0; 4096]).is_ok() {}
        path
    }

    /// Every name in it that is a writer's file or a lock left behind.
    fn leftovers(&self) -> Vec<String> {
        names(self.path())
            .into_iter()
            .filter(|n| n.ends_with(".tmp") || n.starts_with("lock-"))
            .collect()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.path())
            .status();
    }
}

fn names(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect()
}

/// The undo component with a 1 MiB state directory and a 2 MiB file: the
/// edit stands though its old text cannot be kept, and nothing written for
/// it stays. Filled to the last byte, the directory still serves reads,
/// saying they were not recorded, and an edit says why it is refused;
/// freed, it works again.
#[test]
fn a_full_state_directory_leaves_nothing_behind_and_works_again_once_freed() {
    let Some(tmpfs) = Tmpfs::mount("1m") else {
        return;
    };
    let ws = Workspace::new();
    let big: String = (0..200_000).map(|i| format!("line {i}\n")).collect();
    ws.write("a.txt", &big);
    ws.write("b.txt", "bee\n");
    let grants = Grants {
        root: &ws.root,
        state: Some(tmpfs.path()),
        session: "default",
    };
    let read_a = json!({"file_path": "a.txt", "limit": 1});
    let read = grants.call_undo("read", &read_a);
    assert!(
        read.starts_with("File: ") && !read.contains("(Note:"),
        "{read}"
    );
    let edit =
        |old: &str, new: &str| json!({"file_path": "a.txt", "old_string": old, "new_string": new});
    let edited = grants.call_undo("edit", &edit("line 0\n", "first\n"));
    assert!(edited.starts_with("Edited a.txt"), "{edited}");
    assert_eq!(tmpfs.leftovers(), Vec::<String>::new());
    let read = grants.call_undo("read", &read_a);
    assert!(!read.contains("(Note:"), "{read}");
    let again = grants.call_undo("edit", &edit("first\n", "1st\n"));
    assert!(again.starts_with("Edited a.txt"), "{again}");
    assert!(ws.bytes("a.txt").starts_with(b"1st\nline 1\n"));

    let filler = tmpfs.fill();
    let read_b = json!({"file_path": "b.txt"});
    let edit_b = json!({"file_path": "b.txt", "old_string": "bee", "new_string": "B"});
    for _ in 0..3 {
        let read = grants.call_undo("read", &read_b);
        assert!(read.starts_with("File: ") && read.contains("bee"), "{read}");
        assert!(
            read.contains("could not record it in the state directory /state"),
            "{read}"
        );
        let refused = grants.call_undo("edit", &edit_b);
        assert!(refused.starts_with("FS_NOT_OBSERVED: "), "{refused}");
        assert!(
            refused.contains("cannot write in the state directory /state"),
            "{refused}"
        );
    }
    assert_eq!(ws.bytes("b.txt"), b"bee\n");
    assert_eq!(tmpfs.leftovers(), Vec::<String>::new());

    fs::remove_file(filler).unwrap();
    let read = grants.call_undo("read", &read_b);
    assert!(!read.contains("(Note:"), "{read}");
    let edited = grants.call_undo("edit", &edit_b);
    assert!(edited.starts_with("Edited b.txt"), "{edited}");
    assert_eq!(ws.bytes("b.txt"), b"B\n");
    assert_eq!(tmpfs.leftovers(), Vec::<String>::new());
}
