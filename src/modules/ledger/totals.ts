// Sums of ledger entries for other modules' questions: a ledger account's totals per asset (the
// chain watcher's books), the entries of one kind of group (prediction-market fills), and the
// memos of one kind of group. The ledger module writes the SQL; the callers say what to count.

import { sql, type RawBuilder } from 'kysely';
import type { DbExecutor } from '../../core/db/database.ts';

export interface AccountTotalsFilter {
  /** Only entries of groups of this account. */
  accountId?: string;
  /**
   * A condition on the entry's group id that leaves the entry out when true, given the reference
   * to the group id (the chain watcher's bookings of transactions mined after a block).
   */
  excludeGroup?: (groupId: RawBuilder<string>) => RawBuilder<boolean>;
}

/** The entries of `ledgerAccount`, summed per asset. */
export async function ledgerTotalsByAsset(
  db: DbExecutor,
  ledgerAccount: string,
  filter: AccountTotalsFilter = {},
): Promise<Map<string, bigint>> {
  const groupId = sql.ref<string>('e.group_id');
  const ofAccount =
    filter.accountId === undefined
      ? sql``
      : sql`AND EXISTS (SELECT 1 FROM ledger_groups g WHERE g.id = e.group_id AND g.account_id = ${filter.accountId})`;
  const excluded = filter.excludeGroup === undefined ? sql`` : sql`AND NOT (${filter.excludeGroup(groupId)})`;
  const rows = await sql<{ asset: string; total: string }>`
    SELECT e.asset, sum(e.amount)::text AS total
    FROM ledger_entries e
    WHERE e.ledger_account = ${ledgerAccount} ${ofAccount} ${excluded}
    GROUP BY e.asset`.execute(db);
  return new Map(rows.rows.map((r) => [r.asset, BigInt(r.total)]));
}

/**
 * The entries of `ledgerAccount` in `asset` within the account's groups of `kind`, summed: in all
 * of them, and in those whose memo has `memo.key = memo.value`.
 */
export async function kindEntryTotals(
  db: DbExecutor,
  q: {
    accountId: string;
    kind: string;
    ledgerAccount: string;
    asset: string;
    memo: { key: string; value: string };
  },
): Promise<{ total: bigint; matching: bigint }> {
  const { rows } = await sql<{ total: string | null; matching: string | null }>`
    SELECT sum(e.amount)::text AS total,
           sum(e.amount) FILTER (WHERE g.memo->>${q.memo.key} = ${q.memo.value})::text AS matching
    FROM ledger_groups g JOIN ledger_entries e ON e.group_id = g.id
    WHERE g.account_id = ${q.accountId} AND g.kind = ${q.kind}
      AND e.ledger_account = ${q.ledgerAccount} AND e.asset = ${q.asset}`.execute(db);
  return { total: BigInt(rows[0]?.total ?? 0), matching: BigInt(rows[0]?.matching ?? 0) };
}

/** The memos of the account's groups of `kind`, in ledger order. */
export async function groupMemos(
  db: DbExecutor,
  accountId: string,
  kind: string,
): Promise<Record<string, unknown>[]> {
  const rows = await db
    .selectFrom('ledger_groups')
    .select('memo')
    .where('account_id', '=', accountId)
    .where('kind', '=', kind)
    .orderBy('seq')
    .execute();
  return rows.map(
    (r) => (typeof r.memo === 'string' ? JSON.parse(r.memo) : r.memo) as Record<string, unknown>,
  );
}
