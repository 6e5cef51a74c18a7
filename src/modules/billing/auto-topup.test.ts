// Auto-top-up against the devnet: the rule and the quiver over HTTP, arrows checked but never
// broadcast at intake, a fee debit crossing the threshold firing exactly one arrow on-chain (the
// trigger enqueues the job; the job settles it), the monthly maximum, failures and suspension,
// the reconciler's outcomes caught up, expiry by the clock, and signatures destroyed throughout.

import { randomBytes } from 'node:crypto';
import { createWalletClient, erc20Abi, getAddress, http, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import {
  bearer,
  createAccountWithSession,
  createKey,
  type AccountWithSession,
} from '../../../test/support/identity.ts';
import {
  authorizationUsed,
  newPayer,
  PAYMENTS_CHAIN,
  paymentsSetup,
  signAuthorization,
  type Payer,
  type PaymentsSetup,
} from '../../../test/support/payments.ts';
import type { ChainPort } from '../../adapters/chain/port.ts';
import { chainDefinition } from '../../adapters/chain/viem.ts';
import { testConfig } from '../../config.ts';
import { ManualClock } from '../../core/clock.ts';
import { withTransaction } from '../../core/db/database.ts';
import type { Job } from '../../core/jobs/index.ts';
import { devnetChain } from '../../devnet/devnet.ts';
import { jobHandlers } from '../../jobs.ts';
import { settlementEffects } from '../../settlement-effects.ts';
import { listEvents } from '../events/index.ts';
import { findSettlement, reconcileSettlement } from '../payments/index.ts';
import { expireArrows, FIRE_JOB, fireAutoTopup, QUIVER_CAP, syncSettlingArrows } from './auto-topup.ts';
import { insertArrows } from './auto-topup-store.ts';
import { chargeFee } from './fees.ts';
import { creditPrepaid, readPrepaidBalance } from './prepaid.ts';
import { setAccountPrepaidCap } from './settings.ts';

const devnet = inject('devnet');
const USD = 1_000_000n;
const onPostgres = Boolean(process.env.DATABASE_URL);
let t: TestApp;
let setup: PaymentsSetup;

beforeAll(async () => {
  setup = await paymentsSetup(devnet, testConfig());
  t = await createTestApp({ config: setup.config, deps: setup.deps, poolSize: 12 });
});
afterAll(async () => {
  await t?.close();
});

const chain = (): ChainPort => {
  const c = t.deps.chain;
  if (!c) throw new Error('no chain');
  return c;
};
const usdcOf = (address: Address) => chain().erc20Balance(PAYMENTS_CHAIN, setup.usdc, address);
const relayerNonce = () =>
  chain().publicClient(PAYMENTS_CHAIN).getTransactionCount({ address: setup.relayer });
const nowSeconds = () => BigInt(Math.floor(Date.now() / 1000));

type Body = Awaited<ReturnType<typeof signAuthorization>>;

function call(method: 'GET' | 'PUT' | 'POST', url: string, token: string, payload?: unknown) {
  return t.app.fastify.inject({
    method,
    url,
    headers: bearer(token),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}
const getState = (token: string) => call('GET', '/v1/balance/auto-topup', token);
const putRule = (token: string, body: unknown) => call('PUT', '/v1/balance/auto-topup', token, body);
const postArrows = (token: string, arrows: unknown[]) =>
  call('POST', '/v1/balance/auto-topup/arrows', token, { arrows });

async function arrow(payer: Payer, value: bigint, validBefore?: bigint): Promise<Body> {
  return signAuthorization(setup, payer, {
    to: setup.treasury,
    value,
    ...(validBefore === undefined ? {} : { validBefore }),
  });
}

async function fund(accountId: string, micro: bigint): Promise<void> {
  await withTransaction(t.db.db, (tx) =>
    creditPrepaid(tx, t.deps.clock, {
      accountId,
      amountMicroUsd: micro,
      settlementId: `test:${randomBytes(8).toString('hex')}`,
    }),
  );
}

/** A metered fee, charged the way a metered route charges it. */
async function debit(accountId: string, micro: bigint): Promise<void> {
  await withTransaction(t.db.db, (tx) =>
    chargeFee(tx, t.deps, {
      accountId,
      product: 'feedback',
      feeMicroUsd: micro,
      settlementId: `fee:test:${randomBytes(8).toString('hex')}`,
    }),
  );
}

const balanceOf = async (accountId: string) => (await readPrepaidBalance(t.db.db, accountId)).balanceMicro;

async function fireJobs(accountId: string) {
  return t.db.db
    .selectFrom('jobs')
    .selectAll()
    .where('name', '=', FIRE_JOB)
    .where('singleton_key', '=', accountId)
    .orderBy('created_at')
    .execute();
}

const handlers = () => jobHandlers(t.deps);
const jobContext = () => ({ attempt: 1, workerId: 'test', signal: new AbortController().signal });

/** Runs the account's unfinished fire job the way a worker does; false when there is none. */
async function runFireJob(accountId: string): Promise<boolean> {
  const job = (await fireJobs(accountId)).find((j) => j.state === 'available');
  if (!job) return false;
  await t.db.db.updateTable('jobs').set({ state: 'running' }).where('id', '=', job.id).execute();
  await handlers()[FIRE_JOB]!(job, jobContext());
  await t.db.db
    .updateTable('jobs')
    .set({ state: 'completed', finished_at: new Date(), updated_at: new Date() })
    .where('id', '=', job.id)
    .execute();
  return true;
}

async function arrowRow(nonce: string) {
  return t.db.db
    .selectFrom('auto_topup_arrows')
    .selectAll()
    .where('nonce', '=', nonce.toLowerCase())
    .executeTakeFirstOrThrow();
}

function payerWallet(payer: Payer) {
  const rpcUrl = devnetChain(devnet, PAYMENTS_CHAIN).rpcUrl;
  return createWalletClient({
    account: privateKeyToAccount(payer.privateKey),
    chain: chainDefinition(PAYMENTS_CHAIN, rpcUrl),
    transport: http(rpcUrl),
  });
}

/** The payer moves all its USDC away: its arrows can no longer be settled. */
async function drain(payer: Payer): Promise<void> {
  const held = await usdcOf(payer.address);
  const hash = await payerWallet(payer).writeContract({
    address: setup.usdc,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [getAddress(`0x${randomBytes(20).toString('hex')}`), held],
  });
  await chain().waitForReceipt(PAYMENTS_CHAIN, hash);
}

async function eventKinds(accountId: string): Promise<string[]> {
  return (await listEvents(t.db.db, accountId, 200)).map((e) => e.kind);
}

async function newAccountWithRule(threshold: string, maxPerMonth: number): Promise<AccountWithSession> {
  const acc = await createAccountWithSession(t.db.db);
  const res = await putRule(acc.sessionToken, { threshold_usd: threshold, max_per_month: maxPerMonth });
  expect(res.statusCode, res.body).toBe(200);
  return acc;
}

describe('GET|PUT /v1/balance/auto-topup', () => {
  it('reads an empty state without a rule, sets the rule, and refuses bad rules with the error body', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const empty = await getState(acc.sessionToken);
    expect(empty.statusCode, empty.body).toBe(200);
    expect(empty.json()).toEqual({
      threshold_usd: '0',
      max_per_month: 0,
      suspended: false,
      consecutive_failures: 0,
      quiver: { ready: 0, settled: 0, failed: 0, expired: 0 },
      ready_value_usd: '0',
      used_this_month: 0,
      arrows: [],
    });

    const put = await putRule(acc.sessionToken, { threshold_usd: '5.25', max_per_month: 3 });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ threshold_usd: '5.25', max_per_month: 3, suspended: false });
    expect((await getState(acc.sessionToken)).json()).toMatchObject({
      threshold_usd: '5.25',
      max_per_month: 3,
    });
    expect(await eventKinds(acc.accountId)).toContain('auto_topup.rule_updated');
    const audit = await t.db.db
      .selectFrom('audit_log')
      .select(['action', 'actor'])
      .where('account_id', '=', acc.accountId)
      .execute();
    expect(audit).toContainEqual({ action: 'auto_topup.rule_updated', actor: `session:${acc.sessionId}` });

    const bad: [unknown, RegExp][] = [
      [{ threshold_usd: '0', max_per_month: 1 }, /threshold_usd/],
      [{ threshold_usd: '-1', max_per_month: 1 }, /threshold_usd/],
      [{ threshold_usd: '1.1234567', max_per_month: 1 }, /threshold_usd/],
      [{ threshold_usd: 5, max_per_month: 1 }, /threshold_usd/],
      [{ threshold_usd: '5', max_per_month: 101 }, /max_per_month/],
      [{ threshold_usd: '5', max_per_month: 1.5 }, /max_per_month/],
      [{ threshold_usd: '5' }, /max_per_month/],
      [{ threshold_usd: '5', max_per_month: 1, enabled: true }, /enabled/],
    ];
    for (const [body, says] of bad) {
      const err = expectErrorBody(await putRule(acc.sessionToken, body), 400, 'INVALID_REQUEST');
      expect(err.message, JSON.stringify(body)).toMatch(says);
    }
    expect((await getState(acc.sessionToken)).json()).toMatchObject({
      threshold_usd: '5.25',
      max_per_month: 3,
    });
  });

  it('needs the write scope to change anything and the read scope to look', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const reader = await createKey(t.db.db, acc.accountId, { scopes: ['read'] });
    expect((await getState(reader.token)).statusCode).toBe(200);
    expectErrorBody(await putRule(reader.token, { threshold_usd: '5', max_per_month: 1 }), 403, 'FORBIDDEN');
    expectErrorBody(await postArrows(reader.token, []), 403, 'FORBIDDEN');
  });
});

