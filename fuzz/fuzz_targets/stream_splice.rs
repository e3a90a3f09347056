//! The streamed splice against the in-memory one: for any file, edit and
//! chunking, where the planner does not defer to memory (a CR anywhere, a
//! BOM character in the strings), both paths agree on the outcome — the same
//! error, or the same count, first line, size, content hash and bytes.
#![no_main]

use dsh_fs_core::EditRequest;
use dsh_fs_core::splice::{self, SpliceError};
use dsh_fs_core::stream_splice::{Plan, PlanError, Planner, Splicer};
use dsh_fs_core::text::content_hash;
use libfuzzer_sys::fuzz_target;

/// `bytes` cut into chunks whose sizes cycle through `sizes`: any chunking,
/// empty chunks (size 0) included. All-zero or no sizes mean 1-byte chunks.
fn chunks<'a>(bytes: &'a [u8], sizes: &'a [u8]) -> impl Iterator<Item = &'a [u8]> {
    let sizes: &[u8] = if sizes.iter().any(|&s| s != 0) {
        sizes
    } else {
        &[1]
    };
    let mut sizes = sizes.iter().cycle();
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let size = usize::from(*sizes.next()?).min(rest.len());
        let (chunk, tail) = rest.split_at(size);
        rest = tail;
        Some(chunk)
    })
}

/// The first pass over `file` in chunks of `sizes`, as the streamed edit
/// runs it: the content hash and the plan, or why it cannot apply.
fn plan(file: &[u8], edit: &EditRequest, sizes: &[u8]) -> (u128, Result<Plan, PlanError>) {
    let mut planner = match Planner::new(edit) {
        Ok(planner) => planner,
        Err(e) => return (content_hash(file), Err(e)),
    };
    for chunk in chunks(file, sizes) {
        if let Err(e) = planner.push(chunk) {
            return (content_hash(file), Err(e));
        }
    }
    planner.finish()
}

fuzz_target!(|input: (&[u8], &str, &str, bool, Vec<u8>, Vec<u8>)| {
    let (file, old, new, replace_all, plan_sizes, splice_sizes) = input;
    let edit = EditRequest::new(old, new, replace_all);
    let (hash, planned) = plan(file, &edit, &plan_sizes);
    let in_memory = splice::apply(file, &edit);
    match (planned, in_memory) {
        // The streamed path defers: the edit is made in memory instead.
        (Err(PlanError::InMemory), _) => {}
        (Ok(plan), Ok(out)) => {
            assert_eq!(hash, content_hash(file), "the plan hashes the whole file");
            assert_eq!(plan.hash, hash);
            assert_eq!(plan.replacements, u64::from(out.replacements));
            assert_eq!(plan.first_line, out.first_line);
            assert_eq!(plan.size, out.bytes.len() as u64);
            let mut splicer = Splicer::new(&edit, Vec::new());
            for chunk in chunks(file, &splice_sizes) {
                splicer.push(chunk).unwrap();
            }
            assert_eq!(
                splicer.finish().unwrap(),
                out.bytes,
                "streamed bytes differ"
            );
        }
        // The planner refuses an empty old string before it sees a byte;
        // the in-memory path decodes first. Both refuse the edit.
        (Err(PlanError::Splice(SpliceError::EmptyOldString)), Err(SpliceError::NotText(_))) => {}
        // Both call the file not text, but may name different first bad
        // bytes: the in-memory decode reports a NUL anywhere before invalid
        // UTF-8, the streamed one the first problem in file order.
        (Err(PlanError::Splice(SpliceError::NotText(_))), Err(SpliceError::NotText(_))) => {}
        (Err(PlanError::Splice(streamed)), Err(held)) => {
            assert_eq!(streamed, held, "the paths fail differently");
        }
        (planned, held) => panic!("the paths disagree: streamed {planned:?}, in memory {held:?}"),
    }
});
