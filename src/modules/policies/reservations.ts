// Spend reservations: the two-phase hold every spending path takes against the wallet's spend
// caps. A reservation is written in the caller's transaction by one SQL function call (one round
// trip; see migration 0007), so the caps hold across processes and restarts: they are computed
// from the reservation rows under a per-wallet lock, never from memory.

import { sql, type RawBuilder } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import type { ReservationState } from './store.ts';

export type SpendCapRule = 'spend.per_tx_usd' | 'spend.daily_usd' | 'spend.velocity_per_hour';

export interface ReserveSpendParameters {
  accountId: string;
  /** Lowercase wallet address. */
  wallet: string;
  amountMicroUsd: bigint;
  /** The hold's identity, chosen by the caller (an intent id, an order id): reserved once. */
  reservationId: string;
  /** When an unsettled hold stops counting and may be marked expired. */
  expiresAt: Date;
}

export type ReserveSpendResult =
  | { ok: true; reservationId: string; policyVersion: number; replayed: boolean }
  | { ok: false; refused: SpendCapRule; policyVersion: number; limit: bigint; wouldUse: bigint }
  | { ok: false; refused: 'no_policy' }
  | { ok: false; refused: 'conflict' };

interface ReserveRow {
  outcome: string;
  policy_version: number | null;
  limit_value: string | null;
  used_value: string | null;
}

/**
 * Reserves an amount against the caps of the wallet's latest policy: `spend.per_tx_usd`,
 * `spend.daily_usd` (pending plus settled of the current UTC day, by `clock`) and
 * `spend.velocity_per_hour` (pending plus settled actions in the rolling hour). One round trip,
 * inside the caller's transaction (which must run at READ COMMITTED, PostgreSQL's default): the
 * hold commits or rolls back with the caller's work. A refusal names the cap; `no_policy` means the
 * wallet has none; `conflict` means the id is taken by another hold. Repeating the same
 * reservation (same id, wallet and amount) answers ok with `replayed: true`.
 */
export async function reserveSpend(
  tx: DbExecutor,
  clock: Clock,
  params: ReserveSpendParameters,
): Promise<ReserveSpendResult> {
  if (params.amountMicroUsd <= 0n) throw new RangeError('reserveSpend: the amount must be positive');
  const now = clock.now();
  if (params.expiresAt <= now) throw new RangeError('reserveSpend: expiresAt must be in the future');
  const result = await sql<ReserveRow>`
    SELECT outcome, policy_version, limit_value, used_value
    FROM purser_reserve_spend(${params.accountId}, ${params.wallet}, ${params.reservationId},
      ${params.amountMicroUsd.toString()}::bigint, ${now}::timestamptz, ${params.expiresAt}::timestamptz)`.execute(
    tx,
  );
  const row = result.rows[0];
  if (!row) throw new Error('purser_reserve_spend returned no row');
  switch (row.outcome) {
    case 'ok':
    case 'replayed':
      return {
        ok: true,
        reservationId: params.reservationId,
        policyVersion: Number(row.policy_version),
        replayed: row.outcome === 'replayed',
      };
    case 'no_policy':
    case 'conflict':
      return { ok: false, refused: row.outcome };
    case 'spend.per_tx_usd':
    case 'spend.daily_usd':
    case 'spend.velocity_per_hour':
      return {
        ok: false,
        refused: row.outcome,
        policyVersion: Number(row.policy_version),
        limit: BigInt(row.limit_value ?? '0'),
        wouldUse: BigInt(row.used_value ?? '0'),
      };
    default:
      throw new Error(`purser_reserve_spend: unknown outcome ${row.outcome}`);
  }
}

/**
 * The same reservation as a booking guard (the ledger's batched statements): a SQL call that
 * returns true or raises, evaluated after `first` (an Idempotency-Key's claim, say), that fails
 * at once when another transaction holds the wallet's lock unless `wait` (migration 0029).
 * `reservationRefusal` reads its refusals back.
 */
export function reserveSpendGuard(
  first: RawBuilder<unknown> | null,
  params: ReserveSpendParameters,
  now: Date,
  wait: boolean,
): RawBuilder<unknown> {
  if (params.amountMicroUsd <= 0n) throw new RangeError('reserveSpendGuard: the amount must be positive');
  if (params.expiresAt <= now) throw new RangeError('reserveSpendGuard: expiresAt must be in the future');
  return sql`purser_reserve_spend_or_refuse(${first ?? sql`true`}, ${params.accountId}, ${params.wallet},
    ${params.reservationId}, ${params.amountMicroUsd.toString()}::bigint, ${now}::timestamptz,
    ${params.expiresAt}::timestamptz, ${wait})`;
}

/** Releases the guard's reservation when its booking did not happen, after `first`. */
export function releaseSpendCall(first: RawBuilder<unknown> | null, reservationId: string, now: Date) {
  return sql`purser_release_spend_reservation((${first ?? sql`NULL`})::text, ${reservationId}, ${now}::timestamptz)`;
}

/** The refusal a failed reserveSpendGuard statement raised, or null for any other error. */
export function reservationRefusal(err: unknown): Exclude<ReserveSpendResult, { ok: true }> | null {
  const e = err as { code?: unknown; message?: unknown; detail?: unknown } | null;
  if (e?.code === 'PK404' && e.message === 'no_policy') return { ok: false, refused: 'no_policy' };
  if (e?.code !== 'PK422' || typeof e.detail !== 'string') return null;
  const rule = e.message;
  if (rule !== 'spend.per_tx_usd' && rule !== 'spend.daily_usd' && rule !== 'spend.velocity_per_hour')
    return null;
  const [limit = '0', used = '0', version = '0'] = e.detail.split('/');
  return {
    ok: false,
    refused: rule,
    policyVersion: Number(version),
    limit: BigInt(limit),
    wouldUse: BigInt(used),
  };
}

