// The tables of the prediction-market credentials (migration 0035): the credentials with their
// sealed material, their uses per minute and the client networks they were used from.

import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db, DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';
import type { PmVenue } from '../../adapters/pm-venue/port.ts';
import { deleteInBatches, RETENTION_BATCH_SIZE } from '../../core/db/retention.ts';

export type CredentialFlow = 'hosted' | 'client_signed';

export interface VenueCredentialsTable {
  id: string;
  account_id: string;
  venue: PmVenue;
  label: string | null;
  flow: CredentialFlow;
  meta: unknown;
  signer_address: string | null;
  funder: string | null;
  sealed: string | null;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
  burst_alerted_at: Timestamp | null;
}

export interface VenueCredentialUsageTable {
  credential_id: string;
  minute: Timestamp;
  uses: number;
}

export interface VenueCredentialNetworksTable {
  credential_id: string;
  network: string;
  first_seen_at: Timestamp;
  last_seen_at: Timestamp;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    venue_credentials: VenueCredentialsTable;
    venue_credential_usage: VenueCredentialUsageTable;
    venue_credential_networks: VenueCredentialNetworksTable;
  }
}

export type CredentialRow = Selectable<VenueCredentialsTable>;
/** A credential without its sealed material: what reads and listings get. */
export type CredentialMetaRow = Omit<CredentialRow, 'sealed' | 'burst_alerted_at'>;

const META_COLUMNS = [
  'id',
  'account_id',
  'venue',
  'label',
  'flow',
  'meta',
  'signer_address',
  'funder',
  'created_at',
  'revoked_at',
  'last_used_at',
] as const;

