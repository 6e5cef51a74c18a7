// Polymarket's CLOB V2 (clob.polymarket.com), as far as the credentials need it: the L1 headers
// (an EIP-712 `ClobAuth` signature of the signer's key) that create or derive an API credential,
// the L2 headers (HMAC-SHA256 with the credential's secret) that authenticate every other call,
// and the V2 order's EIP-712 typed data, which later work signs orders with. The formats are
// clob-client-v2 1.1.0's (`src/signing/*`, `src/headers/index.ts`,
// `src/order-utils/model/ctfExchangeV2TypedData.ts`; protocols.md §8.3, §8.5); the answers are the
// CLOB's (`{"error": "…"}` bodies, docs.polymarket.com "Error Codes").
//
// Secrets (the signer key, the credential's secret and passphrase) never reach an error message or
// a log: errors quote the venue's own error text, with any credential value scrubbed from it.

import { createHmac } from 'node:crypto';
import { hashTypedData, type Address, type Hex, type LocalAccount, type TypedDataDefinition } from 'viem';
import type { ClobApiCredentials, ClobOrderV2 } from './port.ts';

// ------------------------------------------------------------------------------ L1 (ClobAuth)

/** What an L1 signature attests (clob-client-v2 `MSG_TO_SIGN`). */
export const CLOB_AUTH_MESSAGE = 'This message attests that I control the given wallet';

export const CLOB_AUTH_TYPES = {
  ClobAuth: [
    { name: 'address', type: 'address' },
    { name: 'timestamp', type: 'string' },
    { name: 'nonce', type: 'uint256' },
    { name: 'message', type: 'string' },
  ],
} as const;

/** The `ClobAuth` typed data an L1 header signs: domain {ClobAuthDomain, 1, chainId}. */
export function clobAuthTypedData(args: {
  address: Address;
  chainId: number;
  /** Unix seconds, as the header carries them. */
  timestamp: number | string;
  nonce: number | bigint;
}): TypedDataDefinition<typeof CLOB_AUTH_TYPES, 'ClobAuth'> {
  return {
    domain: { name: 'ClobAuthDomain', version: '1', chainId: args.chainId },
    types: CLOB_AUTH_TYPES,
    primaryType: 'ClobAuth',
    message: {
      address: args.address,
      timestamp: String(args.timestamp),
      nonce: BigInt(args.nonce),
      message: CLOB_AUTH_MESSAGE,
    },
  };
}

export interface ClobL1Headers {
  POLY_ADDRESS: Address;
  POLY_SIGNATURE: Hex;
  POLY_TIMESTAMP: string;
  POLY_NONCE: string;
}

/** The L1 headers of `POST /auth/api-key` and `GET /auth/derive-api-key`. */
export async function buildClobL1Headers(args: {
  account: LocalAccount;
  chainId: number;
  /** Unix seconds. */
  timestamp: number;
  nonce?: number;
}): Promise<ClobL1Headers> {
  const nonce = args.nonce ?? 0;
  const signature = await args.account.signTypedData(
    clobAuthTypedData({
      address: args.account.address,
      chainId: args.chainId,
      timestamp: args.timestamp,
      nonce,
    }),
  );
  return {
    POLY_ADDRESS: args.account.address,
    POLY_SIGNATURE: signature,
    POLY_TIMESTAMP: String(args.timestamp),
    POLY_NONCE: String(nonce),
  };
}

// ------------------------------------------------------------------------------ L2 (HMAC)

/**
 * The L2 signature: HMAC-SHA256 keyed with the base64url-decoded secret over
 * `timestamp + METHOD + requestPath + body`, in URL-safe base64 with its `=` padding kept
 * (clob-client-v2 `buildPolyHmacSignature`). `requestPath` is the path without the query.
 */
