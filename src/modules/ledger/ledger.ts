// Booking entry groups. A group is written by one call of the SQL function purser_ledger_post
// (migration 0009): one round trip that checks the settlement identity, moves the prepaid balance
// rows it touches in the statements that check them, and inserts the group and its entries. The
// entries balance per asset: checked here before the call and by the database's statement trigger.

import { createHash } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { newId } from '../../core/ids.ts';
import { isAsset, isLedgerAccount, prepaidOwner, USD } from './chart.ts';

/** One entry: `amount` in the asset's base units, debit positive and credit negative. */
export interface LedgerEntryInput {
  account: string;
  asset: string;
  amount: bigint;
}

/** The two entries that move `amount` of `asset`: debit `debit`, credit `credit`. */
export function transfer(debit: string, credit: string, asset: string, amount: bigint): LedgerEntryInput[] {
  return [
    { account: debit, asset, amount },
    { account: credit, asset, amount: -amount },
  ];
}

export interface PostGroupParameters {
  /**
   * The booking's identity (a fee's request, a venue fill id, `tx:<hash>:<log index>`, an
   * authorization nonce): booked once. The prefix `hold:` belongs to posted holds.
   */
  settlementId: string;
  /** The account whose action this is; null for platform-only bookings. */
  accountId: string | null;
  /** What the booking is: `fee.<product>`, `topup`, `fill`, `reversal`, … */
  kind: string;
  entries: LedgerEntryInput[];
  /** The active policy hash (`sha256:<hex>`) when the booking comes from a policed action. */
  policyHash?: string | null;
  /** Free-form context (no secrets). */
  memo?: Record<string, unknown>;
  /** The group's id (`lgr_…`), when the caller must name it before booking (default: a new one). */
  groupId?: string;
  /**
   * SQL function calls of other modules (an event, an audit fact, the row the fee pays for: see
   * `eventCall`, `auditCall`) evaluated in the booking's own statement, only when the group is
   * newly booked: a metered write in one round trip. Not evaluated on a replay, a conflict or
   * `insufficient`.
   */
  then?: RawBuilder<unknown>[];
}

export type PostGroupResult =
  | {
      ok: true;
      groupId: string;
      /** The ledger position of the group. */
      seq: bigint;
      /** The settlement was booked before with the same entries: nothing new was written. */
      replayed: boolean;
      /** The prepaid balance after the booking, when it touched one (null on a replay). */
      prepaid: { accountId: string; balanceMicro: bigint } | null;
    }
  /** The settlement identity (or the reversal of this group) was booked with other entries. */
  | { ok: false; reason: 'conflict'; groupId: string }
  /** A prepaid balance would go below zero: nothing was written. `availableMicro` excludes holds. */
  | { ok: false; reason: 'insufficient'; accountId: string; availableMicro: bigint };

/** A booking the ledger refuses outright (a programming error, not a business outcome). */
export class LedgerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LedgerError';
  }
}

const KIND = /^[a-z][a-z0-9_.]{0,63}$/;
const POLICY_HASH = /^sha256:[0-9a-f]{64}$/;
const MAX_AMOUNT = 10n ** 78n - 1n;

/** The entries' problems (empty when the group may be booked). Exported for the property tests. */
export function groupProblems(params: PostGroupParameters): string[] {
  const problems: string[] = [];
  if (params.settlementId.length === 0 || params.settlementId.length > 200) {
    problems.push('the settlement id must have 1 to 200 characters');
  }
  if (params.settlementId.startsWith('hold:')) problems.push('settlement ids `hold:…` belong to holds');
  if (!KIND.test(params.kind)) problems.push(`bad kind ${JSON.stringify(params.kind)}`);
  if (params.policyHash != null && !POLICY_HASH.test(params.policyHash)) problems.push('bad policy hash');
  if (params.entries.length < 2) problems.push('a group has at least two entries');
  const sums = new Map<string, bigint>();
  for (const e of params.entries) {
    if (!isLedgerAccount(e.account)) problems.push(`unknown ledger account ${JSON.stringify(e.account)}`);
    if (!isAsset(e.asset)) problems.push(`unknown asset ${JSON.stringify(e.asset)}`);
    if (e.amount === 0n) problems.push('an entry amount is never zero');
    if (e.amount > MAX_AMOUNT || e.amount < -MAX_AMOUNT) problems.push('an entry amount is out of range');
    const owner = prepaidOwner(e.account);
    if (owner !== null) {
      if (e.asset !== USD) problems.push('a prepaid balance holds only USD');
      if (owner !== params.accountId)
        problems.push('a prepaid balance moves only in its own account’s groups');
    }
    sums.set(e.asset, (sums.get(e.asset) ?? 0n) + e.amount);
  }
  for (const [asset, sum] of sums) {
    if (sum !== 0n) problems.push(`the entries do not balance in ${asset}: they sum to ${sum}`);
  }
  return problems;
}

