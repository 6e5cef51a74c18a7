// Reads of the prepaid balances the ledger keeps beside its entries (table prepaid_balances): one
// account's, and all of them together (the prepaid float). The `…Sql` forms are expressions for
// callers that need them in one statement, hence one snapshot, with other modules' reads.

import { sql, type RawBuilder } from 'kysely';
import type { DbExecutor } from '../../core/db/database.ts';

export interface PrepaidBalance {
  /** The posted balance: minus the sum of the entries of `account:<id>:prepaid`. */
  balanceMicro: bigint;
  /** Reserved by pending holds on the balance; debits can spend only `balance − held`. */
  heldMicro: bigint;
}

/** The account's prepaid balance (zero when it was never topped up). */
export async function readPrepaidBalance(db: DbExecutor, accountId: string): Promise<PrepaidBalance> {
  const row = await db
    .selectFrom('prepaid_balances')
    .select(['balance_micro', 'held_micro'])
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return { balanceMicro: BigInt(row?.balance_micro ?? '0'), heldMicro: BigInt(row?.held_micro ?? '0') };
}

/** Every account's prepaid balance together, in micro-USD. */
export async function readPrepaidFloat(db: DbExecutor): Promise<bigint> {
  const row = await sql<{ total: string }>`SELECT ${prepaidFloatSql()} AS total`.execute(db);
  return BigInt(row.rows[0]?.total ?? '0');
}

/** An expression: the account's posted prepaid balance in micro-USD, as text (0 when none). */
export function prepaidBalanceSql(accountId: string): RawBuilder<string> {
  return sql<string>`(SELECT coalesce(max(balance_micro), 0) FROM prepaid_balances WHERE account_id = ${accountId})::text`;
}

/** An expression: every account's prepaid balance together in micro-USD, as text. */
export function prepaidFloatSql(): RawBuilder<string> {
  return sql<string>`(SELECT coalesce(sum(balance_micro), 0) FROM prepaid_balances)::text`;
}

/** The prepaid balances of those of `ids` that were ever topped up, by account id. */
export async function readPrepaidBalances(
  db: DbExecutor,
  ids: readonly string[],
): Promise<Map<string, bigint>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('prepaid_balances')
    .select(['account_id', 'balance_micro'])
    .where('account_id', 'in', [...ids])
    .execute();
  return new Map(rows.map((r) => [r.account_id, BigInt(r.balance_micro)]));
}
