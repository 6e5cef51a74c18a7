import { sql, type ColumnType, type Generated, type RawBuilder, type Selectable } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DbExecutor } from '../db/database.ts';
import type { Timestamp } from '../db/schema.ts';
import { newId } from '../ids.ts';

export type JobState = 'available' | 'running' | 'completed' | 'failed';

type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>;

export interface JobsTable {
  id: string;
  name: string;
  payload: unknown;
  state: JobState;
  attempts: Generated<number>;
  max_attempts: number;
  run_at: Timestamp;
  locked_by: string | null;
  locked_until: NullableTimestamp;
  last_error: string | null;
  singleton_key: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  finished_at: NullableTimestamp;
}

export interface JobSchedulesTable {
  name: string;
  job_name: string;
  payload: unknown;
  every_seconds: number;
  next_run_at: Timestamp;
  last_run_at: NullableTimestamp;
  updated_at: Timestamp;
}

declare module '../db/schema.ts' {
  interface Database {
    jobs: JobsTable;
    job_schedules: JobSchedulesTable;
  }
}

export type Job = Selectable<JobsTable>;

export const DEFAULT_MAX_ATTEMPTS = 5;

export interface EnqueueJobParameters {
  /** The handler that runs it. */
  name: string;
  payload?: unknown;
  /** Not run before this time; default now. */
  runAt?: Date;
  maxAttempts?: number;
  /**
   * While a job with the same name and key is available or running, enqueueing another one is a
   * no-op that returns the existing job's id. Once it has finished, the key is free again.
   */
  singletonKey?: string;
}

/**
 * Adds a job. Pass the caller's transaction: the job exists if and only if the domain write
 * commits. Returns the job's id (the existing job's when a singleton key deduplicates it).
 */
export async function enqueueJob(
  db: DbExecutor,
  clock: Clock,
  params: EnqueueJobParameters,
): Promise<string> {
  const maxAttempts = params.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new Error(`maxAttempts must be a positive integer (got ${maxAttempts}).`);
  }
  const now = clock.now();
  const singletonKey = params.singletonKey ?? null;
  const inserted = await db
    .insertInto('jobs')
    .values({
      id: newId('job'),
      name: params.name,
      // Stringified so pg sends JSON: it would turn a bare array into a PostgreSQL array.
      payload: JSON.stringify(params.payload ?? {}),
      state: 'available',
      max_attempts: maxAttempts,
      run_at: params.runAt ?? now,
      singleton_key: singletonKey,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc
        .columns(['name', 'singleton_key'])
        .where(sql<boolean>`singleton_key IS NOT NULL AND state IN ('available', 'running')`)
        .doNothing(),
    )
    .returning('id')
    .executeTakeFirst();
  if (inserted) return inserted.id;
  const existing = await db
    .selectFrom('jobs')
    .select('id')
    .where('name', '=', params.name)
    .where('singleton_key', '=', singletonKey)
    .orderBy('created_at', 'desc')
    .executeTakeFirstOrThrow();
  return existing.id;
}

/**
 * enqueueJob as a SQL call (`purser_enqueue_job`, migration 0029) for a write that records its
 * job inside its own statement (the ledger's `then`); starts now (no `runAt`). Nothing is added
 * while an unfinished job holds the singleton key.
 */
export function jobCall(clock: Clock, params: Omit<EnqueueJobParameters, 'runAt'>): RawBuilder<unknown> {
  const maxAttempts = params.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new Error(`maxAttempts must be a positive integer (got ${maxAttempts}).`);
  }
  return sql`purser_enqueue_job(${newId('job')}, ${params.name}, ${JSON.stringify(params.payload ?? {})}::jsonb,
    ${maxAttempts}::int, ${params.singletonKey ?? null}, ${clock.now()}::timestamptz)`;
}

export async function getJob(db: DbExecutor, id: string): Promise<Job | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface ListFailedJobsParameters {
  name?: string;
  limit?: number;
}

/** Jobs that used up their attempts, most recent first, each with its last error. */
export async function listFailedJobs(db: DbExecutor, params: ListFailedJobsParameters = {}): Promise<Job[]> {
  let q = db.selectFrom('jobs').selectAll().where('state', '=', 'failed');
  if (params.name !== undefined) q = q.where('name', '=', params.name);
  return q
    .orderBy('finished_at', 'desc')
    .limit(params.limit ?? 100)
    .execute();
}

/**
 * Puts a failed job back in the queue with a fresh set of attempts (an operator's replay).
 * Returns false when the job does not exist or has not failed. The last error stays until the
 * next attempt overwrites it.
 */
export async function retryFailedJob(db: DbExecutor, clock: Clock, id: string): Promise<boolean> {
  const now = clock.now();
  const result = await db
    .updateTable('jobs')
    .set({ state: 'available', attempts: 0, run_at: now, finished_at: null, updated_at: now })
    .where('id', '=', id)
    .where('state', '=', 'failed')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** How long a failed job counts in `failedLastDay`. */
const FAILED_WINDOW_MS = 86_400_000;

export interface JobQueueStats {
  name: string;
  /** Available and due now. */
  waiting: number;
  /** Available, due later (a retry's backoff, a continuation's time). */
  scheduled: number;
  running: number;
  /** Failed for good in the last 24 hours. */
  failedLastDay: number;
  /** How long the oldest due job has waited, in seconds (0 when none is due). */
  oldestWaitingSeconds: number;
}

/** Per job name with any job waiting, scheduled, running or failed in the last day, by name. */
export async function jobQueueStats(db: DbExecutor, now: Date): Promise<JobQueueStats[]> {
  const since = new Date(now.getTime() - FAILED_WINDOW_MS);
  const rows = await sql<{
    name: string;
    waiting: string;
    scheduled: string;
    running: string;
    failed: string;
    oldest: number | null;
  }>`
    SELECT name,
      count(*) FILTER (WHERE state = 'available' AND run_at <= ${now}::timestamptz) AS waiting,
      count(*) FILTER (WHERE state = 'available' AND run_at > ${now}::timestamptz) AS scheduled,
      count(*) FILTER (WHERE state = 'running') AS running,
      count(*) FILTER (WHERE state = 'failed') AS failed,
      extract(epoch FROM ${now}::timestamptz - min(run_at) FILTER (WHERE state = 'available' AND run_at <= ${now}::timestamptz))::float8 AS oldest
    FROM jobs
    WHERE state IN ('available', 'running') OR (state = 'failed' AND finished_at > ${since}::timestamptz)
    GROUP BY name ORDER BY name`.execute(db);
  return rows.rows.map((r) => ({
    name: r.name,
    waiting: Number(r.waiting),
    scheduled: Number(r.scheduled),
    running: Number(r.running),
    failedLastDay: Number(r.failed),
    oldestWaitingSeconds: Math.max(0, r.oldest ?? 0),
  }));
}
