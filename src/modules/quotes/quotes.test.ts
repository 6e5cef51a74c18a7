// POST /v1/quotes on the devnet: real venues (Uniswap v3, the Aerodrome-format router, devnet-amm
// and the 0x and KyberSwap fakes), real price feeds, the planner in preview; and a sliced plan
// executed slice by slice through the built calls, against the savings it promised.

import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  parseAbi,
  parseUnits,
  type Address,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { devnetDeps, type DevnetDepsOptions } from '../../../test/support/devnet-deps.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import { marketTrader, testMarket, type TestMarket } from '../../../test/support/markets.ts';
import { chainDefinition, createViemChainPort } from '../../adapters/chain/viem.ts';
import { createVenueAdapters } from '../../adapters/venues/index.ts';
import { testConfig } from '../../config.ts';
import { systemClock } from '../../core/clock.ts';
import { Deadline } from '../../core/http/deadline.ts';
import { BASE_CHAIN_ID, devnetRpcUrls, type DevnetInfo } from '../../devnet/devnet.ts';
import { devnetConfig } from '../../devnet/config-overrides.ts';
import { setSwitch } from '../switches/index.ts';
import { buildSwap, quoteAllVenues } from '../venues/index.ts';
import type { QuoteComparison } from './service.ts';

const devnet = inject('devnet');
const chain = createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) });
const venues = createVenueAdapters({ config: devnetConfig(testConfig(), devnet), chain });

/** An app over the devnet's venues, whose registry may relocate symbols onto a test's own tokens. */
async function quoteApp(options: DevnetDepsOptions = {}): Promise<TestApp> {
  const config = testConfig({ publicRateLimitPerMinute: 1_000_000 });
  return createTestApp({
    config: { publicRateLimitPerMinute: 1_000_000 },
    deps: { ...(await devnetDeps(devnet, config, chain, options)), devnet },
  });
}

async function quote(t: TestApp, body: Record<string, unknown>) {
  return t.app.fastify.inject({ method: 'POST', url: '/v1/quotes', payload: body });
}

function token(info: DevnetInfo, symbol: string): Address {
  return info.chains[BASE_CHAIN_ID]!.tokens.find((x) => x.symbol === symbol)!.address;
}

