// The CLOB fake's public routes, no authentication: health and time, a token's tick size, neg-risk
// flag, fee rate and book, a market by token or condition id, and the market listings the client
// pages through (full and simplified, sampling or not), with the views of a market they give.

import { keccak256, toHex } from 'viem';
import type { FakeAnswer, FakeRequest } from '../loopback.ts';
import { answer, CLOB_ERRORS, page, refusal } from './answers.ts';
import { book, marketOf } from './order-book.ts';
import type { ClobState } from './state.ts';
import type { ClobFakeKnobs, ClobFakeMarket } from './types.ts';
import { decimal, DECIMAL, lower } from './units.ts';

/** The market listings by path, and whether each gives full or simplified markets. */
const MARKET_LISTINGS: Record<string, 'full' | 'simplified'> = {
  '/markets': 'full',
  '/sampling-markets': 'full',
  '/simplified-markets': 'simplified',
  '/sampling-simplified-markets': 'simplified',
};

/** A market slug from its question: lowercase words joined by hyphens. */
const slugOf = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80);

/** A token's price in listings: its last trade's, else 0.5 (as the book's `last_trade_price`). */
function tokenPrice(state: ClobState, tokenId: string): number {
  const last = [...state.tradeList].reverse().find((t) => t.tokenId === tokenId);
  return last ? Number(decimal(last.price)) : 0.5;
}

/** The simplified market of the listings (clob-openapi `SimplifiedMarket`). */
function simplifiedMarketView(state: ClobState, market: ClobFakeMarket) {
  return {
    condition_id: market.conditionId,
    rewards: { rates: null, min_size: 0, max_spread: 0 },
    tokens: market.tokens.map((t) => ({
      token_id: t.tokenId,
      outcome: t.outcome,
      price: tokenPrice(state, t.tokenId),
      winner: false,
    })),
    active: true,
    closed: false,
    archived: false,
    accepting_orders: true,
  };
}

/** A market as `GET /markets/{condition_id}` and the full listings give it (`Market`). */
function marketView(state: ClobState, market: ClobFakeMarket) {
  return {
    ...simplifiedMarketView(state, market),
    enable_order_book: true,
    accepting_order_timestamp: null,
    minimum_order_size: market.minOrderSize ?? 5,
    minimum_tick_size: Number(market.tickSize),
    question_id: keccak256(toHex(`question:${market.conditionId}`)),
    question: market.question ?? '',
    description: market.question ?? '',
    market_slug: slugOf(market.question ?? market.conditionId),
    end_date_iso: null,
    game_start_time: null,
    seconds_delay: 0,
    fpmm: '',
    maker_base_fee: 0,
    taker_base_fee: 0,
    notifications_enabled: false,
    neg_risk: market.negRisk ?? false,
    neg_risk_market_id: '',
    neg_risk_request_id: '',
    icon: '',
    image: '',
    is_50_50_outcome: false,
    tags: [],
  };
}

/** The answer of a public route; null when the request is for none of them. */
export function marketRoute(state: ClobState, req: FakeRequest, knobs: ClobFakeKnobs): FakeAnswer | null {
  const { method, path, query } = req;
  if (method !== 'GET') return null;
  if (path === '/ok') return answer(200, '"OK"');
  if (path === '/time') return answer(200, state.nowSeconds());
  if (path === '/version') return answer(200, { version: 2 });
  if (path === '/tick-size') {
    const market = marketOf(state, query.token_id);
    return answer(200, { minimum_tick_size: Number(market.tickSize) });
  }
  if (path === '/neg-risk')
    return answer(200, { neg_risk: marketOf(state, query.token_id).negRisk ?? false });
  if (path === '/fee-rate') {
    marketOf(state, query.token_id);
    return answer(200, { base_fee: 0 });
  }
  if (path === '/book') {
    if (query.token_id === undefined || !DECIMAL.test(query.token_id))
      return refusal(400, CLOB_ERRORS.invalidTokenId);
    const market = state.marketsByToken.get(query.token_id);
    if (!market) return refusal(404, CLOB_ERRORS.noOrderbook);
    return answer(200, book(state, market, query.token_id));
  }
  const byToken = /^\/markets-by-token\/(\d+)$/.exec(path);
  if (byToken) {
    const market = marketOf(state, byToken[1]);
    return answer(200, { condition_id: market.conditionId, primary_token_id: market.tokens[0].tokenId });
  }
  const clobMarket = /^\/clob-markets\/(0x[0-9a-fA-F]{64})$/.exec(path);
  if (clobMarket) {
    const market = state.marketsByCondition.get(lower(clobMarket[1] ?? ''));
    if (!market) return refusal(404, CLOB_ERRORS.marketNotFound);
    return answer(200, {
      c: market.conditionId,
      t: market.tokens.map((t) => ({ t: t.tokenId, o: t.outcome })),
      mts: Number(market.tickSize),
      nr: market.negRisk ?? false,
      fd: { r: 0, e: 0 },
      mos: market.minOrderSize ?? 5,
      r: null,
    });
  }
  const legacyMarket = /^\/markets\/(0x[0-9a-fA-F]{64})$/.exec(path);
  if (legacyMarket) {
    const market = state.marketsByCondition.get(lower(legacyMarket[1] ?? ''));
    if (!market) return refusal(404, CLOB_ERRORS.marketNotFound);
    return answer(200, marketView(state, market));
  }
  // The listings the client pages through (getMarkets, getSamplingMarkets,
  // getSimplifiedMarkets, getSamplingSimplifiedMarkets): every market of the fake is active
  // and accepting orders, so the sampling lists are the full ones.
  const listing = MARKET_LISTINGS[path];
  if (listing) {
    const all = [...state.marketsByCondition.values()];
    const views = all.map((m) =>
      listing === 'full' ? marketView(state, m) : simplifiedMarketView(state, m),
    );
    return page(views, query.next_cursor, CLOB_ERRORS.invalidCursor, knobs.pageSize);
  }
  return null;
}
