import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { ManualClock, systemClock, type Clock } from '../clock.ts';
import { openPostgres, type Db } from '../db/database.ts';
import { enqueueJob, getJob, listFailedJobs } from './queue.ts';
import { createWorker, retryDelayMs, type CreateWorkerParameters, type JobHandler } from './worker.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);
if (!onPostgres) {
  console.log(
    'Skipping the concurrency and kill tests of the job worker: they prove nothing on PGlite. Set DATABASE_URL.',
  );
}

let testDb: TestDatabase;
let db: Db;
const quiet = { info() {}, warn() {}, error() {} };

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.handle.db;
  // Handlers record each execution here, so "ran exactly once" is counted, not assumed.
  await sql`CREATE TABLE job_test_runs (job_id text NOT NULL, worker text NOT NULL)`.execute(db);
}, 60_000);

afterAll(async () => {
  await testDb?.drop();
});

beforeEach(async () => {
  await sql`TRUNCATE jobs, job_schedules, job_test_runs`.execute(db);
});

function recordRun(into: Db = db): JobHandler {
  return async (job, ctx) => {
    await sql`INSERT INTO job_test_runs (job_id, worker) VALUES (${job.id}, ${ctx.workerId})`.execute(into);
  };
}

async function runCounts(): Promise<Map<string, number>> {
  const { rows } = await sql<{ job_id: string; n: number }>`
    SELECT job_id, count(*)::int AS n FROM job_test_runs GROUP BY job_id`.execute(db);
  return new Map(rows.map((r) => [r.job_id, r.n]));
}

function worker(
  clock: Clock,
  params: Partial<CreateWorkerParameters> & Pick<CreateWorkerParameters, 'handlers'>,
) {
  return createWorker({
    db,
    clock,
    log: quiet,
    concurrency: 4,
    pollIntervalMs: 20,
    leaseMs: 30_000,
    ...params,
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('retries', () => {
  it('backs off exponentially, then fails for good with the last error visible', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00.000Z');
    let calls = 0;
    const w = worker(clock, {
      handlers: {
        flaky: async () => {
          calls += 1;
          throw new Error(`venue timeout #${calls}`);
        },
      },
    });
    const id = await enqueueJob(db, clock, { name: 'flaky', payload: { intent: 'int_1' }, maxAttempts: 3 });

    expect(await w.runDueJobsOnce()).toBe(1);
    expect(await getJob(db, id)).toMatchObject({
      state: 'available',
      attempts: 1,
      locked_by: null,
      run_at: new Date(clock.now().getTime() + retryDelayMs(1)),
    });
    expect((await getJob(db, id))?.last_error).toContain('venue timeout #1');

    clock.advance(retryDelayMs(1) - 1);
    expect(await w.runDueJobsOnce()).toBe(0);
    clock.advance(1);
    expect(await w.runDueJobsOnce()).toBe(1);
    expect(await getJob(db, id)).toMatchObject({ state: 'available', attempts: 2 });

    clock.advance(retryDelayMs(2));
    expect(await w.runDueJobsOnce()).toBe(1);
    const failed = await getJob(db, id);
    expect(failed).toMatchObject({ state: 'failed', attempts: 3, finished_at: clock.now(), locked_by: null });
    expect(failed?.last_error).toContain('venue timeout #3');
    expect((await listFailedJobs(db)).map((j) => j.id)).toEqual([id]);

    clock.advance(retryDelayMs(10));
    expect(await w.runDueJobsOnce()).toBe(0);
    expect(calls).toBe(3);
    expect([retryDelayMs(1), retryDelayMs(2), retryDelayMs(3), retryDelayMs(20)]).toEqual([
      10_000, 20_000, 40_000, 3_600_000,
    ]);
  });

  it('completes a job that succeeds on a later attempt', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00.000Z');
    let calls = 0;
    const w = worker(clock, {
      handlers: {
        once: async () => {
          calls += 1;
          if (calls === 1) throw new Error('first try fails');
        },
      },
    });
    const id = await enqueueJob(db, clock, { name: 'once' });
    await w.runDueJobsOnce();
    clock.advance(retryDelayMs(1));
    expect(await w.runDueJobsOnce()).toBe(1);
    expect(await getJob(db, id)).toMatchObject({ state: 'completed', attempts: 2, finished_at: clock.now() });
  });
});

describe('schedules', () => {
  it('fire once per period however many workers tick', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00.000Z');
    const start = clock.now().getTime();
    const schedules = [
      { name: 'sweep-holds', everySeconds: 60, jobName: 'sweep', payload: { kind: 'holds' } },
    ];
    const workers = ['a', 'b'].map((workerId) =>
      worker(clock, { workerId, schedules, handlers: { sweep: recordRun() } }),
    );

    // Three periods, each visited three times by both workers ticking at once.
    for (let step = 0; step < 9; step++) {
      await Promise.all(workers.flatMap((w) => [w.tick(), w.tick()]));
      await Promise.all(workers.map((w) => w.runDueJobsOnce()));
      clock.advance(20_000);
    }
    const jobs = await db.selectFrom('jobs').selectAll().orderBy('run_at').execute();
    expect(jobs.map((j) => j.run_at.getTime() - start)).toEqual([0, 60_000, 120_000]);
    expect(jobs.every((j) => j.state === 'completed' && j.name === 'sweep')).toBe(true);
    expect(jobs[0]?.payload).toEqual({ kind: 'holds' });
    expect([...(await runCounts()).values()]).toEqual([1, 1, 1]);

    // Ten idle minutes later the missed periods collapse into one firing, still on the minute grid.
    clock.set(new Date(start + 10 * 60_000 + 5_000));
    await Promise.all(workers.map((w) => w.tick()));
    expect(await db.selectFrom('jobs').select('id').where('state', '=', 'available').execute()).toHaveLength(
      1,
    );
    const schedule = await db.selectFrom('job_schedules').selectAll().executeTakeFirstOrThrow();
    expect(schedule.next_run_at.getTime() - start).toBe(11 * 60_000);
  });

  it('keep their next run across restarts', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00.000Z');
    const schedules = [{ name: 'expire', everySeconds: 3600, jobName: 'expire' }];
    const first = worker(clock, { schedules, handlers: { expire: recordRun() } });
    expect(await first.tick()).toBe(1);
    clock.advance(60_000);
    const restarted = worker(clock, { schedules, handlers: { expire: recordRun() } });
    expect(await restarted.tick()).toBe(0);
    clock.advance(3600_000);
    expect(await restarted.tick()).toBe(1);
  });
});

