// The operator surface: only the operator token opens /v1/ops/ (never an account credential, and
// nothing at all without a configured token); the metering switch and the prepaid caps it sets
// take effect on the account-facing routes; `purser ops` does the same from the command line.

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
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
import { recordComparisons } from '../chainwatch/drifts.ts';
import { emitEvent } from '../events/index.ts';

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

describe('GET /v1/ops/alerts', () => {
  const at = (msAgo: number) => ({ now: () => new Date(Date.now() - msAgo) });
  const DAY = 24 * 3_600_000;
  const alertPayload = (credentialId: string, reason: 'usage_burst' | 'new_network') => ({
    credential_id: credentialId,
    venue: 'polymarket',
    reason,
    operation: 'order.place',
    detail: reason === 'new_network' ? { network: '203.0.113.0/24', networks_seen_before: 1 } : {},
    remediation: 'Revoke the credential and rotate the key at the venue.',
  });
  type Alert = {
    kind: string;
    id: string;
    account_id: string;
    raised_at: string;
    severity: string;
    summary: string;
    remediation: string;
    detail: Record<string, unknown>;
  };
  type Alerts = { as_of: string; alerts: Alert[]; counts: { security: number; drift: number } };

  it("lists every account's security alerts since `since` and its unresolved drifts, newest first", async () => {
    const one = await createAccountWithSession(t.db.db);
    const two = await createAccountWithSession(t.db.db);
    const credential = { recent: randomUUID(), older: randomUUID(), stale: randomUUID() };
    const emit = (accountId: string, msAgo: number, credentialId: string) =>
      withTransaction(t.db.db, (tx) =>
        emitEvent(tx, at(msAgo), {
          accountId,
          kind: 'security.alert',
          subject: credentialId,
          payload: alertPayload(credentialId, 'new_network'),
        }),
      );
    const recent = await emit(one.accountId, 60_000, credential.recent);
    const older = await emit(two.accountId, 2 * DAY, credential.older);
    const stale = await emit(one.accountId, 10 * DAY, credential.stale);
    // Another kind of event is no alert.
    await withTransaction(t.db.db, (tx) =>
      emitEvent(tx, at(0), { accountId: one.accountId, kind: 'account.panic', payload: {} }),
    );

    // Drifts: one raised a month ago (open), one suspected, one raised then agreed (resolved).
    const registry = t.deps.tokenRegistry!;
    const wallet = (n: number) => `0x${String(n).padStart(2, '0').repeat(20)}`;
    const asset = `eip155:8453/erc20:0x${'c1'.repeat(20)}`;
    const compare = (msAgo: number, account: string, w: string, ledger: bigint, raiseAfterMs: number) =>
      withTransaction(t.db.db, (tx) =>
        recordComparisons(
          tx,
          at(msAgo),
          [{ accountId: account, chainId: 8453, wallet: w, asset, ledger, chain: 100n, block: 42n }],
          { raiseAfterMs, registry },
        ),
      );
    expect(await compare(30 * DAY, two.accountId, wallet(71), 90n, 0)).toMatchObject({ raised: 1 });
    expect(await compare(30_000, one.accountId, wallet(72), 80n, DAY)).toMatchObject({ suspected: 1 });
    expect(await compare(120_000, one.accountId, wallet(73), 70n, 0)).toMatchObject({ raised: 1 });
    expect(await compare(90_000, one.accountId, wallet(73), 100n, 0)).toMatchObject({ agreed: 1 });

    const res = await ops('GET', '/v1/ops/alerts');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as Alerts;
    expect(Date.parse(body.as_of)).toBeGreaterThan(Date.now() - 60_000);
    const ids = body.alerts.map((a) => a.id);
    expect(ids).toContain(recent);
    expect(ids).toContain(older);
    expect(ids).not.toContain(stale); // older than the default 7 days
    const times = body.alerts.map((a) => a.raised_at);
    expect(times).toEqual([...times].sort().reverse());

    const security = body.alerts.find((a) => a.id === recent);
    expect(security).toMatchObject({
      kind: 'security',
      account_id: one.accountId,
      severity: 'critical',
      detail: {
        credential_id: credential.recent,
        venue: 'polymarket',
        reason: 'new_network',
        operation: 'order.place',
      },
    });
    expect(security?.summary).toContain('203.0.113.0/24');
    expect(security?.remediation).toContain('PUT /v1/ops/switches'); // the operator's, not the account's
    expect(body.alerts.find((a) => a.id === older)?.account_id).toBe(two.accountId);

    const drifts = body.alerts.filter((a) => a.kind === 'drift');
    const byWallet = (w: string) => drifts.find((a) => a.detail['wallet'] === w);
    expect(byWallet(wallet(71))).toMatchObject({
      account_id: two.accountId,
      severity: 'critical',
      detail: { state: 'open', ledger: '90', chain: '100', difference: '10', chain_id: 8453 },
    });
    expect(Date.now() - Date.parse(byWallet(wallet(71))!.raised_at)).toBeGreaterThan(29 * DAY);
    expect(byWallet(wallet(72))).toMatchObject({
      account_id: one.accountId,
      severity: 'warning',
      detail: { state: 'suspected', raised_at: null },
    });
    expect(byWallet(wallet(73))).toBeUndefined(); // resolved
    expect(body.counts).toEqual({
      security: body.alerts.filter((a) => a.kind === 'security').length,
      drift: drifts.length,
    });

    // `since` reaches back to the stale alert, or leaves out the two-day-old one; drifts stay.
    const since = (msAgo: number) => encodeURIComponent(new Date(Date.now() - msAgo).toISOString());
    const wide = (await ops('GET', `/v1/ops/alerts?since=${since(11 * DAY)}`)).json() as Alerts;
    expect(wide.alerts.map((a) => a.id)).toEqual(expect.arrayContaining([recent, older, stale]));
    expect(wide.counts.security).toBe(body.counts.security + 1);
    const narrow = (await ops('GET', `/v1/ops/alerts?since=${since(DAY)}`)).json() as Alerts;
    expect(narrow.alerts.map((a) => a.id)).toContain(recent);
    expect(narrow.alerts.map((a) => a.id)).not.toContain(older);
    expect(narrow.alerts.some((a) => a.detail['wallet'] === wallet(71))).toBe(true);

    // `limit` cuts the list, newest first; the counts still say how many there are.
    const first = (await ops('GET', '/v1/ops/alerts?limit=1')).json() as Alerts;
    expect(first.alerts).toEqual([body.alerts[0]]);
    expect(first.counts).toEqual(body.counts);
  });

  it('refuses account credentials and a bad query', async () => {
    const acc = await createAccountWithSession(t.db.db);
    expectErrorBody(
      await t.app.fastify.inject({ method: 'GET', url: '/v1/ops/alerts', headers: bearer(acc.sessionToken) }),
      401,
      'UNAUTHORIZED',
    );
    for (const query of ['since=yesterday', 'since=2026-13-01', 'limit=0', 'limit=201', 'state=open']) {
      expectErrorBody(await ops('GET', `/v1/ops/alerts?${query}`), 400, 'INVALID_REQUEST');
    }
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
