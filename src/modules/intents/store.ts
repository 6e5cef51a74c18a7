// The intents table: one row per admitted conversion or gas top-up (see migration 0028).

import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { DbExecutor } from '../../core/db/database.ts';
import type { PolicyRow } from '../policies/index.ts';
import type { Timestamp } from '../../core/db/schema.ts';

export type IntentKind = 'conversion' | 'gas_topup';
export type IntentStatus = 'planned' | 'executing' | 'filled' | 'cancelled' | 'aborted';

/** What the caller asked for, as admitted; `abort` is added when the executor stops. */
export interface IntentParams {
  chain_id: number;
  /** Lowercase addresses: registry tokens of the chain, or the native placeholder (gas top-up). */
  sell_token: string;
  buy_token: string;
  /** Base units of the sell token, as a decimal string. */
  sell_amount: string;
  max_slippage_bps: number;
  /** The venues the executor may use: the request's, or the policy's `execution.venues`. */
  venues: string[];
  /** The USD value the spend reservation holds, as a decimal string. */
  value_usd: string;
  abort?: { reason: string; detail: unknown };
}

export interface IntentsTable {
  id: string;
  account_id: string;
  wallet: string;
  chain_id: number;
  kind: IntentKind;
  status: IntentStatus;
  policy_version: number;
  policy_hash: string;
  params: unknown;
  report: unknown;
  value_micro_usd: string;
  reservation_id: string | null;
  fee_group_id: string | null;
  fee_micro_usd: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    intents: IntentsTable;
  }
}

