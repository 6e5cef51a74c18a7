import { sql, type ColumnType, type RawBuilder, type Selectable } from 'kysely';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';

export interface AccountsTable {
  id: string;
  address: string;
  kind: ColumnType<string, string | undefined, string>;
  is_test_fixture: boolean;
  contact: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  offboarded_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    accounts: AccountsTable;
  }
}

export type AccountRow = Selectable<AccountsTable>;

export async function findAccountByAddress(db: DbExecutor, address: string): Promise<AccountRow | undefined> {
  return db
    .selectFrom('accounts')
    .selectAll()
    .where('address', '=', address.toLowerCase())
    .executeTakeFirst();
}

export async function findAccountById(db: DbExecutor, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Returns the account of an address, creating it on first sign-in. `created` tells whether this
 * call made it; concurrent first sign-ins of one address end with one row.
 */
export async function findOrCreateAccount(
  db: DbExecutor,
  row: { id: string; address: string; isTestFixture: boolean; createdAt: Date },
): Promise<{ account: AccountRow; created: boolean }> {
  const inserted = await db
    .insertInto('accounts')
    .values({
      id: row.id,
      address: row.address.toLowerCase(),
      is_test_fixture: row.isTestFixture,
      created_at: row.createdAt,
    })
    .onConflict((oc) => oc.column('address').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { account: inserted, created: true };
  const existing = await findAccountByAddress(db, row.address);
  if (!existing) throw new Error('account vanished between insert and read');
  return { account: existing, created: false };
}

/** The account's row, locked for the caller's transaction. */
export async function lockAccount(tx: DbExecutor, id: string): Promise<AccountRow | undefined> {
  return tx.selectFrom('accounts').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Offboarding: the contact is scrubbed and the account marked retired at `now`. */
export async function retireAccount(tx: DbExecutor, id: string, now: Date): Promise<void> {
  await tx.updateTable('accounts').set({ contact: null, offboarded_at: now }).where('id', '=', id).execute();
}

/** Development test-fixture accounts created before `before`, oldest first; `lock` re-reads one under a row lock. */
export async function testAccountsCreatedBefore(
  db: DbExecutor,
  before: Date,
  limit: number,
  lock?: { id: string },
): Promise<string[]> {
  let q = db
    .selectFrom('accounts')
    .select('id')
    .where('is_test_fixture', '=', true)
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit);
  if (lock) q = q.where('id', '=', lock.id).forUpdate();
  return (await q.execute()).map((r) => r.id);
}

/** Those of `ids` whose account was offboarded. */
export async function offboardedAmong(db: DbExecutor, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('accounts')
    .select('id')
    .where('id', 'in', ids)
    .where('offboarded_at', 'is not', null)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * The account's address and offboarding time as scalar subqueries on `idColumn` (a qualified
 * column holding an account id, such as `sessions.account_id`), for another module's select that
 * needs them in the same round trip (the guard's credential lookup).
 */
export function accountColumns(db: DbExecutor, idColumn: `${string}.account_id`) {
  const of = () => db.selectFrom('accounts').where('accounts.id', '=', sql.ref<string>(idColumn));
  return {
    // The row exists: the id column references it.
    address: of().select('accounts.address').$asScalar().$notNull().as('address'),
    offboardedAt: of().select('accounts.offboarded_at').$asScalar().as('offboarded_at'),
  };
}

/** A query for another module's statement: the account of `address` (`address`, `account_id`, `created_at`). */
export function accountOfAddressSql(address: string): RawBuilder<unknown> {
  return sql`SELECT address, id AS account_id, created_at FROM accounts WHERE address = ${address.toLowerCase()}`;
}

/**
 * A page of accounts, newest first (created_at, then id): those after the account `cursor` names
 * (null: from the newest), at most `limit`. The operator's list.
 */
export async function accountsPage(
  db: DbExecutor,
  cursor: string | null,
  limit: number,
): Promise<AccountRow[]> {
  let q = db
    .selectFrom('accounts')
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit);
  if (cursor !== null)
    q = q.where(
      sql<boolean>`(created_at, id) < (SELECT a.created_at, a.id FROM accounts a WHERE a.id = ${cursor})`,
    );
  return q.execute();
}
