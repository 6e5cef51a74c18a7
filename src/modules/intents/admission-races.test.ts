// Admission under contention, on PostgreSQL (PGlite runs one statement at a time, so a race on
// it proves nothing): concurrent intents against a daily cap, in one process and across two, and
// one Idempotency-Key sent 300 times at once.

import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { bearer, createAccountWithSession, randomAddress } from '../../../test/support/identity.ts';
import { fundPrepaid } from '../../../test/support/prepaid.ts';
import {
  http,
  startServiceProcess,
  waitUntilReady,
  type ServiceProcess,
} from '../../../test/support/service-process.ts';
import { testConfig } from '../../config.ts';
import { systemClock } from '../../core/clock.ts';
import { openPostgres, type Db } from '../../core/db/database.ts';
import { readPrepaidBalance } from '../billing/index.ts';
import { readSpendUsage } from '../policies/index.ts';
import { buildTokenRegistry } from '../registry/index.ts';
import { claimPlannedIntent } from './store.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);
if (!onPostgres) {
  console.log(
    'Skipping the admission races: DATABASE_URL is unset, and PGlite runs one statement at a time.',
  );
}

const USD = 1_000_000n;
const registry = buildTokenRegistry(testConfig().env);
const USDC = registry.findToken(8453, 'USDC')!.address;
const WETH = registry.findToken(8453, 'WETH')!.address;
/** A daily cap that fits exactly ten 10 USD conversions; nothing else limits them. */
const TEN_FIT = { spend: { per_tx_usd: '10', daily_usd: '100', velocity_per_hour: 1000 } };

const conversion = (wallet: string) => ({
  wallet,
  kind: 'conversion',
  sell_token: USDC,
  buy_token: WETH,
  sell_amount: String(10n * USD),
});

interface Answer {
  status: number;
  body: { id?: string; code?: string; message?: string };
}

/** Checks the books after a race: `admitted` intents, each holding 10 USD and paying one fee. */
async function expectBooks(db: Db, accountId: string, wallet: string, funds: bigint, admitted: number) {
  const fee = testConfig().fees.conversionIntentMicro;
  const intents = await db
    .selectFrom('intents')
    .select(['id', 'status', 'fee_group_id'])
    .where('account_id', '=', accountId)
    .execute();
  expect(intents).toHaveLength(admitted);
  expect(intents.every((i) => i.status === 'planned' && i.fee_group_id !== null)).toBe(true);
  expect((await readPrepaidBalance(db, accountId)).balanceMicro).toBe(funds - BigInt(admitted) * fee);
  const usage = await readSpendUsage(db, systemClock, accountId, wallet);
  expect(usage).toEqual({ dayMicroUsd: BigInt(admitted) * 10n * USD, hourCount: admitted });
  const jobs = await db
    .selectFrom('jobs')
    .select('singleton_key')
    .where('name', '=', 'intents.execute')
    .where(
      'singleton_key',
      'in',
      intents.map((i) => i.id),
    )
    .execute();
  expect(jobs).toHaveLength(admitted);
}

function expectTenAdmitted(answers: Answer[]) {
  const admitted = answers.filter((a) => a.status === 201);
  const refused = answers.filter((a) => a.status === 422);
  expect(admitted).toHaveLength(10);
  expect(refused).toHaveLength(answers.length - 10);
  for (const r of refused) {
    expect(r.body.code).toBe('BUDGET_EXCEEDED');
    expect(r.body.message).toMatch(/spend\.daily_usd/);
  }
  expect(new Set(admitted.map((a) => a.body.id)).size).toBe(10);
}

