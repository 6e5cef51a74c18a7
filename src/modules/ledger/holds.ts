// Two-phase holds: an amount reserved now (a fee hold, an exposure hold) and later posted fully
// or partly, voided, or expired by the clock, each at most once. Posting books one group that
// debits the hold's debit account and credits its credit account (settlement `hold:<id>`). Holds
// sharing a cap key count pending (not yet past expiry by the clock) plus posted amounts against
// the cap. A hold whose debit account is a prepaid balance reserves that amount on the balance row,
// so debits cannot spend it while the hold is pending. Each call is one round trip (migration 0009).

import { sql } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { newId } from '../../core/ids.ts';
import { isAsset, isLedgerAccount, prepaidOwner, USD } from './chart.ts';
import { groupFingerprint, LedgerError } from './ledger.ts';
import type { HoldState } from './store.ts';

export interface PlaceHoldParameters {
  /** The hold's identity, chosen by the caller (an intent id, an order id): placed once. */
  holdId: string;
  accountId: string | null;
  /** What the hold is for: `fee.<product>`, `exposure`, … (also the kind of the posted group). */
  kind: string;
  /** Posting debits this ledger account… */
  debit: string;
  /** …and credits this one. */
  credit: string;
  asset: string;
  amount: bigint;
  /** After this instant the hold counts for nothing, cannot be posted, and the sweep expires it. */
  expiresAt: Date;
  /** Holds sharing `key` count pending plus posted amounts against `limit`. */
  cap?: { key: string; limit: bigint };
  policyHash?: string | null;
}

export type PlaceHoldResult =
  | { ok: true; holdId: string; replayed: boolean }
  | { ok: false; reason: 'conflict' }
  | { ok: false; reason: 'cap_exceeded'; used: bigint; limit: bigint }
  | { ok: false; reason: 'insufficient'; availableMicro: bigint };

const KIND = /^[a-z][a-z0-9_.]{0,63}$/;

/** Places a pending hold in the caller's transaction. The same id with the same terms replays. */
export async function placeHold(
  tx: DbExecutor,
  clock: Clock,
  params: PlaceHoldParameters,
): Promise<PlaceHoldResult> {
  const now = clock.now();
  const problems: string[] = [];
  if (params.holdId.length === 0 || params.holdId.length > 200) problems.push('bad hold id');
  if (!KIND.test(params.kind)) problems.push('bad kind');
  if (!isLedgerAccount(params.debit) || !isLedgerAccount(params.credit))
    problems.push('unknown ledger account');
  if (params.debit === params.credit) problems.push('a hold moves between two accounts');
  if (!isAsset(params.asset)) problems.push('unknown asset');
  if (params.amount <= 0n) problems.push('the amount must be positive');
  if (params.expiresAt <= now) problems.push('expiresAt must be in the future');
  for (const account of [params.debit, params.credit]) {
    const owner = prepaidOwner(account);
    if (owner !== null && (owner !== params.accountId || params.asset !== USD)) {
      problems.push('a prepaid balance is held only in USD by its own account');
    }
  }
  if (problems.length > 0) throw new LedgerError(`hold refused: ${problems.join('; ')}`);
  const result = await sql<{ outcome: string; used: string | null }>`
    SELECT outcome, used::text AS used FROM purser_ledger_place_hold(${params.holdId}, ${params.accountId},
      ${params.kind}, ${params.debit}, ${params.credit}, ${params.asset}, ${params.amount.toString()}::numeric,
      ${params.cap?.key ?? null}, ${params.cap?.limit.toString() ?? null}::numeric, ${params.policyHash ?? null},
      ${now}::timestamptz, ${params.expiresAt}::timestamptz)`.execute(tx);
  const row = result.rows[0];
  if (!row) throw new Error('purser_ledger_place_hold returned no row');
  switch (row.outcome) {
    case 'ok':
    case 'replayed':
      return { ok: true, holdId: params.holdId, replayed: row.outcome === 'replayed' };
    case 'conflict':
      return { ok: false, reason: 'conflict' };
    case 'cap_exceeded':
      return {
        ok: false,
        reason: 'cap_exceeded',
        used: BigInt(row.used ?? '0'),
        limit: params.cap?.limit ?? 0n,
      };
    case 'insufficient':
      return { ok: false, reason: 'insufficient', availableMicro: BigInt(row.used ?? '0') };
    default:
      throw new Error(`purser_ledger_place_hold: unknown outcome ${row.outcome}`);
  }
}

export type CloseHoldResult =
  | { ok: true; state: HoldState; groupId: string | null }
  | { ok: false; reason: 'not_found' }
  /** Already posted, voided or expired (`groupId`: the posting's group). */
  | { ok: false; reason: 'closed'; state: HoldState; groupId: string | null }
  /** Posting after the clock passed the hold's expiry. */
  | { ok: false; reason: 'expired' }
  | { ok: false; reason: 'exceeds_held' }
  | { ok: false; reason: 'insufficient' | 'conflict' };