describe('stop', () => {
  it('lets running jobs finish within the grace period and releases the rest unconsumed', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00.000Z');
    const finishGate = deferred();
    const aborted: string[] = [];
    const a = worker(clock, {
      workerId: 'a',
      concurrency: 2,
      handlers: {
        finishes: async (job, ctx) => {
          await finishGate.promise;
          await recordRun()(job, ctx);
        },
        hangs: (job, ctx) =>
          new Promise((resolve) =>
            ctx.signal.addEventListener('abort', () => (aborted.push(job.id), resolve())),
          ),
      },
    });
    const finishes = await enqueueJob(db, clock, {
      name: 'finishes',
      runAt: new Date(clock.now().getTime() - 2),
    });
    const hangs = await enqueueJob(db, clock, { name: 'hangs', runAt: new Date(clock.now().getTime() - 1) });
    const waiting = await enqueueJob(db, clock, { name: 'hangs' });

    await a.start();
    await waitFor('two running jobs', async () => (await runningIds()).length === 2);
    const stopping = a.stop({ graceMs: 300 });
    finishGate.resolve();
    await stopping;

    expect(await getJob(db, finishes)).toMatchObject({ state: 'completed', attempts: 1 });
    expect(await getJob(db, hangs)).toMatchObject({
      state: 'available',
      attempts: 0,
      locked_by: null,
      locked_until: null,
    });
    expect(await getJob(db, waiting)).toMatchObject({ state: 'available', attempts: 0 });
    expect(aborted).toEqual([hangs]);

    const b = worker(clock, { workerId: 'b', handlers: { hangs: recordRun() } });
    expect(await b.runDueJobsOnce()).toBe(2);
    expect(await runCounts()).toEqual(
      new Map([
        [finishes, 1],
        [hangs, 1],
        [waiting, 1],
      ]),
    );
    expect(await getJob(db, hangs)).toMatchObject({ state: 'completed', attempts: 1 });
  });
});

describe('leases', () => {
  it('are renewed while a long job runs, and the handler is aborted once another worker holds the job', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00.000Z');
    const leaseMs = 60;
    let aborted = false;
    const long = worker(clock, {
      workerId: 'long',
      leaseMs,
      handlers: {
        long: (_job, ctx) =>
          new Promise((resolve) =>
            ctx.signal.addEventListener('abort', () => {
              aborted = true;
              resolve();
            }),
          ),
      },
    });
    const id = await enqueueJob(db, clock, { name: 'long' });
    const run = long.runDueJobsOnce();
    await waitFor('the claim', async () => (await getJob(db, id))?.state === 'running');
    const firstLease = (await getJob(db, id))?.locked_until?.getTime() ?? 0;
    clock.advance(leaseMs - 1);
    await waitFor(
      'a renewal',
      async () => ((await getJob(db, id))?.locked_until?.getTime() ?? 0) > firstLease,
    );
    clock.advance(leaseMs - 1);
    const rival = worker(clock, { workerId: 'rival', handlers: { long: recordRun() } });
    expect(await rival.runDueJobsOnce()).toBe(0);

    await db.updateTable('jobs').set({ locked_by: 'rival' }).where('id', '=', id).execute();
    await run;
    expect(aborted).toBe(true);
    expect(await getJob(db, id)).toMatchObject({ state: 'running', locked_by: 'rival' });
  });

  it('fail a job whose worker vanished on its last attempt, and ignore that worker if it comes back', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00.000Z');
    const gate = deferred();
    const stalled = worker(clock, {
      workerId: 'stalled',
      leaseMs: 30_000,
      handlers: { pay: () => gate.promise },
    });
    const id = await enqueueJob(db, clock, { name: 'pay', maxAttempts: 1 });
    const stalledRun = stalled.runDueJobsOnce();
    await waitFor('the claim', async () => (await getJob(db, id))?.state === 'running');

    const other = worker(clock, { workerId: 'other', handlers: { pay: recordRun() } });
    await other.tick();
    expect((await getJob(db, id))?.state).toBe('running');
    clock.advance(30_001);
    await other.tick();
    expect(await other.runDueJobsOnce()).toBe(0);
    const failed = await getJob(db, id);
    expect(failed).toMatchObject({ state: 'failed', attempts: 1, locked_by: null });
    expect(failed?.last_error).toMatch(/lease of stalled expired/);

    gate.resolve();
    await stalledRun;
    expect((await getJob(db, id))?.state).toBe('failed');
  });
});

