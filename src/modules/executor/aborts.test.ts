// The abort reasons of the run (spec section 7), each provoked on the devnet through the API: an
// agent's intent admitted by POST /v1/intents, run by the executor, read back by GET
// /v1/intents/{id} with its events. The planner's refusals come from markets shaped for them; the
// others from what changes between admission and a slice (an operator's venue switch, a panic, the
// chain's rate limit on the grant, the clock, a bundler that does not answer). An abort with no
// fill gives the fee back; one after a fill keeps it and the fill stays ledgered. The checks
// before the run (UNSUPPORTED_KIND, UNSUPPORTED_CHAIN, EXECUTOR_UNCONFIGURED, NO_DELEGATION,
// INSUFFICIENT_BALANCE, a switch at the start) are start.test.ts's.

import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bearer } from '../../../test/support/identity.ts';
import { testFeedDeployer } from '../../../test/support/price-feeds.ts';
import {
  chainHeld,
  conversionAgent,
  eurcMarket,
  giveToken,
  runDeps,
  sellUsdc,
  type EurcMarket,
} from '../../../test/support/executor.ts';
import { getAddress } from 'viem';
import { createJsonRpcBundler } from '../../adapters/bundler/json-rpc.ts';
import type { BundlerPort, UserOperationV07 } from '../../adapters/bundler/port.ts';
import { settlingVenues } from '../../adapters/venues/index.ts';
import { createChainlinkPriceReferences } from '../../adapters/prices/chainlink.ts';
import { ManualClock } from '../../core/clock.ts';
import { getJob } from '../../core/jobs/index.ts';
import { devnetChain, devnetTokenAddresses } from '../../devnet/devnet.ts';
import { jobHandlers } from '../../jobs.ts';
import { readPrepaidBalance } from '../billing/index.ts';
import { userOperationHash } from '../delegations/index.ts';
import { NARROWED_SELECTORS } from '../delegations/rules.ts';
import { EXECUTE_JOB, type Intent } from '../intents/index.ts';
import { balanceOf, erc20Asset, walletAccount } from '../ledger/index.ts';
import { createPriceReferences } from '../prices/index.ts';
import { buildTokenRegistry } from '../registry/index.ts';
import {
  intentSlices,
  reconcileAbandonedSlices,
  runIntentStep,
  type RunDeps,
  type RunReport,
} from './index.ts';

const devnet = inject('devnet');
const USD = 1_000_000n;
const OPERATOR_TOKEN = 'op_'.padEnd(40, 'x');
const markets: EurcMarket[] = [];
let a: EurcMarket;
let b: EurcMarket;

beforeAll(async () => {
  // Two 10,800 USDC pools: each takes at most three first slices of 30 before its price, which no
  // one arbitrages here, drifts past twice the 1% budget of the reference.
  const config = { operatorToken: OPERATOR_TOKEN };
  a = await eurcMarket(devnet, [{ venue: 'devnet-amm', usdcDepth: 10_800 }], { config });
  b = await eurcMarket(devnet, [{ venue: 'devnet-amm', usdcDepth: 10_800 }], { config });
  markets.push(a, b);
});
afterAll(async () => {
  for (const m of markets) await m.t.close();
});

/** An agent of the market with 100 USDC and its intent selling `amount`, admitted through the API. */
async function admitted(
  m: EurcMarket,
  amount = 60n * USD,
  options: Parameters<typeof conversionAgent>[3] & { request?: Record<string, unknown> } = {},
) {
  const agent = await conversionAgent(devnet, m, 100n * USD, options);
  const intent = await agent.api<Intent>(
    'POST',
    '/v1/intents',
    sellUsdc(m, agent.wallet, amount, options.request),
  );
  const funds = (await readPrepaidBalance(m.t.db.db, agent.accountId)).balanceMicro;
  return { agent, intent, funds };
}

type Admitted = Awaited<ReturnType<typeof admitted>>;

/** Runs steps until the intent ends (at most `steps`), with `deps` from the second step on when given. */
async function run(m: EurcMarket, id: string, later?: RunDeps, steps = 5) {
  for (let i = 0; i < steps; i++) {
    const step = await runIntentStep(i > 0 && later ? later : runDeps(m.t), id);
    if (step.state === 'done') return step;
  }
  throw new Error(`intent ${id} did not end in ${steps} steps`);
}

