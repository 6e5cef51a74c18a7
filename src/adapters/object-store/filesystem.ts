// The default object store: a directory (`STATEMENTS_DIR`, by default `<PURSER_DATA_DIR>/statements`).
// An object is staged in `<root>/.staging/`, fsynced, then hard-linked to its key's path: the link
// appears whole or not at all, and fails on an existing key, which is how "writing an existing key
// is a no-op" holds even when two processes store the same object at once.

import { createReadStream } from 'node:fs';
import { link, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { openStagingFile } from './staging.ts';
import { assertObjectKey, ObjectStoreError, type ObjectStore, type StagedObject } from './port.ts';

export interface FilesystemObjectStoreParameters {
  /** The directory objects live under; created on first write. */
  root: string;
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function storeError(what: string, err: unknown): ObjectStoreError {
  const code = errorCode(err);
  return new ObjectStoreError(`statement store: ${what} failed (${code ?? 'error'})`, code ? { code } : {}, {
    cause: err,
  });
}

export function createFilesystemObjectStore(params: FilesystemObjectStoreParameters): ObjectStore {
  const pathOf = (key: string) => {
    assertObjectKey(key);
    return join(params.root, ...key.split('/'));
  };

  const stage = async (): Promise<StagedObject> => {
    const file = await openStagingFile(join(params.root, '.staging')).catch((err: unknown) => {
      throw storeError('opening a staging file', err);
    });
    let sealed = false;
    return {
      write: (chunk) =>
        file.write(chunk).catch((err: unknown) => {
          throw storeError('writing a staging file', err);
        }),
      seal: async () => {
        const result = await file.seal().catch((err: unknown) => {
          throw storeError('flushing a staging file', err);
        });
        sealed = true;
        return result;
      },
      commit: async (key, _contentType) => {
        if (!sealed) throw new Error('commit before seal');
        const target = pathOf(key);
        try {
          await mkdir(dirname(target), { recursive: true });
          return { created: await placeOnce(file.path, target) };
        } catch (err) {
          throw storeError('storing an object', err);
        } finally {
          await file.remove();
        }
      },
      discard: () => file.remove(),
    };
  };

  return {
    kind: 'filesystem',
    stage,
    head: async (key) => {
      const info = await stat(pathOf(key)).catch((err: unknown) => {
        if (errorCode(err) === 'ENOENT') return null;
        throw storeError('reading an object', err);
      });
      return info ? { bytes: info.size } : null;
    },
    get: async (key) => {
      const path = pathOf(key);
      const info = await stat(path).catch((err: unknown) => {
        if (errorCode(err) === 'ENOENT') return null;
        throw storeError('reading an object', err);
      });
      if (!info) return null;
      return { body: createReadStream(path), bytes: info.size };
    },
    delete: async (key) => {
      await rm(pathOf(key), { force: true }).catch((err: unknown) => {
        throw storeError('deleting an object', err);
      });
    },
  };
}

/**
 * Puts the staged file at `target` unless something is there already. A hard link never replaces
 * an existing name; where links are not supported, a rename after a look is the fallback (two
 * writers of one key write the same bytes, so the race it leaves is harmless).
 */
async function placeOnce(staged: string, target: string): Promise<boolean> {
  try {
    await link(staged, target);
    return true;
  } catch (err) {
    const code = errorCode(err);
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EXDEV') throw err;
  }
  const exists = await stat(target).then(
    () => true,
    (err: unknown) => {
      if (errorCode(err) === 'ENOENT') return false;
      throw err;
    },
  );
  if (exists) return false;
  await rename(staged, target);
  return true;
}
