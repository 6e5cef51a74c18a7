// What a statement reads from the ledger (docs/statements.md): the ledger module's reads for the
// statements module. For account A and wallet W the
// statement includes:
//   - every entry of `wallet:<chain>:<W>` (each chain Purser serves) in a group of account A;
//   - the `account:<A>:prepaid` entries of A's fee groups (`fee.*`) tagged `memo.wallet = W`,
//     and of the reversals (refunds) of those groups.
// A group's `created_at` places it in a period. Both queries run in the caller's repeatable-read
// transaction, so the balance table and the streamed entries describe one ledger position.
// They use the ledger's indexes and `ledger_groups_memo_wallet` (migration 0014).

import { sql, type RawBuilder } from 'kysely';
import type { DbExecutor } from '../../core/db/database.ts';
import { prepaidAccount, walletAccount } from './chart.ts';

export interface StatementScope {
  accountId: string;
  /** Lowercase address. */
  wallet: string;
  /** `wallet:<chain>:<wallet>` for every chain. */
  walletAccounts: string[];
  /** `account:<accountId>:prepaid`: the side of the wallet's fees that the account pays. */
  prepaidAccount: string;
  start: Date;
  end: Date;
}

export function statementScope(
  accountId: string,
  wallet: string,
  period: { start: Date; end: Date },
  chainIds: readonly number[],
): StatementScope {
  const lower = wallet.toLowerCase();
  return {
    accountId,
    wallet: lower,
    walletAccounts: chainIds.map((chain) => walletAccount(chain, lower)),
    prepaidAccount: prepaidAccount(accountId),
    start: period.start,
    end: period.end,
  };
}

/** One (ledger account, asset) of the balance table. Amounts are signed, debit positive. */
export interface StatementBalanceRow {
  ledgerAccount: string;
  asset: string;
  /** The sum of the included entries before the period. */
  opening: bigint;
  /** The sum of the period's positive entries. */
  debits: bigint;
  /** Minus the sum of the period's negative entries (a magnitude). */
  credits: bigint;
  entryCount: number;
  /** Ledger positions of the period's first and last entry (null without entries). */
  firstSeq: number | null;
  lastSeq: number | null;
}

/** The fee groups charged for the wallet's actions, and the groups reversing them (refunds). */
function feeGroupsCte(scope: StatementScope): RawBuilder<unknown> {
  return sql`
    fee_groups AS MATERIALIZED (
      SELECT g.id FROM ledger_groups g
       WHERE g.account_id = ${scope.accountId} AND g.memo ? 'wallet'
         AND (g.memo ->> 'wallet') = ${scope.wallet} AND g.kind LIKE 'fee.%'
    ),
    fee_related AS MATERIALIZED (
      SELECT id FROM fee_groups
      UNION
      SELECT r.id FROM ledger_groups r JOIN fee_groups f ON r.reverses = f.id
       WHERE r.account_id = ${scope.accountId}
    )`;
}

interface BalanceQueryRow {
  ledger_account: string;
  asset: string;
  opening: string;
  debits: string;
  credits: string;
  entry_count: string;
  first_seq: string | null;
  last_seq: string | null;
}

/**
 * The balance table: per (ledger account, asset) with an included entry before the period's end,
 * the opening balance, the period's debits and credits, its entry count and seq range. Rows are
 * sorted by ledger account then asset (UTF-16 code units, the same on every database collation).
 *
 * The plan does not depend on table statistics (PGlite has no autovacuum, and a fresh server has
 * none yet): the wallet's entries are summed per group first, through the `(ledger_account, …)`
 * index and without a join, and each group's account and time are then looked up by its id
 * (`OFFSET 0` keeps the planner from turning that lookup into a scan of the account's groups per
 * entry, which it does when it believes the tables are empty).
 */