export async function insertCredential(
  tx: DbExecutor,
  row: Omit<CredentialRow, 'revoked_at' | 'last_used_at' | 'burst_alerted_at'>,
): Promise<CredentialMetaRow> {
  return tx
    .insertInto('venue_credentials')
    .values({
      ...row,
      meta: JSON.stringify(row.meta),
      revoked_at: null,
      last_used_at: null,
      burst_alerted_at: null,
    })
    .returning(META_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** The account's credentials, newest first. */
export async function listCredentials(
  db: DbExecutor,
  accountId: string,
  options: { limit: number; offset: number; includeRevoked: boolean },
): Promise<CredentialMetaRow[]> {
  let q = db.selectFrom('venue_credentials').select(META_COLUMNS).where('account_id', '=', accountId);
  if (!options.includeRevoked) q = q.where('revoked_at', 'is', null);
  return q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(options.limit)
    .offset(options.offset)
    .execute();
}

/** One credential of the account, active or not (null: none, or another account's). */
export async function getCredentialMeta(
  db: DbExecutor,
  accountId: string,
  id: string,
): Promise<CredentialMetaRow | null> {
  return (
    (await db
      .selectFrom('venue_credentials')
      .select(META_COLUMNS)
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst()) ?? null
  );
}

/** The active credential with its sealed material, locked for the rest of the transaction. */
export async function lockActiveCredential(
  tx: DbExecutor,
  accountId: string,
  id: string,
): Promise<CredentialRow | null> {
  return (
    (await tx
      .selectFrom('venue_credentials')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .forUpdate()
      .executeTakeFirst()) ?? null
  );
}

/**
 * Revokes the active credentials named (all of the account's when `id` is null): the sealed
 * ciphertext is overwritten with NULL in the same statement that stamps revoked_at. Returns
 * what was revoked.
 */
export async function revokeCredentials(
  tx: DbExecutor,
  accountId: string,
  id: string | null,
  now: Date,
): Promise<CredentialMetaRow[]> {
  let q = tx
    .updateTable('venue_credentials')
    .set({ sealed: null, revoked_at: now })
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null);
  if (id !== null) q = q.where('id', '=', id);
  return q.returning(META_COLUMNS).execute();
}

/** Counts one use in its minute and returns the minute's count and the 24 hours before it. */
export async function countUse(
  tx: DbExecutor,
  credentialId: string,
  now: Date,
): Promise<{ thisMinute: number; previousDay: number }> {
  const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
  const dayAgo = new Date(minute.getTime() - 86_400_000);
  const { rows } = await sql<{ this_minute: number; previous_day: string | null }>`
    WITH bumped AS (
      INSERT INTO venue_credential_usage (credential_id, minute, uses)
      VALUES (${credentialId}::uuid, ${minute}, 1)
      ON CONFLICT (credential_id, minute) DO UPDATE SET uses = venue_credential_usage.uses + 1
      RETURNING uses
    )
    SELECT (SELECT uses FROM bumped) AS this_minute,
           (SELECT sum(uses) FROM venue_credential_usage
             WHERE credential_id = ${credentialId}::uuid AND minute >= ${dayAgo} AND minute < ${minute})
             AS previous_day`.execute(tx);
  const row = rows[0]!;
  return { thisMinute: Number(row.this_minute), previousDay: Number(row.previous_day ?? 0) };
}

/**
 * Records that the credential was used from `network`; true when the network is new to it and
 * it had been used from another network before (the first network of a credential is its own).
 */
export async function noteNetwork(
  tx: DbExecutor,
  credentialId: string,
  network: string,
  now: Date,
): Promise<{ isNew: boolean; known: number }> {
  const { rows } = await sql<{ inserted: boolean; known: string }>`
    WITH up AS (
      INSERT INTO venue_credential_networks (credential_id, network, first_seen_at, last_seen_at)
      VALUES (${credentialId}::uuid, ${network}, ${now}, ${now})
      ON CONFLICT (credential_id, network) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at
      RETURNING (xmax = 0) AS inserted
    )
    SELECT (SELECT inserted FROM up) AS inserted,
           (SELECT count(*) FROM venue_credential_networks
             WHERE credential_id = ${credentialId}::uuid AND network <> ${network}) AS known`.execute(tx);
  const row = rows[0]!;
  return { isNew: row.inserted, known: Number(row.known) };
}

/** Stamps the last use, and the burst alert when `burst` (once an hour at most): true when stamped. */
export async function stampUse(
  tx: DbExecutor,
  credentialId: string,
  now: Date,
  burst: boolean,
): Promise<boolean> {
  await tx
    .updateTable('venue_credentials')
    .set({ last_used_at: now })
    .where('id', '=', credentialId)
    .execute();
  if (!burst) return false;
  const hourAgo = new Date(now.getTime() - 3_600_000);
  const stamped = await tx
    .updateTable('venue_credentials')
    .set({ burst_alerted_at: now })
    .where('id', '=', credentialId)
    .where((eb) => eb.or([eb('burst_alerted_at', 'is', null), eb('burst_alerted_at', '<', hourAgo)]))
    .returning('id')
    .executeTakeFirst();
  return stamped !== undefined;
}

/** Retention: the client networks venue credentials were used from, not seen since `before`. */
export function deleteVenueCredentialNetworksSeenBefore(db: Db, before: Date): Promise<number> {
  return deleteInBatches(
    db,
    () => sql<{ one: number }>`
      DELETE FROM venue_credential_networks WHERE (credential_id, network) IN (
        SELECT credential_id, network FROM venue_credential_networks
        WHERE last_seen_at < ${before} LIMIT ${RETENTION_BATCH_SIZE})
      RETURNING 1 AS one`,
  );
}

/** Retention: the per-minute use counts of venue credentials before `before`. */
export function deleteVenueCredentialUsageBefore(db: Db, before: Date): Promise<number> {
  return deleteInBatches(
    db,
    () => sql<{ one: number }>`
      DELETE FROM venue_credential_usage WHERE (credential_id, minute) IN (
        SELECT credential_id, minute FROM venue_credential_usage WHERE minute < ${before} LIMIT ${RETENTION_BATCH_SIZE})
      RETURNING 1 AS one`,
  );
}

/**
 * A query for another module's statement: each Polymarket funder address named by a venue
 * credential, with the account and time of the first (`address`, `account_id`, `created_at`).
 */
export function firstCredentialPerFunderSql(): RawBuilder<unknown> {
  return sql`SELECT DISTINCT ON (funder) funder AS address, account_id, created_at
    FROM venue_credentials WHERE venue = 'polymarket' AND funder IS NOT NULL ORDER BY funder, created_at`;
}
