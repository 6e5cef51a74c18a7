// Platform rate lanes: token buckets in PostgreSQL (table rate_lanes, migration 0036), shared by
// every Purser process. docs/rate-lanes.md.
//
// A take is ONE statement, an upsert: the row lock it takes lives only as long as that statement
// (it runs on the pool, in its own transaction), never across the venue call that follows, and
// concurrent takes in any number of processes queue on the row and see each other's result.
//
// Time comes from the clock port, not the database's now(): tests move a ManualClock instead of
// sleeping, and the refill is a plain function of the instants callers pass. Every process's
// clock writes `refilled_at`, so it only ever moves forward: a process whose clock lags refills
// nothing (it never makes tokens negative or moves the refill point back), and a process whose
// clock leads by d refills at most d × rate early, once; the others refill nothing until real
// time catches up. Skew therefore shifts refills in time but never adds a sustained rate, and
// with NTP it is milliseconds.

import { sql, type RawBuilder } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';
import type { RateLaneConfig } from '../../config/rate-lanes.ts';

export interface RateLanesTable {
  lane: string;
  tokens: string;
  refilled_at: Timestamp;
  last_take_ok: boolean;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    rate_lanes: RateLanesTable;
  }
}

/** Granted: `remaining` tokens are left. Refused: `cost` tokens will be there in `retryAfterMs` (nothing was taken). */
export type TakeTokensResult = { ok: true; remaining: number } | { ok: false; retryAfterMs: number };

export interface LaneTokens {
  /** Tokens there now (refilled to the clock's instant), capped at the capacity. */
  tokens: number;
  capacity: number;
  /** The instant the lane was last refilled up to; null when no take has touched it (full). */
  refilledAt: Date | null;
  /** Whether the latest take was granted; null when no take has touched it. */
  lastTakeOk: boolean | null;
}

const LANE_PATTERN = /^[a-z0-9_.-]+(:[a-z0-9_.-]+)*$/;

/**
 * Takes `cost` tokens from `lane` if they are there, after refilling it for the time elapsed since
 * its last refill (capped at `capacity`); otherwise takes nothing and says how long until `cost`
 * tokens will be there (exact to the millisecond, rounded up). A lane no take has touched is full.
 *
 * Call it on the pool, right before transmitting, not inside a transaction: a transaction would
 * hold the lane's row lock until it ends, so every other take on the platform would wait for it.
 *
 * Throws a RangeError for an invalid lane name, configuration or cost (a cost above the capacity
 * could never be granted), and an Error when called inside a transaction.
 */
export async function takeTokens(
  db: DbExecutor,
  clock: Clock,
  lane: string,
  config: RateLaneConfig,
  cost = 1,
): Promise<TakeTokensResult> {
  checkArguments(db, lane, config, cost);
  const amount = sql`${cost}::numeric`;
  const at = sql`${clock.now().toISOString()}::timestamptz`;
  // The upsert: a new lane starts full and gives `cost` at once. An existing one is refilled by
  // rate × elapsed (never negative) up to the capacity, then gives `cost` only if that is enough,
  // and records the decision in last_take_ok, because PostgreSQL 15's RETURNING sees only the new
  // row. ON CONFLICT DO UPDATE locks the row and works on its latest committed version, so
  // concurrent takes apply one after the other.
  const { rows } = await sql<{ tokens: string; ok: boolean; retry_after_ms: number | null }>`
    INSERT INTO rate_lanes AS b (lane, tokens, refilled_at, last_take_ok)
    VALUES (${lane}, ${config.capacity}::numeric - ${amount}, ${at}, true)
    ON CONFLICT (lane) DO UPDATE SET (tokens, refilled_at, last_take_ok) = (
      SELECT
        CASE WHEN r.tokens >= ${amount} THEN r.tokens - ${amount} ELSE r.tokens END,
        greatest(b.refilled_at, ${at}),
        r.tokens >= ${amount}
      FROM (SELECT ${refilled(sql`b`, config, at)} AS tokens) AS r
    )
    RETURNING
      tokens::text AS tokens,
      last_take_ok AS ok,
      CASE WHEN NOT last_take_ok THEN ceil((${amount} - tokens) * 1000 / ${config.refillPerSecond}::numeric)::float8 END AS retry_after_ms
  `.execute(db);
  const row = rows[0];
  if (!row) throw new Error(`The take on rate lane ${lane} returned no row.`);
  if (row.ok) return { ok: true, remaining: Number(row.tokens) };
  return { ok: false, retryAfterMs: Number(row.retry_after_ms) };
}

