// Wallet sign-in (SIWE challenge and verify) and bearer sessions.
//
// Verify runs in two steps. Outside any transaction: parse the message, find its nonce, compare
// every field with the environment and with the challenge issued for that nonce (its stored
// text, parsed), and check the signature on the message's chain (an RPC call for contract
// accounts, so no transaction and no pooled connection is held while it runs; neither a wrong
// field nor a wrong signature burns the nonce). Then, in the request's one transaction: consume the
// nonce with a conditional UPDATE (of concurrent verifies with one nonce exactly one wins),
// create the account on first sign-in, and write the session, the audit fact with network
// context, the credential use and the event.

import { getAddress, hashMessage, type Address, type Hex } from 'viem';
import { UnknownChainError } from '../../adapters/chain/port.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import type { Db, DbExecutor } from '../../core/db/database.ts';
import { AppError, invalidRequest, unavailable } from '../../core/errors/app-error.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import type { Principal } from '../../core/http/route-table.ts';
import { newId } from '../../core/ids.ts';
import type { AppDeps } from '../../deps.ts';
import { findOrCreateAccount } from '../account/index.ts';
import { recordAudit, USER_AGENT_MAX, type NetworkContext } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import {
  buildSiweMessage,
  challengeProblems,
  fieldProblems,
  parseSiweMessage,
  SIWE_CHAIN_IDS,
  SIWE_NONCE_TTL_MS,
  SIWE_STATEMENT,
  timeProblems,
  type SiweFields,
} from './siwe.ts';
import { notifyCredentialChanged } from './credential-cache.ts';
import { recordCredentialUse } from './store.ts';
import { hashToken, newSiweNonce, newToken, SESSION_TOKEN_PREFIX } from './tokens.ts';

/** Sessions live 24 hours (spec section 8). */
export const SESSION_TTL_MS = 24 * 60 * 60 * 1000;
/** What a replay of a sign-in says instead of the token, which is never stored. */
export const SIGN_IN_REPLAY_REMEDIATION =
  'This is a replay of an earlier sign-in: its session token was shown once and is not stored. ' +
  'If you lost it, sign in again (POST /v1/auth/challenge, then POST /v1/auth/verify).';

const SIGN_IN_AGAIN = {
  method: 'POST',
  path: '/v1/auth/challenge',
  why: 'get a fresh challenge and sign its message',
} as const;

const signatureInvalid = (message: string) =>
  new AppError('AUTH_SIGNATURE_INVALID', message, { next: [SIGN_IN_AGAIN] });
const challengeExpired = (message: string) =>
  new AppError('AUTH_CHALLENGE_EXPIRED', message, { next: [SIGN_IN_AGAIN] });

// ------------------------------------------------------------------------------------ challenge

export interface Challenge {
  message: string;
  nonce: string;
  domain: string;
  uri: string;
  version: '1';
  chainId: number;
  /** EIP-55 checksummed, as written in the message. */
  address: Address;
  issuedAt: Date;
  expirationTime: Date;
}

/**
 * The chain a challenge is for: the requested one, else the configured default. A chain the
 * service does not know is 400 (requested) or 503 (a misconfigured default).
 */
export function challengeChain(config: Config, requested: number | undefined): number {
  const chainId = requested ?? config.siwe.chainId;
  if (SIWE_CHAIN_IDS.includes(chainId)) return chainId;
  if (requested === undefined) {
    throw unavailable(`The configured default sign-in chain ${chainId} is not one this service knows.`, {
      remediation: `Send chain_id (one of ${SIWE_CHAIN_IDS.join(', ')}); the operator should fix SIWE_CHAIN_ID.`,
    });
  }
  throw invalidRequest(
    `Invalid body: chain_id ${chainId} is not supported; use one of ${SIWE_CHAIN_IDS.join(', ')}.`,
  );
}

/**
 * The EIP-55 form of a 0x address. Lowercase (or uppercase) input is accepted as is; mixed case
 * must be a correct checksum, so a typo is caught here rather than signed.
 */
