// Routing across venues, on the devnet through the API: each slice of a conversion goes to the
// venue with the best fresh quote among those the policies allow and the delegation's grant
// covers. Read back with viem: each venue's pool moved by exactly its part, and the ledger (the
// wallet's side and each venue's) equals the chain. A venue whose router the grant does not cover
// is never asked, even when it prices better.

import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { getAddress } from 'viem';
import {
  chainHeld,
  conversionAgent,
  eurcMarket,
  runToEnd,
  sellUsdc,
  type EurcMarket,
} from '../../../test/support/executor.ts';
import { devnetChain } from '../../devnet/devnet.ts';
import { NARROWED_SELECTORS } from '../delegations/rules.ts';
import type { Intent } from '../intents/index.ts';
import { balanceOf, erc20Asset, venueAccount, walletAccount } from '../ledger/index.ts';
import type { RunReport } from './index.ts';

const devnet = inject('devnet');
const USD = 1_000_000n;
const markets: EurcMarket[] = [];
let even: EurcMarket;
let cheaper: EurcMarket;
let deep: EurcMarket;

beforeAll(async () => {
  // Two pools of one pair at the same price and depth: 60 USDC at a 1% budget is two slices of
  // 30, and the first moves its pool enough that the other prices the second better.
  even = await eurcMarket(devnet, [
    { venue: 'devnet-amm', usdcDepth: 10_800 },
    { venue: 'aerodrome', usdcDepth: 10_800 },
  ]);
  // Aerodrome sells EURC 0.9% cheaper than devnet-amm (and the reference).
  cheaper = await eurcMarket(devnet, [
    { venue: 'devnet-amm', usdcDepth: 10_800 },
    { venue: 'aerodrome', usdcDepth: 10_800, eurcPrice: 1.07 },
  ]);
  // Two deep pools of one pair at the same price: a slice of thousands moves one pool enough
  // that cutting it between both buys more than a second swap's gas costs.
  deep = await eurcMarket(devnet, [
    { venue: 'devnet-amm', usdcDepth: 1_080_000 },
    { venue: 'aerodrome', usdcDepth: 1_080_000 },
  ]);
  markets.push(even, cheaper, deep);
});
afterAll(async () => {
  for (const m of markets) await m.t.close();
});

const routers = () => {
  const contracts = devnetChain(devnet, 8453).contracts;
  return { v2: contracts.uniswapV2Router02!, aerodrome: contracts.aerodromeRouter! };
};

/** An agent granted approve and the swap of each venue in `venues`, and its intent (60 USDC) on both. */
async function agentOn(
  m: EurcMarket,
  venues: ('devnet-amm' | 'aerodrome')[],
  amount = 60n * USD,
  policy?: Record<string, unknown>,
) {
  const r = routers();
  const agent = await conversionAgent(devnet, m, amount + 40n * USD, {
    ...(policy ? { policy } : {}),
    calls: [
      { target: m.usdc.address, selector: NARROWED_SELECTORS.approve, value_limit: '0' },
      ...(venues.includes('devnet-amm')
        ? [{ target: r.v2, selector: NARROWED_SELECTORS.uniswapV2Swap, value_limit: '0' }]
        : []),
      ...(venues.includes('aerodrome')
        ? [{ target: r.aerodrome, selector: NARROWED_SELECTORS.aerodromeSwap, value_limit: '0' }]
        : []),
    ],
  });
  const intent = await agent.api<Intent>(
    'POST',
    '/v1/intents',
    sellUsdc(m, agent.wallet, amount, { venues: ['devnet-amm', 'aerodrome'] }),
  );
  return { agent, intent };
}

/** USDC each pool of the market holds, by venue. */
async function poolUsdc(m: EurcMarket): Promise<Record<string, bigint>> {
  const out: Record<string, bigint> = {};
  for (const pool of m.market.pools) out[pool.venue] = await chainHeld(m.t, m.usdc, pool.address);
  return out;
}

