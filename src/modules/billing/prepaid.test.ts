// The prepaid balance: fee debits and top-up credits as ledger groups, the balance row in step
// with the entries, 402 PAYMENT_REQUIRED with a `next` at the top-up, GET /v1/balance, and on
// PostgreSQL 100 parallel $1 debits against $30: exactly 30 succeed and the balance ends at 0.

import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.ts';
import { withTransaction } from '../../core/db/database.ts';
import { defineRoute } from '../../core/http/route-table.ts';
import { newId } from '../../core/ids.ts';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import { bearer, createAccountWithSession, createKey } from '../../../test/support/identity.ts';
import { balanceOf, FEE_REVENUE, prepaidAccount, readGroup, USD } from '../ledger/index.ts';
import { creditPrepaid, debitFee, formatBalanceUsd, paymentRequired, readPrepaidBalance } from './index.ts';
import { PROBE_DOCS } from '../../../test/support/probes.ts';

const USD_1 = 1_000_000n;
const clock = new ManualClock('2026-03-01T10:00:00Z');
const POLICY_HASH = `sha256:${'cd'.repeat(32)}`;
let t: TestApp;

// A metered probe route: debits $1 per call, as metered routes will.
const probe = defineRoute({
  method: 'POST',
  url: '/v1/probe/metered',
  operationId: 'probeMetered',
  summary: 'probe',
  tags: ['probe'],
  class: 'bearer',
  scope: 'write',
  wallet: false,
  docs: PROBE_DOCS,
  schema: { response: { 201: Type.Object({ balance_usd: Type.String() }) } },
  handler: (ctx) =>
    ctx.mutate(async (tx) => {
      const accountId = ctx.principal?.accountId ?? '';
      const res = await debitFee(tx, ctx.deps.clock, {
        accountId,
        feeMicroUsd: USD_1,
        product: 'feedback',
        settlementId: `fee:${ctx.requestId}`,
      });
      if (!res.ok) {
        if (res.reason === 'insufficient') throw paymentRequired(res);
        throw new Error('conflict');
      }
      return { status: 201, body: { balance_usd: formatBalanceUsd(res.balanceMicro ?? 0n) } };
    }),
});

beforeAll(async () => {
  t = await createTestApp({ clock, poolSize: 20, extraRoutes: [probe] });
});
afterAll(async () => {
  await t?.close();
});

const db = () => t.db.db;

function credit(accountId: string, amountMicroUsd: bigint, settlementId = `topup:${newId('n')}`) {
  return withTransaction(db(), (tx) => creditPrepaid(tx, clock, { accountId, amountMicroUsd, settlementId }));
}

function debit(accountId: string, feeMicroUsd: bigint, settlementId = `fee:${newId('r')}`) {
  return withTransaction(db(), (tx) =>
    debitFee(tx, clock, {
      accountId,
      feeMicroUsd,
      product: 'conversion_intent',
      settlementId,
      policyHash: POLICY_HASH,
    }),
  );
}

/** The balance row equals minus the sum of the prepaid account's entries. */
async function expectInStep(accountId: string, balanceMicro: bigint): Promise<void> {
  expect((await readPrepaidBalance(db(), accountId)).balanceMicro).toBe(balanceMicro);
  expect(-(await balanceOf(db(), prepaidAccount(accountId), USD))).toBe(balanceMicro);
}