export function checksummedAddress(address: string): Address {
  const lower = address.toLowerCase();
  const checksummed = getAddress(lower);
  const mixed = address !== lower && address !== `0x${address.slice(2).toUpperCase()}`;
  if (mixed && address !== checksummed) {
    throw invalidRequest('Invalid body: address has a wrong EIP-55 checksum.', {
      remediation: 'Send the address exactly as your wallet reports it, or all lowercase.',
    });
  }
  return checksummed;
}

/** Creates a challenge: a SIWE message with a fresh single-use nonce, stored with its exact text. */
export async function issueChallenge(
  tx: DbExecutor,
  clock: Clock,
  config: Config,
  params: { address: Address; chainId: number },
): Promise<Challenge> {
  const nonce = newSiweNonce();
  const issuedAt = clock.now();
  const expirationTime = new Date(issuedAt.getTime() + SIWE_NONCE_TTL_MS);
  const message = buildSiweMessage({
    domain: config.siwe.domain,
    address: params.address,
    statement: SIWE_STATEMENT,
    uri: config.siwe.uri,
    chainId: params.chainId,
    nonce,
    issuedAt,
    expirationTime,
  });
  await tx
    .insertInto('siwe_nonces')
    .values({
      nonce,
      address: params.address.toLowerCase(),
      chain_id: params.chainId,
      message,
      issued_at: issuedAt,
      expires_at: expirationTime,
      used_at: null,
    })
    .execute();
  return {
    message,
    nonce,
    domain: config.siwe.domain,
    uri: config.siwe.uri,
    version: '1',
    chainId: params.chainId,
    address: params.address,
    issuedAt,
    expirationTime,
  };
}

// --------------------------------------------------------------------------------------- verify

/** A message whose fields match the environment and whose signature verified; not yet consumed. */
export interface SignInProof {
  fields: SiweFields;
  nonce: string;
  /** Lowercase. */
  address: string;
  chainId: number;
  /** The nonce row as read before the signature check, for precise refusals. */
  nonceRow: { usedAt: Date | null; expiresAt: Date };
}

export type SignInCheckDeps = Pick<AppDeps, 'db' | 'clock' | 'config' | 'chain' | 'log'>;

/**
 * Everything about a sign-in that needs no transaction: the message's form and fields, its
 * nonce's existence, and the signature (EIP-191 over the message; EOA, ERC-1271 or ERC-6492 on
 * the message's chain). Whether the nonce is still unused and unexpired is decided when it is
 * consumed, so a retry with the same Idempotency-Key still reaches its stored replay.
 */
export async function checkSignIn(
  deps: SignInCheckDeps,
  deadline: Deadline,
  params: { message: string; signature: Hex },
): Promise<SignInProof> {
  const parsed = parseSiweMessage(params.message);
  if (!parsed.ok) {
    throw signatureInvalid(`The message is not an EIP-4361 sign-in message: ${parsed.reason}.`);
  }
  const fields = parsed.fields;
  const row = await findNonce(deps.db, fields.nonce);
  if (!row) {
    throw challengeExpired('The nonce of this message is unknown: it was not issued by this service.');
  }
  const problems = fieldProblems(fields, {
    domain: deps.config.siwe.domain,
    uri: deps.config.siwe.uri,
    chainId: row.chain_id,
    address: row.address,
    challengeIssuedAt: new Date(row.issued_at),
    now: deps.clock.now(),
  });
  if (problems.length > 0) {
    throw signatureInvalid(`The message does not match this environment: ${problems.join('; ')}.`);
  }
  // The message signed must say what the challenge said, field by field: a later Expiration
  // Time, another statement or an added Not Before is another message. The nonce stays usable.
  const issued = parseSiweMessage(row.message);
  if (!issued.ok) throw new Error(`The stored challenge ${row.nonce} does not parse: ${issued.reason}`);
  const differences = challengeProblems(fields, issued.fields);
  if (differences.length > 0) {
    throw signatureInvalid(
      `The message is not the challenge issued with this nonce: ${differences.join('; ')}.`,
    );
  }
  await verifySignature(deps, deadline, {
    chainId: row.chain_id,
    signer: getAddress(row.address),
    message: params.message,
    signature: params.signature,
  });
  return {
    fields,
    nonce: fields.nonce,
    address: row.address,
    chainId: row.chain_id,
    nonceRow: { usedAt: row.used_at ? new Date(row.used_at) : null, expiresAt: new Date(row.expires_at) },
  };
}

