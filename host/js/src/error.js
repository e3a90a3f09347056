// The failure a store throws: one of the `dsh:fs/types` error codes and a
// message naming the path (`place.shown`). The component sees both.

/** Every `dsh:fs/types.error-code`. */
export const ERROR_CODES = Object.freeze([
  'not-found',
  'not-text',
  'not-regular-file',
  'not-directory',
  'stale-version',
  'not-observed',
  'ambiguous-edit',
  'edit-not-found',
  'sandbox-denied',
  'permission-denied',
  'too-large',
  'io-error',
  'aborted',
  'invalid-input',
  'busy',
]);

/**
 * A store failure: `code` is one of ERROR_CODES. Thrown by a store, it
 * reaches the component as the `err` case of the operation's result.
 */
export class FsError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'FsError';
    this.code = ERROR_CODES.includes(code) ? code : 'io-error';
    // The value handed to the component (jco lowers a thrown `payload`).
    this.payload = { code: this.code, message };
  }

  /** `not-found`: `${path} does not exist`. */
  static notFound(path) {
    return new FsError('not-found', `${path} does not exist`);
  }

  /** `sandbox-denied`: the path leaves the store's root. */
  static sandboxDenied(path) {
    return new FsError('sandbox-denied', `${path} is outside the workspace root`);
  }

  /** `stale-version`: a guard found other bytes than the ones read. */
  static stale(path) {
    return new FsError('stale-version', `${path} changed since it was last read`);
  }

  /** `stale-version` for a file that is gone. */
  static vanished(path) {
    return new FsError(
      'stale-version',
      `${path} no longer exists (it was deleted or moved since it was read)`,
    );
  }

  /** `not-observed`: an `absent` guard found a file someone else created. */
  static createdMeanwhile(path) {
    return new FsError(
      'not-observed',
      `${path} was created by another process during this write; nothing was changed`,
    );
  }

  /** `not-regular-file` for a directory. */
  static isDirectory(path) {
    return new FsError('not-regular-file', `${path} is a directory`);
  }

  /** `not-directory` for a listing of a file. */
  static notDirectory(path) {
    return new FsError('not-directory', `${path} is not a directory`);
  }

  /** `not-directory` for a path through a file. */
  static parentNotDirectory(path) {
    return new FsError('not-directory', `a parent of ${path} is not a directory`);
  }
}
