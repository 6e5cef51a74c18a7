// Amounts, prices and ids as the CLOB fake reads and writes them: base units of 6 decimals, the
// tick sizes with the amounts' precision each allows, and the patterns of numeric and hex fields.

import type { Hex } from 'viem';
import type { ClobTickSize } from '../../../adapters/pm-venue/port.ts';

export const ONE = 1_000_000n;
export const MAX_UINT256 = 2n ** 256n - 1n;
export const ZERO_BYTES32: Hex = `0x${'0'.repeat(64)}`;

export const TICKS: Record<ClobTickSize, { micro: bigint; amountDecimals: number }> = {
  '0.1': { micro: 100_000n, amountDecimals: 3 },
  '0.01': { micro: 10_000n, amountDecimals: 4 },
  '0.005': { micro: 5_000n, amountDecimals: 5 },
  '0.0025': { micro: 2_500n, amountDecimals: 6 },
  '0.001': { micro: 1_000n, amountDecimals: 5 },
  '0.0001': { micro: 100n, amountDecimals: 6 },
};

/** Base units (6 decimals) as a decimal string: 5000000 → "5", 2500000 → "2.5". */
export function decimal(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const whole = abs / ONE;
  const fraction = (abs % ONE).toString().padStart(6, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** A decimal string or number of shares as base units; null when it has more than 6 decimals. */
export function toUnits(value: string | number): bigint | null {
  const text = typeof value === 'number' ? String(value) : value.trim();
  const m = /^(\d+)(?:\.(\d{1,6}))?$/.exec(text);
  if (!m) return null;
  return BigInt(m[1] ?? '0') * ONE + BigInt((m[2] ?? '').padEnd(6, '0') || '0');
}

export const lower = (a: string) => a.toLowerCase();
export const DECIMAL = /^\d+$/;
export const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
export const ORDER_ID = /^0x[0-9a-fA-F]{64}$/;
