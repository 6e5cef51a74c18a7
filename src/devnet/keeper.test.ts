// The devnet's arbitrage keeper, on pools of the test's own: trades that move a constant-product
// pair, an Aerodrome-format pair and a Uniswap v3 pool away from the feeds are traded back by one
// step, within its tolerance; a pool already at the feeds' price is left alone. And what it is
// for: a conversion in several slices whose every slice starts from the reference price, as on
// mainnet, so it fills completely.

import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generatePrivateKey } from 'viem/accounts';
import {
  conversionAgent,
  eurcMarket,
  runDeps,
  sellUsdc,
  type EurcMarket,
} from '../../test/support/executor.ts';
import { marketTrader } from '../../test/support/markets.ts';
import { buildSwap, quoteAllVenues } from '../modules/venues/index.ts';
import { Deadline } from '../core/http/deadline.ts';
import type { Intent } from '../modules/intents/index.ts';
import { runIntentStep, type RunReport } from '../modules/executor/index.ts';
import { devnetChain } from './devnet.ts';
import { createArbitrageKeeper, type ArbitrageKeeper } from './keeper.ts';

const devnet = inject('devnet');
const USD = 1_000_000n;
const markets: EurcMarket[] = [];
let m: EurcMarket;
let keeper: ArbitrageKeeper;

/** A keeper of the market's pools, on a key of its own (files share the devnet). */
function keeperOf(market: EurcMarket): ArbitrageKeeper {
  const base = devnetChain(devnet, 8453);
  return createArbitrageKeeper({
    rpcUrl: base.rpcUrl,
    chainId: 8453,
    pools: market.market.pools,
    tokens: [
      { ...market.eurc, feed: 'EURC/USD' },
      { ...market.usdc, feed: 'USDC/USD' },
    ],
    priceFeeds: base.priceFeeds,
    uniswapV3SwapRouter: base.contracts.uniswapV3SwapRouter!,
    wrappedNative: base.contracts.weth!,
    key: generatePrivateKey(),
  });
}

beforeAll(async () => {
  m = await eurcMarket(devnet, [
    { venue: 'devnet-amm', usdcDepth: 10_800 },
    { venue: 'aerodrome', usdcDepth: 10_800 },
    { venue: 'uniswap-v3', usdcDepth: 10_800 },
  ]);
  markets.push(m);
  keeper = keeperOf(m);
});
afterAll(async () => {
  for (const x of markets) await x.t.close();
});

describe('the arbitrage keeper', () => {
  it('trades pools a sale moved back to the feeds’ price, and leaves a pool at the price alone', async () => {
    const quiet = await keeper.step();
    expect(
      quiet.every((p) => !p.traded && Math.abs(p.deviationBps) <= 10),
      JSON.stringify(quiet),
    ).toBe(true);
    // A trader sells 300 USDC for EURC on each venue: every pool's EURC gets dearer.
    const trader = await marketTrader(m.market, m.usdc, 1_000n * USD);
    const deps = { db: m.t.db.db, venues: m.t.deps.venues ?? [], venueTimeoutMs: 4_000 };
    for (const venue of ['devnet-amm', 'aerodrome', 'uniswap-v3']) {
      const [q] = (
        await quoteAllVenues(deps, {
          chainId: 8453,
          sellToken: m.usdc.address,
          buyToken: m.eurc.address,
          sellAmount: 300n * USD,
          allow: [venue],
          deadline: new Deadline(10_000),
        })
      ).quotes;
      const swap = await buildSwap(
        deps,
        {
          quote: q!,
          taker: trader.address,
          slippageBps: 500,
          swapDeadline: 2n ** 40n,
          deadline: new Deadline(10_000),
        },
        new Date(),
      );
      expect(await trader.send(swap.calls)).toEqual(['success', 'success']);
    }
    const moved = await keeper.step();
    expect(moved).toHaveLength(3);
    for (const p of moved) {
      expect(p.traded, JSON.stringify(p)).toBe(true);
      expect(Math.abs(p.deviationBps)).toBeGreaterThan(200);
    }
    // One step brought every pool back within the tolerance.
    const after = await keeper.step();
    for (const p of after) {
      expect(p.traded, JSON.stringify(p)).toBe(false);
      expect(Math.abs(p.deviationBps)).toBeLessThanOrEqual(10);
    }
  });

  it('lets a conversion in several slices fill with every slice at the reference price', async () => {
    const agent = await conversionAgent(devnet, m, 300n * USD, {
      policy: {
        execution: { max_slippage_bps: 100, venues: ['devnet-amm'] },
        spend: { per_tx_usd: '1000', daily_usd: '5000' },
      },
    });
    const intent = await agent.api<Intent>('POST', '/v1/intents', sellUsdc(m, agent.wallet, 200n * USD));
    let status = 'executing';
    for (let i = 0; i < 12 && status !== 'filled' && status !== 'aborted'; i++) {
      const step = await runIntentStep(runDeps(m.t), intent.id);
      if (step.state === 'done') status = step.status;
      // The market recovers between slices, as arbitrage makes it on mainnet.
      await keeper.step();
    }
    const read = await agent.api<Intent>('GET', `/v1/intents/${intent.id}`);
    expect(read.status, JSON.stringify(read.params.abort)).toBe('filled');
    const report = read.report as unknown as RunReport;
    expect(report.slices.length).toBeGreaterThanOrEqual(3);
    // Each slice started from the reference: none paid much more than the first.
    const first = report.slices[0]!.vs_reference_bps!;
    for (const s of report.slices) expect(s.vs_reference_bps!).toBeGreaterThan(first - 10);
    expect(BigInt(report.totals.sold)).toBe(200n * USD);
  });
});
