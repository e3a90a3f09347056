// The key of a path a host names when it seeds a store or plays another
// writer (`insert`, `put`): relative to the store's root, `.` and empty
// parts dropped, `..` and paths outside the root refused, and so are keys
// no tool can name (the component's path rules, dsh_fs_core::seam::normalize):
// with a NUL, or longer than MAX_PATH_BYTES.

import { FsError } from '../error.js';

/** The longest path a tool takes, in UTF-8 bytes (Linux's PATH_MAX). */
export const MAX_PATH_BYTES = 4096;

const encoder = new TextEncoder();

export function seedingKey(root, path) {
  if (path.includes('\0')) throw new FsError('invalid-input', `${JSON.stringify(path)} contains a NUL byte, which no path may; nothing was done`);
  const prefix = `${root.replace(/\/+$/, '')}/`;
  const relative = path === root ? '' : path.startsWith(prefix) ? path.slice(prefix.length) : path;
  const parts = relative.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..') || relative.startsWith('/')) throw FsError.sandboxDenied(path);
  const key = parts.join('/');
  const bytes = encoder.encode(key).byteLength;
  if (bytes > MAX_PATH_BYTES) {
    throw new FsError('invalid-input', `the path is ${bytes} bytes long, more than the ${MAX_PATH_BYTES} a tool takes; nothing was done`);
  }
  return key;
}