/** An intent as the module uses it: the table's row with its json columns typed. */
export interface IntentRow extends Omit<Selectable<IntentsTable>, 'params' | 'report'> {
  params: IntentParams;
  report: Record<string, unknown>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Intent ids are UUIDs: anything else names no intent (and never reaches a uuid column). */
export const isIntentId = (value: string): boolean => UUID.test(value);

function toRow(r: {
  [K in keyof IntentsTable]: unknown;
}): IntentRow {
  return {
    ...(r as unknown as IntentRow),
    value_micro_usd: String(r.value_micro_usd),
    fee_micro_usd: String(r.fee_micro_usd),
    created_at: new Date(r.created_at as string | Date),
    updated_at: new Date(r.updated_at as string | Date),
  };
}

export async function insertIntent(tx: DbExecutor, row: IntentRow): Promise<void> {
  await tx
    .insertInto('intents')
    .values({ ...row, params: JSON.stringify(row.params), report: JSON.stringify(row.report) })
    .execute();
}

/** The account's intent, or null (another account's intent is not found). `lock` holds it for `tx`. */
export function findIntent(
  db: DbExecutor,
  accountId: string,
  id: string,
  lock = false,
): Promise<IntentRow | null> {
  return selectIntent(db, id, accountId, lock);
}

/**
 * The account's intent for `GET /v1/intents/{id}` and whether it ever waited for approvers (it has
 * an approval row), in one statement, so an ordinary intent is read in one round trip; null when
 * not found (another account's intent is not found).
 */
export async function findIntentToRead(
  db: DbExecutor,
  accountId: string,
  id: string,
): Promise<{ row: IntentRow; waitedForApproval: boolean } | null> {
  if (!isIntentId(id)) return null;
  const found = await db
    .selectFrom('intents')
    .selectAll('intents')
    .select((eb) =>
      eb
        .exists(
          eb
            .selectFrom('intent_approvals')
            .select('intent_approvals.intent_id')
            .whereRef('intent_approvals.intent_id', '=', 'intents.id'),
        )
        .as('waited_for_approval'),
    )
    .where('intents.id', '=', id)
    .where('intents.account_id', '=', accountId)
    .executeTakeFirst();
  if (!found) return null;
  const { waited_for_approval: waited, ...row } = found;
  return { row: toRow(row), waitedForApproval: Boolean(waited) };
}

/** The intent with this id, whatever its account (the executor's read), or null; `lock` holds it. */
export function findIntentById(db: DbExecutor, id: string, lock = false): Promise<IntentRow | null> {
  return selectIntent(db, id, null, lock);
}

async function selectIntent(
  db: DbExecutor,
  id: string,
  accountId: string | null,
  lock: boolean,
): Promise<IntentRow | null> {
  if (!isIntentId(id)) return null;
  let q = db.selectFrom('intents').selectAll().where('id', '=', id);
  if (accountId !== null) q = q.where('account_id', '=', accountId);
  if (lock) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row ? toRow(row) : null;
}

/** The wallet of the account's intent (the route guard's locator), or null. */
export async function intentWallet(db: DbExecutor, accountId: string, id: string): Promise<string | null> {
  if (!isIntentId(id)) return null;
  const row = await db
    .selectFrom('intents')
    .select('wallet')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row?.wallet ?? null;
}

/** Newest first; every wallet of the account when `wallet` is null. */
export async function listIntentRows(
  db: DbExecutor,
  accountId: string,
  wallet: string | null,
  limit: number,
  offset: number,
): Promise<IntentRow[]> {
  let q = db.selectFrom('intents').selectAll().where('account_id', '=', accountId);
  if (wallet !== null) q = q.where('wallet', '=', wallet);
  const rows = await q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map(toRow);
}

/**
 * The executor's claim: moves a planned intent to `executing`, or null when it is not planned
 * (any more: cancelled, or claimed by another worker). A conditional update, so a claim and a
 * cancel that race leave exactly one of them done.
 */
export async function claimPlannedIntent(db: DbExecutor, id: string, at: Date): Promise<IntentRow | null> {
  if (!isIntentId(id)) return null;
  const row = await db
    .updateTable('intents')
    .set({ status: 'executing', updated_at: at })
    .where('id', '=', id)
    .where('status', '=', 'planned')
    .returningAll()
    .executeTakeFirst();
  return row ? toRow(row) : null;
}

/**
 * Writes the intent's report (the executor's account of its run); with `onlyWhile`, only while the
 * intent has that status.
 */
export async function saveIntentReport(
  db: DbExecutor,
  id: string,
  report: unknown,
  at: Date,
  onlyWhile?: IntentStatus,
): Promise<void> {
  let q = db
    .updateTable('intents')
    .set({ report: JSON.stringify(report), updated_at: at })
    .where('id', '=', id);
  if (onlyWhile) q = q.where('status', '=', onlyWhile);
  await q.execute();
}

/** Moves a planned intent to `cancelled`; false when it is not planned (any more). */
export async function cancelPlannedIntent(
  tx: DbExecutor,
  accountId: string,
  id: string,
  at: Date,
): Promise<IntentRow | null> {
  const row = await tx
    .updateTable('intents')
    .set({ status: 'cancelled', updated_at: at })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('status', '=', 'planned')
    .returningAll()
    .executeTakeFirst();
  return row ? toRow(row) : null;
}

/**
 * Ends a planned intent `aborted` with `abort` in its params (one that never ran: an approval
 * that expired); null when it is not planned (any more).
 */
export async function endPlannedIntent(
  tx: DbExecutor,
  id: string,
  abort: { reason: string; detail: unknown },
  at: Date,
): Promise<IntentRow | null> {
  const row = await tx
    .updateTable('intents')
    .set({
      status: 'aborted',
      params: sql`params || jsonb_build_object('abort', ${JSON.stringify(abort)}::jsonb)`,
      updated_at: at,
    })
    .where('id', '=', id)
    .where('status', '=', 'planned')
    .returningAll()
    .executeTakeFirst();
  return row ? toRow(row) : null;
}

/** What admission reads before it writes, in one query (its first round trip). */
export interface AdmissionContext {
  /** The wallet's latest policy, or null when it has none. */
  policy: PolicyRow | null;
  /** The wallet's open (planned or executing) intents, counted up to the wallet's bound. */
  openIntents: number;
  /** The unfinished jobs named `job` up to the overall bound, when asked for (null otherwise). */
  openJobs: number | null;
}

/**
 * The wallet's latest policy, its open intents up to `bounds.perWallet` and (when `countJobs`)
 * the unfinished jobs named `job` up to `bounds.max`: one call of `purser_admission_context`
 * (migration 0029), whose plans the session keeps.
 */
export async function readAdmissionContext(
  db: DbExecutor,
  accountId: string,
  wallet: string,
  job: string,
  bounds: { perWallet: number; max: number },
  countJobs: boolean,
): Promise<AdmissionContext> {
  const [context] = await readAdmissionContexts(db, [{ accountId, wallet }], job, bounds, countJobs);
  return context!;
}

/**
 * readAdmissionContext for several wallets in one statement, in order; the jobs are counted
 * once, on the first.
 */
export async function readAdmissionContexts(
  db: DbExecutor,
  wallets: { accountId: string; wallet: string }[],
  job: string,
  bounds: { perWallet: number; max: number },
  countJobs: boolean,
): Promise<AdmissionContext[]> {
  const { rows } = await sql<{
    policy: PolicyRow | null;
    open_intents: string;
    open_jobs: string | null;
  }>`SELECT c.policy, c.open_intents, c.open_jobs
     FROM unnest(${wallets.map((w) => w.accountId)}::text[], ${wallets.map((w) => w.wallet)}::text[])
       WITH ORDINALITY AS k(account_id, wallet, n)
     CROSS JOIN LATERAL purser_admission_context(k.account_id, k.wallet, ${job}, ${bounds.perWallet}::int,
       CASE WHEN k.n = 1 THEN ${countJobs ? bounds.max : 0}::int ELSE 0 END) c
     ORDER BY k.n`.execute(db);
  return rows.map((row) => ({
    policy: row.policy ? { ...row.policy, created_at: new Date(row.policy.created_at) } : null,
    openIntents: Number(row.open_intents),
    openJobs: row.open_jobs === null ? null : Number(row.open_jobs),
  }));
}

/**
 * Ends an executing intent: its status, params and report, once. False when it is not executing
 * any more (another step ended it first).
 */
export async function endExecutingIntent(
  tx: DbExecutor,
  id: string,
  end: { status: IntentStatus; params: IntentParams; report: unknown; at: Date },
): Promise<boolean> {
  const updated = await tx
    .updateTable('intents')
    .set({
      status: end.status,
      params: JSON.stringify(end.params),
      report: JSON.stringify(end.report),
      updated_at: end.at,
    })
    .where('id', '=', id)
    .where('status', '=', 'executing')
    .returning('id')
    .executeTakeFirst();
  return updated !== undefined;
}

/** The status of each of these intents (an id without an intent is absent). */
export async function intentStatuses(
  db: DbExecutor,
  ids: readonly string[],
): Promise<Map<string, IntentStatus>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('intents')
    .select(['id', 'status'])
    .where('id', 'in', [...ids])
    .execute();
  return new Map(rows.map((r) => [r.id, r.status as IntentStatus]));
}

