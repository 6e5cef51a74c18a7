// What the CLOB fake answers: the venue's error messages, the refusal a handler throws to answer
// with one, request bodies read as JSON, and the pages with the client's base64-offset cursors.

import type { FakeAnswer } from '../loopback.ts';

/** The CLOB's answers (docs.polymarket.com "Error Codes"). */
export const CLOB_ERRORS = {
  unauthorized: 'Unauthorized/Invalid api key',
  l1Headers: 'Invalid L1 Request headers',
  createKey: 'Could not create api key',
  deriveKey: 'Could not derive api key!',
  tooManyRequests: 'Too Many Requests',
  tradingDisabled: 'Trading is currently disabled. Check polymarket.com for updates',
  cancelOnly: 'Trading is currently cancel-only. New orders are not accepted, but cancels are allowed.',
  invalidOrderPayload: 'Invalid order payload',
  ownerMismatch: 'the order owner has to be the owner of the API KEY',
  signerMismatch: 'the order signer address has to be the address of the API KEY',
  invalidSignature: 'invalid signature',
  marketNotFound: 'market not found',
  invalidTokenId: 'Invalid token id',
  noOrderbook: 'No orderbook exists for the requested token id',
  notEnoughBalance: 'not enough balance / allowance',
  invalidExpiration: 'invalid expiration',
  postOnlyCrosses: 'invalid post-only order: order crosses book',
  fokNotFilled: "order couldn't be fully filled. FOK orders are fully filled or killed.",
  fakNoMatch:
    'no orders found to match with FAK order. FAK orders are partially filled or killed if no match is found.',
  invalidOrderId: 'Invalid orderID',
  invalidOrderParams: 'invalid order params payload',
  invalidTradeParams: 'Invalid trade params payload',
  // Not taken from the live venue: what a malformed cursor of the market listings answers here.
  invalidCursor: 'invalid next_cursor',
  invalidAssetType: 'Invalid asset type',
  invalidSignatureType: 'Invalid signature_type',
  internal: 'Internal server error',
} as const;

export const clobTickSizeError = (orderId: string, price: string, tick: string) =>
  `order ${orderId} is invalid. Price (${price}) breaks minimum tick size rule: ${tick}`;
export const clobMinSizeError = (orderId: string, size: string, min: string) =>
  `order ${orderId} is invalid. Size (${size}) lower than the minimum: ${min}`;
export const clobDuplicatedError = (orderId: string) => `order ${orderId} is invalid. Duplicated.`;

/** The cursors the client walks with (clob-client-v2 `INITIAL_CURSOR`, `END_CURSOR`). */
export const CLOB_INITIAL_CURSOR = 'MA==';
export const CLOB_END_CURSOR = 'LTE=';

const cursorOf = (offset: number) => Buffer.from(String(offset)).toString('base64');

/** The offset a cursor names; null when it is not one of ours. */
function offsetOf(cursor: string | undefined): number | null {
  if (cursor === undefined || cursor === '') return 0;
  const text = Buffer.from(cursor, 'base64').toString('utf8');
  if (!/^-?\d+$/.test(text)) return null;
  const n = Number(text);
  return n < 0 ? null : n;
}

/** A refusal the handlers throw: the HTTP layer answers it as `{"error": message}`. */
export class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const answer = (status: number, body: unknown): FakeAnswer => ({ status, body });
export const refusal = (status: number, message: string): FakeAnswer => answer(status, { error: message });

/** One page of `items` from the offset `cursor` names; a cursor not ours is refused with `invalid`. */
export function page<T>(items: T[], cursor: string | undefined, invalid: string, size: number): FakeAnswer {
  const offset = offsetOf(cursor);
  if (offset === null) return refusal(400, invalid);
  const limit = Math.max(1, Math.trunc(size));
  const data = items.slice(offset, offset + limit);
  const next = offset + limit < items.length ? cursorOf(offset + limit) : CLOB_END_CURSOR;
  return answer(200, { limit, count: data.length, next_cursor: next, data });
}

/** A request body as JSON (undefined when empty); a body that is not JSON is refused. */
export function parseJson(body: string): unknown {
  if (body.trim() === '') return undefined;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    throw new Refusal(400, CLOB_ERRORS.invalidOrderPayload);
  }
}
