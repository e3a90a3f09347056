//! The diagnosis on small texts, whole and chunked.

use super::scan::{LooseEnds, ascii_words, hash, hash_in, is_word, loosen, word_hash};
use super::*;

fn diagnose(file: &str, old: &str, new: &str) -> Diagnosis {
    let mut d = Diagnoser::new(old, new);
    d.push(file);
    d.finish()
}

fn diagnose_chunked(file: &str, old: &str, new: &str, size: usize) -> Diagnosis {
    let mut d = Diagnoser::new(old, new);
    let mut rest = file;
    while !rest.is_empty() {
        let mut cut = size.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        d.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    d.finish()
}

const RUST: &str = "use std::io;\n\nfn total(items: &[Item]) -> u64 {\n\tlet sum = items.iter().map(|i| i.price).sum::<u64>();\n\tif sum > 100 {\n\t\treturn sum - 10;\n\t}\n\tsum\n}\n";

#[test]
fn tabs_against_spaces() {
    let d = diagnose(
        RUST,
        "    if sum > 100 {\n        return sum - 10;\n    }",
        "x",
    );
    assert!(
        d.message
            .contains("indentation differs: the file indents with tabs, old_string with spaces"),
        "{}",
        d.message
    );
    assert!(
        d.message.starts_with("lines 5-7 match it except"),
        "{}",
        d.message
    );
    assert_eq!(d.excerpt, Some((5, 3)));
}

#[test]
fn one_misremembered_token() {
    let d = diagnose(RUST, "let sum = items.iter().map(|x| x.price)", "y");
    assert!(
        d.message.starts_with("the nearest text is line 4: "),
        "{}",
        d.message
    );
    assert!(
        d.message.contains(
            "line 4 has `iter().map(|i| i.price)` where old_string has `iter().map(|x| x.price)`"
        ),
        "{}",
        d.message
    );
    assert_eq!(d.excerpt, Some((4, 1)));
}

#[test]
fn a_misremembered_block_with_a_missing_line() {
    let d = diagnose(
        RUST,
        "\tlet sum = items.iter().map(|i| i.price).sum::<u64>();\n\tif sum > 100 {\n\t}\n\tsum\n",
        "y",
    );
    assert!(d.message.contains("lines 4-8"), "{}", d.message);
    assert!(d.message.contains("the file has line 6"), "{}", d.message);
}

#[test]
fn prefixes_everywhere_or_first() {
    let d = diagnose(RUST, "5: \tif sum > 100 {\n6: \t\treturn sum - 10;", "x");
    assert!(
        d.message.contains("remove the `N: ` prefixes"),
        "{}",
        d.message
    );
    assert!(d.message.contains("matches lines 5-6"), "{}", d.message);
    let d = diagnose(RUST, "5: \tif sum > 100 {\n\t\treturn sum - 10;", "x");
    assert!(d.message.contains("first line only"), "{}", d.message);
}

#[test]
fn escapes_already_applied_and_nothing() {
    let d = diagnose(RUST, "if sum > 100 {\\n\\t\\treturn sum - 10;", "x");
    assert!(
        d.message.contains("literal escape sequences"),
        "{}",
        d.message
    );
    let d = diagnose(RUST, "return sum - 5;", "return sum - 10;");
    assert!(
        d.message.contains("already present at line 6"),
        "{}",
        d.message
    );
    let d = diagnose(RUST, "zebra giraffe", "x");
    assert_eq!(
        d.message,
        "nothing similar; the file has 9 lines. Read the file again and copy old_string from its current text."
    );
    assert_eq!(d.excerpt, None);
}

#[test]
fn typography_and_final_newline() {
    let md = "# Notes\n\nIt's a \"quoted\" -- thing.\nend";
    let d = diagnose(md, "It’s a “quoted” — thing.", "x");
    assert!(
        d.message
            .contains("typographic characters differ on line 3"),
        "{}",
        d.message
    );
    assert!(d.message.contains("`’` (U+2019)"), "{}", d.message);
    let d = diagnose(md, "end\n", "x");
    assert!(
        d.message.contains("has none: drop the final line break"),
        "{}",
        d.message
    );
}

#[test]
fn chunking_never_changes_the_diagnosis() {
    let file: String = (1..=400)
        .map(|i| format!("    value_{i} = compute({i}, \"x\");\r\n"))
        .collect();
    for old in [
        "value_200 = compute(201, \"x\")",
        "\tvalue_10 = compute(10, \"x\");\n\tvalue_11 = compute(11, \"x\");",
        "value_399 = compute(399, \"x\");\nvalue_400",
    ] {
        let whole = diagnose(&file, old, "z");
        for size in [1, 7, 64, 1000] {
            assert_eq!(
                diagnose_chunked(&file, old, "z", size),
                whole,
                "{old} {size}"
            );
        }
    }
}

#[test]
fn odd_inputs_never_panic_and_chunking_never_matters() {
    const ALPHABET: &[&str] = &[
        "a",
        "b",
        "fn",
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\r",
        "’",
        "—",
        "--",
        "\u{a0}",
        "é",
        "\u{200b}",
        "1: ",
        "\\n",
        "{",
        "}",
        "x.y",
        "\u{1F600}",
    ];
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    let text = |len: usize, next: &mut dyn FnMut(usize) -> usize| -> String {
        (0..len).map(|_| ALPHABET[next(ALPHABET.len())]).collect()
    };
    for round in 0..300 {
        let file = text(next(80), &mut next);
        let old = text(1 + next(20), &mut next);
        let new = text(next(6), &mut next);
        let whole = diagnose(&file, &old, &new);
        assert!(whole.message.len() < 600, "{round}: {}", whole.message);
        if let Some((first, count)) = whole.excerpt {
            assert!(
                first >= 1 && (1..=EXCERPT_LINES).contains(&count),
                "{round}"
            );
        }
        for size in [1, 3, 16] {
            assert_eq!(
                diagnose_chunked(&file, &old, &new, size),
                whole,
                "{round} {size}: {file:?} {old:?}"
            );
        }
    }
    for (file, old) in [
        ("", "x"),
        ("\n\n\n", "\n"),
        ("a\n", "\r"),
        ("a", "   "),
        ("x\n", &"y\n".repeat(500)),
        (&"long ".repeat(10_000), "long long lung"),
    ] {
        let d = diagnose(file, old, "z");
        assert!(d.message.len() < 600, "{}", d.message);
    }
}

#[test]
fn the_ascii_fast_path_loosens_like_the_general_one() {
    for line in [
        "",
        "  a  -- b\t-c ",
        "x-  -y",
        "--",
        " \x0b\x0c\r",
        "fn a() { b - c }",
    ] {
        let mut loose = String::new();
        loosen(line, |p| loose.push_str(p));
        let f = Features::full(line);
        assert_eq!(f.loose, loose, "{line:?}");
        assert_eq!(f.loose_hash, Some(hash(loose.as_bytes())), "{line:?}");
        let mut ends = LooseEnds::default();
        ends.add(&loose);
        let mut g = Features::default();
        g.of(line, Some(&ends));
        assert_eq!(g.loose_hash, f.loose_hash, "{line:?}");
        g.tokens.sort_unstable();
        assert_eq!(g.tokens, f.tokens, "{line:?}");
    }
}

#[test]
fn the_scan_skips_loose_forms_that_cannot_match() {
    let mut ends = LooseEnds::default();
    ends.add("a b;");
    let mut f = Features::default();
    f.of("  x b;", Some(&ends));
    assert_eq!(f.loose_hash, None);
    f.of("  a  c; ", Some(&ends));
    assert_eq!(f.loose_hash, Some(hash(b"a c;")));
}

#[test]
fn short_words_never_collide() {
    let words = [
        "a", "b", "ab", "ba", "a_", "_a", "abcdefgh", "abcdefg", "bcdefgh", "1", "01",
    ];
    let mut hashes: Vec<u64> = words.iter().map(|w| hash(w.as_bytes())).collect();
    hashes.sort_unstable();
    hashes.dedup();
    assert_eq!(hashes.len(), words.len());
}

#[test]
fn read_prefixes_in_new_text() {
    assert_eq!(numbered_like_read("12: a\n13: b\n"), Some((12, 13)));
    assert_eq!(
        numbered_like_read("File: x\n1: a\n2:\n(End of file: 2 lines.)"),
        Some((1, 2))
    );
    assert_eq!(numbered_like_read("1: one"), None);
    assert_eq!(numbered_like_read("1. step\n2. step"), None);
    assert_eq!(numbered_like_read("1: a\n3: b"), None);
}

#[test]
fn kept_lines_are_the_files_lines() {
    let mut file = String::new();
    for i in 0..400 {
        file.push_str(&format!("line {i} of a generated text file\n"));
    }
    for (old, new) in [
        ("line 200 of a generated text fle\n", "x"),
        ("line 7 of a generated\nline 8 of a text file\n", "x"),
        ("line 399 of a generated text fil", "x"),
        ("line 1 of a generated texts file\n", "x"),
    ] {
        for size in [7, 64, 1 << 20] {
            let d = diagnose_chunked(&file, old, new, size);
            let (first, count) = d.excerpt.expect("an excerpt");
            let want: String = file
                .lines()
                .skip(first as usize - 1)
                .take(count as usize)
                .map(|l| format!("{l}\n"))
                .collect();
            assert_eq!(d.kept.as_deref(), Some(want.as_str()), "{old:?} {size}");
        }
    }
}

#[test]
fn ascii_words_split_like_chars() {
    let mut seed = 7u64;
    let mut lines: Vec<String> = (0u8..128)
        .map(|b| char::from(b).to_string().repeat(9))
        .collect();
    for len in 0..80 {
        let line: String = (0..len)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                char::from((seed >> 57) as u8)
            })
            .collect();
        lines.push(line);
    }
    lines.push("line 12 of a_b c9 __ x".to_owned());
    for line in &lines {
        let mut got = vec![];
        ascii_words(line.as_bytes(), |s, e| got.push(&line[s..e]));
        let want: Vec<&str> = line
            .split(|c| !is_word(c))
            .filter(|w| !w.is_empty())
            .collect();
        assert_eq!(got, want, "{line:?}");
    }
}

