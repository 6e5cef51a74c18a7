// Polymarket CLOB V2's answers and arguments, checked: the shapes of an API credential, an open
// order, a trade and a cancel result as the venue sends them (clob-client-v2 1.1.0's
// `src/types/*`), the list cursors, and the order and token ids a call may name. An answer not in
// the venue's format is VenueUnavailable; a bad argument throws before anything is asked.
import { OrderInputError } from './order-amounts.ts';
import { type ClobAnswer } from './polymarket-http.ts';
import { UINT } from './polymarket-orders.ts';
import {
  VenueUnavailable,
  type ClobApiCredentials,
  type ClobCancelResult,
  type ClobOpenOrder,
  type ClobTrade,
} from './port.ts';

/** The cursors of the venue's lists (clob-client-v2 `INITIAL_CURSOR`, `END_CURSOR`). */
export const CLOB_FIRST_CURSOR = 'MA==';
export const CLOB_LAST_CURSOR = 'LTE=';
/** A list walk stops (VenueUnavailable) after this many pages rather than loop forever. */
export const MAX_PAGES = 10_000;
const ORDER_ID = /^0x[0-9a-fA-F]{64}$/;

export function credentialsIn(json: unknown): ClobApiCredentials | null {
  const body = json as { apiKey?: unknown; secret?: unknown; passphrase?: unknown } | null;
  if (
    typeof body?.apiKey === 'string' &&
    body.apiKey !== '' &&
    typeof body.secret === 'string' &&
    body.secret !== '' &&
    typeof body.passphrase === 'string' &&
    body.passphrase !== ''
  ) {
    return { apiKey: body.apiKey, secret: body.secret, passphrase: body.passphrase };
  }
  return null;
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
export const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x) => typeof x === 'string') : [];

export function isOpenOrder(v: unknown): v is ClobOpenOrder {
  return (
    isRecord(v) &&
    typeof v.id === 'string' &&
    typeof v.status === 'string' &&
    (v.side === 'BUY' || v.side === 'SELL') &&
    typeof v.price === 'string' &&
    typeof v.original_size === 'string' &&
    typeof v.size_matched === 'string'
  );
}

export function isTrade(v: unknown): v is ClobTrade {
  return (
    isRecord(v) &&
    typeof v.id === 'string' &&
    typeof v.taker_order_id === 'string' &&
    typeof v.status === 'string' &&
    typeof v.size === 'string' &&
    typeof v.price === 'string' &&
    Array.isArray(v.maker_orders)
  );
}

export function checkOrderId(what: string, orderId: string): void {
  if (typeof orderId !== 'string' || !ORDER_ID.test(orderId)) {
    throw new Error(`Polymarket CLOB ${what}: an order id is 0x and 64 hexadecimal digits`);
  }
}

export function checkTokenId(tokenId: string): void {
  if (typeof tokenId !== 'string' || !UINT.test(tokenId)) {
    throw new OrderInputError('tokenId', 'tokenId must be a decimal integer');
  }
}

export const badFormat = (what: string, why: string) =>
  new VenueUnavailable(`Polymarket CLOB ${what}: the answer was not in the venue's format (${why})`);

/** The `{canceled, not_canceled}` answer of the cancel calls. */
export function cancelResult(answer: ClobAnswer, what: string): ClobCancelResult {
  const body = answer.json;
  if (!isRecord(body) || !Array.isArray(body.canceled)) throw badFormat(what, 'no canceled list');
  const notCanceled: Record<string, string> = {};
  if (isRecord(body.not_canceled)) {
    for (const [id, reason] of Object.entries(body.not_canceled)) notCanceled[id] = String(reason);
  }
  return { canceled: strings(body.canceled), notCanceled };
}
