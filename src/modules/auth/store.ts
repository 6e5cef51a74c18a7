import { sql, type Selectable } from 'kysely';
import { accountColumns } from '../account/store.ts';
import type { Db, DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';
import { deleteInBatches, RETENTION_BATCH_SIZE } from '../../core/db/retention.ts';

export interface SessionsTable {
  id: string;
  account_id: string;
  token_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
}

export interface SiweNoncesTable {
  nonce: string;
  address: string;
  chain_id: number;
  message: string;
  issued_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface CredentialUsesTable {
  credential_id: string;
  account_id: string;
  client_ip: string;
  user_agent: string;
  first_seen_at: Timestamp;
  last_seen_at: Timestamp;
  uses: string;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    sessions: SessionsTable;
    siwe_nonces: SiweNoncesTable;
    credential_uses: CredentialUsesTable;
  }
}

export type SessionRow = Selectable<SessionsTable>;

/** The session behind a token hash with its account's address, in one round trip. */
export async function findSessionForAuth(db: DbExecutor, tokenHash: string) {
  const account = accountColumns(db, 'sessions.account_id');
  return db
    .selectFrom('sessions')
    .select([
      'sessions.id',
      'sessions.account_id',
      'sessions.token_hash',
      'sessions.expires_at',
      'sessions.revoked_at',
      account.address,
      account.offboardedAt,
    ])
    .where('sessions.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** The key behind a token hash with its account's address, in one round trip (the guard's lookup). */
export async function findKeyForAuth(db: DbExecutor, tokenHash: string) {
  const account = accountColumns(db, 'api_keys.account_id');
  return db
    .selectFrom('api_keys')
    .select([
      'api_keys.id',
      'api_keys.account_id',
      'api_keys.token_hash',
      'api_keys.scopes',
      'api_keys.wallets',
      'api_keys.allowed_ips',
      'api_keys.expires_at',
      'api_keys.revoked_at',
      account.address,
      account.offboardedAt,
    ])
    .where('api_keys.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Upserts the network context of one credential use (sign-in or key use). */
export async function recordCredentialUse(
  db: DbExecutor,
  use: { credentialId: string; accountId: string; clientIp: string; userAgent: string; at: Date },
): Promise<void> {
  await sql`
    INSERT INTO credential_uses (credential_id, account_id, client_ip, user_agent, first_seen_at, last_seen_at)
    VALUES (${use.credentialId}, ${use.accountId}, ${use.clientIp}, ${use.userAgent}, ${use.at}, ${use.at})
    ON CONFLICT (credential_id, client_ip, user_agent)
    DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at, uses = credential_uses.uses + 1`.execute(db);
}

/** Retention: sign-in nonces that expired before `before`, in batches; returns how many. */
export function deleteSiweNoncesExpiredBefore(db: Db, before: Date): Promise<number> {
  return deleteInBatches(
    db,
    () => sql<{ one: number }>`
      DELETE FROM siwe_nonces WHERE nonce IN (
        SELECT nonce FROM siwe_nonces WHERE expires_at < ${before} LIMIT ${RETENTION_BATCH_SIZE})
      RETURNING 1 AS one`,
  );
}

/** Retention: the network context of credential uses not seen since `before`; returns how many. */
export function deleteCredentialUsesSeenBefore(db: Db, before: Date): Promise<number> {
  return deleteInBatches(
    db,
    () => sql<{ one: number }>`
      DELETE FROM credential_uses WHERE (credential_id, client_ip, user_agent) IN (
        SELECT credential_id, client_ip, user_agent FROM credential_uses
        WHERE last_seen_at < ${before} LIMIT ${RETENTION_BATCH_SIZE})
      RETURNING 1 AS one`,
  );
}
