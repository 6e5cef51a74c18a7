// The operator surface: only the operator token opens /v1/ops/ (never an account credential, and
// nothing at all without a configured token); the metering switch and the prepaid caps it sets
// take effect on the account-facing routes; `purser ops` does the same from the command line.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import { REPO_ROOT, serviceEnv } from '../../../test/support/service-process.ts';
import { withTransaction } from '../../core/db/database.ts';
import { enqueueJob } from '../../core/jobs/index.ts';
import { systemClock } from '../../core/clock.ts';
import { creditPrepaid, readBillingSettings, setMeteringEnforced } from '../billing/index.ts';
import { readAccountCap } from '../billing/store.ts';

const OPERATOR_TOKEN = 'op_'.padEnd(40, 'x');
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ config: { operatorToken: OPERATOR_TOKEN } });
});
afterAll(async () => {
  await t?.close();
});

const ops = (method: 'GET' | 'PUT', url: string, payload?: object, token = OPERATOR_TOKEN) =>
  t.app.fastify.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(payload ? { payload } : {}),
  });

describe('/v1/ops/ guard', () => {
  it('refuses account credentials and wrong tokens, and does not exist without a configured token', async () => {
    const acc = await createAccountWithSession(t.db.db);
    expectErrorBody(
      await t.app.fastify.inject({
        method: 'GET',
        url: '/v1/ops/billing',
        headers: bearer(acc.sessionToken),
      }),
      401,
      'UNAUTHORIZED',
    );
    expectErrorBody(await ops('GET', '/v1/ops/billing', undefined, 'wrong'), 401, 'UNAUTHORIZED');
    expectErrorBody(
      await t.app.fastify.inject({ method: 'GET', url: '/v1/ops/billing' }),
      401,
      'UNAUTHORIZED',
    );

    const closed = await createTestApp();
    try {
      const res = await closed.app.fastify.inject({
        method: 'GET',
        url: '/v1/ops/billing',
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      });
      expectErrorBody(res, 404, 'NOT_FOUND');
    } finally {
      await closed.close();
    }
  });
});

describe('billing controls', () => {
  it('switches metering off and on; GET /v1/fees and fee debits follow at once', async () => {
    const off = await ops('PUT', '/v1/ops/billing', { metering_enforced: false });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().metering_enforced).toBe(false);
    expect((await t.app.fastify.inject({ method: 'GET', url: '/v1/fees' })).json().metering_enforced).toBe(
      false,
    );

    const on = await ops('PUT', '/v1/ops/billing', { metering_enforced: null });
    expect(on.json().metering_enforced).toBe(true);
    expect((await t.app.fastify.inject({ method: 'GET', url: '/v1/fees' })).json().metering_enforced).toBe(
      true,
    );
    const facts = await t.db.db
      .selectFrom('audit_log')
      .select(['actor', 'action'])
      .where('action', '=', 'ops.billing_settings')
      .execute();
    expect(facts.length).toBeGreaterThanOrEqual(2);
    expect(facts.every((f) => f.actor === 'operator')).toBe(true);
  });

  it('sets the caps, reports the float and fee revenue derived from the ledger', async () => {
    const acc = await createAccountWithSession(t.db.db);
    await withTransaction(t.db.db, (tx) =>
      creditPrepaid(tx, systemClock, {
        accountId: acc.accountId,
        amountMicroUsd: 7_000_000n,
        settlementId: `t:${acc.accountId}`,
      }),
    );
    const res = await ops('PUT', '/v1/ops/billing', {
      prepaid_float_cap_usd: '250000',
      prepaid_account_cap_default_usd: '2500',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      prepaid_float_cap_usd: '250000',
      prepaid_account_cap_default_usd: '2500',
    });
    expect(Number(res.json().prepaid_float_usd)).toBeGreaterThanOrEqual(7);
    const settings = await readBillingSettings(t.db.db, t.deps.config);
    expect(settings.floatCapMicro).toBe(250_000_000_000n);

    const cap = await ops('PUT', `/v1/ops/accounts/${acc.accountId}/prepaid-cap`, { cap_usd: '50' });
    expect(cap.json()).toEqual({ account_id: acc.accountId, cap_usd: '50' });
    expect(await readAccountCap(t.db.db, acc.accountId)).toBe(50_000_000n);
    await ops('PUT', `/v1/ops/accounts/${acc.accountId}/prepaid-cap`, { cap_usd: null });
    expect(await readAccountCap(t.db.db, acc.accountId)).toBeNull();

    expectErrorBody(
      await ops('PUT', '/v1/ops/accounts/acc_nobody/prepaid-cap', { cap_usd: '1' }),
      404,
      'NOT_FOUND',
    );
    expectErrorBody(
      await ops('PUT', '/v1/ops/billing', { prepaid_float_cap_usd: '-5' }),
      400,
      'INVALID_REQUEST',
    );
    expectErrorBody(await ops('PUT', '/v1/ops/billing', {}), 400, 'INVALID_REQUEST');
    await ops('PUT', '/v1/ops/billing', {
      prepaid_float_cap_usd: null,
      prepaid_account_cap_default_usd: null,
    });
  });
});