#[test]
fn hashes_read_the_same_anywhere_in_a_text() {
    // Eight bytes at a time, the last ones as a little-endian word.
    let reference = |bytes: &[u8]| {
        let mix = |x: u64| {
            let x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            x ^ (x >> 29)
        };
        let mut h = bytes.len() as u64;
        let mut chunks = bytes.chunks(8).peekable();
        if chunks.peek().is_none() {
            return mix(h);
        }
        for c in chunks {
            let w = c.iter().rev().fold(0u64, |w, &b| (w << 8) | u64::from(b));
            h = mix(h ^ w);
        }
        h
    };
    let text: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
    for s in 0..text.len() {
        for e in s..=text.len() {
            assert_eq!(hash_in(&text, s, e), reference(&text[s..e]), "{s}..{e}");
            assert_eq!(hash(&text[s..e]), reference(&text[s..e]), "{s}..{e}");
            assert_eq!(word_hash(&text, s, e), reference(&text[s..e]), "{s}..{e}");
        }
    }
}

#[test]
fn the_scan_finds_the_words_of_the_full_features() {
    for line in [
        "line 12 of a generated text file, padded to eighty bytes          ",
        "a a a b a_b ab ba abcdefghij abcdefghij abcdefghi x",
        "naïve café, naïve CAFÉ — ‘quoted’ déjà_vu",
        "self.items.iter().map(|item| item.price * item.count).sum::<u64>()",
    ] {
        let mut f = Features::default();
        f.of(line, Some(&LooseEnds::default()));
        let mut scanned = f.tokens.clone();
        scanned.sort_unstable();
        let full = Features::full(line).tokens;
        let mut want = full.clone();
        want.dedup();
        assert_eq!(full, want, "{line:?}: distinct");
        assert_eq!(scanned, full, "{line:?}");
    }
}

