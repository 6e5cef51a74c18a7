// Polymarket CLOB V2's authentication: the L1 headers (an EIP-712 `ClobAuth` signature of the
// signer's key) that create or derive an API credential, and the L2 headers (HMAC-SHA256 with the
// credential's secret) that authenticate every other call (clob-client-v2 1.1.0's
// `src/signing/*`, `src/headers/index.ts`; protocols.md §8.3).

import { createHmac } from 'node:crypto';
import { type Address, type Hex, type LocalAccount, type TypedDataDefinition } from 'viem';
import { type ClobApiCredentials } from './port.ts';

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
