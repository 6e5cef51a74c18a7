// The x402 payment challenges of POST /v1/feedback (migration 0012): recorded with every 402,
// linked to the payment that settles them, and deleted after their retention period.

import { sql, type ColumnType, type RawBuilder, type Selectable } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { Db, DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';
import { newId } from '../../core/ids.ts';

type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>;

export interface PaymentChallengesTable {
  id: string;
  account_id: string;
  resource: string;
  amount: string;
  payee: string;
  asset: string;
  network: string;
  created_at: Timestamp;
  used_at: NullableTimestamp;
  settlement_id: string | null;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    payment_challenges: PaymentChallengesTable;
  }
}

export type PaymentChallengeRow = Selectable<PaymentChallengesTable>;

const DAY_MS = 86_400_000;
/** An unused challenge is deleted this long after it was issued (spec section 8). */
export const UNUSED_CHALLENGE_RETENTION_MS = 1 * DAY_MS;
/** A used challenge is deleted this long after its use (spec section 8). */
export const USED_CHALLENGE_RETENTION_MS = 7 * DAY_MS;
/** Rows deleted per statement by the retention sweep. */
const PURGE_BATCH = 1000;

export interface ChallengeTerms {
  accountId: string;
  resource: string;
  /** Token base units (USDC: micro-USD). */
  amount: bigint;
  payee: string;
  asset: string;
  network: string;
}

/** Records the challenge a 402 answer carries; returns its id (`pch_…`). */
export async function recordChallenge(db: DbExecutor, clock: Clock, terms: ChallengeTerms): Promise<string> {
  const id = newId('pch');
  await db
    .insertInto('payment_challenges')
    .values({
      id,
      account_id: terms.accountId,
      resource: terms.resource,
      amount: terms.amount.toString(),
      payee: terms.payee.toLowerCase(),
      asset: terms.asset.toLowerCase(),
      network: terms.network,
      created_at: clock.now(),
      used_at: null,
      settlement_id: null,
    })
    .execute();
  return id;
}

export interface ChallengeUse {
  accountId: string;
  resource: string;
  amount: bigint;
  payee: string;
  asset: string;
  /** The settlement that paid: only a challenge issued before it was recorded can be its. */
  settlementId: string;
  recordedAt: Date;
}

/**
 * Marks the challenge a settled payment answered: x402 v1 payments name no challenge, so it is
 * the newest unused challenge of the account for the same resource and terms issued before the
 * payment was recorded. Returns its id, or null when the payment answered none (paid up front,
 * or the challenge is past its retention).
 */
export async function markChallengeUsed(
  tx: DbExecutor,
  clock: Clock,
  use: ChallengeUse,
): Promise<string | null> {
  const row = await sql<{ id: string }>`
    UPDATE payment_challenges SET used_at = ${clock.now()}, settlement_id = ${use.settlementId}
    WHERE id = (
      SELECT id FROM payment_challenges
      WHERE account_id = ${use.accountId} AND resource = ${use.resource} AND used_at IS NULL
        AND amount = ${use.amount.toString()} AND payee = ${use.payee.toLowerCase()}
        AND asset = ${use.asset.toLowerCase()} AND created_at <= ${use.recordedAt}
      ORDER BY created_at DESC, id DESC
      LIMIT 1
      FOR UPDATE SKIP LOCKED)
    RETURNING id`.execute(tx);
  return row.rows[0]?.id ?? null;
}

/** The challenges of an account, newest first (tests and the account's own diagnostics). */
export async function listChallenges(db: DbExecutor, accountId: string): Promise<PaymentChallengeRow[]> {
  return db
    .selectFrom('payment_challenges')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/**
 * Retention: unused challenges issued more than a day ago and used ones used more than seven
 * days ago, in batches (each its own statement). Idempotent. Returns the rows deleted.
 */
export async function purgePaymentChallenges(
  db: Db,
  clock: Clock,
): Promise<{ unused: number; used: number }> {
  const now = clock.now().getTime();
  const unusedBefore = new Date(now - UNUSED_CHALLENGE_RETENTION_MS);
  const usedBefore = new Date(now - USED_CHALLENGE_RETENTION_MS);
  const unused = await deleteInBatches(
    db,
    () => sql<{ one: number }>`
      DELETE FROM payment_challenges WHERE id IN (
        SELECT id FROM payment_challenges
        WHERE used_at IS NULL AND created_at < ${unusedBefore} LIMIT ${PURGE_BATCH})
      RETURNING 1 AS one`,
  );
  const used = await deleteInBatches(
    db,
    () => sql<{ one: number }>`
      DELETE FROM payment_challenges WHERE id IN (
        SELECT id FROM payment_challenges
        WHERE used_at IS NOT NULL AND used_at < ${usedBefore} LIMIT ${PURGE_BATCH})
      RETURNING 1 AS one`,
  );
  return { unused, used };
}

async function deleteInBatches(db: Db, batch: () => RawBuilder<{ one: number }>): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await batch().execute(db);
    total += result.rows.length;
    if (result.rows.length < PURGE_BATCH) return total;
  }
}
