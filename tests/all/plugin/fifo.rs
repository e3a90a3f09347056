//! A FIFO and the file the plugin reads exchanged under one name, again and
//! again (`renameat2(RENAME_EXCHANGE)`): no read waits on the FIFO. Each
//! answer is the file's text or `FS_NOT_REGULAR_FILE`, within a bound,
//! whichever the name held at each step of the read (before the open
//! stopped waiting on a FIFO, the first read was held).

use super::Grants;
use crate::Workspace;
use serde_json::json;
use std::ffi::CString;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Reads made while the name changes under them.
const READS: usize = 60;

/// Longer than any read takes, far shorter than forever.
const DEADLINE: Duration = Duration::from_secs(20);

fn c_path(path: &Path) -> CString {
    CString::new(path.to_str().unwrap()).unwrap()
}

fn mkfifo(path: &Path) {
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path(path).as_ptr(), 0o644) }, 0);
}

#[test]
fn a_fifo_renamed_over_the_file_never_holds_a_read() {
    let ws = Workspace::new();
    let state = tempfile::tempdir().unwrap();
    ws.write("a.txt", "text\n");
    let grants = Grants {
        root: &ws.root,
        state: Some(state.path()),
        session: "default",
    };
    let stop = AtomicBool::new(false);
    let target = ws.root.join("a.txt");
    let fifo = ws.root.join("fifo.tmp");
    let (mut reads, mut texts, mut refused, mut held) = (0, 0, 0, 0);
    std::thread::scope(|s| {
        let swapper = s.spawn(|| {
            // One exchange a swap: the name is the file, then the FIFO,
            // each for a few microseconds, however a read is timed.
            mkfifo(&fifo);
            let (a, b) = (c_path(&target), c_path(&fifo));
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // SAFETY: two NUL-terminated paths.
                let done = unsafe {
                    libc::renameat2(
                        libc::AT_FDCWD,
                        a.as_ptr(),
                        libc::AT_FDCWD,
                        b.as_ptr(),
                        libc::RENAME_EXCHANGE,
                    )
                };
                assert_eq!(done, 0, "{}", std::io::Error::last_os_error());
                swaps += 1;
            }
            swaps
        });
        for _ in 0..READS {
            reads += 1;
            match grants.call_within("read", &json!({"file_path": "a.txt"}), DEADLINE) {
                Some(text) if text.starts_with("File: ") => texts += 1,
                Some(text) if text.starts_with("FS_NOT_REGULAR_FILE: ") => refused += 1,
                Some(text) => panic!("{text}"),
                None => {
                    held += 1;
                    break;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        let swaps = swapper.join().unwrap();
        println!(
            "{reads} reads during {swaps} swaps: {texts} read the text, {refused} refused, {held} held"
        );
    });
    assert_eq!(held, 0, "reads held on the FIFO past {DEADLINE:?}");
}