describe.skipIf(!onPostgres)('admission races (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ poolSize: 20 });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function setup(policy: Record<string, unknown>, funds: bigint) {
    const acc = await createAccountWithSession(t.db.db);
    await fundPrepaid(t.db.db, systemClock, acc.accountId, funds);
    const wallet = randomAddress().toLowerCase();
    const put = await t.app.fastify.inject({
      method: 'PUT',
      url: '/v1/policies',
      headers: bearer(acc.sessionToken),
      payload: { version: 1, wallet, chain_id: 8453, ...policy },
    });
    expect(put.statusCode, put.body).toBe(201);
    return { ...acc, wallet };
  }

  const post = (token: string, body: unknown, headers: Record<string, string> = {}) =>
    t.app.fastify
      .inject({
        method: 'POST',
        url: '/v1/intents',
        headers: { ...bearer(token), ...headers },
        payload: body as object,
      })
      .then((r) => ({ status: r.statusCode, body: r.json<Answer['body']>() }));

  it('50 concurrent intents against a daily cap that fits 10: exactly 10 admitted, 40 refused naming the cap', async () => {
    const acc = await setup(TEN_FIT, 100n * USD);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => post(acc.sessionToken, conversion(acc.wallet))),
    );
    expectTenAdmitted(answers);
    await expectBooks(t.db.db, acc.accountId, acc.wallet, 100n * USD, 10);
  });

  it('300 concurrent requests with one Idempotency-Key make one intent and one fee', async () => {
    const acc = await setup({}, 100n * USD);
    const headers = { 'idempotency-key': `one-key-${Math.random()}` };
    const answers = await Promise.all(
      Array.from({ length: 300 }, () => post(acc.sessionToken, conversion(acc.wallet), headers)),
    );
    const created = answers.filter((a) => a.status === 201);
    // Every answer is the intent or "still in flight" (409); never a second intent.
    expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
    expect(created.length).toBeGreaterThan(0);
    expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.code).toBe('IDEMPOTENCY_CONFLICT');
    await expectBooks(t.db.db, acc.accountId, acc.wallet, 100n * USD, 1);
    // Afterwards the key replays the same intent.
    const again = await post(acc.sessionToken, conversion(acc.wallet), headers);
    expect(again).toMatchObject({ status: 201, body: { id: created[0]!.body.id } });
  });

  it("a cancel racing the executor's claim leaves exactly one outcome, with the books to match", async () => {
    const fee = testConfig().fees.conversionIntentMicro;
    const acc = await setup({}, 100n * USD);
    // The executor's claims come through a pool of their own, as from a worker process.
    const executorDb = openPostgres(t.database.url!, 20);
    onTestFinished(() => executorDb.close());
    const ids: string[] = [];
    // A warm cancel, timed: the lags below are spread over that time.
    const probe = await post(acc.sessionToken, conversion(acc.wallet));
    const started = performance.now();
    const probeCancel = await t.app.fastify.inject({
      method: 'POST',
      url: `/v1/intents/${probe.body.id}/cancel`,
      headers: bearer(acc.sessionToken),
    });
    expect(probeCancel.statusCode).toBe(200);
    const cancelMs = performance.now() - started;
    for (let i = 0; i < 20; i += 1) {
      const res = await post(acc.sessionToken, conversion(acc.wallet));
      expect(res.status).toBe(201);
      ids.push(res.body.id!);
    }
    const outcomes = await Promise.all(
      ids.map(async (id, i) => {
        // One of the two starts first, the other after a lag spread over a cancel's time:
        // clear wins either way at the ends, and both in flight together in the middle.
        const lag = (Math.abs(i - 10) / 10) * cancelMs;
        const after = (ms: number) => new Promise((r) => setTimeout(r, ms));
        const cancel = async () => {
          if (i < 10) await after(lag);
          return t.app.fastify.inject({
            method: 'POST',
            url: `/v1/intents/${id}/cancel`,
            headers: bearer(acc.sessionToken),
          });
        };
        const claim = async () => {
          if (i >= 10) await after(lag);
          return claimPlannedIntent(executorDb.db, id, systemClock.now());
        };
        const [c, k] = await Promise.all([cancel(), claim()]);
        return { id, cancelled: c.statusCode === 200, cancelStatus: c.statusCode, claimed: k !== null };
      }),
    );
    for (const o of outcomes) {
      // Exactly one of the two happened; the loser was told so (404 for the cancel, null for the claim).
      expect(o.cancelled !== o.claimed, JSON.stringify(o)).toBe(true);
      if (!o.cancelled) expect(o.cancelStatus).toBe(404);
    }
    const rows = await t.db.db
      .selectFrom('intents')
      .select(['id', 'status'])
      .where('account_id', '=', acc.accountId)
      .execute();
    const status = new Map(rows.map((r) => [r.id, r.status]));
    for (const o of outcomes) expect(status.get(o.id)).toBe(o.cancelled ? 'cancelled' : 'executing');
    // Each cancelled intent gave its fee and its hold back; each claimed one keeps both.
    const cancelled = outcomes.filter((o) => o.cancelled).length;
    const claimed = outcomes.length - cancelled;
    expect((await readPrepaidBalance(t.db.db, acc.accountId)).balanceMicro).toBe(
      100n * USD - BigInt(claimed) * fee,
    );
    const usage = await readSpendUsage(t.db.db, systemClock, acc.accountId, acc.wallet);
    expect(usage.dayMicroUsd).toBe(BigInt(claimed) * 10n * USD);
  });

  it('across two processes on one database, 50 intents against a cap that fits 10 admit exactly 10', async () => {
    const services: ServiceProcess[] = [];
    try {
      const env = { DATABASE_URL: t.database.url!, RUN_WORKERS: 'false' };
      services.push(...(await Promise.all([startServiceProcess({ env }), startServiceProcess({ env })])));
      await Promise.all(services.map((s) => waitUntilReady(s)));
      const acc = await setup(TEN_FIT, 100n * USD);
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          http(`${services[i % 2]!.url}/v1/intents`, {
            method: 'POST',
            headers: bearer(acc.sessionToken),
            body: conversion(acc.wallet),
            timeoutMs: 30_000,
          }).then((r) => ({ status: r.status, body: JSON.parse(r.text) as Answer['body'] })),
        ),
      );
      expectTenAdmitted(answers);
      await expectBooks(t.db.db, acc.accountId, acc.wallet, 100n * USD, 10);
    } finally {
      await Promise.all(services.map((s) => s.stop('SIGTERM')));
    }
  }, 90_000);
});
