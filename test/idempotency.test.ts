// Idempotency-Key as a client relies on it: a retry replays the stored answer byte for byte and
// the write happens once; a reused key with another payload is refused; errors are not stored;
// keys live 7 days. The races run on PostgreSQL only (PGlite has one session, so it proves nothing).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { ManualClock } from '../src/core/clock.ts';
import { IDEMPOTENCY_TTL_MS } from '../src/core/http/idempotency.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { checkErrorShape, expectErrorBody } from './support/error-body.ts';
import {
  countIdempotencyKeys,
  countProbeWrites,
  createProbeTable,
  gate,
  sleep,
  writeProbe,
} from './support/probes.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);
if (!onPostgres) {
  console.warn(
    'idempotency races skipped: DATABASE_URL is unset, and PGlite runs one transaction at a time.',
  );
}

let heldEntered: () => void = () => undefined;
const HELD_MS = 4000;

const clock = new ManualClock('2026-03-01T12:00:00.000Z');
let t: TestApp;
const inject = (options: InjectOptions) => t.app.fastify.inject(options);

const post = (url: string, payload: string | object, key?: string) =>
  inject({
    method: 'POST',
    url,
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
  });

beforeAll(async () => {
  t = await createTestApp({
    clock,
    poolSize: 10,
    extraRoutes: [
      writeProbe({ url: '/v1/probe/items', operationId: 'probeItemsCreate' }),
      writeProbe({ url: '/v1/probe/other', operationId: 'probeOtherCreate' }),
      writeProbe({ url: '/v1/probe/boxes/{box}/items', operationId: 'probeBoxItemsCreate' }),
      writeProbe({ url: '/v1/probe/pending', operationId: 'probePendingCreate', status: 202 }),
      writeProbe({ url: '/v1/probe/slow', operationId: 'probeSlowCreate', inside: () => sleep(200) }),
      writeProbe({
        url: '/v1/probe/locked',
        operationId: 'probeLockedCreate',
        // A domain write that has to wait for a row another transaction holds.
        inside: async (tx) => {
          await sql`SELECT id FROM probe_locks WHERE id = 1 FOR UPDATE`.execute(tx);
        },
      }),
      writeProbe({
        url: '/v1/probe/held',
        operationId: 'probeHeldCreate',
        inside: async () => {
          heldEntered();
          await sleep(HELD_MS);
        },
      }),
    ],
  });
  await createProbeTable(t.deps.db);
  await sql`CREATE TABLE probe_locks (id integer PRIMARY KEY)`.execute(t.deps.db);
  await sql`INSERT INTO probe_locks VALUES (1)`.execute(t.deps.db);
});
afterAll(async () => {
  await t?.close();
});

