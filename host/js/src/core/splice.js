// Byte-faithful literal edits. `old_string` is matched against the file's
// text with every CRLF seen as LF; the result is spliced into the original:
// only the matched ranges change. The BOM, every other line's ending and a
// missing final newline stay byte for byte, and the replacement takes the
// line ending of the text it replaces.

import { bomLength, decode } from './text.js';

const encoder = new TextEncoder();

/** Why an edit cannot be applied: a provider error code and the message naming `path`. */
export class SpliceError {
  constructor(code, describe) {
    this.code = code;
    this.describe = describe;
  }

  message(path) {
    return this.describe(path);
  }
}

/** Folds every CRLF in `s` to LF. */
export function foldCrlf(s) {
  return s.includes('\r\n') ? s.replaceAll('\r\n', '\n') : s;
}

/** `text` with CRLF folded to LF, and the folded offsets of each LF that was a CRLF. */
function fold(text) {
  const crlfAt = [];
  if (!text.includes('\r\n')) return { folded: text, crlfAt };
  const parts = text.split('\r\n');
  let at = 0;
  for (let i = 0; i < parts.length - 1; i++) {
    at += parts[i].length;
    crlfAt.push(at);
    at += 1;
  }
  return { folded: parts.join('\n'), crlfAt };
}

/** Offset in the unfolded text of folded offset `at`: a CRLF's LF maps to its CR. */
function unfold(crlfAt, at) {
  let lo = 0;
  let hi = crlfAt.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (crlfAt[mid] < at) lo = mid + 1;
    else hi = mid;
  }
  return at + lo;
}

function countLf(s, from, to) {
  let n = 0;
  for (let at = s.indexOf('\n', from); at !== -1 && at < to; at = s.indexOf('\n', at + 1)) n++;
  return n;
}

/**
 * Applies `{ oldString, newString, replaceAll }` to the file `original`
 * (a Uint8Array): `{ bytes, replacements, firstLine }`, or throws a
 * SpliceError (or NotText when the file is not text).
 */
export function apply(original, edit) {
  const text = decode(original);
  const base = bomLength(original);
  const old = foldCrlf(edit.oldString);
  if (old.length === 0) {
    throw new SpliceError('invalid-input', () => 'old_string must not be empty');
  }
  const replacement = foldCrlf(edit.newString);
  const { folded, crlfAt } = fold(text);

  const matches = [];
  for (let at = folded.indexOf(old); at !== -1; at = folded.indexOf(old, at + old.length)) {
    matches.push(at);
  }
  if (matches.length === 0) {
    throw new SpliceError('edit-not-found', (path) => `old_string was not found in ${path}`);
  }
  if (matches.length > 1 && !edit.replaceAll) {
    const lines = [];
    let line = 1;
    let from = 0;
    for (const at of matches) {
      line += countLf(folded, from, at);
      from = at;
      lines.push(line);
    }
    const more = lines.length > 10 ? ', …' : '';
    throw new SpliceError(
      'ambiguous-edit',
      (path) =>
        `old_string matches ${lines.length} places in ${path} (lines ${lines.slice(0, 10).join(', ')}${more})`,
    );
  }

  const pieces = [];
  let copied = 0; // offset in `text` up to which it is in `pieces`
  for (const at of matches) {
    const start = unfold(crlfAt, at);
    const end = unfold(crlfAt, at + old.length);
    pieces.push(text.slice(copied, start));
    const crlf = usesCrlf(text, start, end);
    pieces.push(crlf ? replacement.replaceAll('\n', '\r\n') : replacement);
    copied = end;
  }
  pieces.push(text.slice(copied));
  const body = encoder.encode(pieces.join(''));
  const bytes = new Uint8Array(base + body.length);
  bytes.set(original.subarray(0, base));
  bytes.set(body, base);
  return { bytes, replacements: matches.length, firstLine: countLf(folded, 0, matches[0]) + 1 };
}

/**
 * Whether the replacement for `text[start..end]` ends its lines with CRLF:
 * the ending of the first line break inside the range, else of the line the
 * range sits on, else of the line before it; LF when the text has none.
 */
function usesCrlf(text, start, end) {
  const isCrlf = (nl) => nl > 0 && text[nl - 1] === '\r';
  const inside = text.indexOf('\n', start);
  if (inside !== -1 && inside < end) return isCrlf(inside);
  const after = text.indexOf('\n', end);
  if (after !== -1) return isCrlf(after);
  const before = start > 0 ? text.lastIndexOf('\n', start - 1) : -1;
  return before !== -1 && isCrlf(before);
}
