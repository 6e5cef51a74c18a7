// The CLOB fake's markets and order book: markets by token and condition, their tick sizes, GTD
// orders expiring, the resting orders of a side in price-time priority, and the book as
// `GET /book` gives it (bids from the lowest price up, asks from the highest down: best last).

import { keccak256, toHex } from 'viem';
import type { ClobSide, ClobTickSize } from '../../../adapters/pm-venue/port.ts';
import { CLOB_ERRORS, Refusal } from './answers.ts';
import type { BookOrder, ClobState } from './state.ts';
import type { ClobFakeMarket } from './types.ts';
import { decimal, DECIMAL, lower, ONE, TICKS, toUnits } from './units.ts';

/** A GTD order ends this long before its expiration (Polymarket's "security threshold"). */
export const GTD_THRESHOLD_SECONDS = 60;

export function addMarket(state: ClobState, market: ClobFakeMarket): void {
  if (!TICKS[market.tickSize]) throw new Error(`startClobFake: unknown tick size ${market.tickSize}`);
  const copy: ClobFakeMarket = { ...market, tokens: [{ ...market.tokens[0] }, { ...market.tokens[1] }] };
  state.marketsByCondition.set(lower(copy.conditionId), copy);
  for (const t of copy.tokens) {
    if (!DECIMAL.test(t.tokenId)) throw new Error(`startClobFake: token id ${t.tokenId} is not decimal`);
    state.marketsByToken.set(t.tokenId, copy);
  }
}

/** Changes a market's tick size (as Polymarket does near 0 and 1), by token or condition id. */
export function setTickSize(state: ClobState, tokenOrConditionId: string, tickSize: ClobTickSize): void {
  if (!TICKS[tickSize]) throw new Error(`setTickSize: unknown tick size ${tickSize}`);
  const market =
    state.marketsByToken.get(tokenOrConditionId) ?? state.marketsByCondition.get(lower(tokenOrConditionId));
  if (!market) throw new Error(`setTickSize: no market for ${tokenOrConditionId}`);
  market.tickSize = tickSize;
}

/** The market of a token; refused as the CLOB does for a malformed or unknown token id. */
export function marketOf(state: ClobState, tokenId: string | undefined): ClobFakeMarket {
  if (tokenId === undefined || !DECIMAL.test(tokenId)) throw new Refusal(400, CLOB_ERRORS.invalidTokenId);
  const market = state.marketsByToken.get(tokenId);
  if (!market) throw new Refusal(404, CLOB_ERRORS.marketNotFound);
  return market;
}

export const outcomeOf = (market: ClobFakeMarket, tokenId: string) =>
  market.tokens.find((t) => t.tokenId === tokenId)?.outcome ?? '';
export const minSize = (market: ClobFakeMarket) => toUnits(String(market.minOrderSize ?? 5)) ?? 5n * ONE;

/** Live GTD orders whose (threshold-shortened) expiration has come read EXPIRED from now on. */
export function expireDue(state: ClobState): void {
  const now = state.nowSeconds();
  for (const o of state.orders.values()) {
    if (o.status === 'LIVE' && o.orderType === 'GTD' && o.expiration - GTD_THRESHOLD_SECONDS <= now) {
      o.status = 'EXPIRED';
    }
  }
}

/** Resting orders of a token on one side, best first (then oldest first). */
export function resting(state: ClobState, tokenId: string, side: ClobSide): BookOrder[] {
  const list = [...state.orders.values()].filter(
    (o) => o.status === 'LIVE' && o.tokenId === tokenId && o.side === side && o.size > o.matched,
  );
  return list.sort((a, b) => {
    if (a.price !== b.price)
      return side === 'BUY' ? (b.price > a.price ? 1 : -1) : a.price > b.price ? 1 : -1;
    return a.seq - b.seq;
  });
}

export function book(state: ClobState, market: ClobFakeMarket, tokenId: string) {
  const level = (side: ClobSide) => {
    const byPrice = new Map<bigint, bigint>();
    for (const o of resting(state, tokenId, side))
      byPrice.set(o.price, (byPrice.get(o.price) ?? 0n) + o.size - o.matched);
    return [...byPrice.entries()];
  };
  // Polymarket lists bids from the lowest price up and asks from the highest down: best last.
  const bids = level('BUY')
    .sort((a, b) => (a[0] > b[0] ? 1 : -1))
    .map(([p, s]) => ({ price: decimal(p), size: decimal(s) }));
  const asks = level('SELL')
    .sort((a, b) => (a[0] < b[0] ? 1 : -1))
    .map(([p, s]) => ({ price: decimal(p), size: decimal(s) }));
  const last = [...state.tradeList].reverse().find((t) => t.tokenId === tokenId);
  return {
    market: market.conditionId,
    asset_id: tokenId,
    timestamp: String(state.clock.now().getTime()),
    hash: keccak256(toHex(JSON.stringify({ bids, asks }))).slice(2, 42),
    bids,
    asks,
    min_order_size: String(market.minOrderSize ?? 5),
    tick_size: market.tickSize,
    neg_risk: market.negRisk ?? false,
    last_trade_price: last ? decimal(last.price) : '0.5',
  };
}
