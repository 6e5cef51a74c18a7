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