describe('on PostgreSQL', () => {
  it.skipIf(!onPostgres)('three concurrent workers run every job exactly once', async () => {
    const jobCount = 300;
    await db
      .insertInto('jobs')
      .values(
        Array.from({ length: jobCount }, (_, i) => ({
          id: `job_bulk_${i}`,
          name: 'work',
          payload: '{}',
          state: 'available' as const,
          max_attempts: 3,
          run_at: new Date(Date.now() - 1000),
          created_at: new Date(),
          updated_at: new Date(),
        })),
      )
      .execute();
    const pools = [1, 2, 3].map(() => openPostgres(testDb.url ?? '', 3));
    const workers = pools.map((pool, i) =>
      createWorker({
        db: pool.db,
        clock: systemClock,
        log: quiet,
        workerId: `w${i}`,
        concurrency: 4,
        pollIntervalMs: 10,
        handlers: { work: recordRun(pool.db) },
      }),
    );
    try {
      await Promise.all(workers.map((w) => w.start()));
      await waitFor('all jobs to complete', async () => {
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM jobs WHERE state = 'completed'`.execute(db);
        return rows[0]?.n === jobCount;
      });
    } finally {
      await Promise.all(workers.map((w) => w.stop({ graceMs: 1000 })));
      await Promise.all(pools.map((p) => p.close()));
    }
    const counts = await runCounts();
    expect(counts.size).toBe(jobCount);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    const { rows } = await sql<{ worker: string; n: number }>`
      SELECT worker, count(*)::int AS n FROM job_test_runs GROUP BY worker`.execute(db);
    // Not a fairness requirement; it shows the three really competed for the same rows.
    expect(rows.length).toBeGreaterThan(1);
    const attempts = await db.selectFrom('jobs').select('attempts').distinct().execute();
    expect(attempts).toEqual([{ attempts: 1 }]);
  });

  it.skipIf(!onPostgres)(
    'a worker killed mid-job loses it to another worker once its lease expires, and nothing is lost or doubled',
    async () => {
      const past = new Date(Date.now() - 10_000);
      const slow = await enqueueJob(db, systemClock, { name: 'slow', runAt: past });
      const quick = await Promise.all(
        [1, 2].map(() => enqueueJob(db, systemClock, { name: 'quick', runAt: new Date(past.getTime() + 1) })),
      );

      const script = fileURLToPath(new URL('../../../test/support/job-worker-child.ts', import.meta.url));
      const child = spawn(process.execPath, ['--import', 'tsx', script, testDb.url ?? '', 'doomed'], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('the child worker never started the job')), 20_000);
          child.stdout.on('data', (chunk: Buffer) => {
            if (chunk.toString().includes(`started ${slow}`)) {
              clearTimeout(timer);
              resolve();
            }
          });
          child.once('exit', (code) => reject(new Error(`the child worker exited early (${code})`)));
        });
      } finally {
        child.kill('SIGKILL');
        await exited;
      }
      expect(await getJob(db, slow)).toMatchObject({ state: 'running', locked_by: 'doomed', attempts: 1 });

      // The survivor's clock starts at real time, then moves past the dead worker's lease.
      const clock = new ManualClock(new Date());
      const survivor = worker(clock, {
        workerId: 'survivor',
        handlers: { slow: recordRun(), quick: recordRun() },
      });
      expect(await survivor.runDueJobsOnce()).toBe(2);
      expect((await getJob(db, slow))?.locked_by).toBe('doomed');
      clock.advance(5_000 + 1_000);
      expect(await survivor.runDueJobsOnce()).toBe(1);

      expect(await runCounts()).toEqual(new Map([slow, ...quick].map((id) => [id, 1])));
      const done = await getJob(db, slow);
      expect(done).toMatchObject({ state: 'completed', attempts: 2, locked_by: null });
      expect(done?.last_error).toMatch(/lease of doomed expired/);
    },
    30_000,
  );
});

async function runningIds(): Promise<string[]> {
  const rows = await db.selectFrom('jobs').select('id').where('state', '=', 'running').execute();
  return rows.map((r) => r.id);
}
