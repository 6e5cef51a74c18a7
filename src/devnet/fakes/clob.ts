// A loopback fake of Polymarket's CLOB V2 REST API (clob.polymarket.com) that the real client,
// @polymarket/clob-client-v2 1.1.0, uses unchanged: API keys made and derived with L1 headers
// (an EIP-712 `ClobAuth` signature), every trading call authenticated with L2 headers (HMAC with
// the key's secret), V2 orders verified as the exchange would (EIP-712, domain "Polymarket CTF
// Exchange" version "2", signature types 0 EOA, 1 proxy and 2 Safe), a matching engine with
// price-time priority, trades, open orders, cancels, balances and allowances. Formats are the
// client's (`src/types/clob.ts`, `src/endpoints.ts`) and the CLOB's documented answers
// (docs.polymarket.com "Error Codes", the CLOB OpenAPI spec; protocols.md §8). Development and
// tests only.
//
// Chosen here, where Polymarket's behaviour is not documented:
// - a token the fake does not know is refused as `404 {"error": "market not found"}` (the CLOB
//   turns any "not found" message into a 404);
// - the reasons in `not_canceled` ("Order not found or already canceled", "order already
//   matched", "order expired"), `GET /data/order/{id}` of an unknown id answering `null`, an
//   expired GTD order reading `status: "EXPIRED"`, `DELETE /auth/api-key` answering `"OK"` and
//   `GET /balance-allowance/update` answering an empty body;
// - one trade per taking order, listing every resting order it matched in `maker_orders`, its
//   `price` the first resting order's; matched amounts in the order answer (`makingAmount`,
//   `takingAmount`) as decimal strings;
// - a batch (`POST /orders`) refuses the whole request for a malformed payload, a wrong owner or
//   signer; everything else is answered per order in the 200 array (`success: false`, `errorMsg`);
// - one API key per (address, nonce), several per address; L1 and L2 timestamps accepted within
//   60 s of the fake's clock (an option); a GTD order ends a minute before its expiration (the
//   documented "security threshold") and must expire later than that when posted;
// - pages of 100 (a knob) with the client's base64-offset cursors ("MA==" … "LTE=" at the end);
// - rate limits: the `rateLimitRetryAfter` knob answers every request 429
//   `{"error": "Too Many Requests"}` with Retry-After and Poly-RateLimit-Remaining/-Reset, as the
//   per-signer limiter documents them; no per-endpoint limits are modelled.
//
// No on-chain settlement: a match moves no tokens. By default (knob `settlement: "confirmed"`) its
// trade reads CONFIRMED with a made-up transaction hash (keccak256 of the trade id; no such
// transaction exists) so the real client, which waits for a hash, returns at once; the
// order-routing issue may settle matches on the devnet chain instead.
//
// The fake never logs, and the request log it keeps has POLY_PASSPHRASE and POLY_SIGNATURE
// redacted.
//
// This file starts the fake and is what the rest of the code imports; its parts are in clob/:
// the public shapes (types.ts), answers and cursors (answers.ts), amounts and ids (units.ts), the
// state (state.ts), authentication (auth.ts) and API keys (api-keys.ts), markets and the book
// (order-book.ts), balances (balances.ts), an order's payload (order-payload.ts), the matching
// engine (matching.ts), the views of orders and trades (views.ts), the routes (market-routes.ts,
// order-routes.ts, data-routes.ts) and the request handling (http.ts).

import { getAddress } from 'viem';
import { CLOB_ERRORS } from './clob/answers.ts';
import { defaultKnobs, serveFake } from './loopback.ts';
import { apiKeyIds, loadKeys } from './clob/api-keys.ts';
import { redact } from './clob/auth.ts';
import { registerFunder, setBalance } from './clob/balances.ts';
import { handleClobRequest } from './clob/http.ts';
import { fillAgainstHouse, settleTrade } from './clob/matching.ts';
import { addMarket, expireDue, setTickSize } from './clob/order-book.ts';
import { createClobState } from './clob/state.ts';
import type { ClobFake, ClobFakeKnobs, ClobFakeOptions } from './clob/types.ts';
import { lower } from './clob/units.ts';
import { openOrderView, tradeView } from './clob/views.ts';

export type {
  ClobFake,
  ClobFakeChain,
  ClobFakeKnobs,
  ClobFakeMarket,
  ClobFakeOptions,
  ClobFakeToken,
  ClobMakerOrder,
  ClobOpenOrder,
  ClobTickSize,
  ClobTrade,
} from './clob/types.ts';
export {
  CLOB_END_CURSOR,
  CLOB_ERRORS,
  CLOB_INITIAL_CURSOR,
  clobDuplicatedError,
  clobMinSizeError,
  clobTickSizeError,
} from './clob/answers.ts';

export async function startClobFake(options: ClobFakeOptions = {}): Promise<ClobFake> {
  const state = createClobState(options);
  for (const m of options.markets ?? []) addMarket(state, m);
  loadKeys(state);

  const fake = await serveFake<ClobFakeKnobs>({
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.port === undefined ? {} : { port: options.port }),
    knobs: () => ({
      ...defaultKnobs(),
      pageSize: 100,
      settlement: 'confirmed',
      enforceBalances: false,
      trading: 'open',
      forgetMatchedOrders: false,
    }),
    handle: (req, knobs) => handleClobRequest(state, req, knobs),
    internalError: () => ({ error: CLOB_ERRORS.internal }),
  });
  const knobs = fake.knobs;

  return {
    url: fake.url,
    knobs,
    reset: () => fake.reset(),
    get requests() {
      // A hung or delayed request is logged before its handler runs: redact on the way out too.
      for (const r of fake.requests) redact(r.headers);
      return fake.requests;
    },
    stop: () => fake.stop(),
    chainId: state.chainId,
    exchange: getAddress(state.exchange),
    negRiskExchange: getAddress(state.negRiskExchange),
    spenders: state.spenders,
    addMarket: (market) => addMarket(state, market),
    setTickSize: (tokenOrConditionId, tickSize) => setTickSize(state, tokenOrConditionId, tickSize),
    registerFunder: (funder, signer, signatureType) => registerFunder(state, funder, signer, signatureType),
    setBalance: (owner, asset, balance, allowances) => setBalance(state, owner, asset, balance, allowances),
    fill: (orderId, size) => fillAgainstHouse(state, knobs, orderId, size),
    settleTrade: (tradeId, update) => settleTrade(state, tradeId, update),
    order(orderId) {
      expireDue(state);
      const o = state.orders.get(lower(orderId));
      return o ? openOrderView(o) : undefined;
    },
    trades() {
      return state.tradeList.map((t) => tradeView(t, null));
    },
    apiKeys: (address) => apiKeyIds(state, address),
  };
}
