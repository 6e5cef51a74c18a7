// The auto-top-up tables (migration 0013): each account's rule and its quiver of arrows.
// Every function filters on the account, except the sweeps (expiry, settling arrows), which
// return the account of each row they touch.

import { sql, type ColumnType, type Selectable } from 'kysely';
import { lockUntilCommit, type DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';

type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>;
type Bigint = ColumnType<string, string | bigint, string | bigint>;

export type ArrowStatus = 'ready' | 'settling' | 'settled' | 'failed' | 'expired';

export interface AutoTopupRulesTable {
  account_id: string;
  threshold_micro: Bigint;
  max_per_month: number;
  suspended: ColumnType<boolean, boolean | undefined, boolean>;
  consecutive_failures: ColumnType<number, number | undefined, number>;
  quiet_until: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AutoTopupArrowsTable {
  id: string;
  account_id: string;
  chain_id: number;
  token: string;
  payer: string;
  payee: string;
  value: Bigint;
  valid_after: Bigint;
  valid_before: Bigint;
  nonce: string;
  signature: string | null;
  status: ArrowStatus;
  settlement_id: string | null;
  tx_hash: string | null;
  fail_reason: string | null;
  fired_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    auto_topup_rules: AutoTopupRulesTable;
    auto_topup_arrows: AutoTopupArrowsTable;
  }
}

export type RuleRow = Selectable<AutoTopupRulesTable>;
export type ArrowRow = Selectable<AutoTopupArrowsTable>;

export async function findRule(
  db: DbExecutor,
  accountId: string,
  options: { forUpdate?: boolean } = {},
): Promise<RuleRow | undefined> {
  let q = db.selectFrom('auto_topup_rules').selectAll().where('account_id', '=', accountId);
  if (options.forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** Writes the rule; a write re-enables a suspended rule and forgets its failures and quiet period. */
export async function upsertRule(
  db: DbExecutor,
  accountId: string,
  thresholdMicro: bigint,
  maxPerMonth: number,
  now: Date,
): Promise<{ rule: RuleRow; previous: RuleRow | undefined }> {
  const previous = await findRule(db, accountId, { forUpdate: true });
  const rule = await db
    .insertInto('auto_topup_rules')
    .values({
      account_id: accountId,
      threshold_micro: thresholdMicro.toString(),
      max_per_month: maxPerMonth,
      suspended: false,
      consecutive_failures: 0,
      quiet_until: null,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet({
        threshold_micro: thresholdMicro.toString(),
        max_per_month: maxPerMonth,
        suspended: false,
        consecutive_failures: 0,
        quiet_until: null,
        updated_at: now,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
  return { rule, previous };
}

/** Notes that the month's allowance is used up until `until` (the trigger then stays quiet). */
export async function setQuietUntil(
  db: DbExecutor,
  accountId: string,
  until: Date,
  now: Date,
): Promise<void> {
  await db
    .updateTable('auto_topup_rules')
    .set({ quiet_until: until, updated_at: now })
    .where('account_id', '=', accountId)
    .execute();
}

/** Counts one more failed arrow; suspends the rule at `suspendAt`. Returns the rule after, if any. */
export async function countFailure(
  db: DbExecutor,
  accountId: string,
  suspendAt: number,
  now: Date,
): Promise<{ consecutive_failures: number; suspended: boolean; newlySuspended: boolean } | undefined> {
  const before = await findRule(db, accountId, { forUpdate: true });
  if (!before) return undefined;
  const failures = before.consecutive_failures + 1;
  const suspended = before.suspended || failures >= suspendAt;
  await db
    .updateTable('auto_topup_rules')
    .set({ consecutive_failures: failures, suspended, updated_at: now })
    .where('account_id', '=', accountId)
    .execute();
  return { consecutive_failures: failures, suspended, newlySuspended: suspended && !before.suspended };
}

/** A settled arrow ends a run of failures. */
export async function resetFailures(db: DbExecutor, accountId: string, now: Date): Promise<void> {
  await db
    .updateTable('auto_topup_rules')
    .set({ consecutive_failures: 0, updated_at: now })
    .where('account_id', '=', accountId)
    .where('consecutive_failures', '<>', 0)
    .execute();
}

/** Serializes the intake of one account's arrows (the quiver cap), in the caller's transaction. */
export async function lockQuiver(db: DbExecutor, accountId: string): Promise<void> {
  await lockUntilCommit(db, `purser.auto_topup:${accountId}`);
}

export async function findArrowByNonce(
  db: DbExecutor,
  chainId: number,
  token: string,
  payer: string,
  nonce: string,
): Promise<ArrowRow | undefined> {
  return db
    .selectFrom('auto_topup_arrows')
    .selectAll()
    .where('chain_id', '=', chainId)
    .where('token', '=', token)
    .where('payer', '=', payer)
    .where('nonce', '=', nonce)
    .executeTakeFirst();
}

export interface NewArrowRow {
  id: string;
  account_id: string;
  chain_id: number;
  token: string;
  payer: string;
  payee: string;
  value: bigint;
  valid_after: bigint;
  valid_before: bigint;
  nonce: string;
  signature: string;
}

/** Inserts arrows; returns those inserted (an authorization already in a quiver is skipped). */
export async function insertArrows(db: DbExecutor, rows: NewArrowRow[], now: Date): Promise<ArrowRow[]> {
  if (rows.length === 0) return [];
  return db
    .insertInto('auto_topup_arrows')
    .values(
      rows.map((r) => ({
        ...r,
        value: r.value.toString(),
        valid_after: r.valid_after.toString(),
        valid_before: r.valid_before.toString(),
        status: 'ready' as const,
        created_at: now,
        updated_at: now,
      })),
    )
    .onConflict((oc) => oc.columns(['chain_id', 'token', 'payer', 'nonce']).doNothing())
    .returningAll()
    .execute();
}

export interface QuiverCounts {
  ready: number;
  settling: number;
  settled: number;
  failed: number;
  expired: number;
  readyValueMicro: bigint;
}

export async function quiverCounts(db: DbExecutor, accountId: string): Promise<QuiverCounts> {
  const rows = await db
    .selectFrom('auto_topup_arrows')
    .select([
      'status',
      sql<number>`count(*)::int`.as('n'),
      sql<string>`coalesce(sum(value), 0)::text`.as('total'),
    ])
    .where('account_id', '=', accountId)
    .groupBy('status')
    .execute();
  const counts: QuiverCounts = {
    ready: 0,
    settling: 0,
    settled: 0,
    failed: 0,
    expired: 0,
    readyValueMicro: 0n,
  };
  for (const r of rows) {
    counts[r.status] = r.n;
    if (r.status === 'ready') counts.readyValueMicro = BigInt(r.total);
  }
  return counts;
}

/** Arrows that left the quiver since `since` and moved (or may move) money: the month's usage. */
export async function countFiredSince(db: DbExecutor, accountId: string, since: Date): Promise<number> {
  const row = await db
    .selectFrom('auto_topup_arrows')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('account_id', '=', accountId)
    .where('status', 'in', ['settling', 'settled'])
    .where('fired_at', '>=', since)
    .executeTakeFirstOrThrow();
  return row.n;
}

/**
 * The account's arrows for display: every ready or settling one in firing order (soonest
 * validBefore first), then the `finishedLimit` most recently finished ones.
 */
export async function listArrows(
  db: DbExecutor,
  accountId: string,
  finishedLimit: number,
): Promise<ArrowRow[]> {
  // One after the other: `db` may be a transaction (one connection).
  const open = await db
    .selectFrom('auto_topup_arrows')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('status', 'in', ['ready', 'settling'])
    .orderBy('status', 'desc')
    .orderBy('valid_before')
    .orderBy('id')
    .execute();
  const finished = await db
    .selectFrom('auto_topup_arrows')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('status', 'in', ['settled', 'failed', 'expired'])
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(finishedLimit)
    .execute();
  return [...open, ...finished];
}

/** Every arrow of the account, newest first, at most `limit` (the account export). */
export async function listAllArrows(db: DbExecutor, accountId: string, limit: number): Promise<ArrowRow[]> {
  return db
    .selectFrom('auto_topup_arrows')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** The next arrow to fire: ready, valid past `validPast` (unix seconds), soonest validBefore first. */
export async function nextReadyArrow(
  db: DbExecutor,
  accountId: string,
  validPast: bigint,
): Promise<ArrowRow | undefined> {
  return db
    .selectFrom('auto_topup_arrows')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('status', '=', 'ready')
    .where('valid_before', '>', validPast.toString())
    .orderBy('valid_before')
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/** ready → settling; false when the arrow is no longer ready. */
export async function markArrowSettling(db: DbExecutor, id: string, now: Date): Promise<boolean> {
  const res = await db
    .updateTable('auto_topup_arrows')
    .set({ status: 'settling', fired_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'ready')
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

export async function setArrowSettlement(db: DbExecutor, id: string, settlementId: string): Promise<void> {
  await db
    .updateTable('auto_topup_arrows')
    .set({ settlement_id: settlementId })
    .where('id', '=', id)
    .where('settlement_id', 'is', null)
    .execute();
}

/** → settled, signature destroyed; returns the arrow, or undefined when it was settled already. */
export async function markArrowSettled(
  db: DbExecutor,
  accountId: string,
  id: string,
  settlementId: string,
  txHash: string,
  now: Date,
): Promise<ArrowRow | undefined> {
  return db
    .updateTable('auto_topup_arrows')
    .set({
      status: 'settled',
      signature: null,
      tx_hash: txHash,
      settlement_id: settlementId,
      fail_reason: null,
      fired_at: sql<Date>`coalesce(fired_at, ${now})`,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('status', '<>', 'settled')
    .returningAll()
    .executeTakeFirst();
}

/** ready | settling → failed, signature destroyed; undefined when it had ended already. */
export async function markArrowFailed(
  db: DbExecutor,
  id: string,
  reason: string,
  settlementId: string | null,
  now: Date,
): Promise<ArrowRow | undefined> {
  return db
    .updateTable('auto_topup_arrows')
    .set({
      status: 'failed',
      signature: null,
      fail_reason: reason.slice(0, 500),
      settlement_id: sql<string | null>`coalesce(settlement_id, ${settlementId})`,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('status', 'in', ['ready', 'settling'])
    .returningAll()
    .executeTakeFirst();
}

/** Ready arrows whose validBefore is at or before `nowSeconds` → expired, signatures destroyed. */
export async function expireReadyArrows(
  db: DbExecutor,
  nowSeconds: bigint,
  now: Date,
  limit: number,
): Promise<ArrowRow[]> {
  return db
    .updateTable('auto_topup_arrows')
    .set({ status: 'expired', signature: null, updated_at: now })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('auto_topup_arrows')
        .select('id')
        .where('status', '=', 'ready')
        .where('valid_before', '<=', nowSeconds.toString())
        .orderBy('valid_before')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .where('status', '=', 'ready')
    .returningAll()
    .execute();
}

/** Arrows being settled, oldest first (the sync step), optionally of one account. */
export async function listSettlingArrows(
  db: DbExecutor,
  limit: number,
  accountId?: string,
): Promise<ArrowRow[]> {
  let q = db.selectFrom('auto_topup_arrows').selectAll().where('status', '=', 'settling');
  if (accountId !== undefined) q = q.where('account_id', '=', accountId);
  return q.orderBy('updated_at').limit(limit).execute();
}

/** The distinct (chain, token) of the account's ready arrows. */
export async function readyArrowTokens(
  db: DbExecutor,
  accountId: string,
): Promise<Array<{ chain_id: number; token: string }>> {
  return db
    .selectFrom('auto_topup_arrows')
    .select(['chain_id', 'token'])
    .distinct()
    .where('account_id', '=', accountId)
    .where('status', '=', 'ready')
    .orderBy('chain_id')
    .orderBy('token')
    .execute();
}

/**
 * Deletes every ready arrow of the account (its signature with it) and returns them, soonest
 * validBefore first. Arrows being settled are left to their settlement.
 */
export async function deleteReadyArrows(db: DbExecutor, accountId: string): Promise<ArrowRow[]> {
  const rows = await db
    .deleteFrom('auto_topup_arrows')
    .where('account_id', '=', accountId)
    .where('status', '=', 'ready')
    .returningAll()
    .execute();
  return rows.sort((a, b) => {
    const [x, y] = [BigInt(a.valid_before), BigInt(b.valid_before)];
    return x < y ? -1 : x > y ? 1 : a.id.localeCompare(b.id);
  });
}
