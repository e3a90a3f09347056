// `@dsh-fs/host/node`: a byte store over `node:fs`, for Node.js only.

import type { DirEntry, Listing, ObjectMeta, Place, Reader, Replacement, Store } from './index.js';

/**
 * A directory of the local disk: paths confined to `root` (links that leave
 * it are `sandbox-denied`, also when swapped in after a path was resolved:
 * each use walks held directories, on Linux), FIFOs refused without
 * blocking, replaces by temp file, fsync and rename in the same directory
 * under a per-name lock shared by NodeStores, parents created; temp files of
 * killed writers are never listed and are swept.
 */
export class NodeStore implements Store {
  /** The store of the existing directory `root`. */
  constructor(root: string);
  /** The root directory, links resolved. */
  readonly root: string;
  roots(): string[];
  identity(rel: string, shown: string): string;
  stat(place: Place): ObjectMeta | null;
  open(place: Place): Reader;
  listDir(place: Place): Listing | DirEntry[];
  replace(place: Place, createParents: boolean): [Replacement, Reader | undefined];
}