describe('Idempotency-Key', () => {
  it('a retry replays the stored status and body byte for byte, and the write happens once', async () => {
    const first = await post('/v1/probe/items', { name: 'replay', amount: '5' }, 'key-replay');
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.json()).toMatchObject({ name: 'replay', amount: '5', id: expect.stringMatching(/^prb_/) });

    for (let i = 0; i < 3; i++) {
      const again = await post('/v1/probe/items', { name: 'replay', amount: '5' }, 'key-replay');
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers['content-type']).toMatch(/^application\/json/);
      expect(again.body).toBe(first.body);
    }
    // The same payload serialized with another key order is the same request.
    const reordered = await post('/v1/probe/items', '{"amount":"5","name":"replay"}', 'key-replay');
    expect(reordered.headers['idempotent-replayed']).toBe('true');
    expect(reordered.body).toBe(first.body);

    expect(await countProbeWrites(t.deps.db, '/v1/probe/items')).toBe(1);
  });

  it('without a key, two identical requests are two writes', async () => {
    const before = await countProbeWrites(t.deps.db, '/v1/probe/other');
    const a = await post('/v1/probe/other', { name: 'nokey', amount: '1' });
    const b = await post('/v1/probe/other', { name: 'nokey', amount: '1' });
    expect([a.statusCode, b.statusCode]).toEqual([201, 201]);
    expect(a.json().id).not.toBe(b.json().id);
    expect(await countProbeWrites(t.deps.db, '/v1/probe/other')).toBe(before + 2);
  });

  it('the same key with a different payload is 422 IDEMPOTENCY_CONFLICT and writes nothing', async () => {
    const first = await post('/v1/probe/items', { name: 'conflict', amount: '5' }, 'key-conflict');
    expect(first.statusCode).toBe(201);
    const before = await countProbeWrites(t.deps.db);

    const res = await post('/v1/probe/items', { name: 'conflict', amount: '6' }, 'key-conflict');
    const body = expectErrorBody(res, 422, 'IDEMPOTENCY_CONFLICT');
    expect(body.message).toMatch(/different/);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(await countProbeWrites(t.deps.db)).toBe(before);

    // The stored answer is untouched: the original payload still replays it.
    const original = await post('/v1/probe/items', { name: 'conflict', amount: '5' }, 'key-conflict');
    expect(original.body).toBe(first.body);
  });

  it('a key is scoped by method and path: the same key elsewhere is independent', async () => {
    const payload = { name: 'scoped', amount: '7' };
    const onItems = await post('/v1/probe/items', payload, 'key-scoped');
    const onOther = await post('/v1/probe/other', payload, 'key-scoped');
    const inBoxA = await post('/v1/probe/boxes/a/items', payload, 'key-scoped');
    const inBoxB = await post('/v1/probe/boxes/b/items', payload, 'key-scoped');
    for (const res of [onItems, onOther, inBoxA, inBoxB]) {
      expect(res.statusCode).toBe(201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    }
    const ids = new Set([onItems, onOther, inBoxA, inBoxB].map((r) => r.json().id));
    expect(ids.size).toBe(4);
    expect(await countProbeWrites(t.deps.db, '/v1/probe/boxes/{box}/items')).toBe(2);

    // Each path replays its own answer.
    const replayB = await post('/v1/probe/boxes/b/items', payload, 'key-scoped');
    expect(replayB.headers['idempotent-replayed']).toBe('true');
    expect(replayB.body).toBe(inBoxB.body);
  });

  it('errors are not stored: a failed request, then a corrected retry with the same key, runs', async () => {
    const writesBefore = await countProbeWrites(t.deps.db, '/v1/probe/items');

    // Refused inside the transaction: the write and the key claim roll back together.
    const refused = await post('/v1/probe/items', { name: 'fixme', amount: '0' }, 'key-fix');
    expectErrorBody(refused, 422, 'POLICY_VIOLATION');
    expect(await countProbeWrites(t.deps.db, '/v1/probe/items')).toBe(writesBefore);
    // Repeating the failing request runs it again (a fresh refusal, not a replay).
    const refusedAgain = await post('/v1/probe/items', { name: 'fixme', amount: '0' }, 'key-fix');
    expectErrorBody(refusedAgain, 422, 'POLICY_VIOLATION');
    expect(refusedAgain.headers['idempotent-replayed']).toBeUndefined();

    // The corrected request has another payload; it would conflict only if the error had been stored.
    const fixed = await post('/v1/probe/items', { name: 'fixme', amount: '3' }, 'key-fix');
    expect(fixed.statusCode).toBe(201);
    expect(fixed.headers['idempotent-replayed']).toBeUndefined();
    expect(await countProbeWrites(t.deps.db, '/v1/probe/items')).toBe(writesBefore + 1);

    // Refused by validation before any handler ran: also not stored.
    const invalid = await post('/v1/probe/items', { name: 'fixme', amount: 'three' }, 'key-fix-2');
    expectErrorBody(invalid, 400, 'INVALID_REQUEST');
    const fixed2 = await post('/v1/probe/items', { name: 'fixme', amount: '4' }, 'key-fix-2');
    expect(fixed2.statusCode).toBe(201);
  });

  it('a 202 (pending) answer is not stored: a retry runs again to re-read it', async () => {
    const a = await post('/v1/probe/pending', { name: 'pending', amount: '1' }, 'key-pending');
    const b = await post('/v1/probe/pending', { name: 'pending', amount: '1' }, 'key-pending');
    expect([a.statusCode, b.statusCode]).toEqual([202, 202]);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(a.json().id).not.toBe(b.json().id);
  });

  it('a key is kept 7 days, then it can be reused for a new request', async () => {
    const first = await post('/v1/probe/other', { name: 'week', amount: '1' }, 'key-week');
    expect(first.statusCode).toBe(201);
    const writes = await countProbeWrites(t.deps.db, '/v1/probe/other');

    clock.advance(IDEMPOTENCY_TTL_MS - 60_000);
    expectErrorBody(
      await post('/v1/probe/other', { name: 'week', amount: '2' }, 'key-week'),
      422,
      'IDEMPOTENCY_CONFLICT',
    );
    const stillReplayed = await post('/v1/probe/other', { name: 'week', amount: '1' }, 'key-week');
    expect(stillReplayed.headers['idempotent-replayed']).toBe('true');
    expect(stillReplayed.body).toBe(first.body);

    clock.advance(61_000);
    const reused = await post('/v1/probe/other', { name: 'week', amount: '2' }, 'key-week');
    expect(reused.statusCode).toBe(201);
    expect(reused.headers['idempotent-replayed']).toBeUndefined();
    expect(reused.json()).toMatchObject({ amount: '2' });
    expect(await countProbeWrites(t.deps.db, '/v1/probe/other')).toBe(writes + 1);

    // The new request now owns the key for another 7 days.
    const replayNew = await post('/v1/probe/other', { name: 'week', amount: '2' }, 'key-week');
    expect(replayNew.body).toBe(reused.body);
    expect(replayNew.headers['idempotent-replayed']).toBe('true');
  });

  it('an invalid Idempotency-Key header is 400 and nothing is written', async () => {
    const keysBefore = await countIdempotencyKeys(t.deps.db);
    const writesBefore = await countProbeWrites(t.deps.db);
    for (const key of ['k'.repeat(300), 'has space', 'naïve']) {
      const res = await inject({
        method: 'POST',
        url: '/v1/probe/items',
        payload: { name: 'badkey', amount: '1' },
        headers: { 'idempotency-key': Buffer.from(key, 'utf8').toString('latin1') },
      });
      const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
      expect(body.message).toContain('Idempotency-Key');
    }
    const ok = await post('/v1/probe/items', { name: 'badkey', amount: '1' }, 'k'.repeat(255));
    expect(ok.statusCode).toBe(201);
    expect(await countProbeWrites(t.deps.db)).toBe(writesBefore + 1);
    expect(await countIdempotencyKeys(t.deps.db)).toBe(keysBefore + 1);
  });
});