async function findNonce(db: Db, nonce: string) {
  return db.selectFrom('siwe_nonces').selectAll().where('nonce', '=', nonce).executeTakeFirst();
}

/**
 * The signature check. viem reports a contract account it could not reach as "invalid", so a
 * failed check asks the chain for its block number: when that fails too, the answer is 503, not
 * a 401 that would send a valid signer away.
 */
async function verifySignature(
  deps: SignInCheckDeps,
  deadline: Deadline,
  check: { chainId: number; signer: Address; message: string; signature: Hex },
): Promise<void> {
  const notConfigured = () =>
    unavailable(
      `No RPC endpoint is configured for chain ${check.chainId}, so the signature cannot be checked.`,
      {
        remediation: `Sign in on another chain, or ask the operator to set RPC_URL_${check.chainId}.`,
      },
    );
  const chain = deps.chain;
  if (!chain || !chain.supports(check.chainId)) throw notConfigured();
  const rpcDown = (err: unknown) => {
    deps.log.warn({ err, chainId: check.chainId }, 'sign-in signature check could not reach the chain');
    return unavailable(`Chain ${check.chainId} did not answer, so the signature could not be checked.`, {
      remediation: 'Retry in a few seconds; nothing was consumed.',
      headers: { 'retry-after': '2' },
      cause: err,
    });
  };
  deadline.check(`checking the signature on chain ${check.chainId}`);
  let valid: boolean;
  try {
    valid = await chain.verifyHash(check.chainId, {
      signer: check.signer,
      hash: hashMessage(check.message),
      signature: check.signature,
    });
  } catch (err) {
    throw err instanceof UnknownChainError ? notConfigured() : rpcDown(err);
  }
  if (valid) return;
  deadline.check(`asking chain ${check.chainId} whether it is reachable`);
  try {
    await chain.getBlockNumber(check.chainId);
  } catch (err) {
    throw rpcDown(err);
  }
  throw signatureInvalid(
    `The signature does not verify for ${check.signer} on chain ${check.chainId} ` +
      '(EIP-191 over the exact message; ERC-1271 for deployed contract accounts, ERC-6492 for undeployed ones).',
  );
}

export interface SignInResult {
  token: string;
  sessionId: string;
  accountId: string;
  accountCreated: boolean;
  /** EIP-55 checksummed. */
  address: Address;
  expiresAt: Date;
}

/**
 * Consumes the nonce and opens a session, all in `tx`. The nonce goes with one conditional
 * UPDATE: of concurrent sign-ins with one nonce exactly one gets a row back.
 * Errors: AUTH_CHALLENGE_EXPIRED (used, expired), AUTH_SIGNATURE_INVALID (message not yet
 * valid), FORBIDDEN (offboarded account).
 */
