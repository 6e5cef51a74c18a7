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