/** SHA-256 of the account and the sorted entries: a replay must match it exactly. */
export function groupFingerprint(accountId: string | null, entries: LedgerEntryInput[]): string {
  const rows = entries
    .map((e) => `${e.account}\u0000${e.asset}\u0000${e.amount}`)
    .sort()
    .join('\n');
  return createHash('sha256')
    .update(`${accountId ?? ''}\n${rows}`)
    .digest('hex');
}

interface PostRow {
  outcome: string;
  group_id: string | null;
  group_seq: string | null;
  prepaid_account: string | null;
  prepaid_balance: string | null;
}

/**
 * Books a group of entries in the caller's transaction (one round trip). Refuses (throws
 * LedgerError, nothing written) a group that does not balance per asset or names an unknown
 * account or asset. Booking a settlement identity again with the same entries answers ok with
 * `replayed`; with other entries, `conflict`. A debit beyond a prepaid balance answers
 * `insufficient` and writes nothing.
 */
export function postGroup(
  tx: DbExecutor,
  clock: Clock,
  params: PostGroupParameters,
): Promise<PostGroupResult> {
  return book(tx, clock, params, null);
}

async function book(
  tx: DbExecutor,
  clock: Clock,
  params: PostGroupParameters,
  reverses: string | null,
): Promise<PostGroupResult> {
  const post = postCall(params, clock.now(), reverses);
  const then = params.then ?? [];
  const result =
    then.length === 0
      ? await sql<PostRow>`SELECT outcome, group_id, group_seq, prepaid_account, prepaid_balance FROM ${post}`.execute(
          tx,
        )
      : // The booking first (a materialized CTE), then the calls, only for a new booking.
        await sql<PostRow>`
          WITH post AS MATERIALIZED (SELECT * FROM ${post})
          SELECT outcome, group_id, group_seq, prepaid_account, prepaid_balance, ${thenFacts(then)} AS facts
          FROM post`.execute(tx);
  return postResult(result.rows[0]);
}

/** The call of purser_ledger_post booking `params` (refused here when the group is malformed). */
function postCall(params: PostGroupParameters, at: Date, reverses: string | null): RawBuilder<unknown> {
  const problems = groupProblems(params);
  if (problems.length > 0) throw new LedgerError(`ledger group refused: ${problems.join('; ')}`);
  const groupId = params.groupId ?? newId('lgr');
  return sql`purser_ledger_post(${groupId}, ${params.settlementId},
      ${groupFingerprint(params.accountId, params.entries)}, ${params.accountId}, ${params.kind},
      ${params.policyHash ?? null}, ${reverses}, ${JSON.stringify(params.memo ?? {})}::jsonb,
      ${at}::timestamptz,
      ${params.entries.map((e) => e.account)}::text[], ${params.entries.map((e) => e.asset)}::text[],
      ${params.entries.map((e) => e.amount.toString())}::numeric[])`;
}

/** The `then` calls as one select-list expression, evaluated only on the row of a new booking. */
function thenFacts(then: RawBuilder<unknown>[]): RawBuilder<unknown> {
  if (then.length === 0) return sql`NULL::text[]`;
  return sql`CASE WHEN outcome = 'ok' THEN ARRAY[${sql.join(then.map((c) => sql`(${c})::text`))}] END`;
}

