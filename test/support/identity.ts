// Accounts, sessions and API keys inserted straight into the database, so route tests can call
// bearer routes without signing in. Rows look exactly like those the service writes: only token
// hashes are stored, ids carry their prefixes, addresses are lowercase.

import { randomBytes } from 'node:crypto';
import type { DbExecutor } from '../../src/core/db/database.ts';
import type { Scope } from '../../src/core/http/route-table.ts';
import { newId } from '../../src/core/ids.ts';
import { API_KEY_PREFIX, hashToken, newToken, SESSION_TOKEN_PREFIX } from '../../src/modules/auth/tokens.ts';

const DAY_MS = 86_400_000;

/** A random lowercase wallet address. */
export function randomAddress(): string {
  return `0x${randomBytes(20).toString('hex')}`;
}

/** The Authorization header of a token. */
export function bearer(token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}

export interface CreateAccountOptions {
  address?: string;
  /** Creation time (default: now). */
  now?: Date;
  isTestFixture?: boolean;
  offboardedAt?: Date | null;
}

export async function createAccount(
  db: DbExecutor,
  options: CreateAccountOptions = {},
): Promise<{ accountId: string; address: string }> {
  const accountId = newId('acc');
  const address = (options.address ?? randomAddress()).toLowerCase();
  await db
    .insertInto('accounts')
    .values({
      id: accountId,
      address,
      is_test_fixture: options.isTestFixture ?? false,
      created_at: options.now ?? new Date(),
      offboarded_at: options.offboardedAt ?? null,
    })
    .execute();
  return { accountId, address };
}

export interface CreateSessionOptions {
  /** Creation time (default: now). */
  now?: Date;
  /** Default: 24 hours after `now`. */
  expiresAt?: Date;
  revokedAt?: Date | null;
}

export async function createSession(
  db: DbExecutor,
  accountId: string,
  options: CreateSessionOptions = {},
): Promise<{ id: string; token: string }> {
  const now = options.now ?? new Date();
  const token = newToken(SESSION_TOKEN_PREFIX);
  const id = newId('ses');
  await db
    .insertInto('sessions')
    .values({
      id,
      account_id: accountId,
      token_hash: hashToken(token),
      created_at: now,
      expires_at: options.expiresAt ?? new Date(now.getTime() + DAY_MS),
      revoked_at: options.revokedAt ?? null,
    })
    .execute();
  return { id, token };
}

export interface AccountWithSession {
  accountId: string;
  address: string;
  sessionId: string;
  sessionToken: string;
}

/** A fresh account with one live session. */
export async function createAccountWithSession(
  db: DbExecutor,
  options: CreateAccountOptions & Omit<CreateSessionOptions, 'now'> = {},
): Promise<AccountWithSession> {
  const { accountId, address } = await createAccount(db, options);
  const session = await createSession(db, accountId, {
    ...(options.now ? { now: options.now } : {}),
    ...(options.expiresAt ? { expiresAt: options.expiresAt } : {}),
    ...(options.revokedAt !== undefined ? { revokedAt: options.revokedAt } : {}),
  });
  return { accountId, address, sessionId: session.id, sessionToken: session.token };
}

export interface CreateKeyOptions {
  /** Default ['read']. Any combination is accepted here, even one the API refuses. */
  scopes?: Scope[];
  /** Wallet pin (lowercased); default none. */
  wallets?: string[] | null;
  /** IP pin; default none. */
  allowedIps?: string[] | null;
  name?: string | null;
  /** Creation time (default: now). */
  now?: Date;
  /** Default: 90 days after `now`. */
  expiresAt?: Date;
  revokedAt?: Date | null;
  rotatedFrom?: string | null;
  rotatedTo?: string | null;
  createdBy?: string;
}

/** An API key row of the account; returns its id and its raw token. */
export async function createKey(
  db: DbExecutor,
  accountId: string,
  options: CreateKeyOptions = {},
): Promise<{ id: string; token: string }> {
  const now = options.now ?? new Date();
  const token = newToken(API_KEY_PREFIX);
  const id = newId('key');
  await db
    .insertInto('api_keys')
    .values({
      id,
      account_id: accountId,
      name: options.name ?? null,
      token_hash: hashToken(token),
      scopes: options.scopes ?? ['read'],
      wallets: options.wallets ? options.wallets.map((w) => w.toLowerCase()) : null,
      allowed_ips: options.allowedIps ?? null,
      created_at: now,
      expires_at: options.expiresAt ?? new Date(now.getTime() + 90 * DAY_MS),
      revoked_at: options.revokedAt ?? null,
      rotated_to: options.rotatedTo ?? null,
      rotated_from: options.rotatedFrom ?? null,
      created_by: options.createdBy ?? 'test',
    })
    .execute();
  return { id, token };
}
