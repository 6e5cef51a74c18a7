import { createServer, type Server, type Socket } from 'node:net';
import { parseUnits } from 'viem';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { marketTrader, testMarket, type TestMarket } from '../../../test/support/markets.ts';
import { createViemChainPort } from '../../adapters/chain/viem.ts';
import { createVenueAdapters, type VenueAdapter } from '../../adapters/venues/index.ts';
import { testConfig } from '../../config.ts';
import { systemClock } from '../../core/clock.ts';
import { Deadline } from '../../core/http/deadline.ts';
import { BASE_CHAIN_ID, devnetChain } from '../../devnet/devnet.ts';
import { devnetConfig } from '../../devnet/config-overrides.ts';
import { setSwitch } from '../switches/index.ts';
import { buildSwap, quoteAllVenues, type VenueDeps } from './index.ts';

const devnet = inject('devnet');
const ONCHAIN: string[] = ['uniswap-v3', 'aerodrome', 'devnet-amm'];
const base = devnetChain(devnet, BASE_CHAIN_ID);

let db: TestDatabase;
let market: TestMarket;
let silent: Server;
let silentUrl: string;
const held = new Set<Socket>();

/** The devnet's venues as development builds them, over an RPC URL of the test's choosing for some. */
function adapters(rpcUrl = base.rpcUrl): VenueAdapter[] {
  return createVenueAdapters({
    config: devnetConfig(testConfig(), devnet),
    chain: createViemChainPort({ rpcUrls: { [BASE_CHAIN_ID]: rpcUrl }, retryCount: 0 }),
  });
}

beforeAll(async () => {
  db = await createTestDatabase();
  // TKA/TKB: deep on uniswap-v3, medium on aerodrome, shallow on devnet-amm.
  market = await testMarket(devnet, { TKA: 18, TKB: 6 }, [
    { venue: 'uniswap-v3', pair: ['TKA', 'TKB'], fee: 500, depth: ['5000', '10000000'] },
    { venue: 'aerodrome', pair: ['TKA', 'TKB'], fee: null, depth: ['500', '1000000'] },
    { venue: 'devnet-amm', pair: ['TKA', 'TKB'], fee: null, depth: ['20', '40000'] },
  ]);
  silent = createServer((socket) => {
    held.add(socket);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
  silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
});

afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
  await db?.drop();
});

const sale = (sellAmount = parseUnits('10', 18)) => ({
  chainId: BASE_CHAIN_ID,
  sellToken: market.tokens.TKA!.address,
  buyToken: market.tokens.TKB!.address,
  sellAmount,
});

function deps(venues: VenueAdapter[], venueTimeoutMs = 2_000): VenueDeps {
  return { db: db.handle.db, venues, venueTimeoutMs };
}

