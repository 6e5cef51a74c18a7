import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { sql } from 'kysely';
import type { Clock } from '../clock.ts';
import { isDatabaseUnavailable, withTransaction, type Db } from '../db/database.ts';
import { enqueueJob, type Job } from './queue.ts';

export interface JobContext {
  /** 1 on the first run. */
  attempt: number;
  workerId: string;
  /**
   * Aborted when the worker gives the job up (stop past its grace period, or its lease was taken
   * over). Stop soon: the job will run again elsewhere, so handlers must be idempotent.
   */
  signal: AbortSignal;
}

export type JobHandler = (job: Job, ctx: JobContext) => Promise<void>;

export interface JobSchedule {
  /** The schedule's identity across restarts and workers. */
  name: string;
  everySeconds: number;
  jobName: string;
  payload?: unknown;
}

/** The part of a pino logger the worker uses. */
export interface JobLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface CreateWorkerParameters {
  db: Db;
  clock: Clock;
  log: JobLogger;
  /** This worker claims only jobs named here. */
  handlers: Record<string, JobHandler>;
  schedules?: JobSchedule[];
  /** Jobs run at once by this worker; default 4. */
  concurrency?: number;
  /** Wait between polls when the queue is empty; default 1000 ms. */
  pollIntervalMs?: number;
  /** How long a claim holds a job without a heartbeat; default 60 s, renewed every third of it. */
  leaseMs?: number;
  workerId?: string;
}

export interface StopOptions {
  /** How long running jobs may take to finish before they are released; default 10 s. */
  graceMs?: number;
}

export interface JobWorker {
  readonly workerId: string;
  /** Registers the schedules and polls until stopped. */
  start(): Promise<void>;
  /** Stops claiming, waits for running jobs up to the grace period, then releases the rest. */
  stop(options?: StopOptions): Promise<void>;
  /** Enqueues the jobs of due schedules and fails jobs whose last attempt lost its worker. Returns jobs scheduled. */
  tick(): Promise<number>;
  /** Claims one batch of due jobs, runs it to the end and returns how many ran. */
  runDueJobsOnce(): Promise<number>;
}

/** Delay before the next attempt after `attempts` failed ones: 10 s, 20 s, 40 s… capped at one hour. */
export function retryDelayMs(attempts: number): number {
  return Math.min(2 ** attempts * 5_000, 3_600_000);
}

const MAX_ERROR_LENGTH = 4000;

interface RunningJob {
  job: Job;
  abort: AbortController;
  heartbeat: NodeJS.Timeout;
  beat: Promise<void> | null;
  /** The handler has returned; only the final write remains. */
  finishing: boolean;
  /** Given back by stop(): whatever the handler does later must not touch the row. */
  released: boolean;
  done: Promise<void>;
}

