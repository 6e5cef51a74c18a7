// The API keys table: the auth module owns every credential (sessions, API keys and where they
// were used); the keys module (src/modules/keys/) issues, rotates and revokes keys through these
// functions.

import type { Selectable } from 'kysely';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';
import { notifyCredentialChanged as notifyCredentialChangedEverywhere } from './credential-cache.ts';

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string | null;
  token_hash: string;
  scopes: string[];
  wallets: string[] | null;
  allowed_ips: string[] | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  rotated_to: string | null;
  rotated_from: string | null;
  created_by: string;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    api_keys: ApiKeysTable;
  }
}

export type ApiKeyRow = Selectable<ApiKeysTable>;

export async function insertKey(db: DbExecutor, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

export async function findKeyById(db: DbExecutor, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Every key of an account, newest first, with when it was last seen in use (or null). */
export async function listKeysOfAccount(
  db: DbExecutor,
  accountId: string,
): Promise<(ApiKeyRow & { last_used_at: Date | null })[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll('api_keys')
    .select((eb) =>
      eb
        .selectFrom('credential_uses')
        .select((u) => u.fn.max('credential_uses.last_seen_at').as('last'))
        .whereRef('credential_uses.credential_id', '=', 'api_keys.id')
        .as('last_used_at'),
    )
    .where('api_keys.account_id', '=', accountId)
    .orderBy('api_keys.created_at', 'desc')
    .orderBy('api_keys.id', 'desc')
    .execute();
  return rows.map((r) => ({ ...r, last_used_at: r.last_used_at === null ? null : new Date(r.last_used_at) }));
}

/**
 * Locks the keys among `ids` that can be rotated: on the account, not revoked, not expired and
 * not already rotated (a key in its overlap window is retiring). Rows are locked in id order so
 * two rotations naming the same keys cannot deadlock; a concurrent rotation that committed first
 * makes its keys vanish from this answer (PostgreSQL re-checks the conditions after the wait).
 */
export async function lockRotatableKeys(
  tx: DbExecutor,
  accountId: string,
  ids: readonly string[],
  now: Date,
): Promise<ApiKeyRow[]> {
  if (ids.length === 0) return [];
  return tx
    .selectFrom('api_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', 'in', [...ids])
    .where('revoked_at', 'is', null)
    .where('rotated_to', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Locks an active key of the account (not revoked, not expired; a retiring key counts). */
export async function lockActiveKey(
  tx: DbExecutor,
  accountId: string,
  id: string,
  now: Date,
): Promise<ApiKeyRow | undefined> {
  return tx
    .selectFrom('api_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .forUpdate()
    .executeTakeFirst();
}

/** Marks a key replaced: revoked now (no overlap) or expiring at `retireAt`. */
export async function retireRotatedKey(
  tx: DbExecutor,
  id: string,
  change: { rotatedTo: string; revokedAt: Date | null; expiresAt: Date },
): Promise<void> {
  await tx
    .updateTable('api_keys')
    .set({ rotated_to: change.rotatedTo, revoked_at: change.revokedAt, expires_at: change.expiresAt })
    .where('id', '=', id)
    .execute();
}

export async function revokeKeyRow(tx: DbExecutor, id: string, at: Date): Promise<void> {
  await tx.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).execute();
}

/**
 * Tells every process that a credential changed (`pg_notify('purser_credentials', <id>)`), so a
 * cache of verified credentials drops it. Run it in the transaction of the change: PostgreSQL
 * delivers the notification at commit and never when the transaction rolls back. The process
 * that made the change also calls `deps.credentialCache.invalidate(id)` once it has committed.
 */
export async function notifyCredentialChanged(tx: DbExecutor, credentialId: string): Promise<void> {
  await notifyCredentialChangedEverywhere(tx, credentialId);
}
