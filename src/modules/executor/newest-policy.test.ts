// The newest policy in force during a run, on the devnet through the API: an agent's intent of two
// slices fills its first, then its owner publishes a tighter policy version (a token dropped from
// the allowlist, a lower per-action cap, the venue removed, a smaller slippage budget) and the next
// step aborts POLICY_VIOLATION naming the new version and its rule, before anything is sent; the
// first fill stays ledgered, exactly as it left the account. A looser version changes nothing.

import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  conversionAgent,
  eurcMarket,
  runDeps,
  sellUsdc,
  type EurcMarket,
} from '../../../test/support/executor.ts';
import { getAddress } from 'viem';
import { ManualClock } from '../../core/clock.ts';
import { readPrepaidBalance } from '../billing/index.ts';
import type { Intent } from '../intents/index.ts';
import { balanceOf, erc20Asset, walletAccount } from '../ledger/index.ts';
import { intentSlices, runIntentStep, type RunReport } from './index.ts';
import { chainHeld } from '../../../test/support/executor.ts';

const devnet = inject('devnet');
const USD = 1_000_000n;
const markets: EurcMarket[] = [];
let a: EurcMarket;
let b: EurcMarket;

beforeAll(async () => {
  // 10,800 USDC pools: 60 USDC at a 1% budget is two slices of 30; each pool carries three
  // slices before its price drifts past twice the budget from the reference.
  a = await eurcMarket(devnet, [{ venue: 'devnet-amm', usdcDepth: 10_800 }]);
  b = await eurcMarket(devnet, [{ venue: 'devnet-amm', usdcDepth: 10_800 }]);
  markets.push(a, b);
});
afterAll(async () => {
  for (const m of markets) await m.t.close();
});

/** An agent's 60 USDC → EURC intent (two slices), its first slice filled by one executor step. */
async function halfFilled(m: EurcMarket) {
  const agent = await conversionAgent(devnet, m, 100n * USD, {
    policy: { execution: { max_slippage_bps: 100, venues: ['devnet-amm', 'uniswap-v3'] } },
  });
  const intent = await agent.api<Intent>('POST', '/v1/intents', sellUsdc(m, agent.wallet, 60n * USD));
  expect(intent.policy_version).toBe(1);
  const first = await runIntentStep(runDeps(m.t), intent.id);
  expect(first).toMatchObject({ state: 'continue' });
  const slices = await intentSlices(m.t.db.db, intent.id);
  expect(slices.map((s) => s.state)).toEqual(['landed']);
  /** Publishes the wallet's next policy version (fields as PUT /v1/policies takes them). */
  const publish = (policy: Record<string, unknown>) =>
    agent.api<{ version: number }>('PUT', '/v1/policies', {
      version: 1,
      wallet: agent.wallet,
      chain_id: 8453,
      ...policy,
    });
  return { agent, intent, publish };
}

/** Runs the next steps (at most three) until the intent ends, and reads it as its owner does. */
async function runOn(m: EurcMarket, x: Awaited<ReturnType<typeof halfFilled>>) {
  for (let i = 0; i < 3; i++) {
    if ((await runIntentStep(runDeps(m.t), x.intent.id)).state === 'done') break;
  }
  return x.agent.api<Intent>('GET', `/v1/intents/${x.intent.id}`);
}

/** The intent aborted POLICY_VIOLATION on `rule` of version 2 after one fill, ledgered as on chain. */
async function expectRefusedByVersion2(
  m: EurcMarket,
  x: Awaited<ReturnType<typeof halfFilled>>,
  rule: string,
) {
  const before = await chainHeld(m.t, m.usdc, getAddress(x.agent.account));
  const funds = (await readPrepaidBalance(m.t.db.db, x.agent.accountId)).balanceMicro;
  const read = await runOn(m, x);
  expect(read.status).toBe('aborted');
  const abort = read.params.abort as { reason: string; detail: Record<string, unknown> };
  expect(abort.reason, JSON.stringify(abort)).toBe('POLICY_VIOLATION');
  expect(abort.detail).toMatchObject({ rule, policy_version: 2, pinned_policy_version: 1 });
  expect(abort.detail['why']).toMatch(/policy version 2, published while the intent ran/);
  // The intent keeps the version it was admitted under.
  expect(read.policy_version).toBe(1);
  // Nothing more was sent: one slice, and the account holds what it held after it.
  const report = read.report as unknown as RunReport;
  expect(report.slices.map((s) => s.state)).toEqual(['landed']);
  expect(await chainHeld(m.t, m.usdc, getAddress(x.agent.account))).toBe(before);
  // The first fill stays ledgered, exactly as it left the account; its fee is kept.
  const sold = BigInt(report.totals.sold);
  expect(sold).toBe(30n * USD);
  expect(
    await balanceOf(m.t.db.db, walletAccount(8453, x.agent.wallet), erc20Asset(8453, m.usdc.address)),
  ).toBe(-sold);
  expect((await readPrepaidBalance(m.t.db.db, x.agent.accountId)).balanceMicro).toBe(funds);
  return abort;
}

