// The statements module's table (migration 0014): which account generated which stored export.
// The ledger rows a statement reads belong to the ledger module and are only read (src/modules/ledger/statement-reads.ts).

import type { ObjectStore } from '../../adapters/object-store/port.ts';
import type { Timestamp } from '../../core/db/schema.ts';
import type { DbExecutor } from '../../core/db/database.ts';

export type StatementFormat = 'json' | 'csv';

export interface StatementExportsTable {
  account_id: string;
  /** `sha256:<hex>` of the exported bytes. */
  content_hash: string;
  format: StatementFormat;
  wallet: string;
  period: string;
  object_key: string;
  /** int8 as a decimal string. */
  bytes: string;
  first_seq: string | null;
  last_seq: string | null;
  created_at: Timestamp;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    statement_exports: StatementExportsTable;
  }
}

export interface StatementExportRecord {
  accountId: string;
  contentHash: string;
  format: StatementFormat;
  wallet: string;
  period: string;
  objectKey: string;
  bytes: number;
  firstSeq: number | null;
  lastSeq: number | null;
  createdAt: Date;
}

/** Records an export; one already recorded under the same hash is kept as it is. */
export async function recordStatementExport(db: DbExecutor, record: StatementExportRecord): Promise<void> {
  await db
    .insertInto('statement_exports')
    .values({
      account_id: record.accountId,
      content_hash: record.contentHash,
      format: record.format,
      wallet: record.wallet,
      period: record.period,
      object_key: record.objectKey,
      bytes: String(record.bytes),
      first_seq: record.firstSeq === null ? null : String(record.firstSeq),
      last_seq: record.lastSeq === null ? null : String(record.lastSeq),
      created_at: record.createdAt,
    })
    .onConflict((oc) => oc.columns(['account_id', 'content_hash']).doNothing())
    .execute();
}

/** The account's export with this content hash, or null (another account's is not found). */
export async function findStatementExport(
  db: DbExecutor,
  accountId: string,
  contentHash: string,
): Promise<StatementExportRecord | null> {
  const row = await db
    .selectFrom('statement_exports')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('content_hash', '=', contentHash)
    .executeTakeFirst();
  if (!row) return null;
  return {
    accountId: row.account_id,
    contentHash: row.content_hash,
    format: row.format,
    wallet: row.wallet,
    period: row.period,
    objectKey: row.object_key,
    bytes: Number(row.bytes),
    firstSeq: row.first_seq === null ? null : Number(row.first_seq),
    lastSeq: row.last_seq === null ? null : Number(row.last_seq),
    createdAt: new Date(row.created_at),
  };
}

/** Object keys of the account's exports, newest first, at most `limit`. */
export async function listStatementExportKeys(
  db: DbExecutor,
  accountId: string,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('statement_exports')
    .select('object_key')
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('object_key', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => r.object_key);
}

/** Accounts with statement exports, by id after `after` (null: from the first), at most `limit`. */
export async function accountsWithStatementExports(
  db: DbExecutor,
  after: string | null,
  limit: number,
): Promise<string[]> {
  let q = db
    .selectFrom('statement_exports')
    .select('account_id')
    .distinct()
    .orderBy('account_id')
    .limit(limit);
  if (after !== null) q = q.where('account_id', '>', after);
  return (await q.execute()).map((r) => r.account_id);
}

/**
 * Deletes the account's statement exports: each object from the object store first, then its row,
 * so a failure leaves the row for the next run (never an unlisted object). Objects are keyed by
 * account (`statements/<account_id>/…`), so no other account's export is touched. Works in
 * batches of `batch`; returns the rows deleted.
 */
export async function deleteStatementExportsOf(
  db: DbExecutor,
  objectStore: ObjectStore,
  accountId: string,
  batch: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await db
      .selectFrom('statement_exports')
      .select(['content_hash', 'object_key'])
      .where('account_id', '=', accountId)
      .orderBy('content_hash')
      .limit(batch)
      .execute();
    for (const row of rows) {
      await objectStore.delete(row.object_key);
      const deleted = await db
        .deleteFrom('statement_exports')
        .where('account_id', '=', accountId)
        .where('content_hash', '=', row.content_hash)
        .executeTakeFirst();
      total += Number(deleted.numDeletedRows);
    }
    if (rows.length < batch) return total;
  }
}
