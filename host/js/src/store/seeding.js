// The key of a path a host names when it seeds a store or plays another
// writer (`insert`, `put`): relative to the store's root, `.` and empty
// parts dropped, `..` and paths outside the root refused.

import { FsError } from '../error.js';

export function seedingKey(root, path) {
  const prefix = `${root.replace(/\/+$/, '')}/`;
  const relative = path === root ? '' : path.startsWith(prefix) ? path.slice(prefix.length) : path;
  const parts = relative.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..') || relative.startsWith('/')) throw FsError.sandboxDenied(path);
  return parts.join('/');
}
