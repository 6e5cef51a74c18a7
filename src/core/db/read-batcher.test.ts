// The read batcher: concurrent reads share statements, each caller gets its own answer in order,
// and a failed statement fails only the callers it carried.

import { describe, expect, it } from 'vitest';
import { ReadBatcher } from './read-batcher.ts';

/** A reader that answers after a tick and records each batch it was asked. */
function recordingReader(fail?: (keys: number[]) => boolean) {
  const batches: number[][] = [];
  const read = async (keys: number[]) => {
    batches.push(keys);
    await new Promise((r) => setTimeout(r, 5));
    if (fail?.(keys)) throw new Error(`batch ${keys.join(',')} failed`);
    return keys.map((k) => k * 10);
  };
  return { batches, read };
}

describe('ReadBatcher', () => {
  it('sends a lone read at once, alone', async () => {
    const r = recordingReader();
    const batcher = new ReadBatcher(r.read);
    expect(await batcher.read(7)).toBe(70);
    expect(r.batches).toEqual([[7]]);
  });

  it('answers 100 concurrent reads in a few statements, each with its own value', async () => {
    const r = recordingReader();
    const batcher = new ReadBatcher(r.read, { maxBatch: 64, maxInFlight: 2 });
    const keys = Array.from({ length: 100 }, (_, i) => i);
    const values = await Promise.all(keys.map((k) => batcher.read(k)));
    expect(values).toEqual(keys.map((k) => k * 10));
    // Two go at once; the rest wait and share at most two more statements.
    expect(r.batches.length).toBeLessThanOrEqual(4);
    expect(r.batches.flat().sort((a, b) => a - b)).toEqual(keys);
    expect(Math.max(...r.batches.map((b) => b.length))).toBeLessThanOrEqual(64);
  });

  it('fails only the callers of the statement that failed', async () => {
    const r = recordingReader((keys) => keys.includes(3));
    const batcher = new ReadBatcher(r.read, { maxBatch: 64, maxInFlight: 1 });
    const results = await Promise.allSettled([1, 2, 3, 4].map((k) => batcher.read(k)));
    // 1 went alone; 2, 3 and 4 waited and went together, and that statement failed.
    expect(results[0]).toEqual({ status: 'fulfilled', value: 10 });
    expect(results.slice(1).map((x) => x.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(await batcher.read(5)).toBe(50);
  });

  it('refuses an answer that does not match its keys', async () => {
    const batcher = new ReadBatcher(async (keys: number[]) => keys.slice(1));
    await expect(batcher.read(1)).rejects.toThrow(/answered 0 values for 1 keys/);
  });
});
