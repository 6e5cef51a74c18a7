// The prediction-market venue ports: what the credentials (and later the order routes) need from
// Polymarket's CLOB V2 and from Kalshi's trade API. The real adapters speak each venue's HTTP API
// with its own request authentication; in development they are pointed at the devnet's fakes,
// which speak the same APIs, so there is no separate sandbox.

import type { Address, Hex } from 'viem';

export const PM_VENUES = ['polymarket', 'kalshi'] as const;
export type PmVenue = (typeof PM_VENUES)[number];

/** A CLOB L2 API credential, as the CLOB's key creation and derivation return it. */
export interface ClobApiCredentials {
  apiKey: string;
  secret: string;
  passphrase: string;
}

/** An order's side as the CLOB's REST payload spells it (the signed struct says 0 BUY, 1 SELL). */
export type ClobSide = 'BUY' | 'SELL';

/**
 * Who signs for whom (clob-client-v2 `SignatureTypeV2`): 0 EOA (maker = signer), 1 POLY_PROXY and
 * 2 POLY_GNOSIS_SAFE (maker = the proxy or Safe holding the funds, signer = its owning EOA),
 * 3 POLY_1271 (maker = signer = a smart-contract wallet).
 */
export const CLOB_SIGNATURE_TYPES = { EOA: 0, POLY_PROXY: 1, POLY_GNOSIS_SAFE: 2, POLY_1271: 3 } as const;
export type ClobSignatureType = (typeof CLOB_SIGNATURE_TYPES)[keyof typeof CLOB_SIGNATURE_TYPES];

/**
 * A CLOB V2 order as the exchange signs it (`Order(uint256 salt,address maker,address signer,
 * uint256 tokenId,uint256 makerAmount,uint256 takerAmount,uint8 side,uint8 signatureType,
 * uint256 timestamp,bytes32 metadata,bytes32 builder)`), integers as decimal strings. BUY: makerAmount
 * is the collateral paid, takerAmount the outcome tokens received; SELL the reverse; both in
 * 6-decimal base units.
 */
export interface ClobOrderV2 {
  salt: string;
  maker: Address;
  signer: Address;
  /** The outcome token (ERC-1155 position id). */
  tokenId: string;
  makerAmount: string;
  takerAmount: string;
  side: ClobSide;
  signatureType: ClobSignatureType;
  /** Milliseconds since the epoch when the order was made. */
  timestamp: string;
  /** Unix seconds, "0" for none: sent with the order, not part of what is signed. */
  expiration: string;
  metadata: Hex;
  builder: Hex;
}

/** A signed V2 order, as `POST /order` carries it (`order`). */
export interface ClobSignedOrderV2 extends ClobOrderV2 {
  signature: Hex;
}

/** The price grids the CLOB knows (clob-client-v2 `TickSize`): a market's `minimum_tick_size`. */
export const CLOB_TICK_SIZES = ['0.1', '0.01', '0.005', '0.0025', '0.001', '0.0001'] as const;
export type ClobTickSize = (typeof CLOB_TICK_SIZES)[number];

/**
 * How long an order lives (clob-client-v2 `OrderType`): GTC good till canceled, GTD good till its
 * `expiration` (less the venue's one-minute threshold), FOK filled at once in full or killed, FAK
 * filled at once as far as it goes, the rest killed.
 */
export type ClobOrderType = 'GTC' | 'GTD' | 'FOK' | 'FAK';

/** Who makes an authenticated (L2) call: the API credential and the signer address it belongs to. */
export interface ClobL2Auth {
  /** The signer EOA the credential was made for (POLY_ADDRESS), not the funder. */
  address: Address;
  creds: ClobApiCredentials;
}

/** A caller's time budget for one port call (a list walk counts as one call). */
export interface ClobCallOptions {
  /** Stops the call when it aborts (the caller's deadline). */
  signal?: AbortSignal;
  /** Limit of each HTTP request in milliseconds (default: the adapter's `timeoutMs`). */
  timeoutMs?: number;
}

export interface ClobPostOrderOptions {
  orderType: ClobOrderType;
  /** Refused by the venue when the order would cross the book; GTC and GTD only. */
  postOnly?: boolean;
  /** Ask the venue to answer before the match's settlement is known. */
  deferExec?: boolean;
}

