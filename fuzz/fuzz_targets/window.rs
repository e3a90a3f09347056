//! Read windowing and rendering: chunk boundaries never change the output,
//! the output stays within its cap, and nothing panics.
#![no_main]

use dsh_fs_tools::tools::{MAX_OUTPUT_BYTES, Window};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, u16, u16, u8)| {
    let (text, offset, limit, chunk) = input;
    let (offset, limit) = (u64::from(offset.max(1)), u64::from(limit.clamp(1, 2000)));
    let mut whole = Window::new(offset, limit);
    whole.push(text);
    let whole = whole.finish("f.txt", None);

    let mut pieces = Window::new(offset, limit);
    let size = usize::from(chunk.max(1));
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = size.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        pieces.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    let pieces = pieces.finish("f.txt", None);
    assert_eq!(whole, pieces);
    if let Ok(out) = whole {
        assert!(out.len() <= MAX_OUTPUT_BYTES + 512, "output of {} bytes", out.len());
        assert!(out.starts_with("File: f.txt\n"));
    }
});