describe('POST /v1/quotes on the devnet’s own markets', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await quoteApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('compares every venue for 5,000 USDC → WETH and previews a single slice on the deep pool', async () => {
    const res = await quote(t, {
      sell_token: 'USDC',
      buy_token: token(devnet, 'WETH'),
      sell_amount: '5000000000',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-purser-estimate']).toMatch(/^estimate/);
    const body = res.json() as QuoteComparison;
    expect(body.chain_id).toBe(8453);
    expect(body.sell_token).toBe(token(devnet, 'USDC'));
    expect(body.sell_amount).toBe('5000000000');
    const names = body.full_size.quotes.map((q) => q.venue);
    expect(names.length).toBeGreaterThanOrEqual(3);
    expect(new Set(names)).toEqual(new Set(['uniswap-v3', 'aerodrome', 'devnet-amm', '0x', 'kyberswap']));
    // About 5,000 / 3,000 = 1.667 WETH at the best venue, the deep 0.05% pool.
    expect(body.full_size.best_venue).toBe('uniswap-v3');
    const best = Number(body.full_size.best_buy_amount) / 1e18;
    expect(best).toBeGreaterThan(1.66);
    expect(best).toBeLessThan(1.667);
    for (const q of body.full_size.quotes) {
      expect(BigInt(q.buy_amount)).toBeGreaterThan(0n);
      expect(Date.parse(q.expires_at)).toBeGreaterThan(Date.now());
    }
    expect(body.planner_abort).toBeNull();
    expect(body.sliced_plan).toMatchObject({
      slice_count: 1,
      interval_ms: 0,
      venue: 'uniswap-v3',
      slice_sell_amount: '5000000000',
    });
    expect(body.sliced_plan!.estimated_buy_total).toBe(body.full_size.best_buy_amount);
    expect(body.expected_savings).toBeNull();
    expect(body.assumed_max_slippage_bps).toBe(50);
    expect(body.metered_fee).toMatchObject({ product: 'conversion', estimated_fee_usd: '0.05' });
  });

  it('refuses what it cannot quote with 400 naming the field, and sends no venue request', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ sell_token: 'USDC', buy_token: 'WETH', sell_amount: '0' }, 'sell_amount'],
      [{ sell_token: 'USDC', buy_token: 'WETH', sell_amount: '01' }, 'sell_amount'],
      [{ sell_token: 'USDC', buy_token: 'WETH', sell_amount: '1.5' }, 'sell_amount'],
      [{ sell_token: 'USDC', buy_token: 'WETH', sell_amount: 100 }, 'sell_amount'],
      [{ sell_token: 'USDC', buy_token: 'WETH', sell_amount: (2n ** 256n).toString() }, 'sell_amount'],
      [{ sell_token: 'USDC', buy_token: 'DOGE', sell_amount: '100' }, 'buy_token'],
      [{ sell_token: 'USDC', buy_token: 'USDC', sell_amount: '100' }, 'sell_token and buy_token'],
      [{ sell_token: 'USDC', buy_token: 'WETH', sell_amount: '100', chain_id: 1 }, 'chain_id 1'],
      [{ sell_token: 'USDC', buy_token: 'WETH', sell_amount: '100', slippage: 5 }, 'slippage'],
      [{ buy_token: 'WETH', sell_amount: '100' }, 'sell_token'],
    ];
    for (const [body, named] of cases) {
      const res = await quote(t, body);
      const error = expectErrorBody(res, 400, 'INVALID_REQUEST');
      expect(error.message, JSON.stringify(body)).toContain(named);
    }
    const chainError = expectErrorBody(
      await quote(t, { sell_token: 'USDC', buy_token: 'WETH', sell_amount: '100', chain_id: 1 }),
      400,
      'INVALID_REQUEST',
    );
    expect(chainError.next).toEqual([expect.objectContaining({ method: 'GET', path: '/v1/tokens' })]);
  });

  it('answers fuzzed quotes with a comparison, a 400 or the 502 of no venue: never another 5xx', async () => {
    const symbols = ['USDC', 'WETH', 'EURC', 'usdc', 'weth', 'DOGE'];
    const tokenArb = fc.oneof(
      fc.constantFrom(...symbols, token(devnet, 'USDC'), token(devnet, 'WETH'), token(devnet, 'EURC')),
      fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString('hex')}`),
    );
    const amountArb = fc.oneof(
      fc.bigInt({ min: 1n, max: 10n ** 30n }).map(String),
      fc.constantFrom('1', '0', '007', '1e18', '-5', (2n ** 256n - 1n).toString()),
    );
    const chainArb = fc.option(fc.constantFrom(8453, 84532, 137, 1), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(tokenArb, tokenArb, amountArb, chainArb, async (sell, buy, amount, chainId) => {
        const res = await quote(t, {
          sell_token: sell,
          buy_token: buy,
          sell_amount: amount,
          ...(chainId ? { chain_id: chainId } : {}),
        });
        expect([200, 400, 502], res.body).toContain(res.statusCode);
        if (res.statusCode === 200) {
          const body = res.json() as QuoteComparison;
          expect(body.full_size.quotes.length).toBeGreaterThan(0);
          expect(body.sliced_plan === null).toBe(body.planner_abort !== null);
        } else {
          expectErrorBody(
            res,
            res.statusCode,
            res.statusCode === 400 ? 'INVALID_REQUEST' : 'VENUE_UNAVAILABLE',
          );
        }
      }),
      { numRuns: 60 },
    );
  });

  it('answers 502 VENUE_UNAVAILABLE when no venue serves the chain, or all are switched off', async () => {
    const none = expectErrorBody(
      await quote(t, { sell_token: 'USDC', buy_token: 'WETH', sell_amount: '1000000', chain_id: 84532 }),
      502,
      'VENUE_UNAVAILABLE',
    );
    expect(none.message).toContain('No venue serves chain 84532');
    for (const v of venues) {
      await setSwitch(
        t.db.db,
        systemClock,
        { scope: 'venue', target: v.venue, enabled: false, reason: 'drill' },
        null,
      );
    }
    try {
      const off = expectErrorBody(
        await quote(t, { sell_token: 'USDC', buy_token: 'WETH', sell_amount: '1000000' }),
        502,
        'VENUE_UNAVAILABLE',
      );
      expect(off.message).toContain('switched off (drill)');
    } finally {
      for (const v of venues)
        await setSwitch(t.db.db, systemClock, { scope: 'venue', target: v.venue, enabled: true }, null);
    }
  });
});

describe('POST /v1/quotes on markets of the test’s own', () => {
  // TKA plays WETH (valued by the ETH/USD feed, 3,000), TKB plays USDC (1:1), TKC plays EURC (1.08).
  let market: TestMarket;
  let t: TestApp;
  beforeAll(async () => {
    market = await testMarket(devnet, { TKA: 18, TKB: 6, TKC: 6, TKD: 18 }, [
      // The worked example of docs/execution.md: 300 / 900,000 on devnet-amm (and so on the fakes).
      { venue: 'devnet-amm', pair: ['TKA', 'TKB'], fee: null, depth: ['300', '900000'] },
      // TKA/TKC: uniswap-v3 at the feeds' price, aerodrome 12% dearer: venues disagree.
      { venue: 'uniswap-v3', pair: ['TKA', 'TKC'], fee: 3000, depth: ['1000', '2777777.777777'] },
      { venue: 'aerodrome', pair: ['TKA', 'TKC'], fee: null, depth: ['1000', '3111111.111111'] },
      // TKC/TKB: one venue, 6% off the reference (1.08): a price gap.
      { venue: 'uniswap-v3', pair: ['TKC', 'TKB'], fee: 500, depth: ['1000000', '1144800'] },
      // TKD is in no registry.
      { venue: 'uniswap-v3', pair: ['TKD', 'TKB'], fee: 3000, depth: ['1000', '3000000'] },
    ]);
    const tk = market.tokens;
    t = await quoteApp({ relocate: { WETH: tk.TKA!.address, USDC: tk.TKB!.address, EURC: tk.TKC!.address } });
  });
  afterAll(async () => {
    await t?.close();
  });

  const ask = async (sell: string, buy: string, amount: bigint) => {
    const res = await quote(t, {
      sell_token: market.tokens[sell]!.address,
      buy_token: market.tokens[buy]!.address,
      sell_amount: amount.toString(),
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as QuoteComparison;
  };

  it('previews the worked example: 3 TKA in 4 slices, about 0.7% better than one fill', async () => {
    const body = await ask('TKA', 'TKB', parseUnits('3', 18));
    expect(body.planner_abort).toBeNull();
    expect(body.full_size.quotes.map((q) => q.venue).sort()).toEqual(['0x', 'devnet-amm', 'kyberswap']);
    expect(body.sliced_plan).toMatchObject({
      slice_count: 4,
      slice_sell_amount: '750000000000000000',
      interval_ms: 4000,
    });
    expect(body.sliced_plan!.impact_bps_at_full_size).toBeCloseTo(97, -1);
    expect(body.expected_savings!.bps).toBeCloseTo(73, -1);
  });

  it('refuses, naming the reason, an order the depth cannot carry even in two slices', async () => {
    const body = await ask('TKA', 'TKB', parseUnits('10', 18));
    expect(body.sliced_plan).toBeNull();
    expect(body.planner_abort).toMatchObject({
      reason: 'DEPTH_COLLAPSE',
      detail: { slippage_bps: 50, max_slices: 20 },
    });
    // Half the order alone, 5 TKA, moves the price about 160 bps: more than the 50 bps budget.
    expect(body.planner_abort!.detail.impact_bps_at_half_size as number).toBeGreaterThan(150);
    expect(body.full_size.quotes.length).toBeGreaterThan(0);
  });

  it('refuses venues that disagree beyond ten budgets', async () => {
    const body = await ask('TKA', 'TKC', parseUnits('1', 18));
    expect(body.planner_abort?.reason).toBe('VENUE_DISAGREEMENT');
    expect(body.planner_abort?.detail).toMatchObject({ limit_bps: 500 });
  });

  it('refuses a venue price beyond two budgets from the oracle', async () => {
    const body = await ask('TKC', 'TKB', parseUnits('100', 6));
    expect(body.planner_abort).toMatchObject({
      reason: 'PRICE_GAP',
      detail: { venue: 'uniswap-v3', limit_bps: 100 },
    });
    expect(body.planner_abort!.detail.gap_bps as number).toBeGreaterThan(500);
  });

  it('refuses a token outside the registry even when a venue prices it', async () => {
    const body = await ask('TKD', 'TKB', parseUnits('1', 18));
    expect(body.full_size.best_venue).toBe('uniswap-v3');
    expect(body.planner_abort?.reason).toBe('UNSUPPORTED_TOKEN');
  });

  it('refuses a single venue without an oracle reference', async () => {
    const noPrices = await quoteApp({
      relocate: {
        WETH: market.tokens.TKA!.address,
        USDC: market.tokens.TKB!.address,
        EURC: market.tokens.TKC!.address,
      },
      prices: false,
    });
    try {
      const res = await quote(noPrices, { sell_token: 'EURC', buy_token: 'USDC', sell_amount: '100000000' });
      expect(res.statusCode, res.body).toBe(200);
      expect((res.json() as QuoteComparison).planner_abort?.reason).toBe('NO_PRICE_REFERENCE');
    } finally {
      await noPrices.close();
    }
  });

  it('says which venues failed when none answered', async () => {
    // TKD → TKC has no pool anywhere: every venue is asked and none can price it.
    const res = await quote(t, {
      sell_token: market.tokens.TKD!.address,
      buy_token: 'EURC',
      sell_amount: '1000',
    });
    const error = expectErrorBody(res, 502, 'VENUE_UNAVAILABLE');
    expect(error.message).toMatch(/No venue answered: .*uniswap-v3 no_quote/);
  });
});

describe('POST /v1/quotes: the first slice cut between two venues', () => {
  it('previews the cut the executor would make when it buys more than the second swap’s gas, and none for a small order', async () => {
    // TKA plays WETH (3,000 by the feed), TKB plays USDC: two pools 3,000 TKA deep at that price.
    const market = await testMarket(devnet, { TKA: 18, TKB: 6 }, [
      { venue: 'devnet-amm', pair: ['TKA', 'TKB'], fee: null, depth: ['3000', '9000000'] },
      { venue: 'aerodrome', pair: ['TKA', 'TKB'], fee: null, depth: ['3000', '9000000'] },
    ]);
    const tka = market.tokens.TKA!;
    const tkb = market.tokens.TKB!;
    const t = await quoteApp({ relocate: { WETH: tka.address, USDC: tkb.address } });
    try {
      const ask = async (amount: string) => {
        const res = await quote(t, { sell_token: tka.address, buy_token: tkb.address, sell_amount: amount });
        expect(res.statusCode, res.body).toBe(200);
        return res.json() as QuoteComparison;
      };
      const large = await ask(parseUnits('20', 18).toString());
      const plan = large.sliced_plan!;
      expect(plan, JSON.stringify(large.planner_abort)).not.toBeNull();
      expect(plan.slice_count).toBeGreaterThan(1);
      const split = plan.split!;
      expect(split, 'no split previewed').not.toBeNull();
      // Aerodrome's pool and devnet-amm's (which the aggregator fakes route through as well).
      const venues = split.parts.map((p) => p.venue);
      expect(venues).toContain('aerodrome');
      expect(['devnet-amm', '0x', 'kyberswap']).toContain(venues.find((v) => v !== 'aerodrome'));
      // The parts are the first slice, cut at a quarter, a half or three quarters.
      const first = BigInt(plan.slice_sell_amount);
      expect(split.parts.reduce((t, p) => t + BigInt(p.sell_amount), 0n)).toBe(first);
      expect([1n, 2n, 3n].map((q) => (first * q) / 4n)).toContain(BigInt(split.parts[0]!.sell_amount));
      // Two equal pools: halves buy the most, far more than the gas of a second swap.
      expect(BigInt(split.parts[0]!.sell_amount)).toBe(first / 2n);
      expect(BigInt(split.gain)).toBeGreaterThan(BigInt(split.gas_cost));
      const larger = [...split.parts].sort((a, b) =>
        Number(BigInt(b.sell_amount) - BigInt(a.sell_amount)),
      )[0]!;
      expect(plan.venue).toBe(larger.venue);
      // A small order moves a pool too little for a second swap to pay for itself.
      const small = await ask(parseUnits('0.001', 18).toString());
      expect(small.sliced_plan).toMatchObject({ slice_count: 1, split: null });
    } finally {
      await t.close();
    }
  });
});

describe('a sliced plan executed on the devnet', () => {
  it('keeps every slice inside the slippage budget and saves what the preview estimated, within 0.5%', async () => {
    // A fresh copy of the worked example, so the execution moves only this test's pool.
    const market = await testMarket(devnet, { TKA: 18, TKB: 6 }, [
      { venue: 'devnet-amm', pair: ['TKA', 'TKB'], fee: null, depth: ['300', '900000'] },
    ]);
    const tka = market.tokens.TKA!;
    const tkb = market.tokens.TKB!;
    const t = await quoteApp({ relocate: { WETH: tka.address, USDC: tkb.address } });
    try {
      const S = parseUnits('3', 18);
      const res = await quote(t, {
        sell_token: tka.address,
        buy_token: tkb.address,
        sell_amount: S.toString(),
      });
      expect(res.statusCode, res.body).toBe(200);
      const preview = res.json() as QuoteComparison;
      const plan = preview.sliced_plan!;
      expect(plan.slice_count).toBe(4);

      const pair = market.pools[0]!.address;
      const trader = await marketTrader(market, tka, S);
      const arbitrageur = await restorer(market.rpcUrl, pair, tkb.address);
      const venueDeps = {
        db: t.db.db,
        venues: venues.filter((v) => v.venue === plan.venue),
        venueTimeoutMs: 4_000,
      };
      const slices = Array.from({ length: plan.slice_count }, (_, i) =>
        i < plan.slice_count - 1
          ? BigInt(plan.slice_sell_amount)
          : S - BigInt(plan.slice_sell_amount) * BigInt(plan.slice_count - 1),
      );
      let received = 0n;
      for (const slice of slices) {
        // A fresh quote for the slice, its calls built with the budget, then sent.
        const { quotes } = await quoteAllVenues(venueDeps, {
          chainId: BASE_CHAIN_ID,
          sellToken: tka.address,
          buyToken: tkb.address,
          sellAmount: slice,
          deadline: new Deadline(10_000),
        });
        const fresh = quotes[0]!;
        const calls = await buildSwap(
          venueDeps,
          {
            quote: fresh,
            taker: trader.address,
            slippageBps: preview.assumed_max_slippage_bps,
            swapDeadline: 2n ** 40n,
            deadline: new Deadline(10_000),
          },
          new Date(),
        );
        const before = await trader.balanceOf(tkb);
        expect(await trader.send(calls.calls)).toEqual(['success', 'success']);
        const got = (await trader.balanceOf(tkb)) - before;
        // Inside the budget: at least the minimum, and the slice's own impact under half of it.
        expect(got).toBeGreaterThanOrEqual(calls.minBuyAmount);
        const marginal = (slice * BigInt(plan.probe_buy_amount)) / BigInt(plan.probe_sell_amount);
        expect(Number(marginal - got) / Number(marginal)).toBeLessThan(
          preview.assumed_max_slippage_bps / 2 / 10_000,
        );
        received += got;
        // The arbitrageur brings the pool back to the reference price before the next slice.
        await arbitrageur.restore();
      }
      const estimated = BigInt(plan.estimated_buy_total);
      expect(Math.abs(Number(received - estimated)) / Number(estimated)).toBeLessThan(0.005);
      const saved = received - BigInt(preview.full_size.best_buy_amount);
      const promised = BigInt(preview.expected_savings!.buy_amount);
      expect(saved).toBeGreaterThan(0n);
      expect(Math.abs(Number(saved - promised)) / Number(promised)).toBeLessThan(0.05);
    } finally {
      await t.close();
    }
  });
});

/**
 * The test's arbitrageur: after a sale moved the pair's price, it adds the quote token the pool
 * lacks (minted) and syncs, so the price is back at the start price before the next slice: the
 * recovery that makes slicing pay (docs/execution.md).
 */
async function restorer(rpcUrl: string, pair: Address, quoteToken: Address) {
  const key = generatePrivateKey();
  const account = privateKeyToAccount(key);
  const viemChain = chainDefinition(BASE_CHAIN_ID, rpcUrl);
  const transport = http(rpcUrl, { retryCount: 0 });
  const client = createPublicClient({ chain: viemChain, transport, pollingInterval: 20 });
  await createTestClient({ mode: 'anvil', chain: viemChain, transport }).setBalance({
    address: account.address,
    value: 10n ** 18n,
  });
  const wallet = createWalletClient({ account, chain: viemChain, transport });
  const pairAbi = parseAbi([
    'function getReserves() view returns (uint112, uint112, uint32)',
    'function token0() view returns (address)',
    'function sync()',
  ]);
  const mintAbi = parseAbi(['function mint(address to, uint256 amount) returns (bool)']);
  const token0 = await client.readContract({ address: pair, abi: pairAbi, functionName: 'token0' });
  const quoteIs0 = token0.toLowerCase() === quoteToken.toLowerCase();
  const [r0, r1] = await client.readContract({ address: pair, abi: pairAbi, functionName: 'getReserves' });
  const [startBase, startQuote] = quoteIs0 ? [r1, r0] : [r0, r1];
  const send = async (hash: `0x${string}`) => {
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== 'success') throw new Error('restore failed');
  };
  // Explicit gas limits: `sync` costs more in the first block of a new second (the pair writes its
  // price accumulators), so an estimate made a moment earlier can fall short.
  return {
    async restore() {
      const [a, b] = await client.readContract({ address: pair, abi: pairAbi, functionName: 'getReserves' });
      const [base, quoteReserve] = quoteIs0 ? [b, a] : [a, b];
      const wanted = (base * startQuote) / startBase;
      if (wanted <= quoteReserve) return;
      await send(
        await wallet.writeContract({
          address: quoteToken,
          abi: mintAbi,
          functionName: 'mint',
          args: [pair, wanted - quoteReserve],
          gas: 300_000n,
        }),
      );
      await send(
        await wallet.writeContract({ address: pair, abi: pairAbi, functionName: 'sync', gas: 300_000n }),
      );
    },
  };
}
