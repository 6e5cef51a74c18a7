// The sweeps that end an account's rows across modules (decisions.md, "Accounts and retention"):
// development test-fixture accounts deleted with everything they own, every module's part in
// turn (src/lifecycle/parts.ts), and the statement exports of offboarded accounts.

import { sql } from 'kysely';
import type { ObjectStore } from '../adapters/object-store/port.ts';
import type { PurserEnv } from '../config.ts';
import { deleteAccountRows } from '../core/account-part.ts';
import type { Clock } from '../core/clock.ts';
import { type Db, withTransaction } from '../core/db/database.ts';
import { offboardedAmong, testAccountsCreatedBefore } from '../modules/account/store.ts';
import { accountsWithStatementExports, deleteStatementExportsOf } from '../modules/statements/index.ts';
import { accountParts } from './parts.ts';

const DAY_MS = 86_400_000;
/** Development test-fixture accounts, with everything they own. */
export const TEST_ACCOUNT_RETENTION_MS = 7 * DAY_MS;
/** Test-fixture accounts deleted per run (each in its own transaction). */
export const TEST_ACCOUNT_BATCH = 50;
/** Statement exports handled per batch (one object delete each), and accounts looked at per page. */
export const STATEMENT_EXPORT_BATCH = 100;

/**
 * Development test-fixture accounts created more than 7 days ago, deleted with everything they
 * own (ledger, events, policies and audit facts included): each account in ONE transaction with
 * `purser.retention` on, at most `TEST_ACCOUNT_BATCH` accounts per run. Does nothing outside
 * development (production never sets the flag; this guards it anyway). Returns the ids deleted.
 */
export async function purgeTestAccounts(db: Db, clock: Clock, env: PurserEnv): Promise<string[]> {
  if (env !== 'development') return [];
  const before = new Date(clock.now().getTime() - TEST_ACCOUNT_RETENTION_MS);
  const parts = accountParts();
  const deleted: string[] = [];
  for (const id of await testAccountsCreatedBefore(db, before, TEST_ACCOUNT_BATCH)) {
    const gone = await withTransaction(db, async (tx) => {
      // Re-read under a row lock: a concurrent sweep may have taken it already.
      if ((await testAccountsCreatedBefore(tx, before, 1, { id })).length === 0) return false;
      // The one path through the append-only guards; SET LOCAL ends with the transaction.
      await sql`SET LOCAL purser.retention = 'on'`.execute(tx);
      for (const part of parts) await deleteAccountRows(tx, part, id);
      return true;
    });
    if (gone) deleted.push(id);
  }
  return deleted;
}

/**
 * Statement exports of offboarded accounts: the statements module deletes each object, then its
 * row. Without an object store configured nothing is deleted (the rows still name the objects).
 * The account export's `statements_manifest.keys` is empty afterwards. Returns the rows deleted.
 */
export async function purgeOffboardedStatementExports(
  db: Db,
  objectStore: ObjectStore | undefined,
): Promise<number> {
  if (!objectStore) return 0;
  let total = 0;
  let after: string | null = null;
  for (;;) {
    const page = await accountsWithStatementExports(db, after, STATEMENT_EXPORT_BATCH);
    for (const accountId of await offboardedAmong(db, page))
      total += await deleteStatementExportsOf(db, objectStore, accountId, STATEMENT_EXPORT_BATCH);
    if (page.length < STATEMENT_EXPORT_BATCH) return total;
    after = page[page.length - 1]!;
  }
}