interface CloseRow {
  outcome: string;
  state: string | null;
  group_id: string | null;
}

async function closeHold(
  tx: DbExecutor,
  clock: Clock,
  holdId: string,
  accountId: string | null,
  state: 'posted' | 'voided',
  amount: bigint | null,
): Promise<CloseHoldResult> {
  const now = clock.now();
  let fingerprint: string | null = null;
  if (state === 'posted') {
    // The posting's fingerprint needs the hold's accounts: read them (the function locks the row).
    let q = tx
      .selectFrom('ledger_holds')
      .select(['debit_account', 'credit_account', 'asset', 'amount'])
      .where('id', '=', holdId);
    q = accountId === null ? q.where('account_id', 'is', null) : q.where('account_id', '=', accountId);
    const hold = await q.executeTakeFirst();
    if (!hold) return { ok: false, reason: 'not_found' };
    amount ??= BigInt(hold.amount);
    fingerprint = groupFingerprint(accountId, [
      { account: hold.debit_account, asset: hold.asset, amount },
      { account: hold.credit_account, asset: hold.asset, amount: -amount },
    ]);
  }
  const result = await sql<CloseRow>`
    SELECT outcome, state, group_id FROM purser_ledger_close_hold(${holdId}, ${accountId}, ${state},
      ${amount?.toString() ?? null}::numeric, ${newId('lgr')}, ${fingerprint}, ${now}::timestamptz)`.execute(
    tx,
  );
  return closeResult(result.rows[0]);
}

function closeResult(row: CloseRow | undefined): CloseHoldResult {
  if (!row) throw new Error('purser_ledger_close_hold returned no row');
  switch (row.outcome) {
    case 'ok':
      return { ok: true, state: row.state as HoldState, groupId: row.group_id };
    case 'closed':
      return { ok: false, reason: 'closed', state: row.state as HoldState, groupId: row.group_id };
    case 'not_found':
    case 'expired':
    case 'exceeds_held':
    case 'insufficient':
    case 'conflict':
      return { ok: false, reason: row.outcome };
    default:
      throw new Error(`purser_ledger_close_hold: unknown outcome ${row.outcome}`);
  }
}

/**
 * Posts a pending hold, fully (no `amount`) or partly (0 < amount ≤ held): one group debiting the
 * hold's debit account and crediting its credit account. At most once; refused after its expiry.
 */
export function postHold(
  tx: DbExecutor,
  clock: Clock,
  params: { holdId: string; accountId: string | null; amount?: bigint },
): Promise<CloseHoldResult> {
  return closeHold(tx, clock, params.holdId, params.accountId, 'posted', params.amount ?? null);
}

/** Voids a pending hold: it stops counting at once and nothing is booked. At most once. */
export function voidHold(
  tx: DbExecutor,
  clock: Clock,
  params: { holdId: string; accountId: string | null },
): Promise<CloseHoldResult> {
  return closeHold(tx, clock, params.holdId, params.accountId, 'voided', null);
}

/**
 * Marks pending holds past their expiry (by the clock) `expired`, oldest first, at most `limit`
 * (the scheduled sweep). They already stopped counting against caps at their expiry; a prepaid
 * hold gives its reservation back here. Returns the ids expired.
 */
export async function expireHolds(tx: DbExecutor, clock: Clock, limit = 1000): Promise<string[]> {
  const now = clock.now();
  const rows = await sql<{ id: string }>`
    SELECT h.id FROM (
      SELECT id, account_id FROM ledger_holds
      WHERE state = 'pending' AND expires_at <= ${now}::timestamptz
      ORDER BY expires_at LIMIT ${limit}
      FOR UPDATE SKIP LOCKED) h,
    LATERAL purser_ledger_close_hold(h.id, h.account_id, 'expired', NULL, NULL, NULL, ${now}::timestamptz) c
    WHERE c.outcome = 'ok'`.execute(tx);
  return rows.rows.map((r) => r.id);
}

export interface HoldView {
  id: string;
  accountId: string | null;
  kind: string;
  debit: string;
  credit: string;
  asset: string;
  amount: bigint;
  postedAmount: bigint | null;
  state: HoldState;
  postedGroupId: string | null;
  expiresAt: Date;
}

export async function readHold(
  db: DbExecutor,
  holdId: string,
  accountId: string | null,
): Promise<HoldView | null> {
  let q = db.selectFrom('ledger_holds').selectAll().where('id', '=', holdId);
  q = accountId === null ? q.where('account_id', 'is', null) : q.where('account_id', '=', accountId);
  const row = await q.executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind,
    debit: row.debit_account,
    credit: row.credit_account,
    asset: row.asset,
    amount: BigInt(row.amount),
    postedAmount: row.posted_amount === null ? null : BigInt(row.posted_amount),
    state: row.state,
    postedGroupId: row.posted_group_id,
    expiresAt: new Date(row.expires_at),
  };
}
