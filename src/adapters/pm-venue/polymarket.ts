// Polymarket's CLOB V2 (clob.polymarket.com): the HTTP client of the trading calls order routing
// needs (create or derive an API credential, post, read back, list, cancel, trades, balances,
// market data). Its headers are polymarket-auth.ts's (L1 `ClobAuth`, L2 HMAC), its orders
// polymarket-orders.ts's (typed data, signature, `POST /order` body; amounts in order-amounts.ts).
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
import { parseRetryAfter } from '../venues/aggregator-http.ts';
import { isClobTickSize, OrderInputError } from './order-amounts.ts';
import {
  ClobVenueRejected,
  VenueRejected,
  VenueUnavailable,
  type ClobApiCredentials,
  type ClobBalanceAllowance,
  type ClobBalanceAllowanceQuery,
  type ClobCallOptions,
  type ClobCancelResult,
  type ClobL2Auth,
  type ClobOpenOrder,
  type ClobPostOrderResult,
  type ClobTrade,
  type ClobTradesPage,
  type CredentialCheck,
  type PolymarketClobPort,
} from './port.ts';
import { buildClobL1Headers, buildClobL2Headers } from './polymarket-auth.ts';
import { UINT, orderPayloadV2 } from './polymarket-orders.ts';
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

/** The cursors of the venue's lists (clob-client-v2 `INITIAL_CURSOR`, `END_CURSOR`). */
export const CLOB_FIRST_CURSOR = 'MA==';
export const CLOB_LAST_CURSOR = 'LTE=';
/** A list walk stops (VenueUnavailable) after this many pages rather than loop forever. */
const MAX_PAGES = 10_000;
const ORDER_ID = /^0x[0-9a-fA-F]{64}$/;

interface ClobAnswer {
  status: number;
  headers: Headers;
  /** The parsed body; undefined when it was empty or not JSON. */
  json: unknown;
  /** The body was there and was not JSON. */
  notJson: boolean;
}

interface Request {
  headers?: Record<string, string>;
  /** The exact body text (already JSON). */
  body?: string;
  query?: Record<string, string | undefined>;
  call?: ClobCallOptions;
  /** For a POST /order: a failure leaves it unknown whether the order was taken. */
  placing?: boolean;
}

/** `text` with every credential value taken out, whitespace folded, at most `max` characters. */
function scrub(text: string, secrets: readonly string[], max: number): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  out = out.replace(/\s+/g, ' ').trim();
  return out.length > max ? `${out.slice(0, max)}…` : out;
}

/** The venue's `error` text, with any credential value taken out, short. */
function venueText(json: unknown, secrets: readonly string[]): string {
  const raw = (json as { error?: unknown } | null)?.error;
  return scrub(typeof raw === 'string' ? raw : '', secrets, 200);
}

function credentialsIn(json: unknown): ClobApiCredentials | null {
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

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []);
const secretsOf = (auth: ClobL2Auth) => [auth.creds.secret, auth.creds.passphrase, auth.creds.apiKey];

