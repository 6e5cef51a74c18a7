import { sql } from 'kysely';
import type { DbExecutor, Tx } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';

export interface ScreeningListsTable {
  list: string;
  /** A `date` column: read it through `publish_date::text` (the driver would make a local-time Date). */
  publish_date: string | null;
  record_count: number | null;
  address_count: number;
  source: string;
  synced_at: Timestamp;
}

export interface ScreeningAddressesTable {
  address: string;
  list: string;
  asset: string;
  entry_uid: string | null;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    screening_lists: ScreeningListsTable;
    screening_addresses: ScreeningAddressesTable;
  }
}

export interface StoredList {
  list: string;
  publishDate: string | null;
  recordCount: number | null;
  addressCount: number;
  source: string;
  syncedAt: Date;
}

export interface ListedAddress {
  /** Normalized: EVM addresses lowercased. */
  address: string;
  asset: string;
  entryUid: string | null;
}

export interface ReplaceListParameters {
  list: string;
  publishDate: string | null;
  recordCount: number | null;
  source: string;
  syncedAt: Date;
  addresses: ListedAddress[];
}

// Rows per INSERT: 4 parameters each, far below PostgreSQL's 65,535 bind parameters.
const INSERT_BATCH = 1000;

/**
 * Serializes writers of one list until the transaction ends, so two syncs never interleave
 * their delete and insert.
 */
export async function lockList(tx: Tx, list: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`purser.screening:${list}`}))`.execute(tx);
}

export async function getList(db: DbExecutor, list: string): Promise<StoredList | null> {
  const row = await db
    .selectFrom('screening_lists')
    .select(['list', 'record_count', 'address_count', 'source', 'synced_at'])
    .select(sql<string | null>`publish_date::text`.as('publish_date'))
    .where('list', '=', list)
    .executeTakeFirst();
  if (!row) return null;
  return {
    list: row.list,
    publishDate: row.publish_date,
    recordCount: row.record_count,
    addressCount: row.address_count,
    source: row.source,
    syncedAt: row.synced_at,
  };
}

/** Replaces the list's whole address set and its facts. Run it in a transaction after `lockList`. */
export async function replaceList(tx: Tx, params: ReplaceListParameters): Promise<void> {
  await tx
    .insertInto('screening_lists')
    .values({
      list: params.list,
      publish_date: params.publishDate,
      record_count: params.recordCount,
      address_count: params.addresses.length,
      source: params.source,
      synced_at: params.syncedAt,
    })
    .onConflict((oc) =>
      oc.column('list').doUpdateSet((eb) => ({
        publish_date: eb.ref('excluded.publish_date'),
        record_count: eb.ref('excluded.record_count'),
        address_count: eb.ref('excluded.address_count'),
        source: eb.ref('excluded.source'),
        synced_at: eb.ref('excluded.synced_at'),
      })),
    )
    .execute();
  await tx.deleteFrom('screening_addresses').where('list', '=', params.list).execute();
  for (let i = 0; i < params.addresses.length; i += INSERT_BATCH) {
    const batch = params.addresses.slice(i, i + INSERT_BATCH);
    await tx
      .insertInto('screening_addresses')
      .values(
        batch.map((a) => ({ address: a.address, list: params.list, asset: a.asset, entry_uid: a.entryUid })),
      )
      .execute();
  }
}

/** Whether the list was ever loaded and whether it lists the address, in one round trip. */
export async function lookupListed(
  db: DbExecutor,
  list: string,
  address: string,
): Promise<{ loaded: boolean; listed: boolean }> {
  const result = await sql<{ loaded: boolean; listed: boolean }>`
    SELECT EXISTS (SELECT 1 FROM screening_lists WHERE list = ${list}) AS loaded,
           EXISTS (SELECT 1 FROM screening_addresses WHERE list = ${list} AND address = ${address}) AS listed`.execute(
    db,
  );
  const row = result.rows[0];
  return { loaded: row?.loaded === true, listed: row?.listed === true };
}

/** The stored addresses of a list, for tests and operator tools. */
export async function listAddresses(db: DbExecutor, list: string): Promise<ListedAddress[]> {
  const rows = await db
    .selectFrom('screening_addresses')
    .select(['address', 'asset', 'entry_uid'])
    .where('list', '=', list)
    .orderBy('address')
    .orderBy('asset')
    .execute();
  return rows.map((r) => ({ address: r.address, asset: r.asset, entryUid: r.entry_uid }));
}
