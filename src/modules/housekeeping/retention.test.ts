// Retention rules that came with offboarding: every period of the spec's section 8 has an hourly
// job; the signed webhook envelope (raw body and signature actually sent) is kept with the event
// past the outbox row's 14 days and compacted to its hash after 90; statement exports of
// offboarded accounts leave the object store and the table. Time moves with a ManualClock.

import { testConfig } from '../../config.ts';
import { keyringOf } from '../../core/sealing.ts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import {
  bearer,
  createAccountWithSession,
  createKey,
  randomAddress,
} from '../../../test/support/identity.ts';
import { ManualClock } from '../../core/clock.ts';
import { withTransaction } from '../../core/db/database.ts';
import type { Job } from '../../core/jobs/index.ts';
import { createLogger } from '../../core/log.ts';
import { jobHandlers, jobSchedules } from '../../jobs.ts';
import { emitEvent } from '../events/index.ts';
import { createWebhookDispatcher } from '../webhooks/dispatcher.ts';
import { envelopeHash } from '../webhooks/store.ts';
import { buildAccountExport } from '../../lifecycle/export.ts';
import { purgeOffboardedStatementExports } from '../../lifecycle/purge.ts';
import { compactWebhookEnvelopes, WEBHOOK_ENVELOPE_RETENTION_MS } from './index.ts';

const DAY_MS = 86_400_000;
const clock = new ManualClock('2026-07-01T00:00:00.000Z');
let t: TestApp;

interface Received {
  eventId: string;
  signature: string;
  body: string;
}

let server: Server;
let receiverUrl = '';
let receiverUp = true;
const received: Received[] = [];