function isOpenOrder(v: unknown): v is ClobOpenOrder {
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

function isTrade(v: unknown): v is ClobTrade {
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

function checkOrderId(what: string, orderId: string): void {
  if (typeof orderId !== 'string' || !ORDER_ID.test(orderId)) {
    throw new Error(`Polymarket CLOB ${what}: an order id is 0x and 64 hexadecimal digits`);
  }
}

function checkTokenId(tokenId: string): void {
  if (typeof tokenId !== 'string' || !UINT.test(tokenId)) {
    throw new OrderInputError('tokenId', 'tokenId must be a decimal integer');
  }
}

export function createPolymarketClob(options: PolymarketClobOptions): PolymarketClobPort {
  const baseUrl = (options.baseUrl ?? POLYMARKET_CLOB_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  const clock = options.clock ?? systemClock;
  const seconds = () => Math.floor(clock.now().getTime() / 1000);

  async function call(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    what: string,
    req: Request = {},
  ): Promise<ClobAnswer> {
    const unknownOutcome = req.placing
      ? '; the order may have been placed: read it back by its hash before placing it again'
      : '';
    const callerSignal = req.call?.signal;
    if (callerSignal?.aborted) {
      throw new VenueUnavailable(`Polymarket CLOB ${what}: stopped by the caller before asking`);
    }
    // A caller's remaining budget is fractional milliseconds; the timer takes whole ones.
    const timeout = AbortSignal.timeout(Math.max(1, Math.ceil(req.call?.timeoutMs ?? options.timeoutMs)));
    const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) query.set(k, v);
    const qs = query.toString();
    const stopped = () =>
      callerSignal?.aborted ? 'was stopped by the caller' : timeout.aborted ? 'timed out' : null;
    let res: Response;
    try {
      res = await doFetch(`${baseUrl}${path}${qs ? `?${qs}` : ''}`, {
        method,
        headers: {
          accept: 'application/json',
          ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...req.headers,
        },
        ...(req.body === undefined ? {} : { body: req.body }),
        signal,
      });
    } catch (err) {
      const name = (err as Error).name;
      const why =
        stopped() ??
        (name === 'TimeoutError' || name === 'AbortError' ? 'timed out' : 'could not be reached');
      throw new VenueUnavailable(`Polymarket CLOB ${what}: the venue ${why}${unknownOutcome}`);
    }
    let text: string;
    try {
      text = await res.text();
    } catch {
      const why = stopped() ?? 'broke off';
      throw new VenueUnavailable(
        `Polymarket CLOB ${what}: the answer ${why} (HTTP ${res.status})${unknownOutcome}`,
      );
    }
    let json: unknown;
    let notJson = false;
    if (text.trim() !== '') {
      try {
        json = JSON.parse(text);
      } catch {
        notJson = true;
      }
    }
    return { status: res.status, headers: res.headers, json, notJson };
  }

  function rateLimited(answer: ClobAnswer, what: string): VenueUnavailable {
    const retryAfterMs = parseRetryAfter(answer.headers.get('retry-after'), clock.now()) ?? null;
    return new VenueUnavailable(
      `Polymarket CLOB ${what}: rate limited (HTTP 429${retryAfterMs === null ? '' : `, retry after ${retryAfterMs} ms`})`,
      retryAfterMs,
    );
  }

  /** A 429, a 5xx, an answer that is not JSON: the venue could not be asked. */
  function unavailable(answer: ClobAnswer, what: string): VenueUnavailable | null {
    if (answer.status === 429) return rateLimited(answer, what);
    if (answer.status >= 500) return new VenueUnavailable(`Polymarket CLOB ${what}: HTTP ${answer.status}`);
    if (answer.notJson)
      return new VenueUnavailable(`Polymarket CLOB ${what}: the answer was not JSON (HTTP ${answer.status})`);
    return null;
  }

  /**
   * A trading or market-data call: 429, 5xx and other non-2xx statuses the venue does not answer
   * with are VenueUnavailable; a 4xx is a ClobVenueRejected with the venue's text.
   */
  async function ask(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    what: string,
    auth: ClobL2Auth | null,
    req: Omit<Request, 'headers'> & { json?: boolean } = {},
  ): Promise<ClobAnswer> {
    const headers = auth
      ? {
          ...buildClobL2Headers({
            address: getAddress(auth.address),
            creds: auth.creds,
            timestamp: seconds(),
            method,
            requestPath: path,
            ...(req.body === undefined ? {} : { body: req.body }),
          }),
        }
      : {};
    const answer = await call(method, path, what, { ...req, headers });
    const secrets = auth ? secretsOf(auth) : [];
    const unknownOutcome = req.placing ? '; the order may have been placed' : '';
    if (answer.status === 429) throw rateLimited(answer, what);
    if (answer.status >= 500) {
      const text = venueText(answer.json, secrets);
      throw new VenueUnavailable(
        `Polymarket CLOB ${what}: HTTP ${answer.status}${text ? `: ${text}` : ''}${unknownOutcome}`,
      );
    }
    if (answer.status >= 400) {
      const text = venueText(answer.json, secrets);
      const credential = answer.status === 401 || answer.status === 403;
      throw new ClobVenueRejected(
        credential
          ? `Polymarket CLOB ${what}: the venue refused the API credential (HTTP ${answer.status}${text ? `: ${text}` : ''})`
          : `Polymarket CLOB ${what}: refused (HTTP ${answer.status}${text ? `: ${text}` : ''})`,
        answer.status,
        text,
      );
    }
    if (answer.status < 200 || answer.status >= 300) {
      throw new VenueUnavailable(`Polymarket CLOB ${what}: HTTP ${answer.status}${unknownOutcome}`);
    }
    if (req.json !== false && answer.notJson) {
      throw new VenueUnavailable(
        `Polymarket CLOB ${what}: the answer was not JSON (HTTP ${answer.status})${unknownOutcome}`,
      );
    }
    return answer;
  }

  const badFormat = (what: string, why: string) =>
    new VenueUnavailable(`Polymarket CLOB ${what}: the answer was not in the venue's format (${why})`);

  function cancelResult(answer: ClobAnswer, what: string): ClobCancelResult {
    const body = answer.json;
    if (!isRecord(body) || !Array.isArray(body.canceled)) throw badFormat(what, 'no canceled list');
    const notCanceled: Record<string, string> = {};
    if (isRecord(body.not_canceled)) {
      for (const [id, reason] of Object.entries(body.not_canceled)) notCanceled[id] = String(reason);
    }
    return { canceled: strings(body.canceled), notCanceled };
  }

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