describe('GET /v1/ops/accounts', () => {
  it('pages every account newest first with its prepaid balance and own cap', async () => {
    const older = await createAccountWithSession(t.db.db, { now: new Date(Date.now() - 1000) });
    const newer = await createAccountWithSession(t.db.db);
    await withTransaction(t.db.db, (tx) =>
      creditPrepaid(tx, systemClock, {
        accountId: newer.accountId,
        amountMicroUsd: 2_500_000n,
        settlementId: `t:${newer.accountId}`,
      }),
    );
    expect(
      (await ops('PUT', `/v1/ops/accounts/${older.accountId}/prepaid-cap`, { cap_usd: '40' })).statusCode,
    ).toBe(200);

    // Walk every page of one account each: each account once, newest first.
    const seen: Array<Record<string, unknown>> = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 500; pages++) {
      const res = await ops('GET', `/v1/ops/accounts?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as { accounts: Array<Record<string, unknown>>; next_cursor: string | null };
      expect(body.accounts.length).toBeLessThanOrEqual(1);
      seen.push(...body.accounts);
      cursor = body.next_cursor;
      if (cursor === null) break;
    }
    const ids = seen.map((a) => a['id']);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.indexOf(newer.accountId)).toBeLessThan(ids.indexOf(older.accountId));
    expect(seen.find((a) => a['id'] === newer.accountId)).toMatchObject({
      address: newer.address.toLowerCase(),
      prepaid_balance_usd: '2.500000',
      prepaid_cap_usd: null,
      offboarded_at: null,
    });
    expect(seen.find((a) => a['id'] === older.accountId)).toMatchObject({
      prepaid_balance_usd: '0.000000',
      prepaid_cap_usd: '40',
    });
    const all = await ops('GET', '/v1/ops/accounts?limit=200');
    expect((all.json() as { accounts: unknown[] }).accounts.length).toBe(Math.min(200, seen.length));

    expectErrorBody(await ops('GET', '/v1/ops/accounts?cursor=nope'), 400, 'INVALID_REQUEST');
    expectErrorBody(await ops('GET', '/v1/ops/accounts?limit=0'), 400, 'INVALID_REQUEST');
    expectErrorBody(
      await t.app.fastify.inject({
        method: 'GET',
        url: '/v1/ops/accounts',
        headers: bearer(newer.sessionToken),
      }),
      401,
      'UNAUTHORIZED',
    );
  });
});

describe('GET /v1/ops/queues', () => {
  it('shows per job name what waits and for how long, what is scheduled, running and failed', async () => {
    const name = `test.queue.${Date.now()}`;
    const clock = { now: () => new Date() };
    const now = Date.now();
    await enqueueJob(t.db.db, clock, { name, runAt: new Date(now - 90_000) });
    await enqueueJob(t.db.db, clock, { name, runAt: new Date(now - 5_000) });
    await enqueueJob(t.db.db, clock, { name, runAt: new Date(now + 3_600_000) });
    const running = await enqueueJob(t.db.db, clock, { name });
    const failed = await enqueueJob(t.db.db, clock, { name });
    await t.db.db
      .updateTable('jobs')
      .set({ state: 'running', locked_by: 'w', locked_until: new Date(now + 60_000) })
      .where('id', '=', running)
      .execute();
    await t.db.db
      .updateTable('jobs')
      .set({ state: 'failed', finished_at: new Date(now - 60_000) })
      .where('id', '=', failed)
      .execute();

    const res = await ops('GET', '/v1/ops/queues');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { as_of: string; queues: Array<Record<string, unknown>> };
    const line = body.queues.find((q) => q['name'] === name);
    expect(line).toMatchObject({ waiting: 2, scheduled: 1, running: 1, failed_last_day: 1 });
    expect(line?.['oldest_waiting_seconds']).toBeGreaterThanOrEqual(89);
    expect(line?.['oldest_waiting_seconds']).toBeLessThan(600);
    // Sorted by name, and never to an account credential.
    const names = body.queues.map((q) => String(q['name']));
    expect(names).toEqual([...names].sort());
    const acc = await createAccountWithSession(t.db.db);
    expectErrorBody(
      await t.app.fastify.inject({ method: 'GET', url: '/v1/ops/queues', headers: bearer(acc.sessionToken) }),
      401,
      'UNAUTHORIZED',
    );
  });
});

describe('purser ops (command line)', () => {
  it.skipIf(!process.env.DATABASE_URL)(
    'sets one account cap and the metering switch on the configured database',
    async () => {
      const url = t.database.url;
      if (!url) return;
      const acc = await createAccountWithSession(t.db.db);
      const run = (args: string[]) =>
        promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/main.ts', 'ops', ...args], {
          cwd: REPO_ROOT,
          env: serviceEnv({ DATABASE_URL: url }),
        });
      const out = await run(['account-cap', acc.address, '75']);
      expect(out.stdout).toContain('prepaid cap 75 USD');
      expect(await readAccountCap(t.db.db, acc.accountId)).toBe(75_000_000n);
      const metering = await run(['metering', 'off']);
      expect(JSON.parse(metering.stdout.slice(metering.stdout.indexOf('{'))).metering_enforced).toBe(false);
      expect((await readBillingSettings(t.db.db, t.deps.config)).meteringEnforced).toBe(false);
      await setMeteringEnforced(t.db.db, null, 'test', new Date());
    },
  );
});
