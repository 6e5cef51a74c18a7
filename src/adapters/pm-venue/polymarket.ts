// Polymarket's CLOB V2 (clob.polymarket.com): the HTTP client of the trading calls order routing
// needs (create or derive an API credential, post, read back, list, cancel, trades, balances,
// market data). Its headers are polymarket-auth.ts's (L1 `ClobAuth`, L2 HMAC), its orders
// polymarket-orders.ts's (typed data, signature, `POST /order` body; amounts in order-amounts.ts),
// its transport and the reading of the venue's statuses polymarket-http.ts's, and the shapes of
// its answers polymarket-answers.ts's.
// The formats are clob-client-v2 1.1.0's (`src/client.ts`, `src/types/*`; protocols.md §8.3,
// §8.5); the answers are the CLOB's (`{"error": "…"}` bodies, docs.polymarket.com "Error Codes").
//
// Not confirmed against the live venue (the fake in src/devnet/fakes/clob.ts chose these too):
// `GET /data/order/{id}` of an id it does not show answering `null` (a 404 "not found" is read the
// same way; and an order that matched at once may not be shown at all, so reconciliation also looks
// at trades); `balance` and `allowances` as base-unit integer strings; the body of
// `GET /balance-allowance/update` (ignored here).
//
// Secrets (the signer key, the credential's secret and passphrase) never reach an error message or
// a log: errors quote the venue's own error text, with any credential value scrubbed from it.
import { getAddress, type Address, type Hex, type LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { systemClock, type Clock } from '../../core/clock.ts';
import { isClobTickSize } from './order-amounts.ts';
import {
  ClobVenueRejected,
  VenueRejected,
  VenueUnavailable,
  type ClobApiCredentials,
  type ClobBalanceAllowance,
  type ClobBalanceAllowanceQuery,
  type ClobOpenOrder,
  type ClobPostOrderResult,
  type ClobTrade,
  type ClobTradesPage,
  type CredentialCheck,
  type PolymarketClobPort,
} from './port.ts';
import { buildClobL1Headers, buildClobL2Headers } from './polymarket-auth.ts';
import {
  badFormat,
  cancelResult,
  checkOrderId,
  checkTokenId,
  CLOB_FIRST_CURSOR,
  CLOB_LAST_CURSOR,
  credentialsIn,
  isOpenOrder,
  isRecord,
  isTrade,
  MAX_PAGES,
  strings,
} from './polymarket-answers.ts';
import { createClobHttp, scrub, secretsOf, venueText, type ClobAnswer } from './polymarket-http.ts';
import { UINT, orderPayloadV2 } from './polymarket-orders.ts';
export { CLOB_FIRST_CURSOR, CLOB_LAST_CURSOR } from './polymarket-answers.ts';
export {
  CLOB_AUTH_MESSAGE,
  CLOB_AUTH_TYPES,
  buildClobL1Headers,
  buildClobL2Headers,
  clobAuthTypedData,
  clobHmacSignature,
  type ClobL1Headers,
  type ClobL2Headers,
} from './polymarket-auth.ts';
export {
  CTF_EXCHANGE_V2,
  CTF_EXCHANGE_V2_DOMAIN,
  ORDER_V2_TYPES,
  ZERO_BYTES32,
  buildOrderV2,
  newOrderSalt,
  orderHashV2,
  orderPayloadV2,
  orderTypedDataV2,
  signOrderV2,
  type OrderPayloadV2,
  type OrderV2Input,
  type OrderV2TypedData,
} from './polymarket-orders.ts';

export const POLYMARKET_CLOB_DEFAULT_BASE_URL = 'https://clob.polymarket.com';

// ------------------------------------------------------------------------------ the adapter

export interface PolymarketClobOptions {
  /** Default https://clob.polymarket.com; the devnet points it at its loopback fake. */
  baseUrl?: string;
  /** The chain the L1 signatures name (137 for Polygon). */
  chainId: number;
  /** Limit of one HTTP call in milliseconds (a call's own `timeoutMs` overrides it). */
  timeoutMs: number;
  fetch?: typeof fetch;
  clock?: Clock;
}

export function createPolymarketClob(options: PolymarketClobOptions): PolymarketClobPort {
  const baseUrl = (options.baseUrl ?? POLYMARKET_CLOB_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const { seconds, call, unavailable, ask } = createClobHttp({
    baseUrl,
    timeoutMs: options.timeoutMs,
    fetch: options.fetch ?? fetch,
    clock: options.clock ?? systemClock,
  });

  async function l1(
    method: 'GET' | 'POST',
    path: string,
    account: LocalAccount,
    nonce: number,
    what: string,
  ): Promise<{ creds: ClobApiCredentials } | { refused: VenueRejected }> {
    const headers = await buildClobL1Headers({
      account,
      chainId: options.chainId,
      timestamp: seconds(),
      nonce,
    });
    const answer = await call(method, path, what, { headers: { ...headers } });
    const down = unavailable(answer, what);
    if (down) throw down;
    if (answer.status === 200) {
      const creds = credentialsIn(answer.json);
      if (!creds) throw new VenueUnavailable(`Polymarket CLOB ${what}: the answer had no credential`);
      return { creds };
    }
    const text = venueText(answer.json, []);
    return {
      refused: new VenueRejected(
        `Polymarket CLOB ${what}: refused (HTTP ${answer.status}${text ? `: ${text}` : ''})`,
        answer.status,
      ),
    };
  }

  function balanceQuery(query: ClobBalanceAllowanceQuery): Record<string, string | undefined> {
    if (query.assetType !== 'COLLATERAL' && query.assetType !== 'CONDITIONAL') {
      throw new Error('Polymarket CLOB balance: assetType must be COLLATERAL or CONDITIONAL');
    }
    if (query.assetType === 'CONDITIONAL') checkTokenId(query.tokenId ?? '');
    return {
      asset_type: query.assetType,
      ...(query.tokenId === undefined ? {} : { token_id: query.tokenId }),
      signature_type: String(query.signatureType),
    };
  }

  return {
    async deriveApiCredentials(signerKey: Hex, nonce = 0): Promise<ClobApiCredentials> {
      if (!Number.isSafeInteger(nonce) || nonce < 0)
        throw new Error('deriveApiCredentials: nonce must be ≥ 0');
      let account: LocalAccount;
      try {
        account = privateKeyToAccount(signerKey);
      } catch {
        throw new Error('deriveApiCredentials: the signer key is not a private key');
      }
      // Derive the credential the CLOB has; create it when there is none (and a create refused
      // because one appeared meanwhile is derived once more).
      const derived = await l1('GET', '/auth/derive-api-key', account, nonce, 'derive API key');
      if ('creds' in derived) return derived.creds;
      if (derived.refused.status === 401 || derived.refused.status === 403) throw derived.refused;
      const created = await l1('POST', '/auth/api-key', account, nonce, 'create API key');
      if ('creds' in created) return created.creds;
      if (created.refused.status !== 400) throw created.refused;
      const again = await l1('GET', '/auth/derive-api-key', account, nonce, 'derive API key');
      if ('creds' in again) return again.creds;
      throw again.refused;
    },

    async checkApiCredentials(address: Address, creds: ClobApiCredentials): Promise<CredentialCheck> {
      const what = 'check API key';
      const path = '/auth/api-keys';
      const headers = buildClobL2Headers({
        address: getAddress(address),
        creds,
        timestamp: seconds(),
        method: 'GET',
        requestPath: path,
      });
      const answer = await call('GET', path, what, { headers: { ...headers } });
      const down = unavailable(answer, what);
      if (down) throw down;
      if (answer.status === 401 || answer.status === 403) {
        const text = venueText(answer.json, [creds.secret, creds.passphrase, creds.apiKey]);
        return {
          ok: false,
          reason: `Polymarket refused the API credential (HTTP ${answer.status}${text ? `: ${text}` : ''})`,
        };
      }
      if (answer.status !== 200) {
        throw new VenueUnavailable(`Polymarket CLOB ${what}: HTTP ${answer.status}`);
      }
      const keys = (answer.json as { apiKeys?: unknown } | undefined)?.apiKeys;
      if (!Array.isArray(keys)) {
        throw new VenueUnavailable(`Polymarket CLOB ${what}: the answer had no apiKeys list`);
      }
      return { ok: true };
    },

    async postOrder(auth, order, postOptions, callOptions) {
      const what = 'post order';
      const { orderType } = postOptions;
      if (orderType !== 'GTC' && orderType !== 'GTD' && orderType !== 'FOK' && orderType !== 'FAK') {
        throw new Error(`Polymarket CLOB ${what}: orderType must be GTC, GTD, FOK or FAK`);
      }
      if (postOptions.postOnly && (orderType === 'FOK' || orderType === 'FAK')) {
        throw new Error(`Polymarket CLOB ${what}: postOnly is for GTC and GTD orders only`);
      }
      const body = JSON.stringify(orderPayloadV2(order, auth.creds.apiKey, postOptions));
      const answer = await ask('POST', '/order', what, auth, {
        body,
        placing: true,
        ...(callOptions ? { call: callOptions } : {}),
      });
      const json = answer.json;
      if (!isRecord(json)) throw badFormat(what, 'not an object; the order may have been placed');
      if (typeof json.error === 'string' || json.success === false) {
        const raw = typeof json.error === 'string' ? json.error : json.errorMsg;
        const text = scrub(typeof raw === 'string' ? raw : '', secretsOf(auth), 500);
        throw new ClobVenueRejected(
          `Polymarket CLOB ${what}: refused${text ? `: ${text}` : ''}`,
          answer.status,
          text,
        );
      }
      if (typeof json.orderID !== 'string' || json.orderID === '') {
        throw badFormat(what, 'no orderID; the order may have been placed');
      }
      const text = (v: unknown) =>
        typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
      return {
        orderId: json.orderID,
        status: text(json.status),
        success: json.success === true,
        errorMsg: text(json.errorMsg),
        makingAmount: text(json.makingAmount),
        takingAmount: text(json.takingAmount),
        transactionHashes: strings(json.transactionsHashes),
        tradeIds: strings(json.tradeIDs),
      } satisfies ClobPostOrderResult;
    },

    async getOrder(auth, orderId, callOptions) {
      const what = 'get order';
      checkOrderId(what, orderId);
      let answer: ClobAnswer;
      try {
        answer = await ask('GET', `/data/order/${orderId}`, what, auth, {
          ...(callOptions ? { call: callOptions } : {}),
        });
      } catch (err) {
        if (err instanceof ClobVenueRejected && err.status === 404 && /not found/i.test(err.venueError)) {
          return null;
        }
        throw err;
      }
      if (answer.json === undefined || answer.json === null || answer.json === '') return null;
      if (!isOpenOrder(answer.json)) throw badFormat(what, 'not an order');
      return answer.json;
    },

    async openOrders(auth, filter = {}, callOptions) {
      const what = 'open orders';
      const all: ClobOpenOrder[] = [];
      const seen = new Set<string>();
      let cursor = CLOB_FIRST_CURSOR;
      for (let pages = 0; cursor !== CLOB_LAST_CURSOR; pages++) {
        if (pages >= MAX_PAGES || seen.has(cursor)) throw badFormat(what, 'the cursors do not end');
        seen.add(cursor);
        const answer = await ask('GET', '/data/orders', what, auth, {
          query: { market: filter.market, asset_id: filter.assetId, next_cursor: cursor },
          ...(callOptions ? { call: callOptions } : {}),
        });
        const body = answer.json;
        if (!isRecord(body) || !Array.isArray(body.data) || typeof body.next_cursor !== 'string') {
          throw badFormat(what, 'no data list or next_cursor');
        }
        for (const item of body.data) {
          if (!isOpenOrder(item)) throw badFormat(what, 'an item is not an order');
          all.push(item);
        }
        cursor = body.next_cursor === '' ? CLOB_LAST_CURSOR : body.next_cursor;
      }
      return all;
    },

    async cancelOrder(auth, orderId, callOptions) {
      const what = 'cancel order';
      checkOrderId(what, orderId);
      const answer = await ask('DELETE', '/order', what, auth, {
        body: JSON.stringify({ orderID: orderId }),
        ...(callOptions ? { call: callOptions } : {}),
      });
      return cancelResult(answer, what);
    },

    async cancelOrders(auth, orderIds, callOptions) {
      const what = 'cancel orders';
      for (const id of orderIds) checkOrderId(what, id);
      if (orderIds.length === 0) return { canceled: [], notCanceled: {} };
      const answer = await ask('DELETE', '/orders', what, auth, {
        body: JSON.stringify(orderIds),
        ...(callOptions ? { call: callOptions } : {}),
      });
      return cancelResult(answer, what);
    },

    async cancelAll(auth, callOptions) {
      const what = 'cancel all';
      const answer = await ask('DELETE', '/cancel-all', what, auth, {
        ...(callOptions ? { call: callOptions } : {}),
      });
      return cancelResult(answer, what);
    },

    async cancelMarket(auth, filter, callOptions) {
      const what = 'cancel market orders';
      const market = filter.market || undefined;
      const assetId = filter.assetId || undefined;
      if (market === undefined && assetId === undefined) {
        throw new Error(
          `Polymarket CLOB ${what}: name a market or an asset id (cancelAll cancels every order)`,
        );
      }
      const payload = {
        ...(market === undefined ? {} : { market }),
        ...(assetId === undefined ? {} : { asset_id: assetId }),
      };
      const answer = await ask('DELETE', '/cancel-market-orders', what, auth, {
        body: JSON.stringify(payload),
        ...(callOptions ? { call: callOptions } : {}),
      });
      return cancelResult(answer, what);
    },

    async trades(auth, query = {}, callOptions): Promise<ClobTradesPage> {
      const what = 'trades';
      const unix = (v: number | undefined, name: string) => {
        if (v === undefined) return undefined;
        if (!Number.isSafeInteger(v) || v < 0)
          throw new Error(`Polymarket CLOB ${what}: ${name} is unix seconds`);
        return String(v);
      };
      const answer = await ask('GET', '/data/trades', what, auth, {
        query: {
          id: query.id,
          maker_address: query.makerAddress,
          market: query.market,
          asset_id: query.assetId,
          before: unix(query.before, 'before'),
          after: unix(query.after, 'after'),
          next_cursor: query.cursor || CLOB_FIRST_CURSOR,
        },
        ...(callOptions ? { call: callOptions } : {}),
      });
      const body = answer.json;
      if (!isRecord(body) || !Array.isArray(body.data) || typeof body.next_cursor !== 'string') {
        throw badFormat(what, 'no data list or next_cursor');
      }
      const trades: ClobTrade[] = [];
      for (const item of body.data) {
        if (!isTrade(item)) throw badFormat(what, 'an item is not a trade');
        trades.push(item);
      }
      const next = body.next_cursor;
      return { trades, nextCursor: next === CLOB_LAST_CURSOR || next === '' ? null : next };
    },

    async balanceAllowance(auth, query, callOptions): Promise<ClobBalanceAllowance> {
      const what = 'balance and allowance';
      const answer = await ask('GET', '/balance-allowance', what, auth, {
        query: balanceQuery(query),
        ...(callOptions ? { call: callOptions } : {}),
      });
      const body = answer.json;
      const units = (v: unknown) => (typeof v === 'string' && UINT.test(v) ? BigInt(v) : null);
      const balance = isRecord(body) ? units(body.balance) : null;
      if (!isRecord(body) || balance === null || !isRecord(body.allowances)) {
        throw badFormat(what, 'no balance or allowances');
      }
      const allowances: Record<string, bigint> = {};
      for (const [spender, value] of Object.entries(body.allowances)) {
        const v = units(value);
        if (v === null) throw badFormat(what, 'an allowance is not an integer');
        allowances[spender] = v;
      }
      return { balance, allowances };
    },

    async updateBalanceAllowance(auth, query, callOptions) {
      await ask('GET', '/balance-allowance/update', 'update balance and allowance', auth, {
        query: balanceQuery(query),
        json: false,
        ...(callOptions ? { call: callOptions } : {}),
      });
    },

    async tickSize(tokenId, callOptions) {
      const what = 'tick size';
      checkTokenId(tokenId);
      const answer = await ask('GET', '/tick-size', what, null, {
        query: { token_id: tokenId },
        ...(callOptions ? { call: callOptions } : {}),
      });
      const raw = isRecord(answer.json) ? answer.json.minimum_tick_size : undefined;
      const tick = typeof raw === 'number' || typeof raw === 'string' ? String(raw) : '';
      if (!isClobTickSize(tick)) throw badFormat(what, 'not a tick size the venue documents');
      return tick;
    },

    async negRisk(tokenId, callOptions) {
      const what = 'neg risk';
      checkTokenId(tokenId);
      const answer = await ask('GET', '/neg-risk', what, null, {
        query: { token_id: tokenId },
        ...(callOptions ? { call: callOptions } : {}),
      });
      const raw = isRecord(answer.json) ? answer.json.neg_risk : undefined;
      if (typeof raw !== 'boolean') throw badFormat(what, 'no neg_risk flag');
      return raw;
    },

    async serverTime(callOptions) {
      const what = 'server time';
      const answer = await ask('GET', '/time', what, null, {
        ...(callOptions ? { call: callOptions } : {}),
      });
      const t = answer.json;
      if (typeof t !== 'number' || !Number.isSafeInteger(t) || t <= 0)
        throw badFormat(what, 'not unix seconds');
      return t;
    },
  };
}
