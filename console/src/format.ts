// Amounts and times as people read them. Amounts stay exact: base units are decimal strings and
// are scaled with bigint arithmetic, never through floating point.

/** `1234500000` with 6 decimals → `1,234.5`. */
export function formatUnits(base: string | null | undefined, decimals: number | null): string {
  if (base === null || base === undefined || !/^-?\d+$/.test(base)) return '—';
  if (decimals === null) return base;
  const negative = base.startsWith('-');
  const digits = (negative ? base.slice(1) : base).padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = decimals > 0 ? digits.slice(digits.length - decimals).replace(/0+$/, '') : '';
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** A base-unit amount as a number, for charts only (precision loss is fine on a chart's scale). */
export function unitsToNumber(base: string, decimals: number | null): number {
  return Number(base) / 10 ** (decimals ?? 0);
}

/** `0x9bf3…8579` */
export function shortHex(hex: string | null | undefined, keep = 4): string {
  if (!hex) return '—';
  return hex.length <= 2 + keep * 2 + 1 ? hex : `${hex.slice(0, 2 + keep)}…${hex.slice(-keep)}`;
}

/** An ISO time as local date and time, to the second. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : at.toLocaleString(undefined, { hour12: false });
}

/** A USD decimal string, with two decimals at least. */
export function formatUsd(usd: string | null | undefined): string {
  if (usd === null || usd === undefined) return '—';
  const [whole = '0', fraction = ''] = usd.split('.');
  const trimmed = fraction.replace(/0+$/, '').padEnd(2, '0');
  return `$${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${trimmed}`;
}
