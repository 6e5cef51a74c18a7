// Housekeeping: each retention rule deletes exactly the rows past their period and keeps the
// rest; running any rule twice is harmless. Time moves with a ManualClock, never by sleeping.

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.ts';
import { withTransaction } from '../../core/db/database.ts';
import type { Job } from '../../core/jobs/index.ts';
import { jobHandlers, jobSchedules } from '../../jobs.ts';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { bearer, createAccount, createSession, randomAddress } from '../../../test/support/identity.ts';
import { recordAudit } from '../audit/index.ts';
import { issueChallenge } from '../auth/service.ts';
import { recordCredentialUse } from '../auth/store.ts';
import { emitEvent } from '../events/index.ts';
import { upsertEndpointUrl } from '../webhooks/store.ts';
import { purgeExpiredSiweNonces, purgeNetworkContext, purgeWebhookOutbox } from './index.ts';

const DAY_MS = 86_400_000;
const clock = new ManualClock('2026-06-01T00:00:00.000Z');
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ clock });
});
afterAll(async () => {
  await t?.close();
});

const runJob = (name: string) =>
  jobHandlers(t.deps)[name]!({} as Job, {
    attempt: 1,
    workerId: 'test',
    signal: new AbortController().signal,
  });

const network = { clientIp: '203.0.113.7', userAgent: 'housekeeping-test' };

async function countWhere(table: string, column: string, value: string): Promise<number> {
  const r = await sql<{ n: string }>`
    SELECT count(*) AS n FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ${value}`.execute(t.db.db);
  return Number(r.rows[0]?.n ?? 0);
}

describe('job table', () => {
  it('registers every housekeeping rule as an hourly job', () => {
    const handlers = jobHandlers(t.deps);
    for (const name of [
      'housekeeping.idempotency_keys',
      'housekeeping.siwe_nonces',
      'housekeeping.network_context',
      'housekeeping.webhook_outbox',
      'housekeeping.test_accounts',
    ]) {
      expect(handlers[name], name).toBeTypeOf('function');
      expect(jobSchedules.find((s) => s.jobName === name)?.everySeconds, name).toBe(3600);
    }
  });
});

describe('SIWE nonces', () => {
  it('deletes nonces expired more than a day ago and keeps the rest', async () => {
    const challenge = (tx: Parameters<typeof issueChallenge>[0]) =>
      issueChallenge(tx, clock, t.deps.config, {
        address: randomAddress() as `0x${string}`,
        chainId: 8453,
      });
    const old = await withTransaction(t.db.db, challenge);
    clock.advance(DAY_MS);
    const recent = await withTransaction(t.db.db, challenge);
    // old expired 1 day + 1 ms ago, recent 1 ms ago.
    clock.advance(10 * 60_000 + 1);
    const live = await withTransaction(t.db.db, challenge);

    expect(await purgeExpiredSiweNonces(t.db.db, clock)).toBe(1);
    const left = await t.db.db.selectFrom('siwe_nonces').select('nonce').execute();
    const nonces = left.map((r) => r.nonce);
    expect(nonces).not.toContain(old.nonce);
    expect(nonces).toEqual(expect.arrayContaining([recent.nonce, live.nonce]));

    expect(await purgeExpiredSiweNonces(t.db.db, clock)).toBe(0);
    await runJob('housekeeping.siwe_nonces');
    expect(await t.db.db.selectFrom('siwe_nonces').select('nonce').execute()).toHaveLength(nonces.length);
  });
});

