// The public feature-request list: newest first, bounded by `limit`, and never a body or a
// requester in the answer.

import { buildTokenRegistry } from '../registry/index.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../app.ts';
import { testConfig } from '../../config.ts';
import { refuseAllAuthenticator } from '../../../test/support/refuse-all-authenticator.ts';
import { systemClock } from '../../core/clock.ts';
import { newId } from '../../core/ids.ts';
import { createLogger } from '../../core/log.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import { insertFeatureRequest, type FeatureRequestStatus } from './index.ts';

let database: TestDatabase;
let app: App;

const STATUSES: FeatureRequestStatus[] = ['open', 'planned', 'shipped', 'declined'];
const BASE = Date.parse('2026-02-01T00:00:00.000Z');
const SECRET_BODY = 'PRIVATE-BODY-do-not-publish';
const SECRET_ACCOUNT = 'acct_private_requester';

interface ListedRequest {
  id: string;
  title: string;
  status: string;
  created_at: string;
}

/** Inserted rows, newest last; created minute by minute, the last two in the same instant. */
const inserted: { id: string; title: string; status: FeatureRequestStatus; createdAt: Date }[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  app = await buildApp({
    config: testConfig(),
    tokenRegistry: buildTokenRegistry('development'),
    db: database.handle.db,
    dbKind: database.kind,
    clock: systemClock,
    log: createLogger('silent'),
    authenticator: refuseAllAuthenticator,
  });
  // Inserted out of time order, so the list cannot pass by returning insertion order.
  const rows = Array.from({ length: 205 }, (_, i) => ({
    id: newId('fr'),
    title: `Feature request number ${i}`,
    status: STATUSES[i % STATUSES.length] ?? 'open',
    createdAt: new Date(BASE + Math.min(i, 203) * 60_000),
  }));
  const order = rows.map((_, i) => i).sort((a, b) => ((a * 7919) % 205) - ((b * 7919) % 205));
  for (const i of order) {
    const row = rows[i];
    if (!row) continue;
    await insertFeatureRequest(database.handle.db, {
      id: row.id,
      account_id: `${SECRET_ACCOUNT}_${i}`,
      title: row.title,
      body: `${SECRET_BODY} ${i}: a body long enough for the limit.`,
      status: row.status,
      created_at: row.createdAt,
      updated_at: row.createdAt,
    });
  }
  // Same instant (rows 203 and 204): the one inserted later is the newer.
  inserted.push(...rows.slice(0, 203));
  const tied = order.filter((i) => i >= 203).map((i) => rows[i]);
  for (const r of tied) if (r) inserted.push(r);
});
afterAll(async () => {
  await app?.fastify.close();
  await database?.drop();
});

const list = (query = '') => app.fastify.inject({ method: 'GET', url: `/v1/feedback${query}` });

describe('GET /v1/feedback', () => {
  it('lists the newest 100 requests, newest first, without a credential', async () => {
    const res = await list();
    expect(res.statusCode).toBe(200);
    const { requests } = res.json() as { requests: ListedRequest[] };
    const expected = [...inserted].reverse().slice(0, 100);
    expect(requests).toEqual(
      expected.map((r) => ({
        id: r.id,
        title: r.title,
        status: r.status,
        created_at: r.createdAt.toISOString(),
      })),
    );
    for (let i = 1; i < requests.length; i++) {
      expect(Date.parse(requests[i - 1]?.created_at ?? '')).toBeGreaterThanOrEqual(
        Date.parse(requests[i]?.created_at ?? ''),
      );
    }
  });

  it('publishes only id, title, status and created_at: never a body or a requester', async () => {
    const res = await list('?limit=200');
    const { requests } = res.json() as { requests: Record<string, unknown>[] };
    expect(requests).toHaveLength(200);
    for (const r of requests) expect(Object.keys(r).sort()).toEqual(['created_at', 'id', 'status', 'title']);
    expect(res.body).not.toContain(SECRET_BODY);
    expect(res.body).not.toContain(SECRET_ACCOUNT);
    expect(new Set(requests.map((r) => r['status']))).toEqual(new Set(STATUSES));
  });

  it.each([
    ['1', 1],
    ['37', 37],
    ['200', 200],
  ])('honours limit=%s', async (limit, count) => {
    const res = await list(`?limit=${limit}`);
    expect(res.statusCode).toBe(200);
    const { requests } = res.json() as { requests: ListedRequest[] };
    expect(requests).toHaveLength(count);
    expect(requests[0]?.id).toBe(inserted.at(-1)?.id);
  });

  it.each(['0', '201', '-1', '1.5', 'abc', ''])('refuses limit=%j with 400', async (limit) => {
    const body = expectErrorBody(await list(`?limit=${limit}`), 400, 'INVALID_REQUEST');
    expect(body.message).toContain('limit');
  });

  it('refuses an unknown query parameter by name', async () => {
    const body = expectErrorBody(await list('?limt=5'), 400, 'INVALID_REQUEST');
    expect(body.message).toContain('unknown field limt');
  });

  it('the table refuses a status outside open, planned, shipped, declined', async () => {
    await expect(
      insertFeatureRequest(database.handle.db, {
        id: newId('fr'),
        account_id: 'acct_x',
        title: 'A valid title here',
        body: 'A body that is long enough to store.',
        status: 'rejected' as FeatureRequestStatus,
        created_at: new Date(BASE),
        updated_at: new Date(BASE),
      }),
    ).rejects.toThrow(/check constraint/);
  });
});