export function createWorker(params: CreateWorkerParameters): JobWorker {
  const { db, clock, log, handlers } = params;
  const schedules = params.schedules ?? [];
  const concurrency = params.concurrency ?? 4;
  const pollIntervalMs = params.pollIntervalMs ?? 1000;
  const leaseMs = params.leaseMs ?? 60_000;
  const heartbeatMs = Math.max(Math.floor(leaseMs / 3), 10);
  const workerId = params.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const jobNames = Object.keys(handlers);
  const scheduleNames = schedules.map((s) => s.name);
  for (const s of schedules) {
    if (!handlers[s.jobName]) {
      throw new Error(`Schedule ${s.name} enqueues ${s.jobName}, which has no handler.`);
    }
    if (!Number.isInteger(s.everySeconds) || s.everySeconds < 1) {
      throw new Error(`Schedule ${s.name} needs everySeconds as a positive integer.`);
    }
  }

  const running = new Map<string, RunningJob>();
  let phase: 'idle' | 'running' | 'stopping' | 'stopped' = 'idle';
  let loop: Promise<void> | null = null;
  let wake: (() => void) | null = null;
  // Set when the last claim filled every free slot: more jobs are probably waiting, so a freed
  // slot claims again at once instead of after a full poll interval.
  let backlog = false;
  let schedulesRegistered: Promise<void> | null = null;
  let stopped: Promise<void> | null = null;

  function registerSchedules(): Promise<void> {
    schedulesRegistered ??= (async () => {
      const now = clock.now();
      for (const s of schedules) {
        // A new schedule fires at once; a restart keeps the stored next_run_at so deploys neither
        // skip nor repeat a period; a changed interval never waits longer than the new one.
        await sql`
          INSERT INTO job_schedules (name, job_name, payload, every_seconds, next_run_at, updated_at)
          VALUES (${s.name}, ${s.jobName}, ${JSON.stringify(s.payload ?? {})}, ${s.everySeconds}, ${now}, ${now})
          ON CONFLICT (name) DO UPDATE SET
            job_name = EXCLUDED.job_name,
            payload = EXCLUDED.payload,
            every_seconds = EXCLUDED.every_seconds,
            next_run_at = CASE WHEN job_schedules.every_seconds = EXCLUDED.every_seconds THEN job_schedules.next_run_at
              ELSE LEAST(job_schedules.next_run_at, ${now}::timestamptz + EXCLUDED.every_seconds * interval '1 second') END,
            updated_at = EXCLUDED.updated_at`.execute(db);
      }
    })().catch((err: unknown) => {
      schedulesRegistered = null;
      throw err;
    });
    return schedulesRegistered;
  }

  async function tick(): Promise<number> {
    await registerSchedules();
    const now = clock.now();
    // A job whose worker vanished on its last attempt would otherwise stay "running" forever.
    await sql`
      UPDATE jobs SET state = 'failed', finished_at = ${now}, updated_at = ${now},
        last_error = 'lease of ' || locked_by || ' expired on the last attempt (worker killed or stalled)',
        locked_by = NULL, locked_until = NULL
      WHERE state = 'running' AND locked_until < ${now} AND attempts >= max_attempts`.execute(db);
    if (scheduleNames.length === 0) return 0;
    return withTransaction(db, async (tx) => {
      // next_run_at moves to the first period boundary after now: periods missed while no worker
      // ran collapse into this one firing instead of a burst.
      const { rows } = await sql<{ name: string; job_name: string; payload: unknown }>`
        WITH due AS MATERIALIZED (
          SELECT name FROM job_schedules
          WHERE name = ANY(${scheduleNames}::text[]) AND next_run_at <= ${now}
          FOR UPDATE SKIP LOCKED
        )
        UPDATE job_schedules s SET
          next_run_at = s.next_run_at + (floor(extract(epoch FROM (${now}::timestamptz - s.next_run_at)) / s.every_seconds)::integer + 1)
            * s.every_seconds * interval '1 second',
          last_run_at = ${now},
          updated_at = ${now}
        FROM due WHERE s.name = due.name
        RETURNING s.name, s.job_name, s.payload`.execute(tx);
      for (const row of rows) {
        // The singleton key skips a firing while the previous one is still pending or running.
        await enqueueJob(tx, clock, {
          name: row.job_name,
          payload: row.payload,
          singletonKey: `schedule:${row.name}`,
        });
      }
      return rows.length;
    });
  }

  async function claim(limit: number): Promise<Job[]> {
    if (limit <= 0 || jobNames.length === 0) return [];
    const now = clock.now();
    const leaseEnd = new Date(now.getTime() + leaseMs);
    // MATERIALIZED keeps the locking subquery from being re-run inside a join, which could claim
    // more than `limit` rows. A running job past its lease is fair game: its worker is gone.
    const { rows } = await sql<Job>`
      WITH picked AS MATERIALIZED (
        SELECT id FROM jobs
        WHERE name = ANY(${jobNames}::text[])
          AND ((state = 'available' AND run_at <= ${now})
            OR (state = 'running' AND locked_until < ${now} AND attempts < max_attempts))
        ORDER BY run_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      )
      UPDATE jobs SET
        state = 'running',
        locked_by = ${workerId},
        locked_until = ${leaseEnd},
        attempts = jobs.attempts + 1,
        updated_at = ${now},
        last_error = CASE WHEN jobs.state = 'running'
          THEN 'lease of ' || jobs.locked_by || ' expired before the job finished (worker killed or stalled)'
          ELSE jobs.last_error END
      FROM picked WHERE jobs.id = picked.id
      RETURNING jobs.*`.execute(db);
    return rows;
  }

  // Every write about a claimed job checks that this worker still holds it, so a worker that
  // lost its lease can never overwrite the outcome of the worker that took over.
  function ownedJob(id: string) {
    return db
      .updateTable('jobs')
      .where('id', '=', id)
      .where('locked_by', '=', workerId)
      .where('state', '=', 'running');
  }

  // One renewal at a time per job: a slow database must not pile them up.
  function beat(entry: RunningJob): void {
    entry.beat ??= renewLease(entry).finally(() => {
      entry.beat = null;
    });
  }

  async function renewLease(entry: RunningJob): Promise<void> {
    const now = clock.now();
    try {
      const result = await ownedJob(entry.job.id)
        .set({ locked_until: new Date(now.getTime() + leaseMs), updated_at: now })
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n && !entry.released) {
        log.warn({ jobId: entry.job.id, workerId }, 'job lease lost to another worker; aborting the handler');
        entry.abort.abort(new Error('The job lease was lost to another worker.'));
      }
    } catch (err) {
      log.warn({ err, jobId: entry.job.id }, 'job lease renewal failed');
    }
  }

  async function recordOutcome(job: Job, error: unknown): Promise<void> {
    const now = clock.now();
    if (error === null) {
      await ownedJob(job.id)
        .set({ state: 'completed', finished_at: now, updated_at: now, locked_by: null, locked_until: null })
        .execute();
      return;
    }
    const message = describeError(error);
    if (job.attempts >= job.max_attempts) {
      log.error(
        { jobId: job.id, job: job.name, attempts: job.attempts, error: message },
        'job failed for good',
      );
      await ownedJob(job.id)
        .set({
          state: 'failed',
          last_error: message,
          finished_at: now,
          updated_at: now,
          locked_by: null,
          locked_until: null,
        })
        .execute();
      return;
    }
    const runAt = new Date(now.getTime() + retryDelayMs(job.attempts));
    log.warn(
      { jobId: job.id, job: job.name, attempts: job.attempts, retryAt: runAt, error: message },
      'job failed; will retry',
    );
    await ownedJob(job.id)
      .set({
        state: 'available',
        run_at: runAt,
        last_error: message,
        updated_at: now,
        locked_by: null,
        locked_until: null,
      })
      .execute();
  }

  function launch(job: Job): Promise<void> {
    const abort = new AbortController();
    const entry: RunningJob = {
      job,
      abort,
      heartbeat: setInterval(() => beat(entry), heartbeatMs),
      beat: null,
      finishing: false,
      released: false,
      done: Promise.resolve(),
    };
    entry.done = (async () => {
      let error: unknown = null;
      try {
        const handler = handlers[job.name];
        if (!handler) throw new Error(`No handler for job ${job.name}.`);
        await handler(job, { attempt: job.attempts, workerId, signal: abort.signal });
      } catch (err) {
        error = err ?? new Error('The handler threw a nullish value.');
      }
      clearInterval(entry.heartbeat);
      if (entry.released) return;
      entry.finishing = true;
      await entry.beat;
      try {
        await recordOutcome(job, error);
      } catch (err) {
        // The lease will expire and another worker will run the job again.
        log.error({ err, jobId: job.id }, 'could not record the outcome of a job');
      }
    })().finally(() => {
      running.delete(job.id);
      if (backlog) wake?.();
    });
    running.set(job.id, entry);
    return entry.done;
  }

  async function claimAndLaunch(): Promise<Promise<void>[]> {
    if (phase === 'stopping' || phase === 'stopped') return [];
    const free = concurrency - running.size;
    const jobs = await claim(free);
    backlog = free <= 0 || jobs.length === free;
    return jobs.map(launch);
  }

  async function pollLoop(): Promise<void> {
    while (phase === 'running') {
      // Separate steps, so a broken schedule never stops the jobs from running.
      await tick().catch((err: unknown) => reportPollError(err, 'schedule tick'));
      await claimAndLaunch().catch((err: unknown) => reportPollError(err, 'claim'));
      if (phase !== 'running') break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollIntervalMs);
        wake = () => {
          clearTimeout(timer);
          done();
        };
        function done() {
          wake = null;
          resolve();
        }
      });
    }
  }

  function reportPollError(err: unknown, step: string): void {
    if (isDatabaseUnavailable(err)) {
      log.warn({ err, workerId, step }, 'job worker cannot reach the database; retrying');
    } else {
      log.error({ err, workerId, step }, 'job worker poll step failed');
    }
  }

  async function releaseJobs(entries: RunningJob[]): Promise<void> {
    for (const entry of entries) {
      entry.released = true;
      clearInterval(entry.heartbeat);
      entry.abort.abort(new Error('The worker is stopping.'));
    }
    await Promise.all(entries.map((e) => e.beat));
    const ids = entries.map((e) => e.job.id);
    const now = clock.now();
    // The attempt is given back: the job did not fail, its worker went away.
    await db
      .updateTable('jobs')
      .set((eb) => ({
        state: 'available',
        attempts: eb('attempts', '-', 1),
        locked_by: null,
        locked_until: null,
        updated_at: now,
      }))
      .where('id', 'in', ids)
      .where('locked_by', '=', workerId)
      .where('state', '=', 'running')
      .execute();
    log.info({ workerId, jobIds: ids }, 'released unfinished jobs');
  }

  async function shutDown(graceMs: number): Promise<void> {
    phase = 'stopping';
    wake?.();
    await loop;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([...running.values()].map((e) => e.done)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
    ]);
    clearTimeout(timer);
    const unfinished = [...running.values()];
    const toRelease = unfinished.filter((e) => !e.finishing);
    if (toRelease.length > 0) {
      // If this fails the leases still expire, and another worker takes the jobs over then.
      await releaseJobs(toRelease).catch((err: unknown) =>
        log.error({ err, workerId }, 'could not release unfinished jobs'),
      );
    }
    // Jobs whose handler already returned are one write from done: let them record it.
    await Promise.all(unfinished.filter((e) => e.finishing).map((e) => e.done));
    phase = 'stopped';
  }

  return {
    workerId,
    async start() {
      if (phase !== 'idle') throw new Error(`Worker ${workerId} was already started.`);
      await registerSchedules();
      phase = 'running';
      loop = pollLoop();
    },
    stop(options = {}) {
      // A second caller (a signal handler and a test, say) waits for the same shutdown.
      stopped ??= shutDown(options.graceMs ?? 10_000);
      return stopped;
    },
    tick,
    async runDueJobsOnce() {
      const batch = await claimAndLaunch();
      await Promise.all(batch);
      return batch.length;
    },
  };
}

function describeError(err: unknown): string {
  const text = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH)}…` : text;
}
