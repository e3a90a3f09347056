// Byte-faithful literal edits. `old_string` is matched against the file's
// text with every CRLF seen as LF; the result is spliced into the original:
// only the matched ranges change. The BOM, every other line's ending and a
// missing final newline stay byte for byte, and the replacement takes the
// line ending of the text it replaces.

import { bomLength, decode } from './text.js';

const encoder = new TextEncoder();

/** Largest file an edit may produce: results are built in memory. */
export const MAX_RESULT_BYTES = 16 * 1024 * 1024;
/** Match lines an ambiguous-edit message names. */
const SHOWN_MATCHES = 10;

/** Bytes of `s` as UTF-8, without encoding it. */
function utf8Length(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

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

  // First pass: count the matches, keep the lines the message shows and the
  // exact size of the result, so nothing is built past the limit.
  const replacementLf = utf8Length(replacement);
  const replacementCrlf = replacementLf + countLf(replacement, 0, replacement.length);
  const oldBytes = utf8Length(old);
  let count = 0;
  let size = original.length;
  const lines = [];
  let line = 1;
  let from = 0;
  for (let at = folded.indexOf(old); at !== -1; at = folded.indexOf(old, at + old.length)) {
    count++;
    if (lines.length < SHOWN_MATCHES) {
      line += countLf(folded, from, at);
      from = at;
      lines.push(line);
    }
    const start = unfold(crlfAt, at);
    const end = unfold(crlfAt, at + old.length);
    const matched = oldBytes + (end - start - old.length);
    size += (usesCrlf(text, start, end) ? replacementCrlf : replacementLf) - matched;
  }
  if (count === 0) {
    throw new SpliceError('edit-not-found', (path) => `old_string was not found in ${path}`);
  }
  if (count > 1 && !edit.replaceAll) {
    const more = count > lines.length ? ', …' : '';
    throw new SpliceError(
      'ambiguous-edit',
      (path) => `old_string matches ${count} places in ${path} (lines ${lines.join(', ')}${more})`,
    );
  }
  if (size > MAX_RESULT_BYTES) {
    throw new SpliceError(
      'too-large',
      (path) =>
        `the change would make ${path} ${size} bytes, more than the ${MAX_RESULT_BYTES}-byte limit ` +
        '(nothing was changed; replace fewer places or use a shorter new_string)',
    );
  }
  // Second pass: encode straight into a buffer of the exact size.
  const bytes = new Uint8Array(size);
  bytes.set(original.subarray(0, base));
  let written = base;
  const put = (piece) => {
    written += encoder.encodeInto(piece, bytes.subarray(written)).written;
  };
  const replacementCrlfText = replacement.replaceAll('\n', '\r\n');
  let copied = 0; // offset in `text` up to which it is encoded
  let firstAt = -1;
  for (let at = folded.indexOf(old); at !== -1; at = folded.indexOf(old, at + old.length)) {
    if (firstAt === -1) firstAt = at;
    const start = unfold(crlfAt, at);
    const end = unfold(crlfAt, at + old.length);
    put(text.slice(copied, start));
    put(usesCrlf(text, start, end) ? replacementCrlfText : replacement);
    copied = end;
  }
  put(text.slice(copied));
  return { bytes, replacements: count, firstLine: countLf(folded, 0, firstAt) + 1 };
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