describe('quoteAllVenues', () => {
  it('asks every venue of the chain and ranks their quotes, deepest pool first', async () => {
    const result = await quoteAllVenues(deps(adapters()), { ...sale(), deadline: new Deadline(10_000) });
    // The aggregator fakes (0x, KyberSwap) route through devnet-amm's pools.
    expect(result.asked.sort()).toEqual(['0x', 'aerodrome', 'devnet-amm', 'kyberswap', 'uniswap-v3']);
    expect(result.failures).toEqual([]);
    expect(result.quotes.slice(0, 2).map((q) => q.venue)).toEqual(['uniswap-v3', 'aerodrome']);
    // 10 TKA on the shallow pool (20 TKA deep) gets about a third less than on the deep one.
    const deep = result.quotes[0]!;
    const shallow = result.quotes.find((q) => q.venue === 'devnet-amm')!;
    expect(Number(shallow.buyAmount) / Number(deep.buyAmount)).toBeLessThan(0.7);
  });

  it('keeps the quotes of the venues that answer when one hangs, and waits no longer than its timeout', async () => {
    // uniswap-v3 reads an RPC that never answers; the two router venues read the devnet.
    const hanging = adapters(silentUrl).filter((a) => a.venue === 'uniswap-v3');
    const healthy = adapters().filter((a) => a.venue !== 'uniswap-v3');
    const started = performance.now();
    const result = await quoteAllVenues(deps([...hanging, ...healthy], 400), {
      ...sale(),
      deadline: new Deadline(10_000),
    });
    const elapsed = performance.now() - started;
    expect(result.quotes.map((q) => q.venue).sort()).toEqual(['0x', 'aerodrome', 'devnet-amm', 'kyberswap']);
    expect(result.failures).toEqual([expect.objectContaining({ venue: 'uniswap-v3', kind: 'timeout' })]);
    expect(elapsed).toBeGreaterThanOrEqual(380);
    expect(elapsed).toBeLessThan(1_500);
  });

  it('stops at the caller’s budget when that is shorter than the venue timeout', async () => {
    const hanging = adapters(silentUrl).filter((a) => ONCHAIN.includes(a.venue));
    const started = performance.now();
    const result = await quoteAllVenues(deps(hanging, 30_000), { ...sale(), deadline: new Deadline(300) });
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(result.quotes).toEqual([]);
    expect(result.failures.map((f) => f.kind)).toEqual(['timeout', 'timeout', 'timeout']);
  });

  it('reports a venue that answers something else, or throws, as that venue’s failure only', async () => {
    const [v3] = adapters().filter((a) => a.venue === 'uniswap-v3');
    const liar: VenueAdapter = {
      venue: 'aerodrome',
      chains: () => [BASE_CHAIN_ID],
      contracts: () => [],
      // Quotes half the amount asked: a quote for another question.
      quote: async (r) => ({
        ...(await v3!.quote({ ...r, sellAmount: r.sellAmount / 2n })),
        venue: 'aerodrome',
      }),
      build: () => Promise.reject(new Error('not used')),
    };
    const broken: VenueAdapter = {
      venue: 'devnet-amm',
      chains: () => [BASE_CHAIN_ID],
      contracts: () => [],
      quote: () => Promise.reject(new TypeError('cannot read properties of undefined')),
      build: () => Promise.reject(new Error('not used')),
    };
    const result = await quoteAllVenues(deps([v3!, liar, broken]), {
      ...sale(),
      deadline: new Deadline(10_000),
    });
    expect(result.quotes.map((q) => q.venue)).toEqual(['uniswap-v3']);
    expect(result.failures).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ venue: 'aerodrome', kind: 'bad_response' }),
        expect.objectContaining({ venue: 'devnet-amm', kind: 'unavailable' }),
      ]),
    );
  });

  it('asks only the allowed venues, and none the operator switched off, from the moment of the switch', async () => {
    const venues = adapters();
    const allowed = await quoteAllVenues(deps(venues), {
      ...sale(),
      allow: ['aerodrome', 'devnet-amm'],
      deadline: new Deadline(10_000),
    });
    expect(allowed.asked.sort()).toEqual(['aerodrome', 'devnet-amm']);
    expect(
      allowed.skipped
        .filter((x) => x.why === 'not_allowed')
        .map((x) => x.venue)
        .sort(),
    ).toEqual(['0x', 'kyberswap', 'uniswap-v3']);

    await setSwitch(
      db.handle.db,
      systemClock,
      { scope: 'venue', target: 'uniswap-v3', enabled: false, reason: 'pool exploit' },
      null,
    );
    try {
      const off = await quoteAllVenues(deps(venues), { ...sale(), deadline: new Deadline(10_000) });
      expect(off.asked.sort()).toEqual(['0x', 'aerodrome', 'devnet-amm', 'kyberswap']);
      expect(off.skipped).toEqual([{ venue: 'uniswap-v3', why: 'switched_off', detail: 'pool exploit' }]);
      expect(off.quotes.every((q) => q.venue !== 'uniswap-v3')).toBe(true);

      const none = await quoteAllVenues(deps(venues), {
        ...sale(),
        allow: ['uniswap-v3'],
        deadline: new Deadline(10_000),
      });
      expect(none.asked).toEqual([]);
      expect(none.quotes).toEqual([]);
    } finally {
      await setSwitch(
        db.handle.db,
        systemClock,
        { scope: 'venue', target: 'uniswap-v3', enabled: true },
        null,
      );
    }
    const back = await quoteAllVenues(deps(venues), { ...sale(), deadline: new Deadline(10_000) });
    expect(back.asked).toContain('uniswap-v3');
  });

  it('asks nobody on a chain no venue serves', async () => {
    const result = await quoteAllVenues(deps(adapters()), {
      ...sale(),
      chainId: 84532,
      deadline: new Deadline(10_000),
    });
    expect(result).toEqual({ quotes: [], failures: [], skipped: [], asked: [] });
  });
});

describe('buildSwap', () => {
  it('builds calls that settle on-chain, and refuses an expired quote or a venue switched off since', async () => {
    const venues = adapters();
    const amount = parseUnits('2', 18);
    const { quotes } = await quoteAllVenues(deps(venues), {
      ...sale(amount),
      deadline: new Deadline(10_000),
    });
    const best = quotes[0]!;
    const trader = await marketTrader(market, market.tokens.TKA!, amount);
    const chainNow = (
      await createViemChainPort({ rpcUrls: { [BASE_CHAIN_ID]: base.rpcUrl } }).latestBlock(BASE_CHAIN_ID)
    ).timestamp;
    const input = {
      quote: best,
      taker: trader.address,
      slippageBps: 30,
      swapDeadline: chainNow + 300n,
      deadline: new Deadline(10_000),
    };

    const expired = await buildSwap(deps(venues), input, new Date(best.expiresAt.getTime() + 1)).catch(
      (e: unknown) => e,
    );
    expect(expired).toMatchObject({ venue: best.venue, kind: 'no_quote' });

    await setSwitch(
      db.handle.db,
      systemClock,
      { scope: 'venue', target: best.venue, enabled: false, reason: 'maintenance' },
      null,
    );
    try {
      const off = await buildSwap(deps(venues), input, new Date()).catch((e: unknown) => e);
      expect(off).toMatchObject({ venue: best.venue, kind: 'unavailable' });
      expect((off as Error).message).toContain('maintenance');
    } finally {
      await setSwitch(db.handle.db, systemClock, { scope: 'venue', target: best.venue, enabled: true }, null);
    }

    const plan = await buildSwap(deps(venues), input, new Date());
    expect(await trader.send(plan.calls)).toEqual(['success', 'success']);
    const received = await trader.balanceOf(market.tokens.TKB!);
    expect(received).toBeGreaterThanOrEqual(plan.minBuyAmount);
    expect(received).toBe(best.buyAmount);
  });
});
