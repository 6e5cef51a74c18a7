// The directory store: staged, fsynced, linked into place; an existing key is never replaced.

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readStreamText } from '../../modules/statements/download.ts';
import { createFilesystemObjectStore } from './filesystem.ts';
import type { ObjectStore } from './port.ts';

let root: string;
let store: ObjectStore;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'purser-fs-store-'));
  store = createFilesystemObjectStore({ root });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function put(key: string, parts: string[]) {
  const staged = await store.stage();
  for (const part of parts) await staged.write(part);
  const sealed = await staged.seal();
  return { ...sealed, ...(await staged.commit(key, 'text/plain')) };
}

describe('filesystem object store', () => {
  it('stores the staged bytes under the key, hashed as they were written', async () => {
    const result = await put('statements/acc_1/a.json', ['{"a"', ':1}']);
    expect(result).toEqual({
      bytes: 7,
      sha256Hex: createHash('sha256').update('{"a":1}').digest('hex'),
      created: true,
    });
    expect(readFileSync(join(root, 'statements', 'acc_1', 'a.json'), 'utf8')).toBe('{"a":1}');
    expect(await store.head('statements/acc_1/a.json')).toEqual({ bytes: 7 });
    expect(await readStreamText((await store.get('statements/acc_1/a.json'))!.body)).toBe('{"a":1}');
    expect(readdirSync(join(root, '.staging'))).toEqual([]);
  });

  it('never replaces an existing object', async () => {
    await put('statements/k.txt', ['first']);
    const second = await put('statements/k.txt', ['second']);
    expect(second.created).toBe(false);
    expect(readFileSync(join(root, 'statements', 'k.txt'), 'utf8')).toBe('first');
    expect(readdirSync(join(root, '.staging'))).toEqual([]);
  });

  it('stores one object when two writers commit the same key at once', async () => {
    const results = await Promise.all([1, 2, 3, 4].map(() => put('statements/race.txt', ['same bytes'])));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(readFileSync(join(root, 'statements', 'race.txt'), 'utf8')).toBe('same bytes');
  });

  it('discards a staged object without a trace', async () => {
    const staged = await store.stage();
    await staged.write('half a statement');
    await staged.discard();
    await staged.discard();
    expect(readdirSync(join(root, '.staging'))).toEqual([]);
  });

  it('answers null for missing keys, deletes idempotently, refuses keys outside its root', async () => {
    expect(await store.head('statements/none')).toBeNull();
    expect(await store.get('statements/none')).toBeNull();
    await put('statements/del.txt', ['x']);
    await store.delete('statements/del.txt');
    await store.delete('statements/del.txt');
    expect(existsSync(join(root, 'statements', 'del.txt'))).toBe(false);
    for (const key of ['../escape', 'a/../../b', '/etc/passwd', '.staging/x', 'a//b', '']) {
      await expect(store.head(key), key).rejects.toThrow(RangeError);
    }
  });
});
