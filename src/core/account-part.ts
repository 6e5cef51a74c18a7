// What each module tells the account's life cycle about the rows it keeps for one account: which
// of its tables hold them (and in which order they can be deleted), where the account export
// shows them, and what offboarding does with them. The export, the offboarding and the purge of
// development test accounts (src/lifecycle/) walk every module's part, so a table cannot be
// forgotten: a test checks the parts against every `account_id` column of the schema.

import { sql } from 'kysely';
import type { DbExecutor, Tx } from './db/database.ts';

/**
 * What POST /v1/account/offboard does with a table's rows of the account: `kept` (retained as
 * they are), `changed` (kept but revoked, cancelled, zeroed or compacted), `removed` (deleted in
 * the offboarding's transaction) or `scheduled` (deleted by a later sweep).
 */
export type OffboardFate = 'kept' | 'changed' | 'removed' | 'scheduled';

export interface AccountTable {
  readonly table: string;
  /** The column holding the account id. */
  readonly column: string;
  /** The export section showing the rows (a dotted path for a nested one), or why none does. */
  readonly exported: string | { readonly omitted: string };
  readonly offboard: OffboardFate;
}

/** What a module's export reads with: the export's snapshot and its bound. */
export interface AccountExportContext {
  readonly tx: Tx;
  readonly accountId: string;
  /** How many rows to read of each bounded list: the bound plus one, to notice a cut. */
  readonly fetch: number;
  /** Keeps the first `bound` rows of a newest-first list read with `fetch`, noting `name` when cut. */
  bounded<T>(name: string, rows: T[]): T[];
}

export interface AccountPart {
  readonly module: string;
  /** Every table of the module with rows of one account, children before the rows they reference. */
  readonly tables: readonly AccountTable[];
  /** The module's top-level sections of GET /v1/account/export. */
  exportSections?(ctx: AccountExportContext): Promise<Record<string, unknown>>;
}

/**
 * Deletes the account's rows from each of the part's tables, in order. Only for the purge of test
 * accounts, inside its transaction with `purser.retention` on (the append-only guards allow it).
 */
export async function deleteAccountRows(tx: DbExecutor, part: AccountPart, accountId: string): Promise<void> {
  for (const { table, column } of part.tables)
    await sql`DELETE FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ${accountId}`.execute(tx);
}

/** An instant as ISO 8601 (drivers give a Date, or a string for some types). */
export function isoTime(value: Date | string): string {
  return new Date(value).toISOString();
}

export function isoTimeOrNull(value: Date | string | null): string | null {
  return value === null ? null : isoTime(value);
}

/** A json column's value, parsed when the driver returned its text. */
export function jsonColumn(value: unknown): unknown {
  return typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
}