export async function completeSignIn(
  tx: DbExecutor,
  clock: Clock,
  proof: SignInProof,
  options: { markTestAccount: boolean; network: NetworkContext },
): Promise<SignInResult> {
  const now = clock.now();
  const times = timeProblems(proof.fields, now);
  if (times.expired) {
    throw challengeExpired(
      `The message expired at ${proof.fields.expirationTime?.toISOString() ?? 'its Expiration Time'}.`,
    );
  }
  if (times.notYetValid) {
    throw signatureInvalid(`The message is not valid before ${proof.fields.notBefore?.toISOString() ?? ''}.`);
  }
  const consumed = await tx
    .updateTable('siwe_nonces')
    .set({ used_at: now })
    .where('nonce', '=', proof.nonce)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['nonce'])
    .executeTakeFirst();
  if (!consumed) {
    const { usedAt, expiresAt } = proof.nonceRow;
    throw challengeExpired(
      usedAt
        ? 'This challenge was already used: each nonce signs in once.'
        : expiresAt.getTime() <= now.getTime()
          ? `This challenge expired at ${expiresAt.toISOString()} (nonces are valid 10 minutes).`
          : 'This challenge was just used by another sign-in: each nonce signs in once.',
    );
  }

  const { account, created } = await findOrCreateAccount(tx, {
    id: newId('acc'),
    address: proof.address,
    isTestFixture: options.markTestAccount,
    createdAt: now,
  });
  if (account.offboarded_at) {
    throw new AppError('FORBIDDEN', 'The account of this address was offboarded and is retired.', {
      remediation:
        'An offboarded account cannot sign in again; its records are retained. Sign in with another wallet address to open a new account.',
      next: [],
    });
  }

  const token = newToken(SESSION_TOKEN_PREFIX);
  const sessionId = newId('ses');
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  await tx
    .insertInto('sessions')
    .values({
      id: sessionId,
      account_id: account.id,
      token_hash: hashToken(token),
      created_at: now,
      expires_at: expiresAt,
      revoked_at: null,
    })
    .execute();
  await recordCredentialUse(tx, {
    credentialId: sessionId,
    accountId: account.id,
    clientIp: options.network.clientIp ?? '',
    userAgent: (options.network.userAgent ?? '').slice(0, USER_AGENT_MAX),
    at: now,
  });
  const address = getAddress(proof.address);
  await recordAudit(tx, clock, {
    accountId: account.id,
    actor: `session:${sessionId}`,
    action: 'auth.sign_in',
    subject: sessionId,
    details: {
      address,
      chain_id: proof.chainId,
      account_created: created,
      expires_at: expiresAt.toISOString(),
    },
    network: options.network,
  });
  await emitEvent(tx, clock, {
    accountId: account.id,
    kind: 'auth.signed_in',
    subject: sessionId,
    payload: { session_id: sessionId, address, chain_id: proof.chainId, expires_at: expiresAt.toISOString() },
  });
  return { token, sessionId, accountId: account.id, accountCreated: created, address, expiresAt };
}

// -------------------------------------------------------------------------------------- sign-out

/**
 * Revokes the calling session. Only sessions sign out: an API key gets 403 (revoke keys with
 * DELETE /v1/keys/{id}). Revoking an already revoked session changes nothing. Every process's
 * credential cache hears of it by NOTIFY when `tx` commits; the caller invalidates its own cache
 * after the commit.
 */
export async function signOut(
  tx: DbExecutor,
  clock: Clock,
  principal: Principal,
  network: NetworkContext,
): Promise<{ id: string }> {
  if (principal.kind !== 'session') {
    throw new AppError('FORBIDDEN', 'Only a session signs out; this credential is an API key.', {
      remediation: 'To revoke an API key, call DELETE /v1/keys/{id} with a session or an admin key.',
      next: [{ method: 'DELETE', path: `/v1/keys/${principal.credentialId}`, why: 'revoke this API key' }],
    });
  }
  const now = clock.now();
  const revoked = await tx
    .updateTable('sessions')
    .set({ revoked_at: now })
    .where('id', '=', principal.credentialId)
    .where('account_id', '=', principal.accountId)
    .where('revoked_at', 'is', null)
    .returning(['id'])
    .executeTakeFirst();
  if (revoked) {
    await notifyCredentialChanged(tx, principal.credentialId);
    await recordAudit(tx, clock, {
      accountId: principal.accountId,
      actor: `session:${principal.credentialId}`,
      action: 'auth.sign_out',
      subject: principal.credentialId,
      network,
    });
    await emitEvent(tx, clock, {
      accountId: principal.accountId,
      kind: 'auth.signed_out',
      subject: principal.credentialId,
      payload: { session_id: principal.credentialId },
    });
  }
  return { id: principal.credentialId };
}