beforeAll(async () => {
  t = await createTestApp({ clock });
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (!receiverUp) return void res.writeHead(503).end();
      received.push({
        eventId: String(req.headers['x-service-event-id']),
        signature: String(req.headers['x-service-signature']),
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await t?.close();
});

const runJob = (name: string) =>
  jobHandlers(t.deps)[name]!({} as Job, {
    attempt: 1,
    workerId: 'test',
    signal: new AbortController().signal,
  });

const dispatcher = () =>
  createWebhookDispatcher({
    db: t.db.db,
    clock,
    log: createLogger('silent'),
    keyring: keyringOf(testConfig().sealingKeys),
    production: false,
  });

async function accountWithEndpoint() {
  const account = await createAccountWithSession(t.db.db, { now: clock.now() });
  const key = await createKey(t.db.db, account.accountId, {
    scopes: ['admin'],
    now: clock.now(),
    expiresAt: new Date(clock.now().getTime() + 365 * DAY_MS),
  });
  const put = await t.app.fastify.inject({
    method: 'PUT',
    url: '/v1/webhooks/endpoint',
    headers: bearer(key.token),
    payload: { url: receiverUrl },
  });
  expect(put.statusCode, put.body).toBe(200);
  return account;
}

const emit = (accountId: string, kind = 'test.happened') =>
  withTransaction(t.db.db, (tx) => emitEvent(tx, clock, { accountId, kind, payload: { at: clock.now() } }));

const envelopeOf = (eventId: string) =>
  t.db.db
    .selectFrom('webhook_envelopes')
    .selectAll()
    .where('event_id', '=', eventId)
    .executeTakeFirstOrThrow();

describe('job table', () => {
  it('runs every retention period of section 8 as an hourly job', () => {
    const handlers = jobHandlers(t.deps);
    for (const name of [
      'housekeeping.idempotency_keys', // 7 days
      'housekeeping.payment_challenges', // unused 1 day, used 7 days
      'housekeeping.network_context', // 90 days
      'housekeeping.webhook_outbox', // 14 days
      'housekeeping.webhook_envelopes', // compacted after 90 days
      'housekeeping.test_accounts', // 7 days (development)
      'housekeeping.statement_exports', // offboarded accounts
      'housekeeping.siwe_nonces',
    ]) {
      expect(handlers[name], name).toBeTypeOf('function');
      expect(jobSchedules.find((s) => s.jobName === name)?.everySeconds, name).toBe(3600);
    }
  });
});

describe('signed webhook envelopes', () => {
  it('keeps what was sent with the event past the outbox, then compacts it to its hash after 90 days', async () => {
    const account = await accountWithEndpoint();
    const old = await emit(account.accountId);
    await dispatcher().drain();
    const sent = received.find((r) => r.eventId === old);
    expect(sent).toBeDefined();
    expect(await envelopeOf(old)).toMatchObject({
      account_id: account.accountId,
      body: sent!.body,
      signature: sent!.signature,
      attempts: 1,
      first_signed_at: clock.now(),
      hash: null,
      compacted_at: null,
    });

    // The outbox row goes after 14 days; the envelope stays.
    clock.advance(15 * DAY_MS);
    await runJob('housekeeping.webhook_outbox');
    expect(
      await t.db.db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', old).execute(),
    ).toEqual([]);
    expect((await envelopeOf(old)).body).toBe(sent!.body);

    // A newer event, first refused and then delivered: the envelope holds the latest attempt.
    clock.advance(74 * DAY_MS);
    const recent = await emit(account.accountId);
    const firstTry = clock.now();
    receiverUp = false;
    await dispatcher().drain();
    const refused = await envelopeOf(recent);
    expect(refused).toMatchObject({ attempts: 1, hash: null });
    receiverUp = true;
    clock.advance(60_000);
    await dispatcher().drain();
    const delivered = received.find((r) => r.eventId === recent);
    expect(await envelopeOf(recent)).toMatchObject({
      attempts: 2,
      signature: delivered!.signature,
      body: delivered!.body,
      first_signed_at: firstTry,
      last_signed_at: clock.now(),
    });
    expect(delivered!.signature).not.toBe(refused.signature);

    // 90 days and a moment after the first: only the old one is compacted.
    const oldFirst = (await envelopeOf(old)).first_signed_at;
    clock.set(new Date(new Date(oldFirst).getTime() + WEBHOOK_ENVELOPE_RETENTION_MS + 1));
    await runJob('housekeeping.webhook_envelopes');
    expect(await envelopeOf(old)).toMatchObject({
      body: null,
      signature: null,
      hash: envelopeHash(sent!.signature, sent!.body),
      compacted_at: clock.now(),
    });
    expect((await envelopeOf(recent)).body).toBe(delivered!.body);
    // The event itself stays.
    expect(await t.db.db.selectFrom('events').select('id').where('id', '=', old).execute()).toHaveLength(1);
    expect(await compactWebhookEnvelopes(t.db.db, clock)).toBe(0);
  });

  it('never touches dead letters: their bodies stay listed until offboarding', async () => {
    const account = await accountWithEndpoint();
    const eventId = await emit(account.accountId, 'test.dead');
    await t.db.db
      .insertInto('webhook_dead_letters')
      .values({
        account_id: account.accountId,
        event_id: eventId,
        kind: 'test.dead',
        body: '{"dead":true}',
        attempts: 9,
        last_status: 503,
        last_error: 'HTTP 503',
        first_attempt_at: clock.now(),
        dead_at: clock.now(),
      })
      .execute();
    clock.advance(200 * DAY_MS);
    await runJob('housekeeping.webhook_envelopes');
    await runJob('housekeeping.webhook_outbox');
    const letter = await t.db.db
      .selectFrom('webhook_dead_letters')
      .select('body')
      .where('event_id', '=', eventId)
      .executeTakeFirstOrThrow();
    expect(letter.body).toBe('{"dead":true}');
  });
});

describe('statement exports of offboarded accounts', () => {
  async function accountWithStatement() {
    const account = await createAccountWithSession(t.db.db, { now: clock.now() });
    const wallet = randomAddress();
    const res = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/statements',
      query: { wallet, period: clock.now().toISOString().slice(0, 7) },
      headers: bearer(account.sessionToken),
    });
    expect(res.statusCode, res.body).toBe(200);
    return { ...account, key: res.json<{ export: { key: string } }>().export.key };
  }

  it('deletes the objects and their rows, and only those of offboarded accounts', async () => {
    const leaving = await accountWithStatement();
    const staying = await accountWithStatement();
    const store = t.deps.objectStore!;
    await t.db.db
      .updateTable('accounts')
      .set({ offboarded_at: clock.now() })
      .where('id', '=', leaving.accountId)
      .execute();

    // Without an object store nothing is deleted: the rows still name the objects.
    expect(await purgeOffboardedStatementExports(t.db.db, undefined)).toBe(0);
    expect((await buildAccountExport(t.db.db, clock, leaving.accountId)).statements_manifest.keys).toEqual([
      leaving.key,
    ]);

    await runJob('housekeeping.statement_exports');
    expect(await store.head(leaving.key)).toBeNull();
    expect((await buildAccountExport(t.db.db, clock, leaving.accountId)).statements_manifest.keys).toEqual(
      [],
    );
    expect(await store.head(staying.key)).not.toBeNull();
    expect((await buildAccountExport(t.db.db, clock, staying.accountId)).statements_manifest.keys).toEqual([
      staying.key,
    ]);
    expect(await purgeOffboardedStatementExports(t.db.db, store)).toBe(0);
  });
});