describe('debitFee and creditPrepaid', () => {
  it('credits once per settlement, debits to exactly zero, then refuses without writing', async () => {
    const { accountId } = await createAccountWithSession(db());
    expect(await readPrepaidBalance(db(), accountId)).toEqual({ balanceMicro: 0n, heldMicro: 0n });
    expect(await debit(accountId, USD_1)).toEqual({
      ok: false,
      reason: 'insufficient',
      feeMicroUsd: USD_1,
      availableMicro: 0n,
    });
    const nonce = `topup:${newId('n')}`;
    expect(await credit(accountId, 3n * USD_1, nonce)).toMatchObject({
      ok: true,
      replayed: false,
      balanceMicro: 3n * USD_1,
    });
    expect(await credit(accountId, 3n * USD_1, nonce)).toMatchObject({ ok: true, replayed: true });
    expect(await credit(accountId, 4n * USD_1, nonce)).toMatchObject({ ok: false, reason: 'conflict' });
    await expectInStep(accountId, 3n * USD_1);

    const revenueBefore = await balanceOf(db(), FEE_REVENUE, USD);
    const first = await debit(accountId, 2n * USD_1);
    expect(first).toMatchObject({ ok: true, replayed: false, balanceMicro: USD_1 });
    if (!first.ok) return;
    const group = await readGroup(db(), first.groupId, accountId);
    expect(group).toMatchObject({ kind: 'fee.conversion_intent', policyHash: POLICY_HASH });
    expect(await debit(accountId, 1_000_001n)).toMatchObject({
      ok: false,
      reason: 'insufficient',
      availableMicro: USD_1,
    });
    await expectInStep(accountId, USD_1);
    expect(await debit(accountId, USD_1)).toMatchObject({ ok: true, balanceMicro: 0n });
    await expectInStep(accountId, 0n);
    expect(await balanceOf(db(), FEE_REVENUE, USD)).toBe(revenueBefore - 3n * USD_1);
  });

  it('debits a fee identity once; another amount under it is a conflict', async () => {
    const { accountId } = await createAccountWithSession(db());
    await credit(accountId, 10n * USD_1);
    const settlementId = `fee:${newId('r')}`;
    const first = await debit(accountId, USD_1, settlementId);
    expect(await debit(accountId, USD_1, settlementId)).toMatchObject({ ok: true, replayed: true });
    expect(await debit(accountId, 2n * USD_1, settlementId)).toMatchObject({ ok: false, reason: 'conflict' });
    expect(first.ok).toBe(true);
    await expectInStep(accountId, 9n * USD_1);
  });

  it('formats balances with six decimals', () => {
    expect(formatBalanceUsd(0n)).toBe('0.000000');
    expect(formatBalanceUsd(12_500_000n)).toBe('12.500000');
    expect(formatBalanceUsd(1n)).toBe('0.000001');
  });
});

describe('402 PAYMENT_REQUIRED', () => {
  it('answers a fee the balance does not cover with the error body and a next at the top-up', async () => {
    const { accountId, sessionToken } = await createAccountWithSession(db());
    await credit(accountId, USD_1);
    const call = () =>
      t.app.fastify.inject({
        method: 'POST',
        url: '/v1/probe/metered',
        headers: bearer(sessionToken),
        payload: {},
      });
    const ok = await call();
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json()).toEqual({ balance_usd: '0.000000' });
    const refused = await call();
    const body = expectErrorBody(refused, 402, 'PAYMENT_REQUIRED');
    expect(body.message).toContain('0.000000 USD');
    expect(body.next?.[0]).toMatchObject({ method: 'POST', path: '/v1/balance/topups' });
    await expectInStep(accountId, 0n);
  });
});

describe('GET /v1/balance', () => {
  it('returns the balance with six decimals, for a read key, of the caller only', async () => {
    const { accountId, sessionToken } = await createAccountWithSession(db());
    const get = (token: string) =>
      t.app.fastify.inject({ method: 'GET', url: '/v1/balance', headers: bearer(token) });
    const empty = await get(sessionToken);
    expect(empty.statusCode, empty.body).toBe(200);
    expect(empty.json()).toEqual({ balance_usd: '0.000000', currency: 'USD' });
    await credit(accountId, 12_500_000n);
    const key = await createKey(db(), accountId, { scopes: ['read'] });
    expect((await get(key.token)).json()).toEqual({ balance_usd: '12.500000', currency: 'USD' });
    const other = await createAccountWithSession(db());
    expect((await get(other.sessionToken)).json()).toEqual({ balance_usd: '0.000000', currency: 'USD' });
    expectErrorBody(await t.app.fastify.inject({ method: 'GET', url: '/v1/balance' }), 401, 'UNAUTHORIZED');
  });
});

describe('concurrent debits', () => {
  it('100 parallel $1 debits against $30: exactly 30 succeed, the balance ends at 0', async (ctx) => {
    if (t.db.kind !== 'postgres') {
      ctx.skip(true, 'needs PostgreSQL (DATABASE_URL): the embedded database has one connection');
      return;
    }
    const { accountId } = await createAccountWithSession(db());
    await credit(accountId, 30n * USD_1);
    const revenueBefore = await balanceOf(db(), FEE_REVENUE, USD);
    let lowest = 30n * USD_1;
    const results = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const res = await debit(accountId, USD_1);
        if (res.ok && res.balanceMicro !== null && res.balanceMicro < lowest) lowest = res.balanceMicro;
        return res;
      }),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(30);
    expect(results.filter((r) => !r.ok && r.reason === 'insufficient')).toHaveLength(70);
    expect(lowest).toBe(0n);
    await expectInStep(accountId, 0n);
    expect(revenueBefore - (await balanceOf(db(), FEE_REVENUE, USD))).toBe(30n * USD_1);
  });
});
