//! The state directory under pressure, through the components: a directory
//! too small for what the journal keeps, one filled to the last byte, and
//! one session reading far more files than another.

use super::Grants;
use crate::Workspace;
use serde_json::json;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

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

/// Sets the time `path` was written to `secs` seconds ago.
fn age(path: &Path, secs: u64) {
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(secs))
        .unwrap();
}

/// One session reads a file; another reads past its own bound of 1,024
/// (1,034 entries of its own in the directory, all newer): the first
/// session's observation is kept, and its edit goes through.
#[test]
fn one_sessions_reads_never_forget_another_sessions_observations() {
    const BOUND: usize = 1024;
    let ws = Workspace::new();
    let state = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.txt", "c.txt"] {
        ws.write(name, "one\n");
    }
    let quiet = Grants {
        root: &ws.root,
        state: Some(state.path()),
        session: "quiet",
    };
    let busy = Grants {
        session: "busy",
        ..quiet
    };
    assert!(
        quiet
            .call("read", &json!({"file_path": "a.txt"}))
            .starts_with("File: ")
    );
    let quiet_entry = names(state.path()).pop().unwrap();
    age(&state.path().join(&quiet_entry), 3600);
    assert!(
        busy.call("read", &json!({"file_path": "b.txt"}))
            .starts_with("File: ")
    );
    // The busy session's name prefix (`seen-<scope>-`), from its entry.
    let busy_entry = names(state.path())
        .into_iter()
        .find(|n| *n != quiet_entry)
        .unwrap();
    let prefix = &busy_entry[..busy_entry.rfind('-').unwrap() + 1];
    // Its earlier reads, as their names say: more than its bound.
    for i in 0..BOUND + 10 {
        fs::write(state.path().join(format!("{prefix}{i:032x}.json")), "{}").unwrap();
    }
    assert!(
        busy.call("read", &json!({"file_path": "c.txt"}))
            .starts_with("File: ")
    );
    let edit = json!({"file_path": "a.txt", "old_string": "one", "new_string": "1"});
    let edited = quiet.call("edit", &edit);
    assert!(edited.starts_with("Edited a.txt"), "{edited}");
    let theirs = names(state.path())
        .iter()
        .filter(|n| n.starts_with(prefix))
        .count();
    assert_eq!(theirs, BOUND, "the busy session keeps its own most recent");
}
