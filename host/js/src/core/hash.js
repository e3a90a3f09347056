// The content hash in version tokens: 64-bit FNV-1a over the raw bytes, in
// 16- and 32-bit integer arithmetic so it runs synchronously anywhere (no
// BigInt, no Node crypto) at JIT speed.

/** The hash of `bytes` (a Uint8Array) as 16 lowercase hex digits. */
export function contentHash(bytes) {
  let hi = 0xcbf29ce4 | 0;
  let lo = 0x84222325 | 0;
  for (let i = 0; i < bytes.length; i++) {
    lo ^= bytes[i];
    // (hi·2^32 + lo) · (2^40 + 0x1b3) mod 2^64. The low half is lo·0x1b3
    // mod 2^32; the high half gets hi·0x1b3, lo·2^8 and the carry of lo·0x1b3.
    const a = (lo & 0xffff) * 0x1b3;
    const b = (lo >>> 16) * 0x1b3 + (a >>> 16);
    hi = (Math.imul(hi, 0x1b3) + (lo << 8) + (b >>> 16)) | 0;
    lo = (b << 16) | (a & 0xffff);
  }
  return hex8(hi >>> 0) + hex8(lo >>> 0);
}

function hex8(n) {
  return n.toString(16).padStart(8, '0');
}
