//! Read's `N: ` line-number prefixes and literal escape sequences in a
//! model's text: recognised, and removed or decoded for a second reading.

/// How read's `N: ` prefixes appear in a text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pasted {
    /// On every non-empty line (at least two), numbers increasing.
    Every,
    /// On the first line only, with this number.
    First(u64),
}

/// `N: text` (or `N:` alone, read's empty line with its space trimmed):
/// the number and the text.
pub(super) fn line_prefix(line: &str) -> Option<(u64, &str)> {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 12 {
        return None;
    }
    let n = line[..digits].parse().ok()?;
    let rest = &line[digits..];
    match rest.strip_prefix(": ") {
        Some(text) => Some((n, text)),
        None if rest == ":" => Some((n, "")),
        None => None,
    }
}

pub(super) fn pasted_prefixes(lines: &[&str]) -> Option<Pasted> {
    let first = line_prefix(lines.first()?)?.0;
    let mut last = None;
    let mut count = 0;
    let mut every = true;
    for line in lines {
        match line_prefix(line) {
            Some((n, _)) if last.is_none_or(|l| n > l) => {
                last = Some(n);
                count += 1;
            }
            None if line.is_empty() => {}
            _ => every = false,
        }
    }
    if every && count >= 2 {
        Some(Pasted::Every)
    } else {
        Some(Pasted::First(first))
    }
}

/// `text` without read's prefixes (on the first line only, or on every line).
pub(super) fn strip_prefixes(text: &str, first_only: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match line_prefix(line) {
            Some((_, rest)) if i == 0 || !first_only => out.push_str(rest),
            _ => out.push_str(line),
        }
    }
    out
}

/// Whether every line of `text` starts with read's `N: ` prefix, numbered
/// consecutively (at least two lines; read's `File:` header and footer may be
/// there too): the first and last numbers. Ordinary numbered text (`1. step`,
/// one line `1: one`) does not qualify.
pub fn numbered_like_read(text: &str) -> Option<(u64, u64)> {
    let (mut lines, _) = split_lines(text);
    if lines.first().is_some_and(|l| l.starts_with("File: ")) {
        lines.remove(0);
    }
    if lines
        .last()
        .is_some_and(|l| l.starts_with('(') && l.ends_with(')'))
    {
        lines.pop();
    }
    if lines.len() < 2 {
        return None;
    }
    let first = line_prefix(lines[0].trim_end_matches('\r'))?.0;
    for (i, line) in lines.iter().enumerate() {
        let (n, _) = line_prefix(line.trim_end_matches('\r'))?;
        if n != first + i as u64 {
            return None;
        }
    }
    Some((first, first + lines.len() as u64 - 1))
}

/// `text` with `\n`, `\t`, `\r`, `\"`, `\'` and `\\` decoded, when it has at
/// least one `\n` or `\t`.
pub(super) fn decode_escapes(text: &str) -> Option<String> {
    if !text.contains("\\n") && !text.contains("\\t") {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(&q @ ('"' | '\'' | '\\')) => out.push(q),
            _ => {
                out.push('\\');
                continue;
            }
        }
        chars.next();
    }
    Some(out.replace("\r\n", "\n"))
}

/// The lines of `text` and whether it ends with a line break (which then
/// does not start another line).
pub(super) fn split_lines(text: &str) -> (Vec<&str>, bool) {
    match text.strip_suffix('\n') {
        Some(body) => (body.split('\n').collect(), true),
        None => (text.split('\n').collect(), false),
    }
}
