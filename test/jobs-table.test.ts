// The job table (src/jobs.ts): the periodic housekeeping the workers run, driven by the clock.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.ts';
import type { Job } from '../src/core/jobs/index.ts';
import { jobHandlers, jobSchedules, jobTable } from '../src/jobs.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { capturedLog } from './support/log-lines.ts';

const clock = new ManualClock('2026-05-01T00:00:00.000Z');
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ clock });
});
afterAll(async () => {
  await t.close();
});

const run = (name: string) =>
  jobHandlers(t.deps)[name]!({} as Job, {
    attempt: 1,
    workerId: 'test',
    signal: new AbortController().signal,
  });

describe('job table', () => {
  it('drops a job whose payload does not match its schema, running nothing', async () => {
    const { log, lines } = capturedLog('warn');
    const handlers = jobHandlers({ ...t.deps, log });
    const ctx = { attempt: 1, workerId: 'test', signal: new AbortController().signal };
    for (const payload of [null, { intent_id: 5 }, { rebalance_id: ['x'] }]) {
      await handlers['intents.execute']!({ id: 'j1', payload } as Job, ctx);
      await handlers['rebalances.burn']!({ id: 'j2', payload } as Job, ctx);
    }
    expect(lines.map((l) => [l.name, l.msg])).toEqual(
      Array.from({ length: 3 }, () => [
        ['intents.execute', 'job payload does not match its schema; dropped'],
        ['rebalances.burn', 'job payload does not match its schema; dropped'],
      ]).flat(),
    );
    const enqueued = await t.db.db.selectFrom('jobs').select('name').execute();
    expect(enqueued).toEqual([]);
  });

  it('names every job once, and schedules a handler for every periodic job', () => {
    expect(new Set(jobTable.map((j) => j.name)).size).toBe(jobTable.length);
    const handlers = jobHandlers(t.deps);
    for (const schedule of jobSchedules)
      expect(handlers[schedule.jobName], schedule.name).toBeTypeOf('function');
  });

  it('deletes stored idempotent responses after their 7 days, and only those', async () => {
    const replay = {
      method: 'POST' as const,
      url: '/v1/screenings',
      payload: { address: '0x52908400098527886E0F7030069857D2E4169EE7' },
    };
    const first = await t.app.fastify.inject({ ...replay, headers: { 'idempotency-key': 'old' } });
    expect(first.statusCode, first.body).toBe(200);
    clock.advance(6 * 24 * 3600 * 1000);
    await t.app.fastify.inject({ ...replay, headers: { 'idempotency-key': 'recent' } });
    clock.advance(24 * 3600 * 1000 + 1);
    await run('housekeeping.idempotency_keys');
    const keys = await t.db.db.selectFrom('idempotency_keys').select('key').execute();
    expect(keys.map((k) => k.key)).toEqual(['recent']);
  });
});
