// Periods: `YYYY-MM` is a UTC month, `YYYY-MM-DD` a UTC day; anything else is refused. The
// oracle for "a real date" is the JavaScript date parser round trip, independent of the code.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors/app-error.ts';
import { resolveStatementPeriod } from './generate.ts';
import { parseStatementPeriod } from './period.ts';

const DAY_MS = 86_400_000;

/** Whether `label` is a real calendar day or month from 1970 on, by Date's own parser. */
function oracle(label: string): boolean {
  if (!/^\d{4}-\d{2}(-\d{2})?$/.test(label) || Number(label.slice(0, 4)) < 1970) return false;
  const day = label.length === 7 ? `${label}-01` : label;
  const date = new Date(`${day}T00:00:00.000Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === day;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const labels = fc.oneof(
  fc
    .tuple(fc.integer({ min: 1960, max: 2200 }), fc.integer({ min: 0, max: 13 }))
    .map(([y, m]) => `${pad(y, 4)}-${pad(m, 2)}`),
  fc
    .tuple(
      fc.integer({ min: 1960, max: 2200 }),
      fc.integer({ min: 0, max: 13 }),
      fc.integer({ min: 0, max: 32 }),
    )
    .map(([y, m, d]) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`),
  fc.string({ maxLength: 12 }),
);

describe('parseStatementPeriod', () => {
  it('names the UTC month and the UTC day', () => {
    expect(parseStatementPeriod('2026-03')).toEqual({
      label: '2026-03',
      start: new Date('2026-03-01T00:00:00Z'),
      end: new Date('2026-04-01T00:00:00Z'),
    });
    expect(parseStatementPeriod('2025-12')?.end).toEqual(new Date('2026-01-01T00:00:00Z'));
    expect(parseStatementPeriod('2024-02-29')).toEqual({
      label: '2024-02-29',
      start: new Date('2024-02-29T00:00:00Z'),
      end: new Date('2024-03-01T00:00:00Z'),
    });
    expect(parseStatementPeriod('2025-12-31')?.end).toEqual(new Date('2026-01-01T00:00:00Z'));
  });

  it('refuses what is not a real month or day', () => {
    for (const label of [
      '2025-02-29',
      '2026-04-31',
      '2026-13',
      '2026-00',
      '2026-01-00',
      '2026-01-32',
      '1969-12',
      '0000-01',
      '2026-3',
      '2026-03-1',
      '26-03',
      '2026/03',
      ' 2026-03',
      '2026-03 ',
      '2026-03-01T00:00:00Z',
      '２０２６-03',
      '',
    ]) {
      expect(parseStatementPeriod(label), label).toBeNull();
    }
  });

  it('agrees with the date parser, and a period is one month or one day long', () => {
    fc.assert(
      fc.property(labels, (label) => {
        const period = parseStatementPeriod(label);
        expect(period !== null, label).toBe(oracle(label));
        if (!period) return;
        expect(period.start.toISOString().slice(0, label.length)).toBe(label);
        const length = period.end.getTime() - period.start.getTime();
        if (label.length === 10) expect(length).toBe(DAY_MS);
        else expect([28, 29, 30, 31].map((d) => d * DAY_MS)).toContain(length);
        // A month ends where the next month begins.
        if (label.length === 7) expect(period.end.getUTCDate()).toBe(1);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('resolveStatementPeriod', () => {
  const now = new Date('2026-03-15T12:00:00Z');

  it('admits the current and past periods and refuses one that has not begun', () => {
    expect(resolveStatementPeriod('2026-03', now).label).toBe('2026-03');
    expect(resolveStatementPeriod('2026-03-15', now).label).toBe('2026-03-15');
    expect(resolveStatementPeriod('1970-01', now).label).toBe('1970-01');
    for (const label of ['2026-04', '2026-03-16', '2027-01-01']) {
      const error = (() => {
        try {
          resolveStatementPeriod(label, now);
        } catch (err) {
          return err;
        }
        return null;
      })();
      expect(error, label).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe('INVALID_REQUEST');
      expect((error as AppError).message).toMatch(/period .* has not begun/);
    }
  });
});
