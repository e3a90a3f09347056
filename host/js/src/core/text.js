// Decoding file bytes into model-facing text, whole or in chunks: UTF-8 via a
// fatal TextDecoder, NUL bytes refused, a leading BOM kept out of the text
// (it stays in the bytes). Failures say where, as byte offsets.

const BOM = [0xef, 0xbb, 0xbf];
const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Why bytes are not text, and where (byte offset in the file). */
export class NotText {
  constructor(offset, nul) {
    this.offset = offset;
    this.nul = nul;
  }

  toString() {
    return this.nul
      ? `binary: NUL byte at offset ${this.offset}`
      : `invalid UTF-8 at offset ${this.offset}`;
  }
}

/** Length of a leading BOM in `bytes` (0 or 3). */
export function bomLength(bytes) {
  return bytes.length >= 3 && bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2]
    ? 3
    : 0;
}

/** The text of a whole file, without its BOM; throws NotText. */
export function decode(bytes) {
  const skip = bomLength(bytes);
  const body = bytes.subarray(skip);
  const nul = body.indexOf(0);
  if (nul >= 0) throw new NotText(skip + nul, true);
  return decodeUtf8(body, skip);
}

function decodeUtf8(body, base) {
  try {
    return fatal.decode(body);
  } catch {
    throw new NotText(base + validUpTo(body), false);
  }
}

/**
 * Where valid UTF-8 in `bytes` ends (Unicode table 3-7: no overlongs, no
 * surrogates, nothing above U+10FFFF). Only run once decoding has failed.
 */
function validUpTo(bytes) {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const c = bytes[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    let need;
    let low = 0x80;
    let high = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0) low = 0xa0;
      else if (c === 0xed) high = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0) low = 0x90;
      else if (c === 0xf4) high = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const d = i + k < n ? bytes[i + k] : -1;
      if (d < (k === 1 ? low : 0x80) || d > (k === 1 ? high : 0xbf)) return i;
    }
    i += need + 1;
  }
  return n;
}

/** How many bytes at the end of `bytes` may be the start of a cut-off character (0-3). */
function trailingPartial(bytes) {
  const n = bytes.length;
  for (let back = 1; back <= Math.min(3, n); back++) {
    const c = bytes[n - back];
    if ((c & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const size = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return size > back ? back : 0;
  }
  return 0;
}

/**
 * Incremental `decode` for chunked reads: a character split across chunks
 * is carried to the next one; the offsets in errors are file offsets.
 */
export class StreamDecoder {
  #pending = new Uint8Array(0);
  #offset = 0;
  #started = false;

  /** A decoder starting `offset` bytes into a file's text (past any BOM), at a character boundary. */
  static resume(offset) {
    const d = new StreamDecoder();
    d.#offset = offset;
    d.#started = true;
    return d;
  }

  /** Bytes held back from earlier chunks (at most 3). */
  get pending() {
    return this.#pending.length;
  }

  /** Decodes `chunk` (the next bytes of the file): the text of every complete character so far. */
  push(chunk) {
    let buf = chunk;
    if (this.#pending.length > 0) {
      buf = new Uint8Array(this.#pending.length + chunk.length);
      buf.set(this.#pending);
      buf.set(chunk, this.#pending.length);
    }
    let start = 0;
    if (!this.#started) {
      if (buf.length < 3 && BOM.slice(0, buf.length).every((b, i) => buf[i] === b)) {
        this.#pending = buf.slice(); // too short to tell a BOM from text yet
        return '';
      }
      this.#started = true;
      start = bomLength(buf);
      this.#offset += start;
    }
    const body = buf.subarray(start);
    const complete = body.length - trailingPartial(body);
    const text = decodeUtf8(body.subarray(0, complete), this.#offset);
    const nul = body.subarray(0, complete).indexOf(0);
    if (nul >= 0) throw new NotText(this.#offset + nul, true);
    this.#pending = body.slice(complete);
    this.#offset += complete;
    return text;
  }

  /** Ends the stream: a character cut off by the end of the file is invalid. */
  finish() {
    if (!this.#started) {
      // A file shorter than a BOM that looked like its prefix.
      this.#started = true;
      const rest = this.#pending;
      this.#pending = new Uint8Array(0);
      decode(rest);
      return;
    }
    if (this.#pending.length > 0) throw new NotText(this.#offset, false);
  }
}
