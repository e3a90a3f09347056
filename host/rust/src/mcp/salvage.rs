//! Finding the top-level `id` and `method` of a JSON-RPC message from its
//! first and last bytes alone, for a line too long to keep or not valid JSON;
//! and counting a line's JSON values without parsing it.

use rmcp::model::RequestId;

/// Bytes kept from each end of a line for finding its `id` and `method`.
pub(super) const EDGE_BYTES: usize = 4 << 10;

pub(super) fn ends(line: &[u8]) -> (&[u8], &[u8]) {
    let head = &line[..line.len().min(EDGE_BYTES)];
    let tail = &line[line.len().saturating_sub(EDGE_BYTES)..];
    (head, tail)
}

/// Whether `line` holds more than `limit` JSON values (counted as the `{`,
/// `[` and `,` outside strings, which is at least the number of values less one).
pub(super) fn more_values_than(line: &[u8], limit: usize) -> bool {
    let mut count = 0usize;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => match string_end(line, i) {
                Some(end) => i = end,
                None => return false, // unterminated: the parser reports it
            },
            b'{' | b'[' | b',' => {
                count += 1;
                if count > limit {
                    return true;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    false
}

/// The top-level `id` and `method` found in the kept ends of a message.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Salvaged {
    pub(super) id: Option<RequestId>,
    pub(super) method: Option<String>,
}

/// Reads the top-level members at the start of `head` (forwards) and at the
/// end of `tail` (backwards) as far as they are complete; the first `id` and
/// `method` found win.
pub(super) fn salvage(head: &[u8], tail: &[u8]) -> Salvaged {
    let mut found = Salvaged::default();
    let mut visit = |key: &[u8], value: &[u8]| match key {
        b"id" if found.id.is_none() => found.id = serde_json::from_slice(value).ok(),
        b"method" if found.method.is_none() => found.method = serde_json::from_slice(value).ok(),
        _ => {}
    };
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    members_forward(head, &mut visit);
    members_backward(tail, &mut visit);
    found
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Calls `visit(key, value)` for each complete top-level member from the start.
fn members_forward(s: &[u8], visit: &mut impl FnMut(&[u8], &[u8])) -> Option<()> {
    let skip = |mut i: usize| {
        while s.get(i).is_some_and(|&b| is_ws(b)) {
            i += 1;
        }
        i
    };
    let mut i = skip(0);
    if *s.get(i)? != b'{' {
        return None;
    }
    i = skip(i + 1);
    if *s.get(i)? == b'}' {
        return Some(());
    }
    loop {
        let key_start = i;
        let key_end = string_end(s, i)?;
        i = skip(key_end);
        if *s.get(i)? != b':' {
            return None;
        }
        let start = skip(i + 1);
        let end = value_end(s, start)?;
        visit(&s[key_start + 1..key_end - 1], &s[start..end]);
        i = skip(end);
        match *s.get(i)? {
            b',' => i = skip(i + 1),
            _ => return Some(()),
        }
    }
}

/// The index after the string that starts at `i`, if it ends within `s`.
fn string_end(s: &[u8], i: usize) -> Option<usize> {
    if *s.get(i)? != b'"' {
        return None;
    }
    let mut j = i + 1;
    loop {
        let k = memchr::memchr2(b'"', b'\\', s.get(j..)?)? + j;
        if s[k] == b'"' {
            return Some(k + 1);
        }
        j = k + 2;
    }
}

/// The index after the value that starts at `i`, if it ends within `s`.
fn value_end(s: &[u8], i: usize) -> Option<usize> {
    match *s.get(i)? {
        b'"' => string_end(s, i),
        b'{' | b'[' => {
            let (mut j, mut depth) = (i, 0usize);
            loop {
                match *s.get(j)? {
                    b'"' => {
                        j = string_end(s, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => (i..s.len()).find(|&j| matches!(s[j], b',' | b'}' | b']') || is_ws(s[j])),
    }
}

/// Calls `visit(key, value)` for each complete top-level member from the end.
fn members_backward(s: &[u8], visit: &mut impl FnMut(&[u8], &[u8])) -> Option<()> {
    let skip = |mut i: usize| {
        while i > 0 && is_ws(s[i - 1]) {
            i -= 1;
        }
        i
    };
    let mut i = skip(s.len());
    if *s.get(i.checked_sub(1)?)? != b'}' {
        return None;
    }
    i -= 1;
    loop {
        let end = skip(i);
        let start = value_start_back(s, end)?;
        let mut j = skip(start);
        if s[j.checked_sub(1)?] != b':' {
            return None;
        }
        j = skip(j - 1);
        let key_start = string_start_back(s, j)?;
        visit(&s[key_start + 1..j - 1], &s[start..end]);
        i = skip(key_start);
        if s[i.checked_sub(1)?] != b',' {
            return Some(());
        }
        i -= 1;
    }
}

/// The index of the opening quote of the string whose closing quote is at
/// `end - 1`: the nearest quote before it with an even number of
/// backslashes before it. `None` when that run reaches the start of `s`,
/// where more backslashes may have been cut off.
fn string_start_back(s: &[u8], end: usize) -> Option<usize> {
    if *s.get(end.checked_sub(1)?)? != b'"' {
        return None;
    }
    let mut j = end - 1;
    loop {
        j = memchr::memrchr(b'"', &s[..j])?;
        let backslashes = s[..j].iter().rev().take_while(|&&b| b == b'\\').count();
        if backslashes == j {
            return None;
        }
        if backslashes % 2 == 0 {
            return Some(j);
        }
    }
}

/// The start of the value that ends at `end`, scanning backwards.
fn value_start_back(s: &[u8], end: usize) -> Option<usize> {
    match s[end.checked_sub(1)?] {
        b'"' => string_start_back(s, end),
        b'}' | b']' => {
            let (mut j, mut depth) = (end, 0usize);
            loop {
                j = j.checked_sub(1)?;
                match s[j] {
                    b'"' => j = string_start_back(s, j + 1)?,
                    b'}' | b']' => depth += 1,
                    b'{' | b'[' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {
            let start = (0..end)
                .rev()
                .find(|&j| matches!(s[j], b',' | b':' | b'[' | b'{') || is_ws(s[j]))?;
            Some(start + 1)
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: i64) -> Option<RequestId> {
        Some(RequestId::Number(n))
    }

    #[test]
    fn salvage_reads_id_and_method_from_either_end() {
        let head = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write","arguments":{"content":"aaa"#;
        let found = salvage(head, b"aaa\"}}}");
        assert_eq!(found.id, id(7));
        assert_eq!(found.method.as_deref(), Some("tools/call"));

        let head = br#"{"jsonrpc":"2.0","params":{"arguments":{"content":"a\"}"#;
        let tail = br#"a \"id\":1 \\"}},"method":"tools/call", "id" : "req-\"9\""}"#;
        let found = salvage(head, tail);
        assert_eq!(found.id, Some(RequestId::String("req-\"9\"".into())));
        assert_eq!(found.method.as_deref(), Some("tools/call"));
    }

    #[test]
    fn salvage_ignores_ids_nested_in_params_and_cut_members() {
        let head = br#"{"params":{"id":5,"x":"#;
        let tail = br#"":[1,{"id":6}]},"id":"#;
        assert_eq!(salvage(head, tail), Salvaged::default());
        // A string cut off before the id does not hide it.
        let tail = br#"\"},"id":8}"#;
        assert_eq!(salvage(b"{\"params\":", tail).id, id(8));
    }

    #[test]
    fn value_count_skips_strings() {
        assert!(!more_values_than(br#"{"a":"[,,,,{{{"}"#, 2));
        assert!(more_values_than(br#"{"a":[0,0,0]}"#, 2));
    }
}
