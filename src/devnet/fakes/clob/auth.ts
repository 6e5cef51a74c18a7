// The CLOB fake's authentication: L1 (an EIP-712 `ClobAuth` signature of POLY_ADDRESS, for making
// and deriving API keys) and L2 (an API key, its passphrase and an HMAC of the request with its
// secret, for every trading call), timestamps within the allowed skew of the fake's clock; and the
// request log kept free of the passphrase and signature.

import { timingSafeEqual } from 'node:crypto';
import { getAddress, isAddress, recoverTypedDataAddress, type Address, type Hex } from 'viem';
import { clobAuthTypedData, clobHmacSignature } from '../../../adapters/pm-venue/polymarket.ts';
import type { FakeRequest, RecordedRequest } from '../loopback.ts';
import { CLOB_ERRORS, Refusal } from './answers.ts';
import type { Caller, ClobState } from './state.ts';
import { DECIMAL, lower, MAX_UINT256 } from './units.ts';

/** The authenticated routes, by method and path. */
export const L2_ROUTES: [string, RegExp][] = [
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

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Base64 either way (URL-safe or not), padding kept: how the two forms of one HMAC compare. */
const normalBase64 = (s: string) => s.replace(/-/g, '+').replace(/_/g, '/');

function header(req: FakeRequest, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

function fresh(state: ClobState, timestamp: string | undefined): boolean {
  if (timestamp === undefined || !/^\d+$/.test(timestamp)) return false;
  return Math.abs(Number(timestamp) - state.nowSeconds()) <= state.skew;
}

/** L1: the EIP-712 ClobAuth signature of POLY_ADDRESS. */
export async function l1(state: ClobState, req: FakeRequest): Promise<{ address: Address; nonce: string }> {
  const address = header(req, 'POLY_ADDRESS');
  const signature = header(req, 'POLY_SIGNATURE');
  const timestamp = header(req, 'POLY_TIMESTAMP');
  const nonce = header(req, 'POLY_NONCE') ?? '0';
  if (!address || !isAddress(address) || !signature || !/^0x[0-9a-fA-F]+$/.test(signature)) {
    throw new Refusal(401, CLOB_ERRORS.l1Headers);
  }
  if (!fresh(state, timestamp) || !DECIMAL.test(nonce) || BigInt(nonce) > MAX_UINT256) {
    throw new Refusal(401, CLOB_ERRORS.l1Headers);
  }
  let signedBy: Address;
  try {
    signedBy = await recoverTypedDataAddress({
      ...clobAuthTypedData({
        address: getAddress(address),
        chainId: state.chainId,
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
export function l2(state: ClobState, req: FakeRequest): Caller {
  const address = header(req, 'POLY_ADDRESS');
  const signature = header(req, 'POLY_SIGNATURE');
  const timestamp = header(req, 'POLY_TIMESTAMP');
  const apiKey = header(req, 'POLY_API_KEY');
  const passphrase = header(req, 'POLY_PASSPHRASE');
  const refuse = () => new Refusal(401, CLOB_ERRORS.unauthorized);
  if (!address || !signature || !timestamp || !apiKey || !passphrase) throw refuse();
  const key = state.keys.get(apiKey);
  if (!key || !sameText(passphrase, key.passphrase)) throw refuse();
  if (lower(address) !== lower(key.address)) throw refuse();
  if (!fresh(state, timestamp)) throw refuse();
  const expected = clobHmacSignature(key.secret, timestamp, req.method, req.path, req.body);
  if (!sameText(normalBase64(signature), normalBase64(expected))) throw refuse();
  return { key };
}

/** Keeps the request log free of secrets (the log is shared with whoever reads `requests`). */
export function redact(headers: RecordedRequest['headers']): void {
  for (const name of ['poly_passphrase', 'poly_signature']) {
    if (headers[name] !== undefined) headers[name] = '[redacted]';
  }
}