/** The intent as its owner reads it, aborted with `reason`; its events end with intent.aborted. */
async function expectAborted(m: EurcMarket, x: Admitted, reason: string, filled: boolean) {
  const read = await x.agent.api<Intent>('GET', `/v1/intents/${x.intent.id}`);
  expect(read.status).toBe('aborted');
  expect(read.params.abort?.reason, JSON.stringify(read.params.abort)).toBe(reason);
  const report = read.report as unknown as RunReport;
  const events = await m.t.db.db
    .selectFrom('events')
    .select(['kind', 'payload'])
    .where('subject', '=', x.intent.id)
    .orderBy('seq')
    .execute();
  expect(events.at(-1)).toMatchObject({ kind: 'intent.aborted', payload: { reason, fee_reversed: !filled } });
  const fee = m.t.deps.config.fees.conversionIntentMicro;
  const balance = (await readPrepaidBalance(m.t.db.db, x.agent.accountId)).balanceMicro;
  expect(balance).toBe(filled ? x.funds : x.funds + fee);
  const sold = BigInt(report.totals.sold);
  expect(sold > 0n).toBe(filled);
  // Whatever filled is ledgered, exactly as it left the account.
  const wallet = walletAccount(8453, x.agent.wallet);
  expect(await balanceOf(m.t.db.db, wallet, erc20Asset(8453, m.usdc.address))).toBe(-sold);
  return { read, report, abort: read.params.abort as { reason: string; detail: Record<string, unknown> } };
}

describe('abort reasons of the planner, from markets shaped for them', () => {
  it('DEPTH_COLLAPSE: a pool too shallow for the sale in any number of slices', async () => {
    const m = await eurcMarket(devnet, [{ venue: 'devnet-amm', usdcDepth: 300 }]);
    markets.push(m);
    const x = await admitted(m, 90n * USD);
    expect(await run(m, x.intent.id)).toEqual({ state: 'done', status: 'aborted' });
    const { abort } = await expectAborted(m, x, 'DEPTH_COLLAPSE', false);
    expect(abort.detail).toMatchObject({ venue: 'devnet-amm', max_slices: 20 });
  });

  it('PRICE_GAP: the venue prices EURC 6% away from the oracle', async () => {
    const m = await eurcMarket(devnet, [{ venue: 'devnet-amm', usdcDepth: 10_800, eurcPrice: 1.15 }]);
    markets.push(m);
    const x = await admitted(m);
    await run(m, x.intent.id);
    const { abort } = await expectAborted(m, x, 'PRICE_GAP', false);
    expect(abort.detail).toMatchObject({ limit_bps: 200 });
    expect(Math.abs(abort.detail.gap_bps as number)).toBeGreaterThan(200);
  });

  it('VENUE_DISAGREEMENT: two venues 17% apart', async () => {
    const m = await eurcMarket(devnet, [
      { venue: 'devnet-amm', usdcDepth: 10_800 },
      { venue: 'uniswap-v3', usdcDepth: 10_800, eurcPrice: 1.3 },
    ]);
    markets.push(m);
    // Granted both venues' swaps: a venue the grant does not cover is never asked.
    const contracts = devnetChain(devnet, 8453).contracts;
    const x = await admitted(m, 60n * USD, {
      request: { venues: ['devnet-amm', 'uniswap-v3'] },
      calls: [
        { target: m.usdc.address, selector: NARROWED_SELECTORS.approve, value_limit: '0' },
        {
          target: contracts.uniswapV2Router02!,
          selector: NARROWED_SELECTORS.uniswapV2Swap,
          value_limit: '0',
        },
        {
          target: contracts.uniswapV3SwapRouter02!,
          selector: NARROWED_SELECTORS.multicallDeadline,
          value_limit: '0',
        },
      ],
    });
    await run(m, x.intent.id);
    const { abort } = await expectAborted(m, x, 'VENUE_DISAGREEMENT', false);
    expect(abort.detail).toMatchObject({ limit_bps: 1000 });
  });

  it('VENUE_NO_QUOTE: no pool for the pair on the venue allowed', async () => {
    const m = await eurcMarket(devnet, []);
    markets.push(m);
    const x = await admitted(m);
    await run(m, x.intent.id);
    await expectAborted(m, x, 'VENUE_NO_QUOTE', false);
  });

  it('NO_PRICE_REFERENCE: one venue can fill and no oracle covers the pair', async () => {
    const m = await eurcMarket(devnet, [{ venue: 'devnet-amm', usdcDepth: 10_800 }], { prices: false });
    markets.push(m);
    const x = await admitted(m);
    await run(m, x.intent.id);
    await expectAborted(m, x, 'NO_PRICE_REFERENCE', false);
  });
});