describe('POST /v1/balance/auto-topup/arrows', () => {
  it('adds verified arrows without broadcasting them, and accepts the same ones again without copies', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 30n * USD);
    const nonceBefore = await relayerNonce();
    const first = await arrow(payer, 10n * USD, nowSeconds() + 7200n);
    const second = await arrow(payer, 10n * USD, nowSeconds() + 3600n);
    const res = await postArrows(acc.sessionToken, [first, second]);
    expect(res.statusCode, res.body).toBe(201);
    const state = res.json();
    expect(state).toMatchObject({
      quiver: { ready: 2, settled: 0, failed: 0, expired: 0 },
      ready_value_usd: '20',
    });
    // Firing order: the one expiring soonest first.
    expect(state.arrows.map((a: { nonce: string }) => a.nonce)).toEqual([
      second.authorization.nonce,
      first.authorization.nonce,
    ]);
    expect(state.arrows[0]).toEqual({
      nonce: second.authorization.nonce,
      payer: payer.address.toLowerCase(),
      value_usd: '10',
      valid_before: new Date(Number(second.authorization.validBefore) * 1000).toISOString(),
      status: 'ready',
      tx_hash: null,
      fail_reason: null,
    });
    expect(res.body).not.toContain(first.signature.slice(2, 40));

    const again = await postArrows(acc.sessionToken, [second]);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().quiver.ready).toBe(2);
    expect(await relayerNonce()).toBe(nonceBefore);
    expect(await usdcOf(payer.address)).toBe(30n * USD);
    expect(await authorizationUsed(setup, first)).toBe(false);
    const kinds = await eventKinds(acc.accountId);
    expect(kinds.filter((k) => k === 'auto_topup.arrow_added')).toHaveLength(2);
  });

  it('refuses bad arrows, naming the arrow, with nothing stored', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 5n * USD);
    const stranger = await newPayer(devnet, 0n);
    const good = await arrow(payer, USD);
    const nonceBefore = await relayerNonce();

    // A nonce already used for a top-up.
    const spent = await arrow(payer, USD);
    const topup = await call('POST', '/v1/balance/topups', acc.sessionToken, spent);
    expect(topup.statusCode, topup.body).toBe(201);

    const cases: {
      name: string;
      arrows: () => Promise<unknown[]>;
      status: number;
      code: string;
      says: RegExp;
    }[] = [
      {
        name: 'wrong payee',
        arrows: async () => [
          good,
          await signAuthorization(setup, payer, { to: stranger.address, value: USD }),
        ],
        status: 400,
        code: 'PAYMENT_INVALID',
        says: /^arrows\[1\]: .*recipient_mismatch/,
      },
      {
        name: 'bad signature',
        arrows: async () => {
          const forged = await arrow(stranger, USD);
          return [{ ...forged, authorization: { ...forged.authorization, from: payer.address } }, good];
        },
        status: 400,
        code: 'PAYMENT_INVALID',
        says: /^arrows\[0\]: .*signature/,
      },
      {
        name: 'expired',
        arrows: async () => [good, await arrow(payer, USD, nowSeconds() - 10n)],
        status: 400,
        code: 'PAYMENT_INVALID',
        says: /^arrows\[1\]: .*valid_before/,
      },
      {
        name: 'valid for too long',
        arrows: async () => [await arrow(payer, USD, nowSeconds() + 400n * 86_400n)],
        status: 400,
        code: 'PAYMENT_INVALID',
        says: /^arrows\[0\]: .*366 days/,
      },
      {
        name: 'nonce already used for a top-up',
        arrows: async () => [good, spent],
        status: 400,
        code: 'PAYMENT_INVALID',
        says: /^arrows\[1\]: .*invalid_transaction_state/,
      },
      {
        name: 'below the smallest top-up',
        arrows: async () => [await arrow(payer, 9_999n)],
        status: 400,
        code: 'PAYMENT_INVALID',
        says: /value/,
      },
      {
        name: 'the same authorization twice',
        arrows: async () => [good, good],
        status: 400,
        code: 'INVALID_REQUEST',
        says: /arrows\[1\] repeats/,
      },
      { name: 'none', arrows: async () => [], status: 400, code: 'INVALID_REQUEST', says: /arrows/ },
      {
        name: 'more than 20',
        arrows: async () => Array.from({ length: 21 }, () => good),
        status: 400,
        code: 'INVALID_REQUEST',
        says: /arrows/,
      },
      {
        name: 'unknown field',
        arrows: async () => [{ ...good, amount: '1' }],
        status: 400,
        code: 'INVALID_REQUEST',
        says: /amount/,
      },
    ];
    for (const c of cases) {
      const err = expectErrorBody(await postArrows(acc.sessionToken, await c.arrows()), c.status, c.code);
      expect(err.message, c.name).toMatch(c.says);
    }
    expect(await relayerNonce()).toBe(nonceBefore + 1); // the top-up's settlement, nothing else
    const stored = await t.db.db
      .selectFrom('auto_topup_arrows')
      .select('id')
      .where('account_id', '=', acc.accountId)
      .execute();
    expect(stored).toEqual([]);

    // Another account cannot take an arrow that is in someone's quiver.
    expect((await postArrows(acc.sessionToken, [good])).statusCode).toBe(201);
    const other = await createAccountWithSession(t.db.db);
    const err = expectErrorBody(await postArrows(other.sessionToken, [good]), 400, 'PAYMENT_INVALID');
    expect(err.message).toMatch(/already submitted as another arrow/);

    // Nor spend it as a top-up or an x402 fee: the arrow stays ready for the auto-top-up.
    const balanceBefore = await balanceOf(acc.accountId);
    const asTopup = expectErrorBody(
      await call('POST', '/v1/balance/topups', acc.sessionToken, good),
      400,
      'PAYMENT_INVALID',
    );
    expect(asTopup.message).toMatch(/auto-top-up arrow \(invalid_transaction_state\)/);
    const xPayment = Buffer.from(
      JSON.stringify({ x402Version: 1, scheme: 'exact', network: 'base', payload: good }),
    ).toString('base64');
    const asFee = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/feedback',
      headers: { ...bearer(other.sessionToken), 'x-payment': xPayment },
      payload: { title: 'Paid with an arrow', body: 'This request tries to pay with a quiver arrow.' },
    });
    expect(expectErrorBody(asFee, 400, 'PAYMENT_INVALID').message).toMatch(/auto-top-up arrow/);
    expect(await relayerNonce()).toBe(nonceBefore + 1);
    expect(await balanceOf(acc.accountId)).toBe(balanceBefore);
    expect(await balanceOf(other.accountId)).toBe(0n);
    expect((await getState(acc.sessionToken)).json().quiver.ready).toBe(1);
    expect(await authorizationUsed(setup, good)).toBe(false);
  });

  it(`holds at most ${QUIVER_CAP} ready arrows`, async () => {
    const acc = await createAccountWithSession(t.db.db);
    const now = new Date();
    await insertArrows(
      t.db.db,
      Array.from({ length: QUIVER_CAP - 1 }, (_, i) => ({
        id: `arw_cap${acc.accountId.slice(4, 14)}${i}`,
        account_id: acc.accountId,
        chain_id: PAYMENTS_CHAIN,
        token: setup.usdc.toLowerCase(),
        payer: `0x${randomBytes(20).toString('hex')}`,
        payee: setup.treasury.toLowerCase(),
        value: USD,
        valid_after: 0n,
        valid_before: nowSeconds() + 3600n,
        nonce: `0x${randomBytes(32).toString('hex')}`,
        signature: `0x${'11'.repeat(65)}`,
      })),
      now,
    );
    const payer = await newPayer(devnet, 5n * USD);
    const err = expectErrorBody(
      await postArrows(acc.sessionToken, [await arrow(payer, USD), await arrow(payer, USD)]),
      422,
      'LIMIT_EXCEEDED',
    );
    expect(err.message).toMatch(/at most 50 ready arrows/);
    expect((await postArrows(acc.sessionToken, [await arrow(payer, USD)])).statusCode).toBe(201);
  });
});

