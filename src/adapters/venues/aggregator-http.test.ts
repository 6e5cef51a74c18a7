import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './aggregator-http.ts';

describe('Retry-After', () => {
  const now = new Date('2026-06-01T12:00:00.000Z');

  it('reads delay-seconds and HTTP dates as milliseconds from now', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter('Mon, 01 Jun 2026 12:00:30 GMT', now)).toBe(30_000);
  });

  it('counts a date already past as 0, and ignores what it cannot read', () => {
    expect(parseRetryAfter('Mon, 01 Jun 2026 11:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
  });
});