/** `POST /order`'s answer, normalized (clob-client-v2 `OrderResponse`). */
export interface ClobPostOrderResult {
  /** The order's hash, as the venue spells it. */
  orderId: string;
  /** `live` (resting), `matched`, `delayed` or `unmatched`, as the venue says it. */
  status: string;
  success: boolean;
  errorMsg: string;
  /** What was matched at once, as the venue's decimal strings ("" when nothing matched). */
  makingAmount: string;
  takingAmount: string;
  /** The venue's `transactionsHashes`: settlement transactions of the matches, when known. */
  transactionHashes: string[];
  /** The venue's `tradeIDs`: the trades the order made at once. */
  tradeIds: string[];
}

/** `GET /data/order/{id}` and `GET /data/orders` items (clob-client-v2 `OpenOrder`). */
export interface ClobOpenOrder {
  id: string;
  /** `LIVE`, `MATCHED`, `CANCELED`, … as the venue says it. */
  status: string;
  /** The API key that placed it. */
  owner: string;
  maker_address: string;
  /** The market's condition id. */
  market: string;
  asset_id: string;
  side: ClobSide;
  /** Shares, decimal strings. */
  original_size: string;
  size_matched: string;
  price: string;
  associate_trades: string[];
  outcome: string;
  /** Unix seconds. */
  created_at: number;
  /** Unix seconds, "0" for none. */
  expiration: string;
  order_type: string;
}

/** One resting order a trade matched (clob-client-v2 `MakerOrder`). */
export interface ClobMakerOrder {
  order_id: string;
  owner: string;
  maker_address: string;
  matched_amount: string;
  price: string;
  fee_rate_bps: string;
  asset_id: string;
  outcome: string;
  side?: ClobSide;
  builder_fee?: string;
  builder_code?: string;
}

/** `GET /data/trades` items (clob-client-v2 `Trade`). */
export interface ClobTrade {
  id: string;
  taker_order_id: string;
  market: string;
  asset_id: string;
  /** The taker's side. */
  side: ClobSide;
  size: string;
  fee_rate_bps: string;
  price: string;
  /** `MATCHED`, `MINED`, `CONFIRMED`, `RETRYING` or `FAILED`, as the venue says it. */
  status: string;
  /** Unix seconds. */
  match_time: string;
  match_time_nano?: string;
  last_update: string;
  outcome: string;
  bucket_index: number;
  owner: string;
  maker_address: string;
  maker_orders: ClobMakerOrder[];
  transaction_hash?: string;
  err_msg?: string | null;
  /** Which side of the trade the caller was on. */
  trader_side: 'TAKER' | 'MAKER';
}

/** One page of trades, newest first; `nextCursor` null on the last page. */
export interface ClobTradesPage {
  trades: ClobTrade[];
  nextCursor: string | null;
}

/** What a cancel did (the venue's `canceled` and `not_canceled`, with the reason per id). */
export interface ClobCancelResult {
  canceled: string[];
  notCanceled: Record<string, string>;
}

export interface ClobBalanceAllowanceQuery {
  assetType: 'COLLATERAL' | 'CONDITIONAL';
  /** The outcome token, for CONDITIONAL. */
  tokenId?: string;
  /** Which funder of the caller's address: 0 the address itself, 1 its proxy, 2 its Safe. */
  signatureType: ClobSignatureType;
}

/** A funder's balance and allowances per spender, in base units (6 decimals). */
export interface ClobBalanceAllowance {
  balance: bigint;
  allowances: Record<string, bigint>;
}

/** The venue looked at a credential and answered. */
export type CredentialCheck = { ok: true } | { ok: false; reason: string };

export interface PolymarketClobPort {
  /**
   * The L2 credential of `signerKey`'s address for `nonce` (L1 headers signed with the key):
   * derived when the CLOB has one, else created. A refusal is a VenueRejected.
   */
  deriveApiCredentials(signerKey: Hex, nonce?: number): Promise<ClobApiCredentials>;
  /** Whether the CLOB accepts `creds` as `address`'s L2 credential (an authenticated read). */
  checkApiCredentials(address: Address, creds: ClobApiCredentials): Promise<CredentialCheck>;

  // Trading calls, each authenticated with L2 headers from `auth`. A refusal is a
  // ClobVenueRejected carrying the venue's text; a 429, a 5xx, a timeout or an answer not in the
  // venue's format is a VenueUnavailable (a 429 with retryAfterMs when the venue said when).