/** One booking of a batch: the group and the time it is booked at (its `created_at`). */
export interface BatchedGroup {
  params: PostGroupParameters;
  at: Date;
  guard?: BookingGuard;
}

/**
 * SQL calls around one booking of a batch (an Idempotency-Key carried in the booking's own
 * statement). `before(wait)` runs first and returns true, or raises to refuse the booking: the
 * whole statement then fails and writes nothing. Unless `wait`, it must not wait for a lock (it
 * fails with lock_not_available, 55P03, instead): the batcher's statements must not stall; the
 * batcher asks for a waiting attempt, alone and outside its batches, only after that failure.
 * `unlessBooked` runs when this statement did not book the group (any outcome but `ok`).
 */
export interface BookingGuard {
  before(wait: boolean): RawBuilder<unknown>;
  unlessBooked: RawBuilder<unknown>;
}

/**
 * Books several groups in ONE statement (one round trip, and one commit when `db` is not in a
 * transaction): each group exactly as postGroup would book it, with its own outcome, in the order
 * given, its `then` calls right after its own booking. A group that is `insufficient` or a
 * `conflict` writes nothing and does not stop the others. An error (a refused row, a deadlock)
 * aborts the whole statement: nothing of any group is written. Callers that run batches
 * concurrently pass the groups sorted by account, so batches take row locks in one order.
 * Malformed groups are refused (LedgerError) before anything is sent.
 */
export async function postGroups(
  db: DbExecutor,
  batch: BatchedGroup[],
  guardsWait = false,
): Promise<PostGroupResult[]> {
  if (batch.length === 0) return [];
  const posts = batch.map(({ params, at, guard }, i) => {
    const post = postCall(params, at, null);
    const cte = sql.raw(`b${i}`);
    if (!guard) return sql`${cte} AS MATERIALIZED (SELECT * FROM ${post})`;
    // The guard first: the booking is a LATERAL subquery on its result, so it runs after it, and
    // (behind OFFSET 0) only when it returned true.
    return sql`${cte} AS MATERIALIZED (
      SELECT p.* FROM (SELECT (${guard.before(guardsWait)}) AS go OFFSET 0) g,
        LATERAL (SELECT * FROM ${post} WHERE g.go OFFSET 0) p)`;
  });
  // UNION ALL reads its branches in order, so group i is booked (and its calls made) before i + 1.
  const rows = batch.map(
    ({ params, guard }, i) =>
      sql`SELECT ${sql.lit(i)}::int AS i, outcome, group_id, group_seq, prepaid_account, prepaid_balance,
            ${thenFacts(params.then ?? [])} AS facts,
            ${guard ? sql`CASE WHEN outcome <> 'ok' THEN (${guard.unlessBooked})::text END` : sql`NULL::text`} AS unbooked
          FROM ${sql.raw(`b${i}`)}`,
  );
  const result = await sql<
    PostRow & { i: number }
  >`WITH ${sql.join(posts)} ${sql.join(rows, sql` UNION ALL `)}`.execute(db);
  const byIndex = new Map(result.rows.map((r) => [Number(r.i), r]));
  return batch.map((_, i) => postResult(byIndex.get(i)));
}

function postResult(row: PostRow | undefined): PostGroupResult {
  if (!row) throw new Error('purser_ledger_post returned no row');
  switch (row.outcome) {
    case 'ok':
    case 'replayed':
      return {
        ok: true,
        groupId: String(row.group_id),
        seq: BigInt(row.group_seq ?? '0'),
        replayed: row.outcome === 'replayed',
        prepaid:
          row.prepaid_account === null
            ? null
            : { accountId: row.prepaid_account, balanceMicro: BigInt(row.prepaid_balance ?? '0') },
      };
    case 'conflict':
      return { ok: false, reason: 'conflict', groupId: String(row.group_id) };
    case 'insufficient':
      return {
        ok: false,
        reason: 'insufficient',
        accountId: String(row.prepaid_account),
        availableMicro: BigInt(row.prepaid_balance ?? '0'),
      };
    default:
      throw new Error(`purser_ledger_post: unknown outcome ${row.outcome}`);
  }
}