describe('routing a conversion across venues', () => {
  it('sends each slice to the best fresh quote: the two slices fill on two venues, each pool moved by its part', async () => {
    const m = even;
    const before = await poolUsdc(m);
    const { agent, intent } = await agentOn(m, ['devnet-amm', 'aerodrome']);
    expect(await runToEnd(m.t, intent.id)).toEqual({ status: 'filled' });
    const read = await agent.api<Intent>('GET', `/v1/intents/${intent.id}`);
    const report = read.report as unknown as RunReport;
    expect(report.slices).toHaveLength(2);
    const venues = report.slices.map((s) => s.venue);
    expect(new Set(venues)).toEqual(new Set(['devnet-amm', 'aerodrome']));
    // Each slice went to the better of the two quotes it had.
    for (const s of report.slices) {
      expect(s.routing?.map((q) => q.venue).sort()).toEqual(['aerodrome', 'devnet-amm']);
      expect(s.routing?.[0]?.venue).toBe(s.venue);
      expect(BigInt(s.routing![0]!.buy_amount)).toBeGreaterThanOrEqual(BigInt(s.routing![1]!.buy_amount));
    }
    // On chain: each pool took exactly what its slice sold.
    const after = await poolUsdc(m);
    for (const s of report.slices) {
      expect(after[s.venue]! - before[s.venue]!).toBe(BigInt(s.sold));
    }
    // The ledger says the same: each venue's account and the wallet's, against the chain.
    for (const s of report.slices) {
      expect(await balanceOf(m.t.db.db, venueAccount(s.venue, 8453), erc20Asset(8453, m.usdc.address))).toBe(
        BigInt(s.sold),
      );
    }
    const wallet = walletAccount(8453, agent.wallet);
    const account = getAddress(agent.account);
    expect(await balanceOf(m.t.db.db, wallet, erc20Asset(8453, m.usdc.address))).toBe(-60n * USD);
    expect(await balanceOf(m.t.db.db, wallet, erc20Asset(8453, m.eurc.address))).toBe(
      await chainHeld(m.t, m.eurc, account),
    );
    expect(await chainHeld(m.t, m.usdc, account)).toBe(40n * USD);
  });

  it('never routes to a venue the grant does not cover, even when it prices better', async () => {
    const m = cheaper;
    const before = await poolUsdc(m);
    // Granted devnet-amm only: both slices there, the cheaper aerodrome pool untouched.
    const limited = await agentOn(m, ['devnet-amm']);
    expect(await runToEnd(m.t, limited.intent.id)).toEqual({ status: 'filled' });
    const read = await limited.agent.api<Intent>('GET', `/v1/intents/${limited.intent.id}`);
    const report = read.report as unknown as RunReport;
    expect(report.plan?.venue).toBe('devnet-amm');
    expect(report.slices.map((s) => s.venue)).toEqual(['devnet-amm', 'devnet-amm']);
    expect(report.slices.every((s) => s.routing === undefined)).toBe(true);
    const between = await poolUsdc(m);
    expect(between['aerodrome']).toBe(before['aerodrome']);
    expect(between['devnet-amm']! - before['devnet-amm']!).toBe(60n * USD);
    // Granted both, the same sale starts on aerodrome: it was the better price all along.
    const both = await agentOn(m, ['devnet-amm', 'aerodrome']);
    expect(await runToEnd(m.t, both.intent.id)).toEqual({ status: 'filled' });
    const second = (await both.agent.api<Intent>('GET', `/v1/intents/${both.intent.id}`))
      .report as unknown as RunReport;
    expect(second.slices[0]?.venue).toBe('aerodrome');
  });

  it('splits a slice between two venues in one operation when the cut buys more than its gas; each venue ledgered by its part', async () => {
    const m = deep;
    const before = await poolUsdc(m);
    const amount = 12_000n * USD;
    const { agent, intent } = await agentOn(m, ['devnet-amm', 'aerodrome'], amount, {
      execution: { max_slippage_bps: 100 },
      spend: { per_tx_usd: '20000', daily_usd: '50000' },
    });
    expect(await runToEnd(m.t, intent.id)).toEqual({ status: 'filled' });
    const read = await agent.api<Intent>('GET', `/v1/intents/${intent.id}`);
    const report = read.report as unknown as RunReport;
    expect(report.slices.length).toBeGreaterThan(1);
    const split = report.slices.filter((s) => s.split);
    expect(split.length).toBeGreaterThan(0);
    const sold: Record<string, bigint> = { 'devnet-amm': 0n, aerodrome: 0n };
    for (const s of report.slices) {
      if (!s.split) {
        sold[s.venue] = sold[s.venue]! + BigInt(s.sold);
        continue;
      }
      expect(s.split.map((p) => p.venue).sort()).toEqual(['aerodrome', 'devnet-amm']);
      // Each part sold its share exactly and got at least its own minimum; together the slice.
      for (const p of s.split) {
        expect(BigInt(p.sold)).toBe(BigInt(p.sell_amount));
        expect(BigInt(p.bought)).toBeGreaterThanOrEqual(BigInt(p.min_buy_amount));
        sold[p.venue] = sold[p.venue]! + BigInt(p.sold);
      }
      expect(s.split.reduce((t, p) => t + BigInt(p.sold), 0n)).toBe(BigInt(s.sold));
      expect(s.split.reduce((t, p) => t + BigInt(p.bought), 0n)).toBe(BigInt(s.bought));
      // The cut bought more than the best venue alone was quoting for the whole slice.
      expect(BigInt(s.bought)).toBeGreaterThan(BigInt(s.routing![0]!.buy_amount));
      // The larger part names the slice.
      const larger = [...s.split].sort((x, y) => Number(BigInt(y.sell_amount) - BigInt(x.sell_amount)))[0]!;
      expect(s.venue).toBe(larger.venue);
    }
    // On chain each pool took exactly its venue's parts; the ledger's venue sides say the same.
    const after = await poolUsdc(m);
    for (const venue of ['devnet-amm', 'aerodrome']) {
      expect(after[venue]! - before[venue]!).toBe(sold[venue]);
      expect(await balanceOf(m.t.db.db, venueAccount(venue, 8453), erc20Asset(8453, m.usdc.address))).toBe(
        sold[venue],
      );
    }
    const wallet = walletAccount(8453, agent.wallet);
    const account = getAddress(agent.account);
    expect(await balanceOf(m.t.db.db, wallet, erc20Asset(8453, m.usdc.address))).toBe(-amount);
    expect(await balanceOf(m.t.db.db, wallet, erc20Asset(8453, m.eurc.address))).toBe(
      await chainHeld(m.t, m.eurc, account),
    );
  });
});