  /**
   * Places a signed order. A VenueUnavailable leaves it unknown whether the venue took the order:
   * ask `getOrder(orderHashV2(order))` (and, for an order that may have matched at once, `trades`).
   */
  postOrder(
    auth: ClobL2Auth,
    order: ClobSignedOrderV2,
    options: ClobPostOrderOptions,
    call?: ClobCallOptions,
  ): Promise<ClobPostOrderResult>;
  /** One order of the caller's, or null when the venue shows none under that id. */
  getOrder(auth: ClobL2Auth, orderId: string, call?: ClobCallOptions): Promise<ClobOpenOrder | null>;
  /** Every open order of the caller's (every page), optionally of one market or one token. */
  openOrders(
    auth: ClobL2Auth,
    filter?: { market?: string; assetId?: string },
    call?: ClobCallOptions,
  ): Promise<ClobOpenOrder[]>;
  cancelOrder(auth: ClobL2Auth, orderId: string, call?: ClobCallOptions): Promise<ClobCancelResult>;
  cancelOrders(auth: ClobL2Auth, orderIds: string[], call?: ClobCallOptions): Promise<ClobCancelResult>;
  cancelAll(auth: ClobL2Auth, call?: ClobCallOptions): Promise<ClobCancelResult>;
  /** Cancels the caller's open orders of a market (condition id) and/or token. */
  cancelMarket(
    auth: ClobL2Auth,
    filter: { market?: string; assetId?: string },
    call?: ClobCallOptions,
  ): Promise<ClobCancelResult>;
  /** One page of the caller's trades, newest first; pass `nextCursor` back for the next page. */
  trades(
    auth: ClobL2Auth,
    query?: {
      cursor?: string;
      market?: string;
      assetId?: string;
      id?: string;
      makerAddress?: string;
      /** Unix seconds: only trades matched after it. */
      after?: number;
      /** Unix seconds: only trades matched before it. */
      before?: number;
    },
    call?: ClobCallOptions,
  ): Promise<ClobTradesPage>;
  /** The venue's view of a funder's balance and allowances. */
  balanceAllowance(
    auth: ClobL2Auth,
    query: ClobBalanceAllowanceQuery,
    call?: ClobCallOptions,
  ): Promise<ClobBalanceAllowance>;
  /** Asks the venue to read the funder's balance and allowances from the chain again. */
  updateBalanceAllowance(
    auth: ClobL2Auth,
    query: ClobBalanceAllowanceQuery,
    call?: ClobCallOptions,
  ): Promise<void>;

  // Public market data (no authentication).

  /** The token's market's price grid (`GET /tick-size`). */
  tickSize(tokenId: string, call?: ClobCallOptions): Promise<ClobTickSize>;
  /** Whether orders of the token are signed for the neg-risk exchange (`GET /neg-risk`). */
  negRisk(tokenId: string, call?: ClobCallOptions): Promise<boolean>;
  /** The venue's clock, unix seconds (`GET /time`). */
  serverTime(call?: ClobCallOptions): Promise<number>;
}

/** A Kalshi API key: its id and the RSA private key (PEM) that signs requests. */
export interface KalshiApiKey {
  keyId: string;
  privateKeyPem: string;
}

export interface KalshiPort {
  /** Whether Kalshi accepts requests signed with `key` (an authenticated read). */
  checkApiKey(key: KalshiApiKey): Promise<CredentialCheck>;
}

/** Both venues' APIs, as the credentials (and later the order routes) use them. */
export interface PmVenuePorts {
  polymarket: PolymarketClobPort;
  kalshi: KalshiPort;
}

/** The venue could not be asked (network, timeout, 5xx, 429, an answer not in its format). */
export class VenueUnavailable extends Error {
  constructor(
    message: string,
    /** When the venue said when to come back (a 429's Retry-After), in milliseconds. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'VenueUnavailable';
  }
}

/** The venue answered and refused (a 4xx other than 429): the request itself was wrong. */
export class VenueRejected extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'VenueRejected';
  }
}

/**
 * The CLOB answered and refused: `venueError` is its own text (a 4xx `{"error": …}` or an order
 * answer's `errorMsg`), with any credential value taken out; `status` the HTTP status.
 */
export class ClobVenueRejected extends VenueRejected {
  constructor(
    message: string,
    status: number,
    readonly venueError: string,
  ) {
    super(message, status);
    this.name = 'ClobVenueRejected';
  }
}
