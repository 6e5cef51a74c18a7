import type { ColumnType, Selectable } from 'kysely';
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
