// The console's only way to the service: the SDK's typed client on this origin, holding the
// session's token in memory (never in storage: a reload signs out). Every error answer arrives
// as a PurserError with the API's message, remediation and next steps; every write carries an
// Idempotency-Key (the client adds one).

import { ok, Purser } from '../../packages/sdk/src/client.ts';
import { PurserError } from '../../packages/sdk/src/errors.ts';
import type { components, paths } from '../../packages/sdk/src/schema.ts';

export { ok, PurserError };
export type { components, paths };
export type Schemas = components['schemas'];

/** Who is signed in: an account (by wallet or API key), or the operator. */
export interface Session {
  kind: 'wallet' | 'key' | 'operator';
  client: Purser;
  /** The account's wallet address (null for the operator). */
  address: string | null;
  accountId: string | null;
  scopes: string[];
}

/** A client for this origin with the given token. */
export function clientWith(token: string | null): Purser {
  return new Purser({ baseUrl: location.origin, retries: 1, ...(token ? { token } : {}) });
}

/** The error an unexpected throw becomes, so every failure renders one way. */
export function asPurserError(err: unknown): PurserError {
  if (err instanceof PurserError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new PurserError(
    0,
    {
      code: 'NETWORK',
      message: `The request did not reach the service: ${message}`,
      remediation: 'Check that Purser is running and reachable, then retry.',
    },
    null,
  );
}

/** An account's session from its token: the credential says whose it is and what it may do. */
export async function accountSession(kind: 'wallet' | 'key', token: string): Promise<Session> {
  const client = clientWith(token);
  const who = await ok(client.api.GET('/v1/auth/session'));
  return {
    kind,
    client,
    address: who.address,
    accountId: who.account_id,
    scopes: who.credential.scopes ?? [],
  };
}

/** The operator's session: its token must open an operator read before it is kept. */
export async function operatorSession(token: string): Promise<Session> {
  const client = clientWith(token);
  await ok(client.api.GET('/v1/ops/switches'));
  return { kind: 'operator', client, address: null, accountId: null, scopes: ['operator'] };
}

/** The EIP-1193 provider a browser wallet injects. */
export interface Eip1193 {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

export function injectedWallet(): Eip1193 | null {
  const candidate = (window as unknown as { ethereum?: Eip1193 }).ethereum;
  return candidate && typeof candidate.request === 'function' ? candidate : null;
}

function utf8Hex(text: string): string {
  let hex = '0x';
  for (const byte of new TextEncoder().encode(text)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/**
 * Sign-in with the browser's wallet (SIWE): the wallet's first account asks for a challenge, signs
 * its message (personal_sign, which costs nothing) and the signature is exchanged for a session.
 */
export async function walletSignIn(wallet: Eip1193): Promise<Session> {
  const accounts = (await wallet.request({ method: 'eth_requestAccounts' })) as string[];
  const address = accounts[0];
  if (!address) throw new Error('The wallet shared no account.');
  const anonymous = clientWith(null);
  const challenge = await ok(anonymous.api.POST('/v1/auth/challenge', { body: { address } }));
  const signature = (await wallet.request({
    method: 'personal_sign',
    params: [utf8Hex(challenge.message), address],
  })) as string;
  const verified = await ok(
    anonymous.api.POST('/v1/auth/verify', { body: { message: challenge.message, signature } }),
  );
  if (!verified.token) throw new Error('The service answered the sign-in without a session token.');
  return accountSession('wallet', verified.token);
}