export async function readStatementBalances(
  db: DbExecutor,
  scope: StatementScope,
): Promise<StatementBalanceRow[]> {
  const result = await sql<BalanceQueryRow>`
    WITH ${feeGroupsCte(scope)},
    per_group AS MATERIALIZED (
      SELECT e.group_id, e.ledger_account, e.asset, sum(e.amount) AS total,
        coalesce(sum(e.amount) FILTER (WHERE e.amount > 0), 0) AS debits,
        coalesce(-sum(e.amount) FILTER (WHERE e.amount < 0), 0) AS credits,
        count(*) AS entries, min(e.seq) AS first_seq, max(e.seq) AS last_seq
        FROM ledger_entries e
       WHERE e.ledger_account = ANY(${scope.walletAccounts}::text[])
       GROUP BY e.group_id, e.ledger_account, e.asset
      UNION ALL
      SELECT e.group_id, e.ledger_account, e.asset, sum(e.amount),
        coalesce(sum(e.amount) FILTER (WHERE e.amount > 0), 0),
        coalesce(-sum(e.amount) FILTER (WHERE e.amount < 0), 0),
        count(*), min(e.seq), max(e.seq)
        FROM fee_related fr JOIN ledger_entries e ON e.group_id = fr.id
       WHERE e.ledger_account = ${scope.prepaidAccount}
       GROUP BY e.group_id, e.ledger_account, e.asset
    ),
    included AS (
      SELECT p.*, g.created_at
        FROM per_group p
        CROSS JOIN LATERAL (
          SELECT lg.account_id, lg.created_at FROM ledger_groups lg WHERE lg.id = p.group_id OFFSET 0
        ) g
       WHERE g.account_id = ${scope.accountId} AND g.created_at < ${scope.end}
    )
    SELECT ledger_account, asset,
      coalesce(sum(total) FILTER (WHERE created_at < ${scope.start}), 0)::text AS opening,
      coalesce(sum(debits) FILTER (WHERE created_at >= ${scope.start}), 0)::text AS debits,
      coalesce(sum(credits) FILTER (WHERE created_at >= ${scope.start}), 0)::text AS credits,
      coalesce(sum(entries) FILTER (WHERE created_at >= ${scope.start}), 0)::text AS entry_count,
      min(first_seq) FILTER (WHERE created_at >= ${scope.start})::text AS first_seq,
      max(last_seq) FILTER (WHERE created_at >= ${scope.start})::text AS last_seq
    FROM included
    GROUP BY ledger_account, asset`.execute(db);
  return result.rows
    .map((r) => ({
      ledgerAccount: r.ledger_account,
      asset: r.asset,
      opening: BigInt(r.opening),
      debits: BigInt(r.debits),
      credits: BigInt(r.credits),
      entryCount: Number(r.entry_count),
      firstSeq: r.first_seq === null ? null : Number(r.first_seq),
      lastSeq: r.last_seq === null ? null : Number(r.last_seq),
    }))
    .sort((a, b) => compareCodeUnits(a.ledgerAccount, b.ledgerAccount) || compareCodeUnits(a.asset, b.asset));
}

export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One batch of entries, already in their exported form. */
export interface StatementEntryBatch {
  /** The entries as canonical JSON objects (ENTRY_JSON), comma-separated, in seq order. */
  json: string;
  count: number;
  /** Ledger position of the batch's last entry: the keyset cursor of the next batch. */
  lastSeq: number;
}

interface BatchQueryRow {
  json: string | null;
  count: string;
  last_seq: string | null;
}

/**
 * One entry as RFC 8785 canonical JSON, built by the database: keys in sorted order, strings
 * escaped by `to_json` (the same escapes as JSON.stringify: \" \\ \b \f \n \r \t, other control
 * characters as lowercase \u00xx), `seq` an integer, `amount` a signed decimal string,
 * `created_at` ISO 8601 in UTC with milliseconds (what Date.toISOString writes). Rendering here
 * saves transferring ten columns per row: the batch arrives as one string.
 */