describe('abort reasons of the run', () => {
  it('UNSUPPORTED_TOKEN: the registry no longer lists a token the intent was admitted with', async () => {
    const x = await admitted(a);
    // The devnet's own registry, as after a restart without the move onto this test's tokens.
    const registry = buildTokenRegistry(
      'development',
      devnetTokenAddresses(devnet),
      settlingVenues(a.t.deps.venues!),
    );
    expect(await runIntentStep(runDeps(a.t, { registry }), x.intent.id)).toEqual({
      state: 'done',
      status: 'aborted',
    });
    await expectAborted(a, x, 'UNSUPPORTED_TOKEN', false);
  });

  it('SPEND_CAP_EXCEEDED: EURC, valued at the reference now, is worth more than the cap it was admitted under', async () => {
    // 90 EURC at the devnet feed's 1.08 is 97.20 USD, within the 100 USD cap.
    const agent = await conversionAgent(devnet, a, 0n, {
      calls: [
        { target: a.eurc.address, selector: NARROWED_SELECTORS.approve, value_limit: '0' },
        {
          target: devnetChain(devnet, 8453).contracts.uniswapV2Router02!,
          selector: NARROWED_SELECTORS.uniswapV2Swap,
          value_limit: '0',
        },
      ],
    });
    await giveToken(a.market, a.eurc, getAddress(agent.account), 100n * USD);
    const intent = await agent.api<Intent>('POST', '/v1/intents', {
      ...sellUsdc(a, agent.wallet, 90n * USD),
      sell_token: a.eurc.address,
      buy_token: a.usdc.address,
    });
    expect(intent.params.value_usd).toBe('97.2');
    const funds = (await readPrepaidBalance(a.t.db.db, agent.accountId)).balanceMicro;
    // By the time it runs, EURC is at 1.20 USD (a feed of this test's own): 108 USD.
    const deployer = await testFeedDeployer(devnet, 8453);
    const feed = await deployer.deploy('EURC / USD', 1_20000000n);
    const clock = new ManualClock(new Date(Number(await deployer.chainTime()) * 1000));
    const prices = createPriceReferences({
      port: createChainlinkPriceReferences({ chain: a.t.deps.chain!, clock, marginSeconds: 60 }),
      feeds: [
        { chainId: 8453, pair: 'EURC/USD', address: feed.address, heartbeatSeconds: 86_400, decimals: 8 },
      ],
      registry: a.t.deps.tokenRegistry!,
      clock,
      marginSeconds: 60,
      refreshIntervalMs: 50,
    });
    expect(await prices.refresh()).toEqual({ usable: 1, failures: [] });
    expect(await runIntentStep(runDeps(a.t, { prices }), intent.id)).toEqual({
      state: 'done',
      status: 'aborted',
    });
    const { abort } = await expectAborted(a, { agent, intent, funds }, 'SPEND_CAP_EXCEEDED', false);
    expect(abort.detail).toMatchObject({
      rule: 'spend.per_tx_usd',
      limit_usd: '100',
      value_usd: '108',
      admitted_value_usd: '97.2',
    });
  });

  it('POLICY_VIOLATION: a slice outside the delegated scope (the grant has no swap) is never sent', async () => {
    const x = await admitted(b, 60n * USD, {
      calls: [{ target: b.usdc.address, selector: NARROWED_SELECTORS.approve, value_limit: '0' }],
    });
    await run(b, x.intent.id);
    const { abort, report } = await expectAborted(b, x, 'POLICY_VIOLATION', false);
    expect(abort.detail).toMatchObject({ rule: 'delegation' });
    expect(abort.detail.why).toMatch(/not among the granted calls/);
    expect(report.slices).toEqual([]);
  });

  it('POLICY_VIOLATION: the chain refuses the grant (its rate limit is spent) after a first fill', async () => {
    const x = await admitted(a, 60n * USD, { rateLimit: 1 });
    await run(a, x.intent.id);
    const { abort, report } = await expectAborted(a, x, 'POLICY_VIOLATION', true);
    expect(abort.detail).toMatchObject({
      rule: 'delegation',
      why: 'the chain refused the grant',
      step: 'estimate',
    });
    expect(report.slices.map((s) => s.state)).toEqual(['landed']);
  });

  it('EXECUTION_FAILED: the second slice fails on chain (its swap deadline has passed); the first stays', async () => {
    const x = await admitted(a);
    // From the second step on, the executor's clock is two hours behind the chain's.
    const behind = new ManualClock(new Date(Date.now() - 2 * 3600_000));
    await run(a, x.intent.id, runDeps(a.t, { clock: behind }));
    const { abort, report } = await expectAborted(a, x, 'EXECUTION_FAILED', true);
    expect(abort.detail).toMatchObject({ step: 'estimate' });
    expect(abort.detail.message).toMatch(/EXPIRED/);
    expect(report.slices).toHaveLength(1);
  });

  it('EXECUTION_INTERRUPTED: the continuations ran out between two slices', async () => {
    const x = await admitted(a);
    const config = { ...a.t.deps.config, executor: { ...a.t.deps.config.executor, maxContinuations: 1 } };
    await run(a, x.intent.id, runDeps(a.t, { config }));
    const { abort } = await expectAborted(a, x, 'EXECUTION_INTERRUPTED', true);
    expect(abort.detail).toMatchObject({
      why: 'the continuations ran out',
      continuations: 1,
      unconfirmed: [],
    });
  });

  it('EXECUTION_INTERRUPTED: the account panicked between two slices, naming the switch', async () => {
    const x = await admitted(b);
    expect(await runIntentStep(runDeps(b.t), x.intent.id)).toMatchObject({ state: 'continue' });
    const panic = await b.t.app.fastify.inject({
      method: 'POST',
      url: '/v1/account/panic',
      headers: bearer(x.agent.sessionToken),
      payload: {},
    });
    expect(panic.statusCode, panic.body).toBe(200);
    await run(b, x.intent.id);
    const { abort } = await expectAborted(b, x, 'EXECUTION_INTERRUPTED', true);
    expect(abort.detail).toMatchObject({ switch: { scope: 'account' }, unconfirmed: [] });
  });

  it('EXECUTION_INTERRUPTED: the deadline (execution.deadline_minutes) passed before the first slice', async () => {
    const x = await admitted(b);
    // The claim runs now; the next step, 31 minutes later.
    const later = new ManualClock(new Date(Date.now() + 31 * 60_000));
    const start = await runIntentStep(runDeps(b.t, { clock: later }), x.intent.id);
    expect(start).toEqual({ state: 'done', status: 'aborted' });
    const { abort } = await expectAborted(b, x, 'EXECUTION_INTERRUPTED', false);
    expect(abort.detail).toMatchObject({ why: 'the deadline passed', unconfirmed: [] });
  });

  it('EXECUTION_INTERRUPTED: a broadcast unconfirmed at the deadline is named; ledgered when it lands later', async () => {
    const x = await admitted(b);
    const real = b.t.deps.bundler!;
    // A bundler that takes operations and never sends them on.
    let taken: UserOperationV07 | null = null;
    const blackHole: BundlerPort = {
      ...real,
      async sendUserOperation(chainId, op) {
        taken = op;
        return userOperationHash(op, chainId);
      },
    };
    const executor = { ...b.t.deps.config.executor, receiptTimeoutMs: 300, receiptPollMs: 50 };
    const deps = runDeps(b.t, { bundler: blackHole, config: { ...b.t.deps.config, executor } });
    expect(await runIntentStep(deps, x.intent.id)).toMatchObject({ state: 'continue', why: 'receipt' });
    const [slice] = await intentSlices(b.t.db.db, x.intent.id);
    expect(slice?.state).toBe('signed');
    // 31 minutes on, the operation is still nowhere: the run ends, naming it.
    const later = new ManualClock(new Date(Date.now() + 31 * 60_000));
    expect(await runIntentStep({ ...deps, clock: later }, x.intent.id)).toEqual({
      state: 'done',
      status: 'aborted',
    });
    const { abort } = await expectAborted(b, x, 'EXECUTION_INTERRUPTED', false);
    expect(abort.detail).toMatchObject({ unconfirmed: [slice!.hash.toLowerCase()] });

    // It lands after all (a bundler kept it): the periodic reconciliation ledgers the fill.
    expect(taken).not.toBeNull();
    await real.sendUserOperation(8453, taken!);
    await real.waitForUserOperationReceipt(8453, slice!.hash, { timeoutMs: 30_000, pollIntervalMs: 50 });
    expect(await reconcileAbandonedSlices(runDeps(b.t))).toBe(1);
    expect(await reconcileAbandonedSlices(runDeps(b.t))).toBe(0);
    const read = await x.agent.api<Intent>('GET', `/v1/intents/${x.intent.id}`);
    const report = read.report as unknown as RunReport;
    expect(read.status).toBe('aborted');
    expect(report.slices.map((s) => s.state)).toEqual(['landed']);
    const wallet = walletAccount(8453, x.agent.wallet);
    expect(await balanceOf(b.t.db.db, wallet, erc20Asset(8453, b.usdc.address))).toBe(
      -BigInt(report.totals.sold),
    );
    expect(await chainHeld(b.t, b.usdc, getAddress(x.agent.account))).toBe(
      100n * USD - BigInt(report.totals.sold),
    );
  });

  it('EXECUTION_ERROR: the last attempt of a step fails (the bundler does not answer)', async () => {
    const x = await admitted(b);
    const silent = createJsonRpcBundler({ urls: { 8453: 'http://127.0.0.1:9' }, timeoutMs: 500 });
    const handler = jobHandlers({ ...b.t.deps, bundler: silent })[EXECUTE_JOB]!;
    const row = await b.t.db.db
      .selectFrom('jobs')
      .selectAll()
      .where('name', '=', EXECUTE_JOB)
      .where('singleton_key', '=', x.intent.id)
      .executeTakeFirstOrThrow();
    const job = (await getJob(b.t.db.db, row.id))!;
    const ctx = { workerId: 'test', signal: new AbortController().signal };
    // Before the last attempt the error is the queue's to retry; on the last, the intent ends.
    await expect(handler(job, { ...ctx, attempt: 1 })).rejects.toThrow();
    expect((await x.agent.api<Intent>('GET', `/v1/intents/${x.intent.id}`)).status).toBe('executing');
    await handler(job, { ...ctx, attempt: job.max_attempts });
    const { abort } = await expectAborted(b, x, 'EXECUTION_ERROR', false);
    expect(abort.detail.message).toMatch(/127\.0\.0\.1:9|fetch failed|ECONNREFUSED|network/i);
  });

  it('VENUE_UNAVAILABLE: an operator switched the venue off after admission', async () => {
    const x = await admitted(a);
    const ops = (enabled: boolean) =>
      a.t.app.fastify.inject({
        method: 'PUT',
        url: '/v1/ops/switches',
        headers: bearer(OPERATOR_TOKEN),
        payload: {
          scope: 'venue',
          target: 'devnet-amm',
          enabled,
          ...(enabled ? {} : { reason: 'pool incident' }),
        },
      });
    expect((await ops(false)).statusCode).toBe(200);
    try {
      await run(a, x.intent.id);
    } finally {
      expect((await ops(true)).statusCode).toBe(200);
    }
    const { abort } = await expectAborted(a, x, 'VENUE_UNAVAILABLE', false);
    expect(JSON.stringify(abort.detail)).toContain('devnet-amm');
  });
});