/** insertIntent as a SQL call (`purser_insert_intent`), for the fee's booking statement. */
export function intentCall(row: IntentRow): RawBuilder<unknown> {
  return sql`purser_insert_intent(${row.id}::uuid, ${row.account_id}, ${row.wallet}, ${row.chain_id}::int,
    ${row.kind}, ${row.status}, ${row.policy_version}::int, ${row.policy_hash}, ${JSON.stringify(row.params)}::jsonb,
    ${row.value_micro_usd}::bigint, ${row.reservation_id}, ${row.fee_group_id}, ${row.fee_micro_usd}::bigint,
    ${row.created_at}::timestamptz)`;
}

/** Intents not yet finished, by status (`planned`, `executing`): what the executor has before it. */
export async function openIntentCounts(db: DbExecutor): Promise<{ status: string; count: number }[]> {
  const rows = await sql<{ status: string; n: string }>`
    SELECT status, count(*) AS n FROM intents WHERE status IN ('planned', 'executing') GROUP BY status`.execute(
    db,
  );
  return rows.rows.map((r) => ({ status: r.status, count: Number(r.n) }));
}

/**
 * A subquery of intent ids, for other modules' queries about intents (`where(column, 'in', …)`):
 * those of `wallet`, and/or those not in `notStatus`.
 */
export function intentIdsWhere(db: DbExecutor, filter: { wallet?: string; notStatus?: IntentStatus }) {
  let q = db.selectFrom('intents').select('id');
  if (filter.wallet !== undefined) q = q.where('wallet', '=', filter.wallet.toLowerCase());
  if (filter.notStatus !== undefined) q = q.where('status', '<>', filter.notStatus);
  return q;
}
