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

import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  createPublicClient,
  getAddress,
  http,
  isAddress,
  keccak256,
  parseAbi,
  recoverTypedDataAddress,
  toHex,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { systemClock, type Clock } from '../../core/clock.ts';
import { chainDefinition } from '../../adapters/chain/viem.ts';
import {
  clobAuthTypedData,
  clobHmacSignature,
  CTF_EXCHANGE_V2,
  orderHashV2,
  orderTypedDataV2,
} from '../../adapters/pm-venue/polymarket.ts';
import type {
  ClobOpenOrder,
  ClobOrderV2,
  ClobSide,
  ClobSignatureType,
  ClobTickSize,
  ClobTrade,
} from '../../adapters/pm-venue/port.ts';
import {
  defaultKnobs,
  rateLimited,
  serveFake,
  type FakeAnswer,
  type FakeKnobs,
  type FakeRequest,
  type RecordedRequest,
  type RunningFake,
} from './loopback.ts';

// ------------------------------------------------------------------------------ public types

export type { ClobTickSize } from '../../adapters/pm-venue/port.ts';

export interface ClobFakeToken {
  /** The ERC-1155 position id, as a decimal string. */
  tokenId: string;
  /** "Yes", "No", or a candidate's name. */
  outcome: string;
}

export interface ClobFakeMarket {
  /** The market's condition id (bytes32). */
  conditionId: Hex;
  tokens: [ClobFakeToken, ClobFakeToken];
  tickSize: ClobTickSize;
  /** Orders of a neg-risk market are signed for the neg-risk exchange. Default false. */
  negRisk?: boolean;
  /** Smallest order in shares (default 5, Polymarket's usual). */
  minOrderSize?: number;
  question?: string;
}

/** Where balances and allowances are read on chain, and where Safes are asked for their owners. */
export interface ClobFakeChain {
  rpcUrl: string;
  /** The collateral ERC-20 (pUSD). Without it, collateral comes from the in-memory table. */
  collateral?: Address;
  /** The conditional tokens (ERC-1155). Without it, outcome tokens come from the in-memory table. */
  conditionalTokens?: Address;
}

export interface ClobFakeOptions {
  /** The chain the signatures name (default 137, Polygon: what the client signs for). */
  chainId?: number;
  markets?: ClobFakeMarket[];
  /** The V2 exchanges orders are signed for (default: the client's addresses for the chain). */
  exchange?: Address;
  negRiskExchange?: Address;
  /** The third spender in balance answers (default: Polymarket's NegRiskAdapter). */
  negRiskAdapter?: Address;
  /** When given: balances and allowances read on chain, Safe owners (type 2) asked on chain. */
  chain?: ClobFakeChain;
  /** How far POLY_TIMESTAMP may be from the fake's clock, both ways (default 60 s). */
  maxClockSkewSeconds?: number;
  /** Keeps the API keys (secrets included) in this JSON file across restarts (mode 0600). */
  persistPath?: string;
  clock?: Clock;
  host?: string;
  /** Default 0: a free port. */
  port?: number;
}

export interface ClobFakeKnobs extends FakeKnobs {
  /** Items per page of `/data/orders` and `/data/trades` (the cursor walk the client does). */
  pageSize: number;
  /**
   * What a new trade reads: `confirmed` (status CONFIRMED, a made-up transaction hash), `matched`
   * (MATCHED, no hash yet: the real client then waits up to 30 s for one) or `failed` (FAILED).
   */
  settlement: 'confirmed' | 'matched' | 'failed';
  /** Refuse orders the funder's balance and allowance (less its open orders) cannot cover. */
  enforceBalances: boolean;
  /** `disabled`: every trading call 503; `cancel-only`: new orders 503, cancels pass. */
  trading: 'open' | 'disabled' | 'cancel-only';
  /**
   * `GET /data/order/{id}` answers `null` for an order that matched in full, as the live venue was
   * reported to do for an order that matched at once: only its trades still show it.
   */
  forgetMatchedOrders: boolean;
}

// The CLOB's wire shapes of orders and trades are the adapter's (src/adapters/pm-venue/port.ts):
// what the fake answers is what the adapter reads.
export type { ClobMakerOrder, ClobOpenOrder, ClobTrade } from '../../adapters/pm-venue/port.ts';

export interface ClobFake extends RunningFake<ClobFakeKnobs> {
  chainId: number;
  /** The exchange and neg-risk exchange orders must be signed for. */
  exchange: Address;
  negRiskExchange: Address;
  /** The spenders balance answers list allowances for. */
  spenders: Address[];
  addMarket(market: ClobFakeMarket): void;
  /** Changes a market's tick size (as Polymarket does near 0 and 1), by token or condition id. */
  setTickSize(tokenOrConditionId: string, tickSize: ClobTickSize): void;
  /** `funder` (a proxy wallet or Safe) may be the maker of orders `signer` signs (types 1 and 2). */
  registerFunder(funder: Address, signer: Address, signatureType?: 1 | 2): void;
  /**
   * Sets `owner`'s balance of collateral or of an outcome token in the in-memory table (used for
   * what the chain options do not cover), in base units; allowances default to the maximum for
   * every spender.
   */
  setBalance(
    owner: Address,
    asset: 'COLLATERAL' | { tokenId: string },
    balance: bigint,
    allowances?: Partial<Record<Address, bigint>>,
  ): void;
  /**
   * Fills a resting order against the house: `size` in shares (default: all that remains).
   * Returns the trade as the order's owner sees it.
   */
  fill(orderId: Hex, size?: string | number): ClobTrade;
  /** Moves a trade on (e.g. MATCHED → MINED → CONFIRMED with a hash, or FAILED). */
  settleTrade(tradeId: string, update: { status: string; transactionHash?: Hex; errMsg?: string }): void;
  /** An order as its owner reads it, or undefined. */
  order(orderId: Hex): ClobOpenOrder | undefined;
  /** Every trade, as its taker sees it, oldest first. */
  trades(): ClobTrade[];
  /** The API key ids of an address (no secrets). */
  apiKeys(address: Address): string[];
}

// ------------------------------------------------------------------------------ answers

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
export const CLOB_END_CURSOR = 'LTE=';

const MALFORMED_CLOB_BODY = '{"success": true, "orderID": "0x';
const MAX_BATCH_ORDERS = 15;
const MAX_CANCEL_IDS = 3000;
/** A GTD order ends this long before its expiration (Polymarket's "security threshold"). */
const GTD_THRESHOLD_SECONDS = 60;
const ONE = 1_000_000n;
const MAX_UINT256 = 2n ** 256n - 1n;
const ZERO_BYTES32: Hex = `0x${'0'.repeat(64)}`;
/** The counterparty of `fill()`. */
const HOUSE_OWNER = '00000000-0000-4000-8000-000000000000';
const HOUSE_ADDRESS: Address = '0x000000000000000000000000000000000000dEaD';

