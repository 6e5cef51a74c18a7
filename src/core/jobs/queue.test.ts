import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { ManualClock } from '../clock.ts';
import { withTransaction, type Db } from '../db/database.ts';
import { enqueueJob, getJob, listFailedJobs, retryFailedJob } from './queue.ts';

let testDb: TestDatabase;
let db: Db;
const clock = new ManualClock('2026-03-01T00:00:00.000Z');

beforeAll(async () => {
  testDb = await createTestDatabase();
  db = testDb.handle.db;
}, 60_000);

afterAll(async () => {
  await testDb?.drop();
});

describe('enqueueJob', () => {
  it('writes nothing when the caller’s transaction rolls back', async () => {
    let enqueuedId = '';
    await expect(
      withTransaction(db, async (tx) => {
        enqueuedId = await enqueueJob(tx, clock, { name: 'rollback.probe', payload: { n: 1 } });
        throw new Error('domain write failed');
      }),
    ).rejects.toThrow('domain write failed');
    expect(enqueuedId).toMatch(/^job_/);
    expect(await getJob(db, enqueuedId)).toBeUndefined();
    const rows = await db.selectFrom('jobs').select('id').where('name', '=', 'rollback.probe').execute();
    expect(rows).toEqual([]);
  });

  it('makes the job visible once the transaction commits, due now unless told otherwise', async () => {
    const runAt = new Date('2026-03-02T00:00:00.000Z');
    const ids = await withTransaction(db, async (tx) => [
      await enqueueJob(tx, clock, { name: 'commit.probe', payload: [1, 2, 3] }),
      await enqueueJob(tx, clock, { name: 'commit.probe', runAt, maxAttempts: 2 }),
    ]);
    const [first, second] = await Promise.all(ids.map((id) => getJob(db, id)));
    expect(first).toMatchObject({
      state: 'available',
      payload: [1, 2, 3],
      attempts: 0,
      max_attempts: 5,
      run_at: clock.now(),
      locked_by: null,
      last_error: null,
    });
    expect(second).toMatchObject({ state: 'available', payload: {}, max_attempts: 2, run_at: runAt });
  });

  it('keeps one unfinished job per singleton key and frees the key once it finishes', async () => {
    const key = { name: 'singleton.probe', singletonKey: 'acct_1' };
    const first = await enqueueJob(db, clock, key);
    expect(await enqueueJob(db, clock, { ...key, payload: { again: true } })).toBe(first);
    expect(await enqueueJob(db, clock, { ...key, singletonKey: 'acct_2' })).not.toBe(first);
    expect(await enqueueJob(db, clock, { name: 'singleton.other', singletonKey: 'acct_1' })).not.toBe(first);

    await db.updateTable('jobs').set({ state: 'completed' }).where('id', '=', first).execute();
    const next = await enqueueJob(db, clock, key);
    expect(next).not.toBe(first);
    expect((await getJob(db, next))?.state).toBe('available');
  });

  it('refuses a maxAttempts below one', async () => {
    await expect(enqueueJob(db, clock, { name: 'bad.probe', maxAttempts: 0 })).rejects.toThrow(/maxAttempts/);
  });
});

describe('failed jobs', () => {
  it('are listed with their last error and can be put back in the queue', async () => {
    const id = await enqueueJob(db, clock, { name: 'failed.probe' });
    const failedAt = clock.advance(1000);
    await db
      .updateTable('jobs')
      .set({ state: 'failed', attempts: 5, last_error: 'Error: venue down', finished_at: failedAt })
      .where('id', '=', id)
      .execute();

    const failed = await listFailedJobs(db, { name: 'failed.probe' });
    expect(failed).toEqual([expect.objectContaining({ id, attempts: 5, last_error: 'Error: venue down' })]);

    expect(await retryFailedJob(db, clock, id)).toBe(true);
    expect(await retryFailedJob(db, clock, id)).toBe(false);
    expect(await getJob(db, id)).toMatchObject({
      state: 'available',
      attempts: 0,
      finished_at: null,
      run_at: failedAt,
    });
    expect(await listFailedJobs(db, { name: 'failed.probe' })).toEqual([]);
  });
});
