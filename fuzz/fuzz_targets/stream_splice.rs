//! The streamed splice against the in-memory one: for any file, edit and
//! chunking that the streamed path takes (no CR anywhere), both agree on the
//! outcome — the same error code, or the same count, first line, size,
//! content hash and bytes.
#![no_main]

use dsh_fs_core::EditRequest;
use dsh_fs_core::splice;
use dsh_fs_core::stream_splice::{PlanError, Planner, Splicer};
use dsh_fs_core::text::content_hash;
use libfuzzer_sys::fuzz_target;

/// `bytes` in chunks of 1 to 32 bytes, their sizes drawn from `seed`.
fn chunks(bytes: &[u8], seed: u8) -> impl Iterator<Item = &[u8]> {
    let size = 1 + usize::from(seed % 32);
    bytes.chunks(size)
}

fuzz_target!(|input: (&[u8], &str, &str, bool, u8, u8)| {
    let (file, old, new, replace_all, plan_seed, splice_seed) = input;
    let edit = EditRequest::new(old, new, replace_all);
    let Ok(mut planner) = Planner::new(&edit) else {
        return;
    };
    let mut failed = None;
    for chunk in chunks(file, plan_seed) {
        match planner.push(chunk) {
            Ok(()) => {}
            Err(PlanError::InMemory) => return,
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    let (hash, planned) = match failed {
        Some(e) => (content_hash(file), Err(e)),
        None => planner.finish(),
    };
    let in_memory = splice::apply(file, &edit);
    match (planned, in_memory) {
        (Err(PlanError::InMemory), _) => {}
        (Ok(plan), Ok(out)) => {
            assert_eq!(hash, content_hash(file), "the plan hashes the whole file");
            assert_eq!(plan.replacements, u64::from(out.replacements));
            assert_eq!(plan.first_line, out.first_line);
            assert_eq!(plan.size, out.bytes.len() as u64);
            let mut splicer = Splicer::new(&edit, Vec::new());
            for chunk in chunks(file, splice_seed) {
                splicer.push(chunk).unwrap();
            }
            assert_eq!(splicer.finish().unwrap(), out.bytes, "streamed bytes differ");
        }
        (Err(PlanError::Splice(streamed)), Err(held)) => {
            assert_eq!(streamed.code(), held.code(), "{streamed:?} vs {held:?}");
        }
        (planned, held) => panic!("the paths disagree: streamed {planned:?}, in memory {held:?}"),
    }
});