export interface ReverseGroupParameters {
  groupId: string;
  /** The group's account (tenancy: another account's group is not found); null for platform groups. */
  accountId: string | null;
  /** Why (a correction, a refund): kept in the reversing group's memo. */
  reason: string;
  /** Default `reversal:<groupId>`, so a retried reversal replays. */
  settlementId?: string;
}

/**
 * Corrects or refunds a group with a reversing group: the same entries with opposite signs, kind
 * `reversal`, pointing at the original. A group is reversed at most once (`conflict` after).
 * Reversing a booking that credited a prepaid balance that has since been spent answers
 * `insufficient`.
 */
export async function reverseGroup(
  tx: DbExecutor,
  clock: Clock,
  params: ReverseGroupParameters,
): Promise<PostGroupResult | { ok: false; reason: 'not_found' }> {
  let q = tx
    .selectFrom('ledger_groups as g')
    .innerJoin('ledger_entries as e', 'e.group_id', 'g.id')
    .select(['g.policy_hash', 'e.ledger_account', 'e.asset', 'e.amount'])
    .where('g.id', '=', params.groupId);
  q =
    params.accountId === null
      ? q.where('g.account_id', 'is', null)
      : q.where('g.account_id', '=', params.accountId);
  const rows = await q.orderBy('e.seq').execute();
  if (rows.length === 0) return { ok: false, reason: 'not_found' };
  return book(
    tx,
    clock,
    {
      settlementId: params.settlementId ?? `reversal:${params.groupId}`,
      accountId: params.accountId,
      kind: 'reversal',
      entries: rows.map((r) => ({ account: r.ledger_account, asset: r.asset, amount: -BigInt(r.amount) })),
      policyHash: rows[0]?.policy_hash ?? null,
      memo: { reason: params.reason },
    },
    params.groupId,
  );
}

/**
 * The balance of one ledger account in one asset: the sum of its entries, debit positive (a
 * credit-normal account such as a prepaid balance or fee revenue is negative). Derived from the
 * entries, so fee revenue and the platform float never need a hot row.
 */
export async function balanceOf(db: DbExecutor, ledgerAccount: string, asset: string): Promise<bigint> {
  const row = await db
    .selectFrom('ledger_entries')
    .select(sql<string>`coalesce(sum(amount), 0)::text`.as('total'))
    .where('ledger_account', '=', ledgerAccount)
    .where('asset', '=', asset)
    .executeTakeFirst();
  return BigInt(row?.total ?? '0');
}

export interface LedgerGroup {
  id: string;
  seq: bigint;
  settlementId: string;
  accountId: string | null;
  kind: string;
  policyHash: string | null;
  reverses: string | null;
  memo: unknown;
  createdAt: Date;
  entries: LedgerEntryInput[];
}

/** One group with its entries, or null (another account's group is not found). */
export async function readGroup(
  db: DbExecutor,
  groupId: string,
  accountId: string | null,
): Promise<LedgerGroup | null> {
  let q = db.selectFrom('ledger_groups').selectAll().where('id', '=', groupId);
  q = accountId === null ? q.where('account_id', 'is', null) : q.where('account_id', '=', accountId);
  const group = await q.executeTakeFirst();
  if (!group) return null;
  const entries = await db
    .selectFrom('ledger_entries')
    .select(['ledger_account', 'asset', 'amount'])
    .where('group_id', '=', groupId)
    .orderBy('seq')
    .execute();
  return {
    id: group.id,
    seq: BigInt(group.seq),
    settlementId: group.settlement_id,
    accountId: group.account_id,
    kind: group.kind,
    policyHash: group.policy_hash,
    reverses: group.reverses,
    memo: group.memo,
    createdAt: new Date(group.created_at),
    entries: entries.map((e) => ({ account: e.ledger_account, asset: e.asset, amount: BigInt(e.amount) })),
  };
}