#[test]
fn lines_of_a_chunk_have_the_features_of_each_line() {
    const ALPHABET: &[&str] = &[
        "a", "Zz", "_", "9", " ", "\t", "\n", "-", "--", ";", "é", "’", "x_1", "@", "[", "`", "{",
    ];
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
    let mut ends = LooseEnds::default();
    for loose in ["a b", "Zz", "x_1 -", "; a", "@ -"] {
        ends.add(loose);
    }
    let words: scan::IdMap<Vec<u16>> = ["a", "Zz", "x_1", "word", "abc"]
        .iter()
        .map(|w| (hash(w.as_bytes()), vec![0]))
        .collect();
    let index = scan::TokenIndex::new(&words);
    let mut texts: Vec<String> = (0..400)
        .map(|_| {
            let len = next(300);
            (0..len).map(|_| ALPHABET[next(ALPHABET.len())]).collect()
        })
        .collect();
    let long = "word ".repeat(LINE_CAP / 5 + 1);
    texts.push(format!("{long}\n{long}abc def\nend"));
    for extra in 0..70 {
        // A line past the cap, then short lines in its last block.
        let over = "ab ".repeat((LINE_CAP + 64 + extra) / 3);
        texts.push(format!("{over}\nabc def\nx y\n"));
    }
    texts.push(format!("{}\nx\n", &long[..LINE_CAP - 1]));
    texts.push(format!("{}\nx\n", "é".repeat(LINE_CAP)));
    for text in &texts {
        let mut f = Features::default();
        let mut lines = lines::Lines::new(text, b'Z');
        let mut seen = vec![];
        let mut places = vec![];
        while let Some((line, scanned)) = lines.next(&mut f, &ends, Some(&index), &mut places) {
            seen.push(line);
            let mut want = Features::default();
            want.of(line, Some(&ends));
            let usable = line.is_ascii() && line.len() <= LINE_CAP;
            assert_eq!(scanned, usable, "{line:?}");
            if scanned {
                let (mut got, mut want_tokens) = (f.tokens.clone(), want.tokens.clone());
                got.sort_unstable();
                want_tokens.sort_unstable();
                assert_eq!(got, want_tokens, "{line:?}");
                assert_eq!(f.tokens.len(), want.tokens.len(), "{line:?}: distinct");
                let known = want.tokens.iter().filter(|&&t| index.has(t)).count();
                assert!(f.known.is_none_or(|n| n == known), "{line:?}: known");
                assert!(
                    f.known.is_some() || f.tokens.len() > 32,
                    "{line:?}: counted"
                );
                assert_eq!(f.loose_hash, want.loose_hash, "{line:?}");
                assert_eq!(f.loose, want.loose, "{line:?}");
            }
        }
        let rest = lines.rest();
        let zs: Vec<usize> = text.match_indices('Z').map(|(at, _)| at).collect();
        let scanned = text.len() - rest.len();
        assert!(places.iter().all(|at| zs.contains(at)), "{text:?}");
        assert!(
            zs.iter()
                .filter(|&&at| at < scanned)
                .all(|at| places.contains(at)),
            "{text:?}"
        );
        let mut all: Vec<&str> = text.split('\n').collect();
        assert_eq!(all.pop(), Some(rest));
        assert_eq!(seen, all);
    }
}