const TICKS: Record<ClobTickSize, { micro: bigint; amountDecimals: number }> = {
  '0.1': { micro: 100_000n, amountDecimals: 3 },
  '0.01': { micro: 10_000n, amountDecimals: 4 },
  '0.005': { micro: 5_000n, amountDecimals: 5 },
  '0.0025': { micro: 2_500n, amountDecimals: 6 },
  '0.001': { micro: 1_000n, amountDecimals: 5 },
  '0.0001': { micro: 100n, amountDecimals: 6 },
};

const erc20Abi = parseAbi([
  'function balanceOf(address) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
]);
const erc1155Abi = parseAbi([
  'function balanceOf(address account, uint256 id) view returns (uint256)',
  'function isApprovedForAll(address account, address operator) view returns (bool)',
]);
const safeAbi = parseAbi(['function isOwner(address owner) view returns (bool)']);

// ------------------------------------------------------------------------------ helpers

/** Base units (6 decimals) as a decimal string: 5000000 → "5", 2500000 → "2.5". */
function decimal(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const whole = abs / ONE;
  const fraction = (abs % ONE).toString().padStart(6, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** A decimal string or number of shares as base units; null when it has more than 6 decimals. */
function toUnits(value: string | number): bigint | null {
  const text = typeof value === 'number' ? String(value) : value.trim();
  const m = /^(\d+)(?:\.(\d{1,6}))?$/.exec(text);
  if (!m) return null;
  return BigInt(m[1] ?? '0') * ONE + BigInt((m[2] ?? '').padEnd(6, '0') || '0');
}

const cursorOf = (offset: number) => Buffer.from(String(offset)).toString('base64');

/** The offset a cursor names; null when it is not one of ours. */
function offsetOf(cursor: string | undefined): number | null {
  if (cursor === undefined || cursor === '') return 0;
  const text = Buffer.from(cursor, 'base64').toString('utf8');
  if (!/^-?\d+$/.test(text)) return null;
  const n = Number(text);
  return n < 0 ? null : n;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Base64 either way (URL-safe or not), padding kept: how the two forms of one HMAC compare. */
const normalBase64 = (s: string) => s.replace(/-/g, '+').replace(/_/g, '/');

/** The authenticated routes, by method and path. */
const L2_ROUTES: [string, RegExp][] = [
  ['GET', /^\/auth\/api-keys$/],
  ['DELETE', /^\/auth\/api-key$/],
  ['GET', /^\/auth\/ban-status\/closed-only$/],
  ['POST', /^\/orders?$/],
  ['DELETE', /^\/orders?$/],
  ['DELETE', /^\/cancel-all$/],
  ['DELETE', /^\/cancel-market-orders$/],
  ['GET', /^\/data\/orders$/],
  ['GET', /^\/data\/order\/[^/]+$/],
  ['GET', /^\/data\/trades$/],
  ['GET', /^\/balance-allowance(\/update)?$/],
];

const lower = (a: string) => a.toLowerCase();
const DECIMAL = /^\d+$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const ORDER_ID = /^0x[0-9a-fA-F]{64}$/;

// ------------------------------------------------------------------------------ state

interface ApiKeyRecord {
  apiKey: string;
  secret: string;
  passphrase: string;
  address: Address;
  nonce: string;
  createdAt: number;
}

type OrderType = 'GTC' | 'GTD' | 'FOK' | 'FAK';
type OrderStatus = 'LIVE' | 'MATCHED' | 'CANCELED' | 'EXPIRED';

interface BookOrder {
  id: Hex;
  seq: number;
  owner: string;
  ownerAddress: Address;
  maker: Address;
  market: ClobFakeMarket;
  tokenId: string;
  outcome: string;
  side: ClobSide;
  /** Price in millionths. */
  price: bigint;
  /** Outcome tokens, base units. */
  size: bigint;
  matched: bigint;
  status: OrderStatus;
  orderType: OrderType;
  expiration: number;
  createdAt: number;
  trades: string[];
}

interface MakerFill {
  order: BookOrder;
  amount: bigint;
  price: bigint;
}

interface TradeRecord {
  id: string;
  takerOrderId: Hex;
  market: ClobFakeMarket;
  tokenId: string;
  outcome: string;
  side: ClobSide;
  size: bigint;
  price: bigint;
  status: string;
  matchTime: number;
  lastUpdate: number;
  takerOwner: string;
  takerOwnerAddress: Address | null;
  takerMaker: Address;
  makers: MakerFill[];
  transactionHash: string;
  errMsg: string | null;
}

interface BalanceEntry {
  balance: bigint;
  allowances: Map<string, bigint>;
}

/** A request that passed L2 authentication. */
interface Caller {
  key: ApiKeyRecord;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const answer = (status: number, body: unknown): FakeAnswer => ({ status, body });
const refusal = (status: number, message: string): FakeAnswer => answer(status, { error: message });

// ------------------------------------------------------------------------------ the fake

export async function startClobFake(options: ClobFakeOptions = {}): Promise<ClobFake> {
  const chainId = options.chainId ?? 137;
  const known = CTF_EXCHANGE_V2[chainId];
  const exchange = options.exchange ?? known?.exchange;
  const negRiskExchange = options.negRiskExchange ?? known?.negRiskExchange;
  const negRiskAdapter = options.negRiskAdapter ?? known?.negRiskAdapter;
  if (!exchange || !negRiskExchange || !negRiskAdapter) {
    throw new Error(
      `startClobFake: no V2 exchange known for chain ${chainId}; pass exchange and negRiskExchange`,
    );
  }
  const spenders = [getAddress(exchange), getAddress(negRiskExchange), getAddress(negRiskAdapter)];
  const clock = options.clock ?? systemClock;
  const skew = options.maxClockSkewSeconds ?? 60;
  const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);

  let chainClient: PublicClient | null = null;
  if (options.chain) {
    chainClient = createPublicClient({
      chain: chainDefinition(chainId, options.chain.rpcUrl),
      transport: http(options.chain.rpcUrl, { retryCount: 1 }),
    });
  }

  // Markets by token and by condition.
  const marketsByToken = new Map<string, ClobFakeMarket>();
  const marketsByCondition = new Map<string, ClobFakeMarket>();
  const addMarket = (market: ClobFakeMarket) => {
    if (!TICKS[market.tickSize]) throw new Error(`startClobFake: unknown tick size ${market.tickSize}`);
    const copy: ClobFakeMarket = { ...market, tokens: [{ ...market.tokens[0] }, { ...market.tokens[1] }] };
    marketsByCondition.set(lower(copy.conditionId), copy);
    for (const t of copy.tokens) {
      if (!DECIMAL.test(t.tokenId)) throw new Error(`startClobFake: token id ${t.tokenId} is not decimal`);
      marketsByToken.set(t.tokenId, copy);
    }
  };
  for (const m of options.markets ?? []) addMarket(m);

  // API keys.
  const keys = new Map<string, ApiKeyRecord>();
  const keyByOwnerNonce = new Map<string, string>();
  const ownerNonce = (address: string, nonce: string) => `${lower(address)}:${nonce}`;
  const rememberKey = (k: ApiKeyRecord) => {
    keys.set(k.apiKey, k);
    keyByOwnerNonce.set(ownerNonce(k.address, k.nonce), k.apiKey);
  };
  if (options.persistPath) {
    let saved: { keys?: ApiKeyRecord[] } | null = null;
    try {
      saved = JSON.parse(readFileSync(options.persistPath, 'utf8')) as { keys?: ApiKeyRecord[] };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new Error(`startClobFake: cannot read ${options.persistPath}: ${(err as Error).message}`);
      }
    }
    for (const k of saved?.keys ?? []) rememberKey({ ...k, address: getAddress(k.address) });
  }
  const persist = () => {
    if (!options.persistPath) return;
    mkdirSync(dirname(options.persistPath), { recursive: true });
    const tmp = `${options.persistPath}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ keys: [...keys.values()] }, null, 2), { mode: 0o600 });
    renameSync(tmp, options.persistPath);
  };

  // Funders (types 1 and 2), balances, orders, trades.
  const funders = new Map<string, { funder: Address; type: 1 | 2 | null }[]>();
  const balances = new Map<string, BalanceEntry>();
  const orders = new Map<string, BookOrder>();
  const tradeList: TradeRecord[] = [];
  const tradesById = new Map<string, TradeRecord>();
  let seq = 0;
  let houseSeq = 0;

  // ---------------------------------------------------------------- authentication

  function header(req: FakeRequest, name: string): string | undefined {
    const v = req.headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  }

  function fresh(timestamp: string | undefined): boolean {
    if (timestamp === undefined || !/^\d+$/.test(timestamp)) return false;
    return Math.abs(Number(timestamp) - nowSeconds()) <= skew;
  }

  /** L1: the EIP-712 ClobAuth signature of POLY_ADDRESS. */
  async function l1(req: FakeRequest): Promise<{ address: Address; nonce: string }> {
    const address = header(req, 'POLY_ADDRESS');
    const signature = header(req, 'POLY_SIGNATURE');
    const timestamp = header(req, 'POLY_TIMESTAMP');
    const nonce = header(req, 'POLY_NONCE') ?? '0';
    if (!address || !isAddress(address) || !signature || !/^0x[0-9a-fA-F]+$/.test(signature)) {
      throw new Refusal(401, CLOB_ERRORS.l1Headers);
    }
    if (!fresh(timestamp) || !DECIMAL.test(nonce) || BigInt(nonce) > MAX_UINT256) {
      throw new Refusal(401, CLOB_ERRORS.l1Headers);
    }
    let signedBy: Address;
    try {
      signedBy = await recoverTypedDataAddress({
        ...clobAuthTypedData({
          address: getAddress(address),
          chainId,
          timestamp: timestamp!,
          nonce: BigInt(nonce),
        }),
        signature: signature as Hex,
      });
    } catch {
      throw new Refusal(401, CLOB_ERRORS.l1Headers);
    }
    if (lower(signedBy) !== lower(address)) throw new Refusal(401, CLOB_ERRORS.l1Headers);
    return { address: getAddress(address), nonce: BigInt(nonce).toString() };
  }

  /** L2: the key, its passphrase and address, and the HMAC of this request. */
  function l2(req: FakeRequest): Caller {
    const address = header(req, 'POLY_ADDRESS');
    const signature = header(req, 'POLY_SIGNATURE');
    const timestamp = header(req, 'POLY_TIMESTAMP');
    const apiKey = header(req, 'POLY_API_KEY');
    const passphrase = header(req, 'POLY_PASSPHRASE');
    const refuse = () => new Refusal(401, CLOB_ERRORS.unauthorized);
    if (!address || !signature || !timestamp || !apiKey || !passphrase) throw refuse();
    const key = keys.get(apiKey);
    if (!key || !sameText(passphrase, key.passphrase)) throw refuse();
    if (lower(address) !== lower(key.address)) throw refuse();
    if (!fresh(timestamp)) throw refuse();
    const expected = clobHmacSignature(key.secret, timestamp, req.method, req.path, req.body);
    if (!sameText(normalBase64(signature), normalBase64(expected))) throw refuse();
    return { key };
  }

  /** Keeps the request log free of secrets (the log is shared with whoever reads `requests`). */
  function redact(headers: RecordedRequest['headers']): void {
    for (const name of ['poly_passphrase', 'poly_signature']) {
      if (headers[name] !== undefined) headers[name] = '[redacted]';
    }
  }

  // ---------------------------------------------------------------- keys

  function newKey(address: Address, nonce: string): ApiKeyRecord {
    return {
      apiKey: randomUUID(),
      secret: randomBytes(32).toString('base64').replace(/\+/g, '-').replace(/\//g, '_'),
      passphrase: randomBytes(32).toString('hex'),
      address,
      nonce,
      createdAt: nowSeconds(),
    };
  }

  const keyAnswer = (k: ApiKeyRecord) =>
    answer(200, { apiKey: k.apiKey, secret: k.secret, passphrase: k.passphrase });

  // ---------------------------------------------------------------- markets

  function marketOf(tokenId: string | undefined): ClobFakeMarket {
    if (tokenId === undefined || !DECIMAL.test(tokenId)) throw new Refusal(400, CLOB_ERRORS.invalidTokenId);
    const market = marketsByToken.get(tokenId);
    if (!market) throw new Refusal(404, CLOB_ERRORS.marketNotFound);
    return market;
  }

  const outcomeOf = (market: ClobFakeMarket, tokenId: string) =>
    market.tokens.find((t) => t.tokenId === tokenId)?.outcome ?? '';
  const minSize = (market: ClobFakeMarket) => toUnits(String(market.minOrderSize ?? 5)) ?? 5n * ONE;

  function expireDue(): void {
    const now = nowSeconds();
    for (const o of orders.values()) {
      if (o.status === 'LIVE' && o.orderType === 'GTD' && o.expiration - GTD_THRESHOLD_SECONDS <= now) {
        o.status = 'EXPIRED';
      }
    }
  }

  /** Resting orders of a token on one side, best first (then oldest first). */
  function resting(tokenId: string, side: ClobSide): BookOrder[] {
    const list = [...orders.values()].filter(
      (o) => o.status === 'LIVE' && o.tokenId === tokenId && o.side === side && o.size > o.matched,
    );
    return list.sort((a, b) => {
      if (a.price !== b.price)
        return side === 'BUY' ? (b.price > a.price ? 1 : -1) : a.price > b.price ? 1 : -1;
      return a.seq - b.seq;
    });
  }

  /** A token's price in listings: its last trade's, else 0.5 (as the book's `last_trade_price`). */
  function tokenPrice(tokenId: string): number {
    const last = [...tradeList].reverse().find((t) => t.tokenId === tokenId);
    return last ? Number(decimal(last.price)) : 0.5;
  }

  /** The simplified market of the listings (clob-openapi `SimplifiedMarket`). */
  function simplifiedMarketView(market: ClobFakeMarket) {
    return {
      condition_id: market.conditionId,
      rewards: { rates: null, min_size: 0, max_spread: 0 },
      tokens: market.tokens.map((t) => ({
        token_id: t.tokenId,
        outcome: t.outcome,
        price: tokenPrice(t.tokenId),
        winner: false,
      })),
      active: true,
      closed: false,
      archived: false,
      accepting_orders: true,
    };
  }

  /** A market as `GET /markets/{condition_id}` and the full listings give it (`Market`). */
  function marketView(market: ClobFakeMarket) {
    return {
      ...simplifiedMarketView(market),
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

  function book(market: ClobFakeMarket, tokenId: string) {
    const level = (side: ClobSide) => {
      const byPrice = new Map<bigint, bigint>();
      for (const o of resting(tokenId, side))
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
    const last = [...tradeList].reverse().find((t) => t.tokenId === tokenId);
    return {
      market: market.conditionId,
      asset_id: tokenId,
      timestamp: String(clock.now().getTime()),
      hash: keccak256(toHex(JSON.stringify({ bids, asks }))).slice(2, 42),
      bids,
      asks,
      min_order_size: String(market.minOrderSize ?? 5),
      tick_size: market.tickSize,
      neg_risk: market.negRisk ?? false,
      last_trade_price: last ? decimal(last.price) : '0.5',
    };
  }

  // ---------------------------------------------------------------- balances

  const balanceKey = (owner: string, asset: string) => `${lower(owner)}:${asset}`;

  function tableBalance(
    owner: Address,
    asset: string,
  ): { balance: bigint; allowances: Record<string, bigint> } {
    const entry = balances.get(balanceKey(owner, asset));
    const allowances: Record<string, bigint> = {};
    for (const s of spenders) allowances[s] = entry?.allowances.get(lower(s)) ?? 0n;
    return { balance: entry?.balance ?? 0n, allowances };
  }

  async function balanceOf(
    owner: Address,
    asset: 'COLLATERAL' | { tokenId: string },
  ): Promise<{ balance: bigint; allowances: Record<string, bigint> }> {
    const chain = options.chain;
    if (asset === 'COLLATERAL') {
      if (chainClient && chain?.collateral) {
        const token = chain.collateral;
        const [balance, ...allowed] = await Promise.all([
          chainClient.readContract({
            address: token,
            abi: erc20Abi,
            functionName: 'balanceOf',
            args: [owner],
          }),
          ...spenders.map((s) =>
            chainClient!.readContract({
              address: token,
              abi: erc20Abi,
              functionName: 'allowance',
              args: [owner, s],
            }),
          ),
        ]);
        return { balance, allowances: Object.fromEntries(spenders.map((s, i) => [s, allowed[i] ?? 0n])) };
      }
      return tableBalance(owner, 'COLLATERAL');
    }
    if (chainClient && chain?.conditionalTokens) {
      const ctf = chain.conditionalTokens;
      const [balance, ...approved] = await Promise.all([
        chainClient.readContract({
          address: ctf,
          abi: erc1155Abi,
          functionName: 'balanceOf',
          args: [owner, BigInt(asset.tokenId)],
        }),
        ...spenders.map((s) =>
          chainClient!.readContract({
            address: ctf,
            abi: erc1155Abi,
            functionName: 'isApprovedForAll',
            args: [owner, s],
          }),
        ),
      ]);
      return {
        balance: balance as bigint,
        allowances: Object.fromEntries(spenders.map((s, i) => [s, approved[i] ? MAX_UINT256 : 0n])),
      };
    }
    return tableBalance(owner, asset.tokenId);
  }

  /** What the maker's open orders already hold: collateral, or tokens of `tokenId`. */
  function reserved(maker: Address, side: ClobSide, tokenId: string): bigint {
    let total = 0n;
    for (const o of orders.values()) {
      if (o.status !== 'LIVE' || lower(o.maker) !== lower(maker) || o.side !== side) continue;
      const left = o.size - o.matched;
      if (side === 'BUY') total += (left * o.price) / ONE;
      else if (o.tokenId === tokenId) total += left;
    }
    return total;
  }

  /** The funder whose balance a signature type names for a key's address. */
  function funderFor(address: Address, signatureType: number): Address | null {
    if (signatureType === 0 || signatureType === 3) return address;
    const list = funders.get(lower(address)) ?? [];
    const found = list.find((f) => f.type === null || f.type === signatureType);
    return found ? found.funder : null;
  }

  // ---------------------------------------------------------------- orders

  interface ParsedOrder {
    order: ClobOrderV2;
    signature: Hex;
    owner: string;
    orderType: OrderType;
    postOnly: boolean;
  }

  /** The body of one order (`{order, owner, orderType, postOnly, deferExec}`), or null. */
  function parseOrder(item: unknown): ParsedOrder | null {
    if (typeof item !== 'object' || item === null) return null;
    const { order, owner, orderType, postOnly } = item as Record<string, unknown>;
    if (typeof order !== 'object' || order === null || typeof owner !== 'string') return null;
    const o = order as Record<string, unknown>;
    const type = orderType === undefined ? 'GTC' : orderType;
    if (type !== 'GTC' && type !== 'GTD' && type !== 'FOK' && type !== 'FAK') return null;
    if (postOnly !== undefined && typeof postOnly !== 'boolean') return null;
    const salt = typeof o.salt === 'number' && Number.isSafeInteger(o.salt) ? String(o.salt) : o.salt;
    const numeric = [salt, o.tokenId, o.makerAmount, o.takerAmount, o.timestamp, o.expiration ?? '0'];
    if (!numeric.every((v) => typeof v === 'string' && DECIMAL.test(v) && BigInt(v) <= MAX_UINT256))
      return null;
    if (
      typeof o.maker !== 'string' ||
      !isAddress(o.maker) ||
      typeof o.signer !== 'string' ||
      !isAddress(o.signer)
    )
      return null;
    if (o.side !== 'BUY' && o.side !== 'SELL') return null;
    if (o.signatureType !== 0 && o.signatureType !== 1 && o.signatureType !== 2 && o.signatureType !== 3)
      return null;
    const bytes32 = (v: unknown): Hex | null =>
      v === undefined || v === ''
        ? ZERO_BYTES32
        : typeof v === 'string' && BYTES32.test(v)
          ? (v as Hex)
          : null;
    const metadata = bytes32(o.metadata);
    const builder = bytes32(o.builder);
    if (!metadata || !builder) return null;
    if (typeof o.signature !== 'string' || !/^0x[0-9a-fA-F]+$/.test(o.signature)) return null;
    if (BigInt(o.makerAmount as string) === 0n || BigInt(o.takerAmount as string) === 0n) return null;
    return {
      order: {
        salt: salt as string,
        maker: getAddress(o.maker),
        signer: getAddress(o.signer),
        tokenId: BigInt(o.tokenId as string).toString(),
        makerAmount: BigInt(o.makerAmount as string).toString(),
        takerAmount: BigInt(o.takerAmount as string).toString(),
        side: o.side,
        signatureType: o.signatureType as ClobSignatureType,
        timestamp: o.timestamp as string,
        expiration: BigInt((o.expiration as string | undefined) ?? '0').toString(),
        metadata,
        builder,
      },
      signature: o.signature as Hex,
      owner,
      orderType: type,
      postOnly: postOnly === true,
    };
  }

  /** The checks `POST /order` refuses the whole request for. */
  function checkOwnership(parsed: ParsedOrder, caller: Caller): void {
    if (parsed.owner !== caller.key.apiKey) throw new Refusal(400, CLOB_ERRORS.ownerMismatch);
    if (lower(parsed.order.signer) !== lower(caller.key.address))
      throw new Refusal(400, CLOB_ERRORS.signerMismatch);
  }

  async function signatureAccepted(
    order: ClobOrderV2,
    signature: Hex,
    market: ClobFakeMarket,
  ): Promise<boolean> {
    let signedBy: Address;
    try {
      signedBy = await recoverTypedDataAddress({
        ...orderTypedDataV2(order, {
          chainId,
          negRisk: market.negRisk ?? false,
          verifyingContract: market.negRisk ? negRiskExchange! : exchange!,
        }),
        signature,
      });
    } catch {
      return false;
    }
    if (lower(signedBy) !== lower(order.signer)) return false;
    if (order.signatureType === 0) return lower(order.maker) === lower(order.signer);
    if (order.signatureType === 3) return false; // POLY_1271 smart-contract wallets: not served
    if (lower(order.maker) === lower(order.signer)) return false;
    const registered = (funders.get(lower(order.signer)) ?? []).some(
      (f) => lower(f.funder) === lower(order.maker) && (f.type === null || f.type === order.signatureType),
    );
    if (registered) return true;
    if (order.signatureType === 2 && chainClient) {
      try {
        return await chainClient.readContract({
          address: order.maker,
          abi: safeAbi,
          functionName: 'isOwner',
          args: [order.signer],
        });
      } catch {
        return false;
      }
    }
    return false;
  }

  interface Placed {
    body: Record<string, unknown>;
  }

  /** Validates, matches and (for GTC/GTD) rests one order; a Refusal carries the venue's answer. */
  async function place(parsed: ParsedOrder, caller: Caller): Promise<Placed> {
    const { order } = parsed;
    const market = marketOf(order.tokenId);
    const negRisk = market.negRisk ?? false;
    const id = orderHashV2(order, {
      chainId,
      negRisk,
      verifyingContract: negRisk ? negRiskExchange! : exchange!,
    }).toLowerCase() as Hex;
    if (!(await signatureAccepted(order, parsed.signature, market))) {
      throw new Refusal(400, CLOB_ERRORS.invalidSignature);
    }
    if (orders.has(id)) throw new Refusal(400, clobDuplicatedError(id));

    const now = nowSeconds();
    const expiration = Number(order.expiration);
    if (parsed.orderType === 'GTD') {
      if (!Number.isSafeInteger(expiration) || expiration <= now + GTD_THRESHOLD_SECONDS) {
        throw new Refusal(400, CLOB_ERRORS.invalidExpiration);
      }
    } else if (order.expiration !== '0') {
      throw new Refusal(400, CLOB_ERRORS.invalidExpiration);
    }

    // Price on the tick grid, amounts consistent with it (within the client's rounding).
    const tick = TICKS[market.tickSize];
    const collateral = BigInt(order.side === 'BUY' ? order.makerAmount : order.takerAmount);
    const tokens = BigInt(order.side === 'BUY' ? order.takerAmount : order.makerAmount);
    const ratioMicro = (collateral * ONE * 2n + tokens) / (tokens * 2n); // rounded
    const price = ((ratioMicro * 2n + tick.micro) / (tick.micro * 2n)) * tick.micro;
    const tolerance = 10n ** BigInt(6 - tick.amountDecimals) * ONE;
    const gap = collateral * ONE - tokens * price;
    const shownPrice = decimal((collateral * ONE) / tokens);
    if (price < tick.micro || price > ONE - tick.micro || gap > tolerance || -gap > tolerance) {
      throw new Refusal(400, clobTickSizeError(id, shownPrice, market.tickSize));
    }
    if (tokens < minSize(market)) {
      throw new Refusal(400, clobMinSizeError(id, decimal(tokens), String(market.minOrderSize ?? 5)));
    }

    if (knobs.enforceBalances) {
      const need = order.side === 'BUY' ? collateral : tokens;
      const asset = order.side === 'BUY' ? ('COLLATERAL' as const) : { tokenId: order.tokenId };
      const held = await balanceOf(order.maker, asset);
      const spender = negRisk ? negRiskExchange! : exchange!;
      const allowance = held.allowances[getAddress(spender)] ?? 0n;
      const already = reserved(order.maker, order.side, order.tokenId);
      if (held.balance < already + need || allowance < already + need) {
        throw new Refusal(400, CLOB_ERRORS.notEnoughBalance);
      }
    }

    // What it crosses.
    const opposite: ClobSide = order.side === 'BUY' ? 'SELL' : 'BUY';
    const crossing = resting(order.tokenId, opposite).filter((o) =>
      order.side === 'BUY' ? o.price <= price : o.price >= price,
    );
    const available = crossing.reduce((sum, o) => sum + o.size - o.matched, 0n);
    if (parsed.postOnly && crossing.length > 0) throw new Refusal(400, CLOB_ERRORS.postOnlyCrosses);
    if (parsed.orderType === 'FOK' && available < tokens) throw new Refusal(400, CLOB_ERRORS.fokNotFilled);
    if (parsed.orderType === 'FAK' && crossing.length === 0) throw new Refusal(400, CLOB_ERRORS.fakNoMatch);

    const taker: BookOrder = {
      id,
      seq: ++seq,
      owner: caller.key.apiKey,
      ownerAddress: caller.key.address,
      maker: order.maker,
      market,
      tokenId: order.tokenId,
      outcome: outcomeOf(market, order.tokenId),
      side: order.side,
      price,
      size: tokens,
      matched: 0n,
      status: 'LIVE',
      orderType: parsed.orderType,
      expiration: parsed.orderType === 'GTD' ? expiration : 0,
      createdAt: now,
      trades: [],
    };
    const fills: MakerFill[] = [];
    for (const maker of crossing) {
      const left = taker.size - taker.matched;
      if (left === 0n) break;
      const amount = left < maker.size - maker.matched ? left : maker.size - maker.matched;
      maker.matched += amount;
      taker.matched += amount;
      if (maker.matched === maker.size) maker.status = 'MATCHED';
      fills.push({ order: maker, amount, price: maker.price });
    }
    orders.set(id, taker);
    if (taker.matched === taker.size || parsed.orderType === 'FOK' || parsed.orderType === 'FAK') {
      taker.status = 'MATCHED';
    }

    const body: Record<string, unknown> = {
      success: true,
      errorMsg: '',
      orderID: id,
      status: fills.length > 0 ? 'matched' : 'live',
      takingAmount: '',
      makingAmount: '',
    };
    if (fills.length > 0) {
      const trade = recordTrade({
        takerOrderId: id,
        market,
        tokenId: order.tokenId,
        side: order.side,
        takerOwner: caller.key.apiKey,
        takerOwnerAddress: caller.key.address,
        takerMaker: order.maker,
        fills,
      });
      taker.trades.push(trade.id);
      const paid = fills.reduce((sum, f) => sum + (f.amount * f.price) / ONE, 0n);
      body.makingAmount = decimal(order.side === 'BUY' ? paid : taker.matched);
      body.takingAmount = decimal(order.side === 'BUY' ? taker.matched : paid);
      body.tradeIDs = [trade.id];
      body.transactionsHashes = trade.transactionHash ? [trade.transactionHash] : [];
    }
    return { body };
  }

  function recordTrade(args: {
    takerOrderId: Hex;
    market: ClobFakeMarket;
    tokenId: string;
    side: ClobSide;
    takerOwner: string;
    takerOwnerAddress: Address | null;
    takerMaker: Address;
    fills: MakerFill[];
  }): TradeRecord {
    const id = randomUUID();
    const now = nowSeconds();
    const settled = knobs.settlement;
    const trade: TradeRecord = {
      id,
      takerOrderId: args.takerOrderId,
      market: args.market,
      tokenId: args.tokenId,
      outcome: outcomeOf(args.market, args.tokenId),
      side: args.side,
      size: args.fills.reduce((sum, f) => sum + f.amount, 0n),
      price: args.fills[0]?.price ?? 0n,
      status: settled === 'confirmed' ? 'CONFIRMED' : settled === 'failed' ? 'FAILED' : 'MATCHED',
      matchTime: now,
      lastUpdate: now,
      takerOwner: args.takerOwner,
      takerOwnerAddress: args.takerOwnerAddress,
      takerMaker: args.takerMaker,
      makers: args.fills,
      transactionHash: settled === 'confirmed' ? keccak256(toHex(`purser clob fake trade ${id}`)) : '',
      errMsg: settled === 'failed' ? 'the trade failed on chain (fake)' : null,
    };
    for (const f of args.fills) f.order.trades.push(id);
    tradeList.push(trade);
    tradesById.set(id, trade);
    return trade;
  }

  // ---------------------------------------------------------------- views

  function openOrderView(o: BookOrder): ClobOpenOrder {
    return {
      id: o.id,
      status: o.status,
      owner: o.owner,
      maker_address: o.maker,
      market: o.market.conditionId,
      asset_id: o.tokenId,
      side: o.side,
      original_size: decimal(o.size),
      size_matched: decimal(o.matched),
      price: decimal(o.price),
      associate_trades: [...o.trades],
      outcome: o.outcome,
      created_at: o.createdAt,
      expiration: String(o.expiration),
      order_type: o.orderType,
    };
  }

  function tradeView(t: TradeRecord, viewer: Address | null): ClobTrade {
    const taker =
      viewer === null || (t.takerOwnerAddress !== null && lower(t.takerOwnerAddress) === lower(viewer));
    return {
      id: t.id,
      taker_order_id: t.takerOrderId,
      market: t.market.conditionId,
      asset_id: t.tokenId,
      side: t.side,
      size: decimal(t.size),
      fee_rate_bps: '0',
      price: decimal(t.price),
      status: t.status,
      match_time: String(t.matchTime),
      last_update: String(t.lastUpdate),
      outcome: t.outcome,
      bucket_index: 0,
      owner: t.takerOwner,
      maker_address: t.takerMaker,
      maker_orders: t.makers.map((f) => ({
        order_id: f.order.id,
        owner: f.order.owner,
        maker_address: f.order.maker,
        matched_amount: decimal(f.amount),
        price: decimal(f.price),
        fee_rate_bps: '0',
        asset_id: f.order.tokenId,
        outcome: f.order.outcome,
        side: f.order.side,
      })),
      transaction_hash: t.transactionHash,
      err_msg: t.errMsg,
      trader_side: taker ? 'TAKER' : 'MAKER',
    };
  }

  function page<T>(items: T[], cursor: string | undefined, invalid: string, size: number): FakeAnswer {
    const offset = offsetOf(cursor);
    if (offset === null) return refusal(400, invalid);
    const limit = Math.max(1, Math.trunc(size));
    const data = items.slice(offset, offset + limit);
    const next = offset + limit < items.length ? cursorOf(offset + limit) : CLOB_END_CURSOR;
    return answer(200, { limit, count: data.length, next_cursor: next, data });
  }

  const owns = (o: BookOrder, caller: Caller) => lower(o.ownerAddress) === lower(caller.key.address);

  // ---------------------------------------------------------------- cancels

  function cancel(ids: string[], caller: Caller): FakeAnswer {
    const canceled: string[] = [];
    const notCanceled: Record<string, string> = {};
    for (const raw of new Set(ids)) {
      const o = orders.get(lower(raw));
      if (!o || !owns(o, caller) || o.status === 'CANCELED')
        notCanceled[raw] = 'Order not found or already canceled';
      else if (o.status === 'MATCHED') notCanceled[raw] = 'order already matched';
      else if (o.status === 'EXPIRED') notCanceled[raw] = 'order expired';
      else {
        o.status = 'CANCELED';
        canceled.push(o.id);
      }
    }
    return answer(200, { canceled, not_canceled: notCanceled });
  }

  function parseJson(body: string): unknown {
    if (body.trim() === '') return undefined;
    try {
      return JSON.parse(body) as unknown;
    } catch {
      throw new Refusal(400, CLOB_ERRORS.invalidOrderPayload);
    }
  }

  // ---------------------------------------------------------------- routes

  async function route(req: FakeRequest, knobs: ClobFakeKnobs): Promise<FakeAnswer> {
    const { method, path, query } = req;
    expireDue();

    // Public.
    if (method === 'GET') {
      if (path === '/ok') return answer(200, '"OK"');
      if (path === '/time') return answer(200, nowSeconds());
      if (path === '/version') return answer(200, { version: 2 });
      if (path === '/tick-size') {
        const market = marketOf(query.token_id);
        return answer(200, { minimum_tick_size: Number(market.tickSize) });
      }
      if (path === '/neg-risk') return answer(200, { neg_risk: marketOf(query.token_id).negRisk ?? false });
      if (path === '/fee-rate') {
        marketOf(query.token_id);
        return answer(200, { base_fee: 0 });
      }
      if (path === '/book') {
        if (query.token_id === undefined || !DECIMAL.test(query.token_id))
          return refusal(400, CLOB_ERRORS.invalidTokenId);
        const market = marketsByToken.get(query.token_id);
        if (!market) return refusal(404, CLOB_ERRORS.noOrderbook);
        return answer(200, book(market, query.token_id));
      }
      const byToken = /^\/markets-by-token\/(\d+)$/.exec(path);
      if (byToken) {
        const market = marketOf(byToken[1]);
        return answer(200, { condition_id: market.conditionId, primary_token_id: market.tokens[0].tokenId });
      }
      const clobMarket = /^\/clob-markets\/(0x[0-9a-fA-F]{64})$/.exec(path);
      if (clobMarket) {
        const market = marketsByCondition.get(lower(clobMarket[1] ?? ''));
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
        const market = marketsByCondition.get(lower(legacyMarket[1] ?? ''));
        if (!market) return refusal(404, CLOB_ERRORS.marketNotFound);
        return answer(200, marketView(market));
      }
      // The listings the client pages through (getMarkets, getSamplingMarkets,
      // getSimplifiedMarkets, getSamplingSimplifiedMarkets): every market of the fake is active
      // and accepting orders, so the sampling lists are the full ones.
      const listing = MARKET_LISTINGS[path];
      if (listing) {
        const all = [...marketsByCondition.values()];
        const views = all.map((m) => (listing === 'full' ? marketView(m) : simplifiedMarketView(m)));
        return page(views, query.next_cursor, CLOB_ERRORS.invalidCursor, knobs.pageSize);
      }
    }

    // L1: API keys.
    if (method === 'POST' && path === '/auth/api-key') {
      const { address, nonce } = await l1(req);
      if (keyByOwnerNonce.has(ownerNonce(address, nonce))) return refusal(400, CLOB_ERRORS.createKey);
      const k = newKey(address, nonce);
      rememberKey(k);
      persist();
      return keyAnswer(k);
    }
    if (method === 'GET' && path === '/auth/derive-api-key') {
      const { address, nonce } = await l1(req);
      const id = keyByOwnerNonce.get(ownerNonce(address, nonce));
      const k = id === undefined ? undefined : keys.get(id);
      if (!k) return refusal(400, CLOB_ERRORS.deriveKey);
      return keyAnswer(k);
    }

    // Everything else is L2; a path the CLOB does not have is 404 before any authentication.
    if (!L2_ROUTES.some(([m, pattern]) => m === method && pattern.test(path)))
      return refusal(404, 'not found');
    const caller = l2(req);
    const address = caller.key.address;

    if (path === '/auth/api-keys' && method === 'GET') {
      const list = [...keys.values()].filter((k) => lower(k.address) === lower(address)).map((k) => k.apiKey);
      return answer(200, { apiKeys: list });
    }
    if (path === '/auth/api-key' && method === 'DELETE') {
      keys.delete(caller.key.apiKey);
      keyByOwnerNonce.delete(ownerNonce(caller.key.address, caller.key.nonce));
      persist();
      return answer(200, '"OK"');
    }
    if (path === '/auth/ban-status/closed-only' && method === 'GET')
      return answer(200, { closed_only: false });

    const trading = knobs.trading;
    const isCancel =
      method === 'DELETE' && ['/order', '/orders', '/cancel-all', '/cancel-market-orders'].includes(path);
    const isPost = method === 'POST' && (path === '/order' || path === '/orders');
    if (trading === 'disabled' && (isCancel || isPost)) return refusal(503, CLOB_ERRORS.tradingDisabled);
    if (trading === 'cancel-only' && isPost) return refusal(503, CLOB_ERRORS.cancelOnly);

    if (method === 'POST' && path === '/order') {
      const parsed = parseOrder(parseJson(req.body));
      if (!parsed) return refusal(400, CLOB_ERRORS.invalidOrderPayload);
      checkOwnership(parsed, caller);
      return answer(200, (await place(parsed, caller)).body);
    }
    if (method === 'POST' && path === '/orders') {
      const items = parseJson(req.body);
      if (!Array.isArray(items) || items.length === 0) return refusal(400, CLOB_ERRORS.invalidOrderPayload);
      if (items.length > MAX_BATCH_ORDERS) {
        return refusal(400, `Too many orders in payload: ${items.length}, max allowed: ${MAX_BATCH_ORDERS}`);
      }
      const parsed = items.map(parseOrder);
      if (parsed.some((p) => p === null)) return refusal(400, CLOB_ERRORS.invalidOrderPayload);
      for (const p of parsed) checkOwnership(p!, caller);
      const results: Record<string, unknown>[] = [];
      for (const p of parsed) {
        try {
          results.push((await place(p!, caller)).body);
        } catch (err) {
          if (!(err instanceof Refusal)) throw err;
          results.push({
            success: false,
            errorMsg: err.message,
            orderID: '',
            status: '',
            takingAmount: '',
            makingAmount: '',
          });
        }
      }
      return answer(200, results);
    }

    if (method === 'GET' && path === '/data/orders') {
      const { id, market, asset_id: assetId } = query;
      const list = [...orders.values()].filter(
        (o) =>
          o.status === 'LIVE' &&
          owns(o, caller) &&
          (id === undefined || lower(id) === o.id) &&
          (market === undefined || lower(market) === lower(o.market.conditionId)) &&
          (assetId === undefined || assetId === o.tokenId),
      );
      list.sort((a, b) => a.seq - b.seq);
      return page(list.map(openOrderView), query.next_cursor, CLOB_ERRORS.invalidOrderParams, knobs.pageSize);
    }
    const one = /^\/data\/order\/([^/]+)$/.exec(path);
    if (method === 'GET' && one) {
      const id = one[1] ?? '';
      if (!ORDER_ID.test(id)) return refusal(400, CLOB_ERRORS.invalidOrderId);
      const o = orders.get(lower(id));
      const shown = o && owns(o, caller) && !(knobs.forgetMatchedOrders && o.status === 'MATCHED');
      return answer(200, shown ? openOrderView(o) : 'null');
    }
    if (method === 'GET' && path === '/data/trades') {
      const { id, maker_address: makerAddress, market, asset_id: assetId, before, after } = query;
      if ((before !== undefined && !DECIMAL.test(before)) || (after !== undefined && !DECIMAL.test(after))) {
        return refusal(400, CLOB_ERRORS.invalidTradeParams);
      }
      const mine = (t: TradeRecord) =>
        (t.takerOwnerAddress !== null && lower(t.takerOwnerAddress) === lower(address)) ||
        t.makers.some((f) => lower(f.order.ownerAddress) === lower(address));
      const list = tradeList
        .filter(
          (t) =>
            mine(t) &&
            (id === undefined || id === t.id) &&
            (makerAddress === undefined ||
              lower(makerAddress) === lower(t.takerMaker) ||
              t.makers.some((f) => lower(f.order.maker) === lower(makerAddress))) &&
            (market === undefined || lower(market) === lower(t.market.conditionId)) &&
            (assetId === undefined || assetId === t.tokenId) &&
            (before === undefined || t.matchTime < Number(before)) &&
            (after === undefined || t.matchTime > Number(after)),
        )
        .reverse(); // newest first
      return page(
        list.map((t) => tradeView(t, address)),
        query.next_cursor,
        CLOB_ERRORS.invalidTradeParams,
        knobs.pageSize,
      );
    }

    if (method === 'DELETE' && path === '/order') {
      const body = parseJson(req.body) as { orderID?: unknown } | undefined;
      if (typeof body !== 'object' || body === null || typeof body.orderID !== 'string')
        return refusal(400, CLOB_ERRORS.invalidOrderPayload);
      if (!ORDER_ID.test(body.orderID)) return refusal(400, CLOB_ERRORS.invalidOrderId);
      return cancel([body.orderID], caller);
    }
    if (method === 'DELETE' && path === '/orders') {
      const ids = parseJson(req.body);
      if (!Array.isArray(ids) || !ids.every((i) => typeof i === 'string')) {
        return refusal(400, CLOB_ERRORS.invalidOrderPayload);
      }
      if (ids.length > MAX_CANCEL_IDS) {
        return refusal(400, `Too many orders in payload, max allowed: ${MAX_CANCEL_IDS}`);
      }
      if (!ids.every((i) => ORDER_ID.test(i as string))) return refusal(400, CLOB_ERRORS.invalidOrderId);
      return cancel(ids as string[], caller);
    }
    if (method === 'DELETE' && path === '/cancel-all') {
      const ids = [...orders.values()].filter((o) => o.status === 'LIVE' && owns(o, caller)).map((o) => o.id);
      return cancel(ids, caller);
    }
    if (method === 'DELETE' && path === '/cancel-market-orders') {
      const body = parseJson(req.body) as { market?: unknown; asset_id?: unknown } | undefined;
      const filter = body ?? {};
      if (typeof filter !== 'object' || filter === null) return refusal(400, CLOB_ERRORS.invalidOrderPayload);
      const { market, asset_id: assetId } = filter;
      if (
        (market !== undefined && typeof market !== 'string') ||
        (assetId !== undefined && typeof assetId !== 'string')
      )
        return refusal(400, CLOB_ERRORS.invalidOrderPayload);
      const ids = [...orders.values()]
        .filter(
          (o) =>
            o.status === 'LIVE' &&
            owns(o, caller) &&
            (market === undefined || market === '' || lower(market) === lower(o.market.conditionId)) &&
            (assetId === undefined || assetId === '' || assetId === o.tokenId),
        )
        .map((o) => o.id);
      return cancel(ids, caller);
    }

    if (method === 'GET' && (path === '/balance-allowance' || path === '/balance-allowance/update')) {
      const assetType = query.asset_type;
      if (assetType !== 'COLLATERAL' && assetType !== 'CONDITIONAL')
        return refusal(400, CLOB_ERRORS.invalidAssetType);
      const names: Record<string, number> = {
        EOA: 0,
        POLY_PROXY: 1,
        POLY_GNOSIS_SAFE: 2,
        GNOSIS_SAFE: 2,
        POLY_1271: 3,
      };
      const rawType = query.signature_type ?? '0';
      const signatureType = /^[0-3]$/.test(rawType) ? Number(rawType) : names[rawType];
      if (signatureType === undefined) return refusal(400, CLOB_ERRORS.invalidSignatureType);
      if (assetType === 'CONDITIONAL' && (query.token_id === undefined || !DECIMAL.test(query.token_id))) {
        return refusal(400, CLOB_ERRORS.invalidTokenId);
      }
      const funder = funderFor(address, signatureType);
      const asset = assetType === 'COLLATERAL' ? ('COLLATERAL' as const) : { tokenId: query.token_id! };
      const held = funder
        ? await balanceOf(funder, asset)
        : { balance: 0n, allowances: Object.fromEntries(spenders.map((s) => [s, 0n])) };
      if (path === '/balance-allowance/update') return answer(200, '');
      return answer(200, {
        balance: held.balance.toString(),
        allowances: Object.fromEntries(Object.entries(held.allowances).map(([s, v]) => [s, v.toString()])),
      });
    }

    return refusal(404, 'not found');
  }

  async function handle(req: FakeRequest, knobs: ClobFakeKnobs): Promise<FakeAnswer> {
    try {
      if (knobs.rateLimitRetryAfter !== null) {
        const wait = /^\d+$/.test(knobs.rateLimitRetryAfter) ? Number(knobs.rateLimitRetryAfter) : 60;
        const limited = rateLimited(knobs.rateLimitRetryAfter, { error: CLOB_ERRORS.tooManyRequests });
        limited.headers = {
          ...limited.headers,
          'poly-ratelimit-remaining': '0',
          'poly-ratelimit-reset': String(nowSeconds() + wait),
        };
        return limited;
      }
      if (knobs.serverError !== null) return refusal(knobs.serverError, CLOB_ERRORS.internal);
      if (knobs.malformedJson) return answer(200, MALFORMED_CLOB_BODY);
      return await route(req, knobs);
    } catch (err) {
      if (err instanceof Refusal) return refusal(err.status, err.message);
      throw err;
    } finally {
      redact(req.headers);
    }
  }

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
    handle,
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
    chainId,
    exchange: getAddress(exchange),
    negRiskExchange: getAddress(negRiskExchange),
    spenders,
    addMarket,
    setTickSize(tokenOrConditionId, tickSize) {
      if (!TICKS[tickSize]) throw new Error(`setTickSize: unknown tick size ${tickSize}`);
      const market =
        marketsByToken.get(tokenOrConditionId) ?? marketsByCondition.get(lower(tokenOrConditionId));
      if (!market) throw new Error(`setTickSize: no market for ${tokenOrConditionId}`);
      market.tickSize = tickSize;
    },
    registerFunder(funder, signer, signatureType) {
      if (lower(funder) === lower(signer))
        throw new Error('registerFunder: the funder must differ from the signer');
      const list = funders.get(lower(signer)) ?? [];
      list.push({ funder: getAddress(funder), type: signatureType ?? null });
      funders.set(lower(signer), list);
    },
    setBalance(owner, asset, balance, allowances) {
      const key = balanceKey(owner, asset === 'COLLATERAL' ? 'COLLATERAL' : asset.tokenId);
      const map = new Map<string, bigint>();
      for (const s of spenders) {
        const given = allowances
          ? Object.entries(allowances).find(([a]) => lower(a) === lower(s))?.[1]
          : undefined;
        map.set(lower(s), allowances ? (given ?? 0n) : MAX_UINT256);
      }
      balances.set(key, { balance, allowances: map });
    },
    fill(orderId, size) {
      expireDue();
      const o = orders.get(lower(orderId));
      if (!o || o.status !== 'LIVE') throw new Error(`fill: ${orderId} is not a live order`);
      const left = o.size - o.matched;
      const amount = size === undefined ? left : toUnits(size);
      if (amount === null || amount <= 0n || amount > left) {
        throw new Error(`fill: size must be more than 0 and at most ${decimal(left)} shares`);
      }
      o.matched += amount;
      if (o.matched === o.size) o.status = 'MATCHED';
      const trade = recordTrade({
        takerOrderId: keccak256(toHex(`purser clob fake house order ${++houseSeq}`)),
        market: o.market,
        tokenId: o.tokenId,
        side: o.side === 'BUY' ? 'SELL' : 'BUY',
        takerOwner: HOUSE_OWNER,
        takerOwnerAddress: null,
        takerMaker: HOUSE_ADDRESS,
        fills: [{ order: o, amount, price: o.price }],
      });
      return tradeView(trade, o.ownerAddress);
    },
    settleTrade(tradeId, update) {
      const t = tradesById.get(tradeId);
      if (!t) throw new Error(`settleTrade: no trade ${tradeId}`);
      t.status = update.status;
      if (update.transactionHash !== undefined) t.transactionHash = update.transactionHash;
      if (update.errMsg !== undefined) t.errMsg = update.errMsg;
      t.lastUpdate = nowSeconds();
    },
    order(orderId) {
      expireDue();
      const o = orders.get(lower(orderId));
      return o ? openOrderView(o) : undefined;
    },
    trades() {
      return tradeList.map((t) => tradeView(t, null));
    },
    apiKeys(address) {
      return [...keys.values()].filter((k) => lower(k.address) === lower(address)).map((k) => k.apiKey);
    },
  };
}
