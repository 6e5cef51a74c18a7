// The amounts of a Polymarket CLOB V2 limit order, in exact integer arithmetic.
//
// What the venue's own client (@polymarket/clob-client-v2 1.1.0) does, in floating point:
// - `ROUNDING_CONFIG` (src/order-builder/helpers/roundingConfig.ts) gives each tick size a number
//   of decimals for the price, the size and the amount: 0.1 → 1/2/3, 0.01 → 2/2/4, 0.005 → 3/2/5,
//   0.0025 → 4/2/6, 0.001 → 3/2/5, 0.0001 → 4/2/6;
// - `ClobClient.createOrder` (src/client.ts) refuses a price outside [tick, 1 − tick]
//   (`priceValid`, src/utilities.ts) and rounds it half-up to the price decimals (`roundNormal`);
// - `getOrderRawAmounts` (src/order-builder/helpers/getOrderRawAmounts.ts) rounds the size down to
//   2 decimals (`roundDown`); BUY: taker = size, maker = size × price; SELL: maker = size,
//   taker = size × price; a product with more decimals than the amount decimals is rounded up at
//   amount + 4 decimals and, if still too long, down at the amount decimals (`roundUp`, `roundDown`);
// - `buildOrderCreationArgs` turns both into base units with `parseUnits(x.toString(), 6)`.
//
// The amount decimals are always the price decimals + 2, so size (2 decimals) × price is exact at
// the amount decimals: the rounding of the product only mends floating-point noise. Here the price
// and size are decimal strings, refused (not rounded) when they are off the grid, and the product
// is exact. That is the client's result for every order up to about 250,000 shares; above that
// the client's floats drift (e.g. 423762.72 shares SELL at 0.94, tick 0.0025: the client asks
// 398336.956799, the exact product is 398336.9568), and this keeps the exact amount.

import type { ClobSide, ClobTickSize } from './port.ts';
import { CLOB_TICK_SIZES } from './port.ts';

/** Collateral (pUSD) and outcome tokens both have 6 decimals. */
export const CLOB_AMOUNT_DECIMALS = 6;
const ONE = 1_000_000n;

/** clob-client-v2 `ROUNDING_CONFIG`: decimals of the price, the size and the amounts per tick size. */
export const CLOB_ROUNDING: Readonly<Record<ClobTickSize, { price: number; size: number; amount: number }>> =
  {
    '0.1': { price: 1, size: 2, amount: 3 },
    '0.01': { price: 2, size: 2, amount: 4 },
    '0.005': { price: 3, size: 2, amount: 5 },
    '0.0025': { price: 4, size: 2, amount: 6 },
    '0.001': { price: 3, size: 2, amount: 5 },
    '0.0001': { price: 4, size: 2, amount: 6 },
  };

export type OrderInputField =
  | 'price'
  | 'size'
  | 'side'
  | 'tickSize'
  | 'maker'
  | 'signer'
  | 'signatureType'
  | 'tokenId'
  | 'salt'
  | 'timestamp'
  | 'expiration'
  | 'metadata'
  | 'builder';

/** An order the venue would refuse (or the client round), named by the field at fault. */
export class OrderInputError extends Error {
  constructor(
    readonly field: OrderInputField,
    message: string,
  ) {
    super(message);
    this.name = 'OrderInputError';
  }
}

export function isClobTickSize(value: unknown): value is ClobTickSize {
  return typeof value === 'string' && (CLOB_TICK_SIZES as readonly string[]).includes(value);
}

const DECIMAL_TEXT = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

/**
 * A plain decimal string (`12`, `0.45`, `.45`, `12.50`) as an integer scaled by 10^decimals, or
 * null when it is not one or has non-zero digits beyond `decimals`.
 */
export function decimalToUnits(text: string, decimals: number): bigint | null {
  if (!DECIMAL_TEXT.test(text)) return null;
  const [whole = '', rawFraction = ''] = text.split('.');
  const fraction = rawFraction.replace(/0+$/, '');
  if (fraction.length > decimals) return null;
  return BigInt(whole || '0') * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
}

