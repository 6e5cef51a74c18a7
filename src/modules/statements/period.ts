// Statement periods (docs/statements.md): `YYYY-MM` is a UTC calendar month, `YYYY-MM-DD` a UTC
// calendar day. The period is the half-open interval [start, end) of group timestamps.

/** The query's syntax; the calendar check (a real month or day) is parseStatementPeriod's. */
export const PERIOD_PATTERN = '^[0-9]{4}-[0-9]{2}(-[0-9]{2})?$';

/** Years before this have no ledger entries (and no timestamps worth a statement). */
export const FIRST_PERIOD_YEAR = 1970;

export interface StatementPeriod {
  /** The period as requested: `2026-03` or `2026-03-14`. */
  label: string;
  /** First instant of the period (inclusive). */
  start: Date;
  /** First instant after the period (exclusive). */
  end: Date;
}

const SHAPE = /^([0-9]{4})-([0-9]{2})(?:-([0-9]{2}))?$/;

/**
 * The period a `YYYY-MM` or `YYYY-MM-DD` label names, or null when the label is anything else:
 * another shape, month 00 or 13, a day the month does not have (`2025-02-29`), a year before 1970.
 */
export function parseStatementPeriod(label: string): StatementPeriod | null {
  const m = SHAPE.exec(label);
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  if (year < FIRST_PERIOD_YEAR || month < 1 || month > 12) return null;
  if (m[3] === undefined) {
    return { label, start: new Date(Date.UTC(year, month - 1, 1)), end: new Date(Date.UTC(year, month, 1)) };
  }
  const day = Number(m[3]);
  // Day 0 of the next month is the last day of this one.
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > daysInMonth) return null;
  return {
    label,
    start: new Date(Date.UTC(year, month - 1, day)),
    end: new Date(Date.UTC(year, month - 1, day + 1)),
  };
}