describe('Idempotency-Key races (PostgreSQL)', () => {
  let base = '';
  beforeAll(async () => {
    if (!onPostgres) return;
    await t.app.fastify.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.fastify.server.address();
    if (!address || typeof address === 'string') throw new Error('no listening address');
    base = `http://127.0.0.1:${address.port}`;
  });

  const send = (path: string, payload: object, key: string) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(payload),
    });

  it.skipIf(!onPostgres)('20 concurrent identical requests with one key make exactly one write', async () => {
    const payload = { name: 'race', amount: '9' };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => send('/v1/probe/slow', payload, 'key-race')),
    );
    const texts = await Promise.all(responses.map((r) => r.text()));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(new Set(texts).size).toBe(1);
    const replayed = responses.filter((r) => r.headers.get('idempotent-replayed') === 'true');
    expect(replayed.length).toBe(19);
    expect(await countProbeWrites(t.deps.db, '/v1/probe/slow')).toBe(1);
    const stored = await sql<{ response_status: number; response_body: string }>`
      SELECT response_status, response_body FROM idempotency_keys WHERE key = 'key-race'`.execute(t.deps.db);
    expect(stored.rows).toEqual([{ response_status: 201, response_body: texts[0] }]);
  });

  it.skipIf(!onPostgres)(
    'a duplicate that outwaits a first request still in flight is 409, then the result replays',
    async () => {
      const payload = { name: 'held', amount: '2' };
      const entered = new Promise<void>((resolve) => {
        heldEntered = resolve;
      });
      const firstPending = send('/v1/probe/held', payload, 'key-held');
      await entered; // the first holds the claim inside its transaction now

      const started = performance.now();
      const second = await send('/v1/probe/held', payload, 'key-held');
      const waited = performance.now() - started;
      const secondBody = (await second.json()) as Record<string, unknown>;
      expect(second.status).toBe(409);
      checkErrorShape(secondBody, second.headers.get('x-request-id'), 'IDEMPOTENCY_CONFLICT');
      expect(secondBody['message']).toMatch(/in flight/);
      expect(waited).toBeGreaterThan(2500); // it waited for the first before giving up

      const first = await firstPending;
      const firstText = await first.text();
      expect(first.status).toBe(201);

      const third = await send('/v1/probe/held', payload, 'key-held');
      expect(third.status).toBe(201);
      expect(third.headers.get('idempotent-replayed')).toBe('true');
      expect(await third.text()).toBe(firstText);
      expect(await countProbeWrites(t.deps.db, '/v1/probe/held')).toBe(1);
    },
    20_000,
  );

  it.skipIf(!onPostgres)(
    "the short wait for a key's first request does not cut short the domain write's own lock waits",
    async () => {
      const released = gate();
      const locked = gate();
      // Another transaction holds the row the probe's write needs, longer than the in-flight wait.
      const holder = t.deps.db.transaction().execute(async (tx) => {
        await sql`SELECT id FROM probe_locks WHERE id = 1 FOR UPDATE`.execute(tx);
        locked.open();
        await released.opened;
      });
      await locked.opened;
      setTimeout(released.open, HELD_MS);

      const res = await send('/v1/probe/locked', { name: 'locked', amount: '1' }, 'key-locked');
      await holder;
      expect(res.status, await res.clone().text()).toBe(201);
      expect(await countProbeWrites(t.deps.db, '/v1/probe/locked')).toBe(1);
    },
    20_000,
  );
});