export function clobHmacSignature(
  secret: string,
  timestamp: number | string,
  method: string,
  requestPath: string,
  body?: string,
): string {
  if (secret === '') throw new Error('clobHmacSignature: empty secret');
  const key = Buffer.from(secret.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  const message = `${timestamp}${method}${requestPath}${body ?? ''}`;
  return createHmac('sha256', key).update(message).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
}

export interface ClobL2Headers {
  POLY_ADDRESS: Address;
  POLY_SIGNATURE: string;
  POLY_TIMESTAMP: string;
  POLY_API_KEY: string;
  POLY_PASSPHRASE: string;
}

/** The L2 headers of an authenticated call. `body` must be the exact text sent. */
export function buildClobL2Headers(args: {
  address: Address;
  creds: ClobApiCredentials;
  /** Unix seconds. */
  timestamp: number;
  method: 'GET' | 'POST' | 'DELETE';
  requestPath: string;
  body?: string;
}): ClobL2Headers {
  return {
    POLY_ADDRESS: args.address,
    POLY_SIGNATURE: clobHmacSignature(
      args.creds.secret,
      args.timestamp,
      args.method,
      args.requestPath,
      args.body,
    ),
    POLY_TIMESTAMP: String(args.timestamp),
    POLY_API_KEY: args.creds.apiKey,
    POLY_PASSPHRASE: args.creds.passphrase,
  };
}

// ------------------------------------------------------------------------------ V2 orders

/** The V2 exchanges per chain (clob-client-v2 1.1.0 `src/config.ts`; protocols.md §8.2). */
export const CTF_EXCHANGE_V2: Readonly<
  Record<number, { exchange: Address; negRiskExchange: Address; negRiskAdapter: Address }>
> = {
  137: {
    exchange: '0xE111180000d2663C0091e4f400237545B87B996B',
    negRiskExchange: '0xe2222d279d744050d28e00520010520000310F59',
    negRiskAdapter: '0xd91E80cF2E7be2e162c6513ceD06f1dD0dA35296',
  },
  80002: {
    exchange: '0xE111180000d2663C0091e4f400237545B87B996B',
    negRiskExchange: '0xe2222d279d744050d28e00520010520000310F59',
    negRiskAdapter: '0xd91E80cF2E7be2e162c6513ceD06f1dD0dA35296',
  },
};

export const CTF_EXCHANGE_V2_DOMAIN = { name: 'Polymarket CTF Exchange', version: '2' } as const;

export const ORDER_V2_TYPES = {
  Order: [
    { name: 'salt', type: 'uint256' },
    { name: 'maker', type: 'address' },
    { name: 'signer', type: 'address' },
    { name: 'tokenId', type: 'uint256' },
    { name: 'makerAmount', type: 'uint256' },
    { name: 'takerAmount', type: 'uint256' },
    { name: 'side', type: 'uint8' },
    { name: 'signatureType', type: 'uint8' },
    { name: 'timestamp', type: 'uint256' },
    { name: 'metadata', type: 'bytes32' },
    { name: 'builder', type: 'bytes32' },
  ],
} as const;

export type OrderV2TypedData = TypedDataDefinition<typeof ORDER_V2_TYPES, 'Order'>;

/**
 * The EIP-712 typed data of a V2 order: domain {Polymarket CTF Exchange, 2, chainId, the exchange
 * (or the neg-risk exchange for a neg-risk market)}. `expiration` is not part of it.
 */
export function orderTypedDataV2(
  order: ClobOrderV2,
  venue: { chainId: number; negRisk: boolean; verifyingContract?: Address },
): OrderV2TypedData {
  let verifyingContract = venue.verifyingContract;
  if (!verifyingContract) {
    const known = CTF_EXCHANGE_V2[venue.chainId];
    if (!known) throw new Error(`orderTypedDataV2: no V2 exchange known for chain ${venue.chainId}`);
    verifyingContract = venue.negRisk ? known.negRiskExchange : known.exchange;
  }
  return {
    domain: { ...CTF_EXCHANGE_V2_DOMAIN, chainId: venue.chainId, verifyingContract },
    types: ORDER_V2_TYPES,
    primaryType: 'Order',
    message: {
      salt: BigInt(order.salt),
      maker: order.maker,
      signer: order.signer,
      tokenId: BigInt(order.tokenId),
      makerAmount: BigInt(order.makerAmount),
      takerAmount: BigInt(order.takerAmount),
      side: order.side === 'BUY' ? 0 : 1,
      signatureType: order.signatureType,
      timestamp: BigInt(order.timestamp),
      metadata: order.metadata,
      builder: order.builder,
    },
  };
}

/** The order's id on the CLOB: the EIP-712 hash of its typed data. */
export function orderHashV2(
  order: ClobOrderV2,
  venue: { chainId: number; negRisk: boolean; verifyingContract?: Address },
): Hex {
  return hashTypedData(orderTypedDataV2(order, venue));
}
