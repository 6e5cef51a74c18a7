// The run of a conversion on the devnet, with no stand-ins: an agent's owner gets a Kernel account
// from the faucet, funds it, publishes a policy, delegates to the executor's session key; the
// agent's intent is planned into slices on a real AMM (a pool of this test's own, so no other test
// moves its price), executed by the `intents.execute` job one slice per step, each slice a
// UserOperation through the devnet's bundler; the balances read back with viem moved exactly as
// the ledger says. A delegation revoked between two slices stops the next one: the first fill
// stays ledgered, the fee is kept, the hold settles by what filled.

import { erc20Abi, getAddress, parseEther, type Address } from 'viem';
import { entryPoint07Abi, entryPoint07Address } from 'viem/account-abstraction';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { delegatedAgent } from '../../../test/support/agent.ts';
import type { TestApp } from '../../../test/support/app.ts';
import {
  chainHoldings,
  conversionAgent,
  eurcMarket,
  runDeps,
  sellUsdc,
  topUpPrepaid,
  type EurcMarket,
} from '../../../test/support/executor.ts';
import { testConfig } from '../../config.ts';
import { createWorker } from '../../core/jobs/index.ts';
import { devnetChain } from '../../devnet/devnet.ts';
import { jobHandlers } from '../../jobs.ts';
import { readPrepaidBalance } from '../billing/index.ts';
import { EXECUTE_JOB, type Intent } from '../intents/index.ts';
import { balanceOf, erc20Asset, nativeAsset, walletAccount } from '../ledger/index.ts';
import { readSpendUsage } from '../policies/index.ts';
import { runIntentStep, type RunReport } from './index.ts';

const devnet = inject('devnet');
const CHAIN = 8453;
const USD = 1_000_000n;
let m: EurcMarket;
let t: TestApp;

beforeAll(async () => {
  // The devnet's own USDC (it pays top-ups) against an EURC of this test's own, 10,800 USDC deep,
  // priced as the devnet's EUR/USD feed says.
  const config = testConfig();
  m = await eurcMarket(devnet, [{ venue: 'devnet-amm', usdcDepth: 10_800 }], {
    realUsdc: true,
    config: {
      planner: { ...config.planner, sliceIntervalMs: 100 },
      executor: { ...config.executor, receiptPollMs: 50 },
    },
  });
  t = m.t;
});
afterAll(async () => {
  await t?.close();
});

const holdings = (account: Address) => chainHoldings(m, account);

/** What the ledger says the wallet holds. */
async function ledgered(wallet: string) {
  const account = walletAccount(CHAIN, wallet);
  return {
    usdc: await balanceOf(t.db.db, account, erc20Asset(CHAIN, m.usdc.address)),
    eurc: await balanceOf(t.db.db, account, erc20Asset(CHAIN, m.eurc.address)),
    native: await balanceOf(t.db.db, account, nativeAsset(CHAIN, 60)),
  };
}

const agent = () => conversionAgent(devnet, m, 100n * USD);
// 1%: the planner cuts 60 USDC into two slices here, and the pool, which nobody arbitrages on the
// devnet, stays within twice the budget of the reference for both.
const sellSixty = (wallet: string) => sellUsdc(m, wallet, 60n * USD);

