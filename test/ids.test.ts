// Resource ids: `<prefix>_` and 20 base-36 characters from a CSPRNG, drawn from a shared pool of
// random bytes. Every id is distinct and every character of the alphabet is about equally likely.

import { describe, expect, it } from 'vitest';
import { newId } from '../src/core/ids.ts';

describe('newId', () => {
  it('makes distinct, well-formed ids across many pool refills', () => {
    const ids = Array.from({ length: 20_000 }, () => newId('evt'));
    for (const id of ids.slice(0, 200)) expect(id).toMatch(/^evt_[0-9a-z]{20}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('uses the 36 characters about equally (no modulo bias, no stuck bytes)', () => {
    const counts = new Map<string, number>();
    const n = 10_000;
    for (let i = 0; i < n; i += 1) {
      for (const c of newId('x').slice(2)) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    expect(counts.size).toBe(36);
    const expected = (n * 20) / 36;
    for (const count of counts.values()) {
      // ~5,556 each; 6 standard deviations is about ±440.
      expect(Math.abs(count - expected)).toBeLessThan(600);
    }
  });
});