describe('network context', () => {
  it('deletes network context and credential uses older than 90 days, keeping the audit facts', async () => {
    const { accountId } = await createAccount(t.db.db, { now: clock.now() });
    const audit = (action: string) =>
      withTransaction(t.db.db, (tx) =>
        recordAudit(tx, clock, { accountId, actor: 'system', action, network }),
      );
    const use = (credentialId: string) =>
      recordCredentialUse(t.db.db, {
        credentialId,
        accountId,
        clientIp: network.clientIp,
        userAgent: network.userAgent,
        at: clock.now(),
      });
    const oldAudit = await audit('test.old');
    await use('key_old');
    await use('key_refreshed');
    clock.advance(89 * DAY_MS);
    const newAudit = await audit('test.new');
    await use('key_new');
    await use('key_refreshed'); // seen again: its 90 days start over
    clock.advance(DAY_MS + 1);

    const deleted = await purgeNetworkContext(t.db.db, clock);
    expect(deleted).toEqual({ networkContext: 1, credentialUses: 1, venueCredentialNetworks: 0 });
    const contexts = await t.db.db
      .selectFrom('network_context')
      .select('audit_id')
      .where('account_id', '=', accountId)
      .execute();
    expect(contexts.map((c) => c.audit_id)).toEqual([newAudit]);
    const facts = await t.db.db
      .selectFrom('audit_log')
      .select('id')
      .where('account_id', '=', accountId)
      .execute();
    expect(facts.map((f) => f.id).sort()).toEqual([oldAudit, newAudit].sort());
    const uses = await t.db.db
      .selectFrom('credential_uses')
      .select('credential_id')
      .where('account_id', '=', accountId)
      .execute();
    expect(uses.map((u) => u.credential_id).sort()).toEqual(['key_new', 'key_refreshed']);

    expect(await purgeNetworkContext(t.db.db, clock)).toEqual({
      networkContext: 0,
      credentialUses: 0,
      venueCredentialNetworks: 0,
    });
    await runJob('housekeeping.network_context');
    expect(await countWhere('credential_uses', 'account_id', accountId)).toBe(2);
  });
});

describe('webhook outbox', () => {
  it('deletes outbox rows settled more than 14 days ago, never pending ones or dead letters', async () => {
    const { accountId } = await createAccount(t.db.db, { now: clock.now() });
    await upsertEndpointUrl(t.db.db, accountId, 'https://receiver.example/hook', clock.now());
    const emit = () =>
      withTransaction(t.db.db, (tx) => emitEvent(tx, clock, { accountId, kind: 'test.ping', payload: {} }));
    const settle = (eventId: string, state: 'delivered' | 'dead') =>
      sql`UPDATE webhook_deliveries SET state = ${state}, settled_at = ${clock.now()}, updated_at = ${clock.now()}
          WHERE event_id = ${eventId}`.execute(t.db.db);
    const delivered = await emit();
    const dead = await emit();
    const pending = await emit();
    await settle(delivered, 'delivered');
    await settle(dead, 'dead');
    await sql`INSERT INTO webhook_dead_letters
        (account_id, event_id, kind, body, attempts, last_status, last_error, first_attempt_at, dead_at)
        VALUES (${accountId}, ${dead}, 'test.ping', '{}', 12, 500, 'down', ${clock.now()}, ${clock.now()})`.execute(
      t.db.db,
    );
    clock.advance(13 * DAY_MS);
    const recent = await emit();
    await settle(recent, 'delivered');
    clock.advance(DAY_MS + 1);

    expect(await purgeWebhookOutbox(t.db.db, clock)).toBe(2);
    const rows = await t.db.db
      .selectFrom('webhook_deliveries')
      .select(['event_id', 'state'])
      .where('account_id', '=', accountId)
      .execute();
    expect(rows.map((r) => r.event_id).sort()).toEqual([pending, recent].sort());
    // The dead letter stays listed.
    const failures = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/webhooks/failures',
      headers: bearer((await createSession(t.db.db, accountId, { now: clock.now() })).token),
    });
    expect(failures.statusCode, failures.body).toBe(200);
    expect(JSON.stringify(failures.json())).toContain(dead);
    expect(await countWhere('webhook_dead_letters', 'account_id', accountId)).toBe(1);

    expect(await purgeWebhookOutbox(t.db.db, clock)).toBe(0);
    await runJob('housekeeping.webhook_outbox');
    expect(await countWhere('webhook_deliveries', 'account_id', accountId)).toBe(2);
  });
});