describe('a policy version published while an intent runs', () => {
  it('dropping the bought token from the allowlist stops the next slice', async () => {
    const x = await halfFilled(a);
    expect((await x.publish({ spend: { token_allowlist: ['USDC', 'WETH'] } })).version).toBe(2);
    const abort = await expectRefusedByVersion2(a, x, 'spend.token_allowlist');
    expect(abort.detail).toMatchObject({ value: ['USDC', 'EURC'] });
  });

  it('a per-action cap below the intent’s value stops the next slice', async () => {
    const x = await halfFilled(a);
    await x.publish({ execution: { max_slippage_bps: 100 }, spend: { per_tx_usd: '50' } });
    const abort = await expectRefusedByVersion2(a, x, 'spend.per_tx_usd');
    expect(abort.detail).toMatchObject({ limit: '50', value: '60' });
  });

  it('removing the venue the plan executes on stops the next slice', async () => {
    const x = await halfFilled(a);
    await x.publish({ execution: { max_slippage_bps: 100, venues: ['uniswap-v3'] } });
    const abort = await expectRefusedByVersion2(a, x, 'execution.venues');
    expect(abort.detail).toMatchObject({ value: 'devnet-amm' });
  });

  it('a slippage budget below the intent’s stops the next slice', async () => {
    const x = await halfFilled(b);
    await x.publish({ execution: { max_slippage_bps: 50 } });
    const abort = await expectRefusedByVersion2(b, x, 'execution.max_slippage_bps');
    expect(abort.detail).toMatchObject({ limit: 50, value: 100 });
  });

  it('a looser version changes nothing: the intent fills as planned, under its pinned version', async () => {
    const x = await halfFilled(b);
    await x.publish({
      execution: { max_slippage_bps: 500, venues: ['devnet-amm', 'uniswap-v3', 'aerodrome'] },
      spend: { per_tx_usd: '5000', daily_usd: '10000' },
    });
    const read = await runOn(b, x);
    expect(read.status, JSON.stringify(read.params.abort)).toBe('filled');
    expect(read.policy_version).toBe(1);
    const report = read.report as unknown as RunReport;
    expect(report.plan?.venue).toBe('devnet-amm');
    expect(report.slices.map((s) => s.state)).toEqual(['landed', 'landed']);
    expect(BigInt(report.totals.sold)).toBe(60n * USD);
  });

  it('before the first slice: no venue of the intent left allowed is refused, nothing sent, the fee given back', async () => {
    const agent = await conversionAgent(devnet, b, 100n * USD);
    const intent = await agent.api<Intent>('POST', '/v1/intents', sellUsdc(b, agent.wallet, 60n * USD));
    const funds = (await readPrepaidBalance(b.t.db.db, agent.accountId)).balanceMicro;
    await agent.api('PUT', '/v1/policies', {
      version: 1,
      wallet: agent.wallet,
      chain_id: 8453,
      execution: { max_slippage_bps: 100, venues: ['uniswap-v3'] },
    });
    expect(await runIntentStep(runDeps(b.t), intent.id)).toEqual({ state: 'done', status: 'aborted' });
    const read = await agent.api<Intent>('GET', `/v1/intents/${intent.id}`);
    expect(read.params.abort).toMatchObject({
      reason: 'POLICY_VIOLATION',
      detail: { rule: 'execution.venues', policy_version: 2, limit: ['uniswap-v3'], value: ['devnet-amm'] },
    });
    expect(await intentSlices(b.t.db.db, intent.id)).toEqual([]);
    const fee = b.t.deps.config.fees.conversionIntentMicro;
    expect((await readPrepaidBalance(b.t.db.db, agent.accountId)).balanceMicro).toBe(funds + fee);
  });

  it('a shorter deadline in the newer version ends the run when it passes', async () => {
    const agent = await conversionAgent(devnet, b, 100n * USD);
    const intent = await agent.api<Intent>('POST', '/v1/intents', sellUsdc(b, agent.wallet, 60n * USD));
    await agent.api('PUT', '/v1/policies', {
      version: 1,
      wallet: agent.wallet,
      chain_id: 8453,
      execution: { max_slippage_bps: 100, deadline_minutes: 5 },
    });
    // Six minutes on: within the pinned version's 30 minutes, past the newer one's 5.
    const later = new ManualClock(new Date(Date.now() + 6 * 60_000));
    expect(await runIntentStep(runDeps(b.t, { clock: later }), intent.id)).toEqual({
      state: 'done',
      status: 'aborted',
    });
    const read = await agent.api<Intent>('GET', `/v1/intents/${intent.id}`);
    expect(read.params.abort).toMatchObject({
      reason: 'EXECUTION_INTERRUPTED',
      detail: { why: 'the deadline passed' },
    });
    expect(await intentSlices(b.t.db.db, intent.id)).toEqual([]);
  });
});