#[test]
fn new_text_is_found_in_any_chunking() {
    let mut file = String::new();
    for i in 0..300 {
        file.push_str(&format!("line {i} of a generated text file\n"));
        if i == 150 {
            file.push_str("  the EDITED line, 2 of them: EDITED\n");
        }
    }
    for new in [
        "EDITED line, 2",
        "text file\nline 7 of",
        "EDITED\nline 151",
        "zzz not there",
    ] {
        let whole = diagnose(&file, "line 20 of a generated text fil\n", new);
        for size in [1, 5, 31, 64, 65, 200, 4096] {
            assert_eq!(
                diagnose_chunked(&file, "line 20 of a generated text fil\n", new, size),
                whole,
                "{new:?} {size}"
            );
        }
        let found = whole.message.contains("already present");
        assert_eq!(found, !new.starts_with("zzz"), "{new:?}: {}", whole.message);
    }
}

#[test]
fn one_old_line_is_scored_as_a_window_of_one() {
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    const WORDS: &[&str] = &[
        "let", "x", "=", "y;", "fn", "a", "b(c)", "  ", "x_1", "->", "{", "}",
    ];
    let mut kept = 0;
    for round in 0..200 {
        let line = |next: &mut dyn FnMut(usize) -> usize| -> String {
            (0..next(8))
                .map(|_| WORDS[next(WORDS.len())])
                .collect::<Vec<_>>()
                .join(" ")
        };
        let file: Vec<String> = (0..next(60)).map(|_| line(&mut next)).collect();
        let old = line(&mut next) + if next(2) == 0 { "\n" } else { "" };
        let (mut one, mut windows) = (
            candidates::Matcher::new(&old),
            candidates::Matcher::new(&old),
        );
        let mut ends = LooseEnds::default();
        one.loose_ends(&mut ends);
        let mut ring = scan::Ring::new(1 + 2 * SLACK + 1);
        let mut f = Features::default();
        for (i, l) in file.iter().enumerate() {
            let j = i as u64 + 1;
            f.of(l, Some(&ends));
            ring.push(j, l);
            one.on_line_one(j, &f, &ring);
            windows.on_line_windows(j, &f, &ring);
        }
        let total = file.len() as u64;
        one.finish(total, &ring);
        windows.finish(total, &ring);
        assert_eq!(
            format!("{:?}", one.candidates),
            format!("{:?}", windows.candidates),
            "{round}"
        );
        kept += one.candidates.len();
    }
    assert!(kept > 200, "{kept}");
}

