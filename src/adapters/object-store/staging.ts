// A staging file shared by both stores: bytes are appended (each write awaited, so a producer
// never runs ahead of the disk) and hashed as they pass, so an object of any size is written
// without holding it in memory, and its SHA-256 (the content hash, and the S3 payload hash) is
// known the moment writing ends.

import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';

export interface StagingFile {
  readonly path: string;
  write(chunk: string | Uint8Array): Promise<void>;
  /** Flushes to disk (fsync) and closes; returns the size and SHA-256 (hex). */
  seal(): Promise<{ bytes: number; sha256Hex: string }>;
  /** Closes and deletes the file. */
  remove(): Promise<void>;
}

/** Opens a new staging file in `dir` (created if needed) under a random name starting with `.`. */
export async function openStagingFile(dir: string): Promise<StagingFile> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, `.staging-${randomBytes(12).toString('hex')}`);
  const handle = await open(path, 'wx');
  const hash = createHash('sha256');
  let bytes = 0;
  let isOpen = true;
  let sealed: { bytes: number; sha256Hex: string } | null = null;

  const close = async () => {
    if (!isOpen) return;
    isOpen = false;
    await handle.close();
  };

  return {
    path,
    write: async (chunk) => {
      if (sealed || !isOpen) throw new Error('the staging file is closed');
      const data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      if (data.byteLength === 0) return;
      hash.update(data);
      bytes += data.byteLength;
      // FileHandle.write may write less than asked: loop until every byte is down.
      let offset = 0;
      while (offset < data.byteLength) {
        const { bytesWritten } = await handle.write(data, offset, data.byteLength - offset);
        offset += bytesWritten;
      }
    },
    seal: async () => {
      if (sealed) return sealed;
      if (!isOpen) throw new Error('the staging file is closed');
      // fsync before anyone renames or uploads it: a crash never leaves a short object behind.
      await handle.sync();
      await close();
      sealed = { bytes, sha256Hex: hash.digest('hex') };
      return sealed;
    },
    remove: async () => {
      await close().catch(() => undefined);
      await rm(path, { force: true });
    },
  };
}