describe('firing', () => {
  it('a fee debit crossing the threshold settles exactly one arrow on-chain and credits it', async () => {
    const acc = await newAccountWithRule('5', 2);
    await fund(acc.accountId, 6n * USD);
    const payer = await newPayer(devnet, 25n * USD);
    const soon = await arrow(payer, 10n * USD, nowSeconds() + 3600n);
    const later = await arrow(payer, 10n * USD, nowSeconds() + 7200n);
    expect((await postArrows(acc.sessionToken, [later, soon])).statusCode).toBe(201);
    const treasuryBefore = await usdcOf(setup.treasury);

    await debit(acc.accountId, USD / 2n);
    expect(await fireJobs(acc.accountId)).toEqual([]); // 5.5: not below the threshold
    await debit(acc.accountId, USD);
    await debit(acc.accountId, USD / 2n);
    const jobs = await fireJobs(acc.accountId);
    expect(jobs).toHaveLength(1); // two debits below the threshold, one job
    expect(jobs[0]).toMatchObject({ state: 'available', payload: { account_id: acc.accountId } });
    expect(await balanceOf(acc.accountId)).toBe(4n * USD);

    expect(await runFireJob(acc.accountId)).toBe(true);
    const settled = await arrowRow(soon.authorization.nonce!);
    expect(settled).toMatchObject({ status: 'settled', signature: null, fail_reason: null });
    expect(settled.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await chain().getReceipt(PAYMENTS_CHAIN, settled.tx_hash as `0x${string}`))?.status).toBe(
      'success',
    );
    expect((await arrowRow(later.authorization.nonce!)).status).toBe('ready');
    expect(await usdcOf(payer.address)).toBe(15n * USD);
    expect(await usdcOf(setup.treasury)).toBe(treasuryBefore + 10n * USD);
    expect(await balanceOf(acc.accountId)).toBe(14n * USD);

    const state = (await getState(acc.sessionToken)).json();
    expect(state).toMatchObject({
      used_this_month: 1,
      consecutive_failures: 0,
      suspended: false,
      quiver: { ready: 1, settled: 1, failed: 0, expired: 0 },
      ready_value_usd: '10',
    });
    expect(state.arrows).toContainEqual(
      expect.objectContaining({
        nonce: soon.authorization.nonce,
        status: 'settled',
        tx_hash: settled.tx_hash,
      }),
    );

    // The credit, the settlement, the events and the audit facts.
    const group = await t.db.db
      .selectFrom('ledger_groups')
      .select(['kind', 'settlement_id'])
      .where('account_id', '=', acc.accountId)
      .where('kind', '=', 'topup.auto')
      .executeTakeFirstOrThrow();
    expect(group.settlement_id).toBe(
      `eip3009:${PAYMENTS_CHAIN}:${payer.address.toLowerCase()}:${soon.authorization.nonce!.toLowerCase()}`,
    );
    const settlement = await findSettlement(t.db.db, settled.settlement_id!);
    expect(settlement).toMatchObject({
      purpose: 'auto_topup',
      status: 'settled',
      signature: null,
      request: { arrow_id: settled.id },
    });
    const kinds = await eventKinds(acc.accountId);
    for (const kind of ['auto_topup.arrow_fired', 'balance.credited', 'auto_topup.arrow_settled'])
      expect(kinds).toContain(kind);
    const actions = (
      await t.db.db.selectFrom('audit_log').select('action').where('account_id', '=', acc.accountId).execute()
    ).map((a) => a.action);
    expect(actions).toEqual(expect.arrayContaining(['balance.auto_topup', 'auto_topup.arrow_settled']));

    // Above the threshold again: nothing more fires.
    expect(await runFireJob(acc.accountId)).toBe(false);
    await debit(acc.accountId, USD);
    expect((await fireJobs(acc.accountId)).filter((j) => j.state === 'available')).toEqual([]);

    // The export shows the rule and the arrows, never a signature.
    const exported = await call('GET', '/v1/account/export', acc.sessionToken);
    expect(exported.statusCode, exported.body).toBe(200);
    const autoTopup = exported.json().auto_topup;
    expect(autoTopup.rule).toMatchObject({ threshold_usd: '5', max_per_month: 2, suspended: false });
    expect(autoTopup.authorizations).toHaveLength(2);
    expect(exported.body).not.toContain(later.signature.slice(2));
    expect(exported.body).not.toContain(soon.signature.slice(2));
  });

  it('follows the rule whenever it is set: after the first top-up, and when the threshold moves', async () => {
    // Funded first, rule afterwards: the balance row exists before the rule does.
    const acc = await createAccountWithSession(t.db.db);
    await fund(acc.accountId, 10n * USD);
    await debit(acc.accountId, USD); // 9, no rule: nothing
    expect(await fireJobs(acc.accountId)).toEqual([]);
    expect((await putRule(acc.sessionToken, { threshold_usd: '5', max_per_month: 3 })).statusCode).toBe(200);
    const payer = await newPayer(devnet, 10n * USD);
    expect((await postArrows(acc.sessionToken, [await arrow(payer, 10n * USD)])).statusCode).toBe(201);
    await debit(acc.accountId, USD); // 8: above 5
    expect(await fireJobs(acc.accountId)).toEqual([]);
    // The threshold raised above the balance: the next debit fires.
    expect((await putRule(acc.sessionToken, { threshold_usd: '7.5', max_per_month: 3 })).statusCode).toBe(
      200,
    );
    await debit(acc.accountId, USD / 2n); // 7.5: not below 7.5
    expect(await fireJobs(acc.accountId)).toEqual([]);
    await debit(acc.accountId, USD / 2n); // 7
    expect(await fireJobs(acc.accountId)).toHaveLength(1);
  });

  it('fires at most max_per_month arrows a month; raising it re-arms at once', async () => {
    const acc = await newAccountWithRule('5', 1);
    await fund(acc.accountId, 5n * USD + USD / 2n);
    const payer = await newPayer(devnet, 20n * USD);
    const a = await arrow(payer, 10n * USD, nowSeconds() + 3600n);
    const b = await arrow(payer, 10n * USD, nowSeconds() + 7200n);
    expect((await postArrows(acc.sessionToken, [a, b])).statusCode).toBe(201);

    await debit(acc.accountId, USD);
    expect(await runFireJob(acc.accountId)).toBe(true);
    expect((await arrowRow(a.authorization.nonce!)).status).toBe('settled');
    expect(await balanceOf(acc.accountId)).toBe(14n * USD + USD / 2n);

    await debit(acc.accountId, 10n * USD); // 4.5: below again, but the month's one is used
    expect(await runFireJob(acc.accountId)).toBe(true);
    expect((await arrowRow(b.authorization.nonce!)).status).toBe('ready');
    expect(await balanceOf(acc.accountId)).toBe(4n * USD + USD / 2n);
    const rule = await t.db.db
      .selectFrom('auto_topup_rules')
      .select('quiet_until')
      .where('account_id', '=', acc.accountId)
      .executeTakeFirstOrThrow();
    const now = new Date();
    expect(rule.quiet_until).toEqual(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)));
    // Quiet until next month: further debits enqueue nothing.
    await debit(acc.accountId, USD / 2n);
    expect(await runFireJob(acc.accountId)).toBe(false);
    expect((await getState(acc.sessionToken)).json()).toMatchObject({
      used_this_month: 1,
      quiver: { ready: 1 },
    });

    expect((await putRule(acc.sessionToken, { threshold_usd: '5', max_per_month: 2 })).statusCode).toBe(200);
    expect(await runFireJob(acc.accountId)).toBe(true);
    expect((await arrowRow(b.authorization.nonce!)).status).toBe('settled');
    expect((await getState(acc.sessionToken)).json()).toMatchObject({ used_this_month: 2 });
    expect(await usdcOf(payer.address)).toBe(0n);
  });

  it('leaves an arrow ready when the prepaid cap refuses it, counting no failure', async () => {
    const acc = await newAccountWithRule('5', 3);
    await setAccountPrepaidCap(t.db.db, acc.accountId, 10n * USD, 'test', new Date());
    await fund(acc.accountId, 6n * USD);
    const payer = await newPayer(devnet, 10n * USD);
    const big = await arrow(payer, 10n * USD);
    expect((await postArrows(acc.sessionToken, [big])).statusCode).toBe(201);
    const nonceBefore = await relayerNonce();
    await debit(acc.accountId, 2n * USD); // 4 + 10 would pass the 10 USD cap

    expect(await runFireJob(acc.accountId)).toBe(true);
    expect(await arrowRow(big.authorization.nonce!)).toMatchObject({ status: 'ready', fail_reason: null });
    expect(await relayerNonce()).toBe(nonceBefore);
    expect((await getState(acc.sessionToken)).json()).toMatchObject({
      consecutive_failures: 0,
      used_this_month: 0,
      suspended: false,
    });
    const rule = await t.db.db
      .selectFrom('auto_topup_rules')
      .select('quiet_until')
      .where('account_id', '=', acc.accountId)
      .executeTakeFirstOrThrow();
    expect(rule.quiet_until!.getTime()).toBeGreaterThan(Date.now() + 10 * 60_000);
    await debit(acc.accountId, USD);
    expect(await runFireJob(acc.accountId)).toBe(false);
  });

  it('fails arrows the payer no longer covers, destroys their signatures, suspends after 3, and a PUT re-enables', async () => {
    const acc = await newAccountWithRule('5', 10);
    await fund(acc.accountId, 5n * USD + USD / 2n);
    const broke = await Promise.all([0, 1, 2].map(() => newPayer(devnet, 5n * USD)));
    const solvent = await newPayer(devnet, 5n * USD);
    const base = nowSeconds();
    const bad = await Promise.all(broke.map((p, i) => arrow(p, 5n * USD, base + 1000n + BigInt(i) * 100n)));
    const good = await arrow(solvent, 5n * USD, base + 3000n);
    expect((await postArrows(acc.sessionToken, [...bad, good])).statusCode).toBe(201);
    for (const p of broke) await drain(p);
    const nonceBefore = await relayerNonce();

    await debit(acc.accountId, USD);
    expect(await runFireJob(acc.accountId)).toBe(true);
    for (const b of bad) {
      const row = await arrowRow(b.authorization.nonce!);
      expect(row).toMatchObject({ status: 'failed', signature: null, tx_hash: null });
      expect(row.fail_reason).toMatch(/insufficient_funds/);
    }
    expect((await arrowRow(good.authorization.nonce!)).status).toBe('ready');
    expect(await relayerNonce()).toBe(nonceBefore);
    expect(await balanceOf(acc.accountId)).toBe(4n * USD + USD / 2n);
    const state = (await getState(acc.sessionToken)).json();
    expect(state).toMatchObject({
      suspended: true,
      consecutive_failures: 3,
      used_this_month: 0,
      quiver: { ready: 1, settled: 0, failed: 3, expired: 0 },
    });
    expect(
      state.arrows.find((x: { nonce: string }) => x.nonce === bad[0]!.authorization.nonce),
    ).toMatchObject({
      status: 'failed',
      fail_reason: expect.stringMatching(/insufficient_funds/),
    });
    const kinds = await eventKinds(acc.accountId);
    expect(kinds.filter((k) => k === 'auto_topup.arrow_failed')).toHaveLength(3);
    expect(kinds.filter((k) => k === 'auto_topup.suspended')).toHaveLength(1);

    // Suspended: debits enqueue nothing.
    await debit(acc.accountId, USD / 2n);
    expect(await runFireJob(acc.accountId)).toBe(false);

    const put = await putRule(acc.sessionToken, { threshold_usd: '5', max_per_month: 10 });
    expect(put.json()).toMatchObject({ suspended: false, consecutive_failures: 0 });
    expect(await runFireJob(acc.accountId)).toBe(true);
    expect((await arrowRow(good.authorization.nonce!)).status).toBe('settled');
    expect(await balanceOf(acc.accountId)).toBe(9n * USD);
  });

  it('an unknown outcome is finished by the reconciler: settled through the effect, or failed and caught up', async () => {
    const acc = await newAccountWithRule('5', 10);
    await fund(acc.accountId, 5n * USD);
    const payers = await Promise.all([0, 1, 2].map(() => newPayer(devnet, 5n * USD)));
    const base = nowSeconds();
    const [first, second, third] = await Promise.all(
      payers.map((p, i) => arrow(p, 5n * USD, base + 3600n + BigInt(i) * 100n)),
    );
    expect((await postArrows(acc.sessionToken, [first, second, third])).statusCode).toBe(201);
    // A relayer whose sends vanish: nothing is known to have reached the chain.
    const lost: ChainPort = {
      ...chain(),
      sendTransaction: () => Promise.reject(new Error('socket hang up')),
    };
    const lossy = { ...t.deps, chain: lost };
    await debit(acc.accountId, USD);

    const pending = await fireAutoTopup(lossy, settlementEffects(), acc.accountId);
    expect(pending).toMatchObject({ state: 'pending' });
    const settling = await arrowRow(first!.authorization.nonce!);
    expect(settling.status).toBe('settling');
    expect(settling.signature).not.toBeNull();
    expect((await getState(acc.sessionToken)).json()).toMatchObject({
      used_this_month: 1,
      quiver: { ready: 2 },
    });
    // One arrow at a time: nothing else fires while it settles.
    expect(await fireAutoTopup(t.deps, settlementEffects(), acc.accountId)).toMatchObject({ state: 'idle' });

    const row = await findSettlement(t.db.db, settling.settlement_id!);
    expect((await reconcileSettlement(t.deps, settlementEffects(), row!)).state).toBe('settled');
    expect(await arrowRow(first!.authorization.nonce!)).toMatchObject({ status: 'settled', signature: null });
    expect(await balanceOf(acc.accountId)).toBe(9n * USD);

    // Again, but the payer empties its wallet before the reconciler broadcasts.
    await debit(acc.accountId, 5n * USD);
    expect(await fireAutoTopup(lossy, settlementEffects(), acc.accountId)).toMatchObject({
      state: 'pending',
    });
    await drain(payers[1]!);
    const second2 = await arrowRow(second!.authorization.nonce!);
    const row2 = await findSettlement(t.db.db, second2.settlement_id!);
    expect((await reconcileSettlement(t.deps, settlementEffects(), row2!)).state).toBe('failed');
    expect((await arrowRow(second!.authorization.nonce!)).status).toBe('settling');
    expect(await syncSettlingArrows(t.deps, { accountId: acc.accountId })).toBe(1);
    const failed = await arrowRow(second!.authorization.nonce!);
    expect(failed).toMatchObject({ status: 'failed', signature: null });
    expect(failed.fail_reason).toMatch(/refused/);
    expect((await getState(acc.sessionToken)).json()).toMatchObject({
      consecutive_failures: 1,
      used_this_month: 1,
    });
    // The sync gave the next arrow its turn.
    expect(await runFireJob(acc.accountId)).toBe(true);
    expect((await arrowRow(third!.authorization.nonce!)).status).toBe('settled');
    expect((await getState(acc.sessionToken)).json()).toMatchObject({
      consecutive_failures: 0,
      used_this_month: 2,
    });
    expect(await balanceOf(acc.accountId)).toBe(9n * USD);
  });

  it.skipIf(!onPostgres)('parallel fee debits crossing the threshold fire one arrow only', async () => {
    const acc = await newAccountWithRule('5', 5);
    await fund(acc.accountId, 10n * USD);
    const payer = await newPayer(devnet, 30n * USD);
    const arrows = await Promise.all(
      [1n, 2n, 3n].map((i) => arrow(payer, 10n * USD, nowSeconds() + 3600n * i)),
    );
    expect((await postArrows(acc.sessionToken, arrows)).statusCode).toBe(201);

    await Promise.all(Array.from({ length: 8 }, () => debit(acc.accountId, USD)));
    expect(await balanceOf(acc.accountId)).toBe(2n * USD);
    const jobs = await fireJobs(acc.accountId);
    expect(jobs).toHaveLength(1);

    // Two workers holding the same job at once (a lease taken over) still fire one arrow.
    const job = jobs[0] as Job;
    await Promise.all([handlers()[FIRE_JOB]!(job, jobContext()), handlers()[FIRE_JOB]!(job, jobContext())]);
    const rows = await t.db.db
      .selectFrom('auto_topup_arrows')
      .select('status')
      .where('account_id', '=', acc.accountId)
      .execute();
    expect(rows.map((r) => r.status).sort()).toEqual(['ready', 'ready', 'settled']);
    expect(await balanceOf(acc.accountId)).toBe(12n * USD);
    expect(await usdcOf(payer.address)).toBe(20n * USD);
  });
});