/// A deterministic generator: `next(n)` is below `n` (xorshift64 from `seed`).
fn xorshift(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    }
}

#[test]
fn spacing_inside_a_line_is_shown_visibly() {
    // A tab where the file has one space, between tokens too long to quote
    // around it: the comparison shows the whitespace itself.
    let file = "let a_rather_long_identifier_name = another_rather_long_identifier_name;\n";
    let old = "let a_rather_long_identifier_name =\tanother_rather_long_identifier_name;";
    let d = diagnose(file, old, "x");
    assert!(!d.message.contains("``"), "{}", d.message);
    assert!(
        d.message.contains("spacing differs on line 1"),
        "{}",
        d.message
    );
    assert!(
        d.message.contains('·') && d.message.contains("\\t"),
        "{}",
        d.message
    );
}

/// Every word within the edits allowed is found, whatever the edit (the
/// letter counts rule words out before the edit distance is computed, and
/// must never rule out one of these); words further off, or of another
/// length, are not.
#[test]
fn spelling_finds_each_kind_of_edit_and_nothing_further() {
    let near = [
        "quantitiy", // a letter added
        "qantity",   // one left out
        "quentity",  // one replaced
        "qxxntity",  // two replaced
        "quantiyt",  // two swapped
        "quanitty",  // two swapped inside
        "qauntiyt",  // two swaps
        "quàntity",  // a letter replaced by one outside ASCII
    ];
    for word in near {
        let mut spelling = Spelling::new("quantity").unwrap();
        spelling.line(7, &format!("let {word} = 1; // 12345678 abcdefgh"));
        let found = spelling.nearest();
        assert_eq!(found, Some((word.to_owned(), 1, 7)), "{word}");
    }
    for far in [
        "qxxxtity",
        "quantityxyz",
        "tnauqity",
        "ytitnauq",
        "12345678",
    ] {
        let mut spelling = Spelling::new("quantity").unwrap();
        spelling.line(1, far);
        assert_eq!(spelling.nearest(), None, "{far}");
    }
    let mut spelling = Spelling::words("{ product, quantitiy }").unwrap();
    spelling.line(3, "set(product.id, { product, quantity });");
    assert_eq!(
        spelling.misspelt(),
        vec![("quantitiy".to_owned(), "quantity".to_owned(), 1, 3)]
    );
}