/** Base units (6 decimals) as the venue writes decimals: 5500000 → "5.5", 10000000 → "10". */
export function unitsToDecimal(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const fraction = (abs % ONE).toString().padStart(6, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${abs / ONE}${fraction ? `.${fraction}` : ''}`;
}

/** The tick size in millionths: '0.01' → 10000n. */
export function tickMicros(tickSize: ClobTickSize): bigint {
  return decimalToUnits(tickSize, CLOB_AMOUNT_DECIMALS)!;
}

/** A price in millionths, refused unless it is in (0, 1) and on the tick size's grid. */
export function parseOrderPrice(price: string, tickSize: ClobTickSize): bigint {
  if (!isClobTickSize(tickSize)) {
    throw new OrderInputError('tickSize', `tick size must be one of ${CLOB_TICK_SIZES.join(', ')}`);
  }
  if (typeof price !== 'string') throw new OrderInputError('price', 'price must be a decimal string');
  const text = price.trim();
  if (!DECIMAL_TEXT.test(text)) {
    throw new OrderInputError('price', `price ${JSON.stringify(price)} is not a decimal`);
  }
  const [whole = '', fraction = ''] = text.split('.');
  if (BigInt(whole || '0') >= 1n || /^0*$/.test(fraction)) {
    throw new OrderInputError('price', `price ${text} is outside (0, 1)`);
  }
  const micros = decimalToUnits(text, CLOB_AMOUNT_DECIMALS);
  if (micros === null || micros % tickMicros(tickSize) !== 0n) {
    throw new OrderInputError('price', `price ${text} is not on the market's tick size grid of ${tickSize}`);
  }
  return micros;
}

/** A size in base units (6 decimals), refused when zero or with more than 2 decimals. */
export function parseOrderSize(size: string, tickSize: ClobTickSize): bigint {
  if (typeof size !== 'string') throw new OrderInputError('size', 'size must be a decimal string');
  const text = size.trim();
  const decimals = isClobTickSize(tickSize) ? CLOB_ROUNDING[tickSize].size : 2;
  if (!DECIMAL_TEXT.test(text)) {
    throw new OrderInputError('size', `size ${JSON.stringify(size)} is not a decimal`);
  }
  const units = decimalToUnits(text, decimals);
  if (units === null) {
    throw new OrderInputError('size', `size ${text} has more than the ${decimals} decimals the venue takes`);
  }
  if (units === 0n) throw new OrderInputError('size', 'size must be more than 0');
  return units * 10n ** BigInt(CLOB_AMOUNT_DECIMALS - decimals);
}

export interface OrderAmounts {
  /** BUY: the collateral paid; SELL: the outcome tokens sold. Base units. */
  makerAmount: bigint;
  /** BUY: the outcome tokens received; SELL: the collateral received. Base units. */
  takerAmount: bigint;
  /** The price in millionths. */
  priceMicros: bigint;
  /** The size (outcome tokens) in base units. */
  sizeUnits: bigint;
}

/**
 * The makerAmount/takerAmount of a limit order of `size` shares at `price` (decimal strings), as
 * the client computes them for the tick size, exactly; refuses what the venue would refuse.
 */
export function orderAmounts(args: {
  side: ClobSide;
  price: string;
  size: string;
  tickSize: ClobTickSize;
}): OrderAmounts {
  if (args.side !== 'BUY' && args.side !== 'SELL')
    throw new OrderInputError('side', 'side must be BUY or SELL');
  const priceMicros = parseOrderPrice(args.price, args.tickSize);
  const sizeUnits = parseOrderSize(args.size, args.tickSize);
  // size has 2 decimals and the price at most 4, so the product is whole in base units.
  const collateral = (sizeUnits * priceMicros) / ONE;
  return args.side === 'BUY'
    ? { makerAmount: collateral, takerAmount: sizeUnits, priceMicros, sizeUnits }
    : { makerAmount: sizeUnits, takerAmount: collateral, priceMicros, sizeUnits };
}

/**
 * An order's notional in micro-USD (collateral base units): what the buyer pays for a BUY
 * (makerAmount), price × size for a SELL (takerAmount).
 */
export function orderNotionalMicros(order: {
  side: ClobSide;
  makerAmount: string | bigint;
  takerAmount: string | bigint;
}): bigint {
  return BigInt(order.side === 'BUY' ? order.makerAmount : order.takerAmount);
}

/** An order's size in outcome-token base units (takerAmount of a BUY, makerAmount of a SELL). */
export function orderSizeUnits(order: {
  side: ClobSide;
  makerAmount: string | bigint;
  takerAmount: string | bigint;
}): bigint {
  return BigInt(order.side === 'BUY' ? order.takerAmount : order.makerAmount);
}

/** The notional in micro-USD of `size` shares at `price`, checked as orderAmounts checks them. */
export function notionalMicros(args: {
  side: ClobSide;
  price: string;
  size: string;
  tickSize: ClobTickSize;
}): bigint {
  return orderNotionalMicros({ side: args.side, ...orderAmounts(args) });
}