describe('expiry', () => {
  it('expires ready arrows past validBefore by the clock and destroys their signatures', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 10n * USD);
    const base = nowSeconds();
    const short = await arrow(payer, USD, base + 600n);
    const long = await arrow(payer, USD, base + 7200n);
    expect((await postArrows(acc.sessionToken, [short, long])).statusCode).toBe(201);

    expect(await expireArrows(t.db.db, new ManualClock(new Date(Number(base + 599n) * 1000)))).toBe(0);
    expect(
      await expireArrows(t.db.db, new ManualClock(new Date(Number(base + 600n) * 1000))),
    ).toBeGreaterThanOrEqual(1);
    expect(await arrowRow(short.authorization.nonce!)).toMatchObject({ status: 'expired', signature: null });
    expect((await arrowRow(long.authorization.nonce!)).status).toBe('ready');
    expect((await getState(acc.sessionToken)).json()).toMatchObject({
      quiver: { ready: 1, settled: 0, failed: 0, expired: 1 },
      ready_value_usd: '1',
    });
    expect(await eventKinds(acc.accountId)).toContain('auto_topup.arrow_expired');
  });

  it('runs as a scheduled job', async () => {
    const { jobSchedules } = await import('../../jobs.ts');
    for (const name of ['auto_topup.expire', 'auto_topup.sync'])
      expect(jobSchedules.find((s) => s.jobName === name)?.everySeconds, name).toBe(60);
    await handlers()['auto_topup.expire']!({} as Job, jobContext());
    await handlers()['auto_topup.sync']!({} as Job, jobContext());
  });
});

describe('tenant isolation', () => {
  it("another account reads its own empty state, not the other's rule and arrows", async () => {
    const owner = await newAccountWithRule('7', 4);
    const payer = await newPayer(devnet, 5n * USD);
    expect((await postArrows(owner.sessionToken, [await arrow(payer, USD)])).statusCode).toBe(201);
    const other = await createAccountWithSession(t.db.db);
    expect((await getState(other.sessionToken)).json()).toEqual({
      threshold_usd: '0',
      max_per_month: 0,
      suspended: false,
      consecutive_failures: 0,
      quiver: { ready: 0, settled: 0, failed: 0, expired: 0 },
      ready_value_usd: '0',
      used_this_month: 0,
      arrows: [],
    });
    expect((await getState(owner.sessionToken)).json()).toMatchObject({
      threshold_usd: '7',
      quiver: { ready: 1 },
    });
    const exported = await call('GET', '/v1/account/export', other.sessionToken);
    expect(exported.json().auto_topup).toBeNull();
  });
});