describe('the run of a conversion', () => {
  it('fills across slices on a real AMM, one job step per slice; the chain moved as the ledger says', async () => {
    // A new agent signs in with its key, tops up its prepaid balance with a signed USDC
    // authorization, gets a Kernel account it owns from the faucet, funds it, publishes a policy
    // and delegates to the executor.
    const a = await conversionAgent(devnet, m, 100n * USD, { signIn: true });
    expect(await topUpPrepaid(m, a, 5n * USD)).toBe('5.000000');
    const before = await holdings(getAddress(a.account));
    const intent = await a.api<Intent>('POST', '/v1/intents', sellSixty(a.wallet));
    expect(intent.status).toBe('planned');

    const worker = createWorker({
      db: t.db.db,
      clock: t.deps.clock,
      log: t.deps.log,
      handlers: { [EXECUTE_JOB]: jobHandlers(t.deps)[EXECUTE_JOB]! },
      pollIntervalMs: 20,
    });
    let ran = 0;
    let read = intent;
    const until = Date.now() + 90_000;
    while (!['filled', 'aborted'].includes(read.status) && Date.now() < until) {
      ran += await worker.runDueJobsOnce();
      read = await a.api<Intent>('GET', `/v1/intents/${intent.id}`);
      if (!['filled', 'aborted'].includes(read.status)) await new Promise((r) => setTimeout(r, 30));
    }
    expect(read.params.abort ?? null).toBeNull();
    expect(read.status).toBe('filled');
    const report = read.report as unknown as RunReport;
    expect(report.plan!.venue).toBe('devnet-amm');
    expect(report.plan!.slice_count).toBeGreaterThanOrEqual(2);
    expect(report.slices.map((s) => s.state)).toEqual(report.plan!.slices.map(() => 'landed'));
    // Each step ran as its own job: one per slice, and the last one ended the intent.
    expect(ran).toBe(report.plan!.slice_count);
    expect(report.continuations).toBe(report.plan!.slice_count - 1);
    for (const s of report.slices) {
      expect(BigInt(s.bought)).toBeGreaterThanOrEqual(BigInt(s.min_buy_amount));
      expect(BigInt(s.venue_fee_amount!)).toBeGreaterThan(0n); // the pool's 0.3%
      expect(s.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
      // Where the time went: the phases before the recording, the landing, and the whole.
      expect(Object.keys(s.timings_ms ?? {})).toEqual(
        expect.arrayContaining(['checks', 'quote_build', 'sign', 'land', 'total']),
      );
      expect(s.timings_ms!.total).toBeGreaterThanOrEqual(s.timings_ms!.land!);
      // Within twice the 1% budget of the oracle (what the executor checks on each slice's quote).
      expect(Math.abs(s.vs_reference_bps!)).toBeLessThan(200);
    }
    expect(report.totals.sold).toBe(String(60n * USD));

    // The chain moved exactly as the ledger says: what left, what arrived, and the gas paid.
    const after = await holdings(getAddress(a.account));
    const books = await ledgered(a.wallet);
    expect(books.usdc).toBe(after.usdc - before.usdc);
    expect(books.usdc).toBe(-60n * USD);
    expect(books.eurc).toBe(after.eurc - before.eurc);
    expect(books.eurc).toBe(BigInt(report.totals.bought));
    expect(books.native).toBe(after.native - before.native);
    expect(-books.native).toBe(BigInt(report.totals.gas_wei));

    // Each fill's group is stamped with the intent, the slice, its transaction and the policy.
    const groups = await t.db.db
      .selectFrom('ledger_groups')
      .select(['settlement_id', 'policy_hash', 'memo'])
      .where('settlement_id', 'like', `intent:${intent.id}:slice:%`)
      .orderBy('settlement_id')
      .execute();
    expect(groups).toHaveLength(report.slices.length);
    for (const [i, g] of groups.entries()) {
      expect(g.policy_hash).toBe(`sha256:${intent.policy_hash}`);
      expect(g.memo).toMatchObject({ intent: intent.id, slice: i + 1, tx_hash: report.slices[i]!.tx_hash });
    }
    // The wallet's statement of the day shows the fills and the gas, balance by balance.
    const day = new Date().toISOString().slice(0, 10);
    const statement = await a.api<{
      statement: { balances: { ledger_account: string; asset: string; closing: string }[] };
    }>('GET', `/v1/statements?wallet=${a.wallet}&period=${day}`);
    const closing = (asset: string) =>
      statement.statement.balances.find(
        (b) => b.ledger_account === walletAccount(CHAIN, a.wallet) && b.asset === asset,
      )?.closing;
    expect(closing(erc20Asset(CHAIN, m.usdc.address))).toBe(String(books.usdc));
    expect(closing(erc20Asset(CHAIN, m.eurc.address))).toBe(String(books.eurc));
    expect(closing(nativeAsset(CHAIN, 60))).toBe(String(books.native));

    // The hold settled at the value that filled; the fee stays charged.
    const usage = await readSpendUsage(t.db.db, t.deps.clock, a.accountId, a.wallet);
    expect(usage.dayMicroUsd).toBe(60n * USD);
    const kinds = (await a.api<{ events: { kind: string }[] }>('GET', '/v1/events?limit=50')).events
      .map((e) => e.kind)
      .filter((k) => k.startsWith('intent.'))
      .reverse();
    expect(kinds).toEqual([
      'intent.planned',
      'intent.executing',
      ...report.slices.map(() => 'intent.slice_settled'),
      'intent.filled',
    ]);
  });

  // Base, and the testbed chain, where gas top-ups are the only intents that run.
  it.each([8453, 84532])(
    'tops up gas on chain %i from an account with no ETH: the relayer pays the prefund, WETH unwraps into ETH',
    async (chainId) => {
      const weth = getAddress(devnetChain(devnet, chainId).contracts.weth);
      const a = await delegatedAgent(t, {
        chainId,
        ethWei: 0n,
        tokens: [{ symbol: 'WETH', amount: parseEther('0.01').toString() }],
        calls: [{ target: weth, selector: '0x2e1a7d4d', value_limit: '0' }],
      });
      const account = getAddress(a.account);
      const chain = t.deps.chain!.publicClient(chainId);
      const held = async () => ({
        weth: await chain.readContract({
          address: weth,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [account],
        }),
        // Its native coin with its EntryPoint deposit, where the gas is paid from.
        native:
          (await chain.getBalance({ address: account })) +
          (await chain.readContract({
            address: entryPoint07Address,
            abi: entryPoint07Abi,
            functionName: 'balanceOf',
            args: [account],
          })),
      });
      const before = await held();
      expect(before.native).toBe(0n);
      expect(await chain.getCode({ address: account })).toBeUndefined(); // not deployed yet
      const amount = parseEther('0.001');
      const intent = await a.api<Intent>('POST', '/v1/intents', {
        wallet: a.wallet,
        kind: 'gas_topup',
        sell_token: weth,
        buy_token: '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE',
        sell_amount: amount.toString(),
      });
      expect(await runIntentStep(runDeps(t), intent.id)).toEqual({ state: 'done', status: 'filled' });

      const read = await a.api<Intent>('GET', `/v1/intents/${intent.id}`);
      const report = read.report as unknown as RunReport;
      expect(report.slices).toHaveLength(1);
      expect(report.slices[0]).toMatchObject({
        state: 'landed',
        sold: amount.toString(),
        bought: amount.toString(),
      });
      const sponsored = BigInt(report.totals.sponsored_wei);
      const gas = BigInt(report.totals.gas_wei);
      expect(sponsored).toBeGreaterThan(0n);
      expect(gas).toBeGreaterThan(0n);
      // The one operation deployed the account and installed the permission on the way.
      expect(await chain.getCode({ address: account })).toBeDefined();
      // ETH arrived (less the gas the relayer's deposit paid), WETH left, as the ledger says.
      const after = await held();
      const wallet = walletAccount(chainId, a.wallet);
      expect(after.weth - before.weth).toBe(-amount);
      expect(await balanceOf(t.db.db, wallet, erc20Asset(chainId, weth))).toBe(-amount);
      expect(after.native - before.native).toBe(amount + sponsored - gas);
      expect(await balanceOf(t.db.db, wallet, nativeAsset(chainId, 60))).toBe(after.native - before.native);
    },
  );

  it('stops before the next slice when the delegation is revoked mid-run; the first fill stays ledgered', async () => {
    const a = await agent();
    const intent = await a.api<Intent>('POST', '/v1/intents', sellSixty(a.wallet));
    const balance = (await readPrepaidBalance(t.db.db, a.accountId)).balanceMicro;
    const first = await runIntentStep(runDeps(t), intent.id);
    expect(first).toMatchObject({ state: 'continue', why: 'next_slice' });
    await a.api('DELETE', `/v1/delegations/${a.delegationId}`);
    expect(await runIntentStep(runDeps(t), intent.id)).toEqual({ state: 'done', status: 'aborted' });

    const read = await a.api<Intent>('GET', `/v1/intents/${intent.id}`);
    expect(read.status).toBe('aborted');
    expect(read.params.abort).toMatchObject({ reason: 'NO_DELEGATION' });
    const report = read.report as unknown as RunReport;
    expect(report.slices).toHaveLength(1);
    const sold = BigInt(report.totals.sold);
    expect(sold).toBeGreaterThan(0n);
    expect(sold).toBeLessThan(60n * USD);
    expect((await ledgered(a.wallet)).usdc).toBe(-sold);
    // A partial fill keeps its fee; the hold counts what filled, rounded up to the micro-dollar.
    expect((await readPrepaidBalance(t.db.db, a.accountId)).balanceMicro).toBe(balance);
    expect((await readSpendUsage(t.db.db, t.deps.clock, a.accountId, a.wallet)).dayMicroUsd).toBe(sold);
  });
});
