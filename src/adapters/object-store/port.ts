// The object store port: immutable, content-addressed objects (statement exports). An object is
// written once under a key derived from its bytes, so writing an existing key changes nothing.
// Implementations: a directory (filesystem.ts, the default) and any S3-compatible bucket (s3.ts).

import type { Readable } from 'node:stream';

export interface ObjectStore {
  /** `filesystem` or `s3`: where objects live, for logs and the export's `bucket_bound`. */
  readonly kind: 'filesystem' | 's3';
  /**
   * Opens a staging area for one new object whose key is known only once all of it is written
   * (the key names its hash). Write, `seal`, then `commit` or `discard`.
   */
  stage(): Promise<StagedObject>;
  /** The object's size, or null when no object has the key. */
  head(key: string): Promise<{ bytes: number } | null>;
  /** The object's bytes as a stream, or null when no object has the key. */
  get(key: string): Promise<{ body: Readable; bytes: number } | null>;
  /** Removes the object; a missing key is not an error. */
  delete(key: string): Promise<void>;
}

export interface StagedObject {
  /** Appends bytes; resolves once the staging file can take more (back-pressure). */
  write(chunk: string | Uint8Array): Promise<void>;
  /** Ends writing: how many bytes were staged and their SHA-256 (hex). */
  seal(): Promise<{ bytes: number; sha256Hex: string }>;
  /**
   * Stores the sealed bytes under `key`. An object already stored under `key` is kept as it is
   * (objects are immutable and content-addressed): `created` is then false.
   */
  commit(key: string, contentType: string): Promise<{ created: boolean }>;
  /** Drops the staged bytes (after a failure). Safe to call at any point, and more than once. */
  discard(): Promise<void>;
}

/** A store that failed (a disk error, a bucket that refused or did not answer). Never carries a secret. */
export class ObjectStoreError extends Error {
  constructor(
    message: string,
    readonly details: { status?: number; code?: string } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ObjectStoreError';
  }
}

const KEY_SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/**
 * Keys are `/`-separated segments of letters, digits, `.`, `_` and `-`, none starting with a dot
 * (so no `..`, no hidden staging names, nothing a path or URL could misread). Throws otherwise.
 */
export function assertObjectKey(key: string): void {
  const segments = key.split('/');
  if (key.length > 1000 || segments.some((s) => !KEY_SEGMENT.test(s))) {
    throw new RangeError(`not an object key: ${JSON.stringify(key)}`);
  }
}
