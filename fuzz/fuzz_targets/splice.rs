//! The byte-faithful edit splice: whatever the file and strings, an edit
//! either fails cleanly or changes only the matched ranges.
#![no_main]

use dsh_fs_core::EditRequest;
use dsh_fs_core::splice::{self, SpliceError};
use libfuzzer_sys::fuzz_target;

/// Offset in `raw` of offset `at` in `raw` with CRLFs folded to LF.
fn unfold(raw: &[u8], at: usize) -> usize {
    let (mut i, mut j) = (0, 0);
    while j < at {
        i += if raw[i..].starts_with(b"\r\n") { 2 } else { 1 };
        j += 1;
    }
    i
}

fuzz_target!(|input: (&[u8], &str, &str, bool)| {
    let (file, old, new, replace_all) = input;
    let edit = EditRequest::new(old, new, replace_all);
    match splice::apply(file, &edit) {
        Ok(out) => {
            assert!(out.replacements >= 1);
            assert!(replace_all || out.replacements == 1);
            let text = std::str::from_utf8(&out.bytes).expect("an edit of text yields text");
            // The BOM and everything before the first match are untouched.
            let bom = if file.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
            let body = &file[bom..];
            let folded_body = String::from_utf8_lossy(body).replace("\r\n", "\n");
            let first = folded_body.find(&old.replace("\r\n", "\n")).expect("a match was reported");
            let prefix = &file[..bom + unfold(body, first)];
            assert!(out.bytes.starts_with(prefix), "bytes before the match changed");
            // The replacement is in the result, in LF or CRLF form.
            let folded_new = new.replace("\r\n", "\n");
            assert!(
                text.contains(&folded_new) || text.contains(&folded_new.replace('\n', "\r\n")),
                "the replacement is missing"
            );
            // Without CRs anywhere, the splice is plain literal replacement.
            if !file.contains(&b'\r') && !old.contains('\r') && !new.contains('\r') {
                let plain = std::str::from_utf8(file).unwrap();
                // Exactly one leading BOM is not text; a second one is.
                let bom = plain.starts_with('\u{feff}');
                let body = plain.strip_prefix('\u{feff}').unwrap_or(plain);
                let expected = if replace_all { body.replace(old, new) } else { body.replacen(old, new, 1) };
                let expected = if bom { format!("\u{feff}{expected}") } else { expected };
                assert_eq!(text, expected);
            }
        }
        Err(SpliceError::EmptyOldString) => assert!(old.replace("\r\n", "\n").is_empty()),
        Err(SpliceError::Ambiguous { count, lines }) => {
            assert!(!replace_all && count >= 2 && lines.len() >= 2);
            assert!(lines.len() as u64 <= count && lines.len() <= splice::SHOWN_MATCHES);
            assert!(lines.windows(2).all(|w| w[0] <= w[1]));
        }
        Err(SpliceError::TooLarge { size, limit }) => assert!(size > limit),
        Err(SpliceError::NotFound | SpliceError::NotText(_)) => {}
    }
});