export type CloseReservationResult =
  | { ok: true }
  | { ok: false; reason: 'not_found' }
  | { ok: false; reason: 'closed'; state: ReservationState }
  | { ok: false; reason: 'expired' }
  | { ok: false; reason: 'exceeds_reserved'; reservedMicroUsd: bigint };

export interface SettleReservationParameters {
  accountId: string;
  reservationId: string;
  /** What was actually spent: at most the reserved amount (a partial fill settles less). */
  settledMicroUsd: bigint;
}

/**
 * Settles a pending hold, fully or partly: from now on the caps count `settledMicroUsd` instead of
 * the reserved amount. At most once; refused for a hold that is closed or past its expiry.
 */
export async function settleReservation(
  tx: DbExecutor,
  clock: Clock,
  params: SettleReservationParameters,
): Promise<CloseReservationResult> {
  if (params.settledMicroUsd < 0n) throw new RangeError('settleReservation: the amount must not be negative');
  const now = clock.now();
  const updated = await tx
    .updateTable('spend_reservations')
    .set({ state: 'settled', settled_micro_usd: params.settledMicroUsd.toString(), closed_at: now })
    .where('id', '=', params.reservationId)
    .where('account_id', '=', params.accountId)
    .where('state', '=', 'pending')
    .where('expires_at', '>', now)
    .where(sql<boolean>`amount_micro_usd >= ${params.settledMicroUsd.toString()}::bigint`)
    .returning('id')
    .executeTakeFirst();
  if (updated) return { ok: true };
  return whyNotClosed(tx, now, params.accountId, params.reservationId, params.settledMicroUsd);
}

/** Releases a pending hold (the action was aborted): it stops counting at once. At most once. */
export async function releaseReservation(
  tx: DbExecutor,
  clock: Clock,
  params: { accountId: string; reservationId: string },
): Promise<CloseReservationResult> {
  const now = clock.now();
  const updated = await tx
    .updateTable('spend_reservations')
    .set({ state: 'released', closed_at: now })
    .where('id', '=', params.reservationId)
    .where('account_id', '=', params.accountId)
    .where('state', '=', 'pending')
    .returning('id')
    .executeTakeFirst();
  if (updated) return { ok: true };
  return whyNotClosed(tx, now, params.accountId, params.reservationId, null);
}

/**
 * Marks pending holds past their expiry `expired` (the scheduled sweep), oldest first, at most
 * `limit` of them. Expired holds already stopped counting at their expiry; this records it.
 * Returns the ids marked.
 */
export async function expireReservations(tx: DbExecutor, clock: Clock, limit = 1000): Promise<string[]> {
  const now = clock.now();
  const rows = await sql<{ id: string }>`
    UPDATE spend_reservations SET state = 'expired', closed_at = ${now}::timestamptz
    WHERE id IN (
      SELECT id FROM spend_reservations
      WHERE state = 'pending' AND expires_at <= ${now}::timestamptz
      ORDER BY expires_at LIMIT ${limit}
      FOR UPDATE SKIP LOCKED)
    AND state = 'pending'
    RETURNING id`.execute(tx);
  return rows.rows.map((r) => r.id);
}

async function whyNotClosed(
  tx: DbExecutor,
  now: Date,
  accountId: string,
  reservationId: string,
  settledMicroUsd: bigint | null,
): Promise<CloseReservationResult> {
  const row = await tx
    .selectFrom('spend_reservations')
    .select(['state', 'expires_at', 'amount_micro_usd'])
    .where('id', '=', reservationId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!row) return { ok: false, reason: 'not_found' };
  if (row.state !== 'pending') return { ok: false, reason: 'closed', state: row.state };
  if (settledMicroUsd !== null && settledMicroUsd > BigInt(row.amount_micro_usd)) {
    return { ok: false, reason: 'exceeds_reserved', reservedMicroUsd: BigInt(row.amount_micro_usd) };
  }
  if (new Date(row.expires_at) <= now) return { ok: false, reason: 'expired' };
  return { ok: false, reason: 'closed', state: row.state };
}

export interface SpendUsageRow {
  dayMicroUsd: bigint;
  hourCount: number;
}

/**
 * The wallet's usage as the next reservation would see it (without the lock: a dry run may be a
 * moment stale; the reservation itself is exact).
 */
export async function readSpendUsage(
  db: DbExecutor,
  clock: Clock,
  accountId: string,
  wallet: string,
): Promise<SpendUsageRow> {
  const now = clock.now();
  const result = await sql<{ day_used: string; hour_count: string }>`
    SELECT
      COALESCE(SUM(CASE WHEN state = 'settled' THEN settled_micro_usd ELSE amount_micro_usd END)
        FILTER (WHERE created_at >= date_trunc('day', ${now}::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'), 0)::text AS day_used,
      COUNT(*) FILTER (WHERE created_at > ${now}::timestamptz - interval '1 hour')::text AS hour_count
    FROM spend_reservations
    WHERE account_id = ${accountId} AND wallet = ${wallet}
      AND created_at >= LEAST(date_trunc('day', ${now}::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
                              ${now}::timestamptz - interval '1 hour')
      AND created_at <= ${now}::timestamptz
      AND (state = 'settled' OR (state = 'pending' AND expires_at > ${now}::timestamptz))`.execute(db);
  const row = result.rows[0];
  return { dayMicroUsd: BigInt(row?.day_used ?? '0'), hourCount: Number(row?.hour_count ?? '0') };
}