/**
 * Gives back `cost` tokens taken for a request that was then refused before anything was
 * transmitted (a policy refusal, a switch turned off), capped at the capacity. Never for a
 * request that may have reached the venue (a timeout after sending): the venue counted it.
 * Returns the tokens there afterwards. A lane no take has touched is full and stays untouched.
 */
export async function returnTokens(
  db: DbExecutor,
  clock: Clock,
  lane: string,
  config: RateLaneConfig,
  cost = 1,
): Promise<number> {
  checkArguments(db, lane, config, cost);
  const at = sql`${clock.now().toISOString()}::timestamptz`;
  const capacity = sql`${config.capacity}::numeric`;
  const { rows } = await sql<{ tokens: string }>`
    UPDATE rate_lanes AS b SET
      tokens = least(${capacity}, ${refilled(sql`b`, config, at)} + ${cost}::numeric),
      refilled_at = greatest(b.refilled_at, ${at})
    WHERE b.lane = ${lane}
    RETURNING tokens::text AS tokens
  `.execute(db);
  return rows[0] ? Number(rows[0].tokens) : config.capacity;
}

/** The lane as it stands at the clock's instant, for diagnostics. Reads only; takes nothing. */
export async function peekTokens(
  db: DbExecutor,
  clock: Clock,
  lane: string,
  config: RateLaneConfig,
): Promise<LaneTokens> {
  checkLane(lane);
  checkConfig(config);
  const at = sql`${clock.now().toISOString()}::timestamptz`;
  const { rows } = await sql<{ tokens: string; refilled_at: Date | string; last_take_ok: boolean }>`
    SELECT ${refilled(sql`b`, config, at)}::text AS tokens, b.refilled_at, b.last_take_ok
    FROM rate_lanes AS b
    WHERE b.lane = ${lane}
  `.execute(db);
  const row = rows[0];
  if (!row) return { tokens: config.capacity, capacity: config.capacity, refilledAt: null, lastTakeOk: null };
  return {
    tokens: Number(row.tokens),
    capacity: config.capacity,
    refilledAt: new Date(row.refilled_at),
    lastTakeOk: row.last_take_ok,
  };
}

/** The tokens of row `b` refilled up to `at` and capped at the capacity (the same rule as the take). */
function refilled(
  b: RawBuilder<unknown>,
  config: RateLaneConfig,
  at: RawBuilder<unknown>,
): RawBuilder<unknown> {
  return sql`least(${config.capacity}::numeric, ${b}.tokens + ${config.refillPerSecond}::numeric * greatest(0, extract(epoch FROM ${at} - ${b}.refilled_at)))`;
}

function checkArguments(db: DbExecutor, lane: string, config: RateLaneConfig, cost: number): void {
  if (db.isTransaction) {
    throw new Error(
      `Rate lane ${lane}: take and return tokens on the pool, not inside a transaction (it would hold the lane's lock until the transaction ends).`,
    );
  }
  checkLane(lane);
  checkConfig(config);
  if (!Number.isFinite(cost) || cost <= 0 || cost > config.capacity) {
    throw new RangeError(
      `Rate lane ${lane}: the cost must be above 0 and at most the capacity ${config.capacity} (got ${cost}).`,
    );
  }
}

function checkLane(lane: string): void {
  if (!LANE_PATTERN.test(lane) || lane.length > 100) {
    throw new RangeError(
      `A rate lane name is lowercase words joined by colons, such as polymarket:orders (got "${lane}").`,
    );
  }
}

function checkConfig(config: RateLaneConfig): void {
  if (!Number.isFinite(config.capacity) || config.capacity <= 0) {
    throw new RangeError(`A rate lane's capacity must be a positive number (got ${config.capacity}).`);
  }
  if (!Number.isFinite(config.refillPerSecond) || config.refillPerSecond <= 0) {
    throw new RangeError(
      `A rate lane's refill per second must be a positive number (got ${config.refillPerSecond}).`,
    );
  }
}