const ENTRY_JSON = sql`'{"amount":' || to_json(x.amount::text)::text
  || ',"asset":' || to_json(x.asset)::text
  || ',"created_at":"' || to_char(x.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'
  || ',"group_id":' || to_json(x.group_id)::text
  || ',"kind":' || to_json(x.kind)::text
  || ',"ledger_account":' || to_json(x.ledger_account)::text
  || ',"policy_hash":' || coalesce(to_json(x.policy_hash)::text, 'null')
  || ',"reverses":' || coalesce(to_json(x.reverses)::text, 'null')
  || ',"seq":' || x.seq::text
  || ',"settlement_id":' || to_json(x.settlement_id)::text
  || '}'`;

/**
 * The next at most `limit` included entries of the period after ledger position `afterSeq`, in
 * seq order (keyset paging: pass the batch's `lastSeq` to get the next), as one JSON fragment.
 * `rows` is the balance table: each (ledger account, asset) with entries in the period is read
 * through its own index range `(ledger_account, asset, seq)` between its first and last seq, so
 * a batch touches about `limit` entries per pair however long the ledger is. Null when no entry
 * is left.
 */
export async function readStatementEntryBatch(
  db: DbExecutor,
  scope: StatementScope,
  rows: readonly StatementBalanceRow[],
  afterSeq: number,
  limit: number,
): Promise<StatementEntryBatch | null> {
  const columns = sql`e.seq, e.ledger_account, e.asset, e.amount, g.id AS group_id, g.kind,
    g.settlement_id, g.policy_hash, g.reverses, g.created_at`;
  const inPeriod = sql`g.created_at >= ${scope.start} AND g.created_at < ${scope.end}`;
  let fees = false;
  const branches: RawBuilder<unknown>[] = [];
  for (const row of rows) {
    if (row.entryCount === 0 || row.firstSeq === null || row.lastSeq === null || row.lastSeq <= afterSeq) {
      continue;
    }
    const from = Math.max(afterSeq, row.firstSeq - 1);
    if (row.ledgerAccount === scope.prepaidAccount) {
      fees = true;
      branches.push(sql`(SELECT ${columns}
        FROM fee_related fr
        JOIN ledger_groups g ON g.id = fr.id
        JOIN ledger_entries e ON e.group_id = g.id
       WHERE e.ledger_account = ${row.ledgerAccount} AND e.asset = ${row.asset}
         AND e.seq > ${from} AND e.seq <= ${row.lastSeq} AND ${inPeriod}
       ORDER BY e.seq LIMIT ${limit})`);
    } else {
      // The group is looked up by id (OFFSET 0: see readStatementBalances), whatever the statistics say.
      branches.push(sql`(SELECT ${columns}
        FROM ledger_entries e
        CROSS JOIN LATERAL (
          SELECT lg.id, lg.kind, lg.settlement_id, lg.policy_hash, lg.reverses, lg.account_id, lg.created_at
            FROM ledger_groups lg WHERE lg.id = e.group_id OFFSET 0
        ) g
       WHERE e.ledger_account = ${row.ledgerAccount} AND e.asset = ${row.asset}
         AND e.seq > ${from} AND e.seq <= ${row.lastSeq}
         AND g.account_id = ${scope.accountId} AND ${inPeriod}
       ORDER BY e.seq LIMIT ${limit})`);
    }
  }
  if (branches.length === 0) return null;
  const result = await sql<BatchQueryRow>`
    ${fees ? sql`WITH ${feeGroupsCte(scope)}` : sql``}
    SELECT string_agg(${ENTRY_JSON}, ',' ORDER BY x.seq) AS json, count(*)::text AS count,
      max(x.seq)::text AS last_seq
    FROM (
      SELECT * FROM (${sql.join(branches, sql` UNION ALL `)}) merged ORDER BY seq LIMIT ${limit}
    ) x`.execute(db);
  const row = result.rows[0];
  if (!row || row.json === null || row.last_seq === null) return null;
  return { json: row.json, count: Number(row.count), lastSeq: Number(row.last_seq) };
}
