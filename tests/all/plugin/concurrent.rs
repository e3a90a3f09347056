//! Instances running at once over one state directory: 8 workers, each
//! running read/edit pairs as separate `wasmtime run --invoke` processes,
//! on a file of its own and on one file they all share. No state is lost or
//! torn, and no edit is accepted unless its session read the version it
//! changes. `DSH_FS_PLUGIN_PAIRS` sets the pairs per worker and file (40
//! by default, 1,280 processes; 100 for the full run).

use super::Grants;
use crate::Workspace;
use serde_json::json;
use std::path::Path;

const WORKERS: usize = 8;

fn pairs() -> usize {
    std::env::var("DSH_FS_PLUGIN_PAIRS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(40)
}

/// The lines of a read's answer (`N: text`), without its header and footer.
fn lines(read: &str) -> Vec<String> {
    read.lines()
        .filter_map(|l| l.split_once(": "))
        .filter(|(n, _)| n.parse::<usize>().is_ok())
        .map(|(_, text)| text.to_owned())
        .collect()
}

/// What one worker saw: for each edit accepted on the shared file, the
/// lines its read showed and the line it added.
struct Accepted {
    seen: Vec<String>,
    added: String,
}

fn work(root: &Path, state: &Path, worker: usize, pairs: usize) -> Vec<Accepted> {
    let session = format!("worker-{worker}");
    let grants = Grants {
        root,
        state: Some(state),
        session: &session,
    };
    let own = format!("own-{worker}.txt");
    let mut accepted = Vec::new();
    for i in 0..pairs {
        let added = format!("{worker}-{i}");
        let read = grants.call("read", &json!({"file_path": own}));
        assert!(read.starts_with("File: "), "{read}");
        let edit =
            json!({"file_path": own, "old_string": "END", "new_string": format!("{added}\nEND")});
        let edited = grants.call("edit", &edit);
        assert!(
            edited.starts_with("Edited "),
            "worker {worker}, pair {i}: {edited}"
        );

        let read = grants.call("read", &json!({"file_path": "shared.txt"}));
        assert!(read.starts_with("File: "), "{read}");
        let edit = json!({"file_path": "shared.txt", "old_string": "END", "new_string": format!("{added}\nEND")});
        let edited = grants.call("edit", &edit);
        if edited.starts_with("Edited ") {
            let mut seen = lines(&read);
            seen.pop(); // END
            accepted.push(Accepted { seen, added });
        } else {
            assert!(
                edited.starts_with("FS_STALE_VERSION: "),
                "worker {worker}, pair {i}: {edited}"
            );
        }
    }
    accepted
}

#[test]
fn concurrent_instances_share_a_state_directory_without_losing_or_forging_a_read() {
    let ws = Workspace::new();
    let state = tempfile::tempdir().unwrap();
    let pairs = pairs();
    ws.write("shared.txt", "END\n");
    for w in 0..WORKERS {
        ws.write(&format!("own-{w}.txt"), "END\n");
    }
    let accepted: Vec<Vec<Accepted>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|w| {
                let (root, state) = (&ws.root, state.path());
                s.spawn(move || work(root, state, w, pairs))
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });

    // Each worker's own file: every pair accepted, in order.
    for w in 0..WORKERS {
        let expected: String = (0..pairs).map(|i| format!("{w}-{i}\n")).collect();
        let own = String::from_utf8(ws.bytes(&format!("own-{w}.txt"))).unwrap();
        assert_eq!(own, format!("{expected}END\n"));
    }
    // The shared file: exactly the accepted lines, and each was added to
    // exactly the lines its worker had read.
    let shared = String::from_utf8(ws.bytes("shared.txt")).unwrap();
    let shared: Vec<&str> = shared.lines().collect();
    let all: Vec<&Accepted> = accepted.iter().flatten().collect();
    assert!(!all.is_empty());
    assert_eq!(shared.len(), all.len() + 1, "{shared:?}");
    for a in &all {
        let at = shared
            .iter()
            .position(|l| *l == a.added)
            .expect("accepted line kept");
        assert_eq!(
            shared[..at],
            a.seen,
            "{} was added to what its read showed",
            a.added
        );
    }
    // The state: whole entries only, one per session and file, no writer's
    // file left behind.
    let mut entries = 0;
    for entry in std::fs::read_dir(state.path()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(
            name.starts_with("seen-") && name.ends_with(".json"),
            "{name}"
        );
        let entry: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap())
            .unwrap_or_else(|e| panic!("{name} is torn: {e}"));
        assert_eq!(entry["format"], 1);
        entries += 1;
    }
    assert_eq!(entries, 2 * WORKERS);
    println!(
        "{WORKERS} workers x {pairs} pairs: {} of {} shared edits accepted",
        all.len(),
        WORKERS * pairs
    );
}

/// Instances of one session running at once through the undo component,
/// each changing a file of its own: the journal lock keeps every change in
/// the journal (none saved over by another instance's save), so one revert
/// puts every file back.
#[test]
fn instances_of_one_session_at_once_lose_no_change_from_its_journal() {
    const FILES: usize = 4;
    const EDITS: usize = 5;
    let ws = Workspace::new();
    let state = tempfile::tempdir().unwrap();
    for f in 0..FILES {
        ws.write(&format!("f{f}.txt"), "END\n");
    }
    let grants = Grants {
        root: &ws.root,
        state: Some(state.path()),
        session: "agent",
    };
    let start = grants.call_undo("checkpoint", &json!({"label": "start"}));
    assert!(start.starts_with("Checkpoint 1 (start)"), "{start}");
    std::thread::scope(|s| {
        for f in 0..FILES {
            let grants = &grants;
            s.spawn(move || {
                let file = format!("f{f}.txt");
                let read = grants.call_undo("read", &json!({"file_path": file}));
                assert!(read.starts_with("File: "), "{read}");
                for i in 0..EDITS {
                    let edit = json!({"file_path": file, "old_string": "END", "new_string": format!("{i}\nEND")});
                    let edited = grants.call_undo("edit", &edit);
                    assert!(edited.starts_with("Edited "), "{file} {i}: {edited}");
                }
            });
        }
    });
    let listed = grants.call_undo("changes", &json!({"since": 1}));
    assert!(
        listed.starts_with(&format!(
            "Changes since checkpoint 1 (start): {FILES} files."
        )),
        "{listed}"
    );
    let back = grants.call_undo("revert", &json!({"to": 1}));
    assert!(
        back.starts_with(&format!(
            "Reverted to checkpoint 1 (start): {FILES} files restored, 0 left alone."
        )),
        "{back}"
    );
    for f in 0..FILES {
        assert_eq!(ws.bytes(&format!("f{f}.txt")), b"END\n");
    }
    // No lock and no writer's file left behind.
    for entry in std::fs::read_dir(state.path()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            !name.starts_with("lock-") && !name.ends_with(".tmp"),
            "{name}"
        );
    }
}
