// USD amounts, for every module: decimal strings on the wire (at most 6 decimals), integer micro-USD (bigint) inside.

/** A USD decimal string: no sign, no exponent, no leading zeros, at most 6 decimals. */
export const USD_PATTERN = '^(0|[1-9][0-9]*)(\\.[0-9]{1,6})?$';
const USD_REGEX = new RegExp(USD_PATTERN);

/** The largest USD amount a policy may name: 10^12 dollars keeps every sum far inside int8. */
export const MAX_USD_MICRO = 1_000_000_000_000n * 1_000_000n;

/** Parses a USD decimal string to micro-USD; null when it is not one (or exceeds the maximum). */
export function parseUsd(value: string): bigint | null {
  if (!USD_REGEX.test(value)) return null;
  const [whole = '0', fraction = ''] = value.split('.');
  const micro = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
  return micro > MAX_USD_MICRO ? null : micro;
}

/** Parses a USD string that validation already accepted; throws when it is not one. */
export function usdToMicro(value: string): bigint {
  const micro = parseUsd(value);
  if (micro === null) throw new TypeError(`not a USD decimal string: ${JSON.stringify(value)}`);
  return micro;
}

/** Micro-USD to the shortest USD decimal string (`1500000n` → `"1.5"`). */
export function formatUsd(micro: bigint): string {
  const negative = micro < 0n;
  const abs = negative ? -micro : micro;
  const whole = abs / 1_000_000n;
  const fraction = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
