import { createServer, type Server, type Socket } from 'node:net';
import { parseUnits, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { marketTrader, testMarket, type TestMarket } from '../../../test/support/markets.ts';
import { BASE_CHAIN_ID, devnetChain } from '../../devnet/devnet.ts';
import { createViemChainPort } from '../chain/viem.ts';
import { createAerodromeVenue, createDevnetAmmVenue } from './constant-product.ts';
import { VenueError, type VenueAdapter } from './port.ts';
import { createUniswapV3Venue } from './uniswap-v3.ts';

const devnet = inject('devnet');
const base = devnetChain(devnet, BASE_CHAIN_ID);

function venues(rpcUrl: string, timeoutMs = 5_000): VenueAdapter[] {
  const chain = createViemChainPort({ rpcUrls: { [BASE_CHAIN_ID]: rpcUrl }, retryCount: 0 });
  const common = { chain, timeoutMs, quoteTtlMs: 15_000 };
  return [
    createUniswapV3Venue({
      ...common,
      deployments: {
        [BASE_CHAIN_ID]: {
          quoterV2: base.contracts.uniswapV3QuoterV2!,
          swapRouter02: base.contracts.uniswapV3SwapRouter02!,
        },
      },
    }),
    createDevnetAmmVenue({
      ...common,
      deployments: { [BASE_CHAIN_ID]: { router02: base.contracts.uniswapV2Router02! } },
    }),
    createAerodromeVenue({
      ...common,
      deployments: {
        [BASE_CHAIN_ID]: {
          router: base.contracts.aerodromeRouter!,
          poolFactory: base.contracts.aerodromePoolFactory!,
        },
      },
    }),
  ];
}

let market: TestMarket;
const adapters = venues(base.rpcUrl);

beforeAll(async () => {
  // TKA is worth 2,000 TKB on every venue; TKC has no pool anywhere.
  market = await testMarket(devnet, { TKA: 18, TKB: 6, TKC: 18 }, [
    { venue: 'uniswap-v3', pair: ['TKA', 'TKB'], fee: 3000, depth: ['1000', '2000000'] },
    { venue: 'devnet-amm', pair: ['TKA', 'TKB'], fee: null, depth: ['100', '200000'] },
    { venue: 'aerodrome', pair: ['TKA', 'TKB'], fee: null, depth: ['500', '1000000'] },
  ]);
});

const signal = () => AbortSignal.timeout(10_000);
const tokens = () => ({ tka: market.tokens.TKA!, tkb: market.tokens.TKB!, tkc: market.tokens.TKC! });

async function chainSeconds(): Promise<bigint> {
  const chain = createViemChainPort({ rpcUrls: { [BASE_CHAIN_ID]: base.rpcUrl } });
  return (await chain.latestBlock(BASE_CHAIN_ID)).timestamp;
}

describe.each(adapters.map((a) => [a.venue, a] as const))('%s on the devnet', (_name, venue) => {
  it('quotes, and its built calls swap on-chain for exactly the quoted amount', async () => {
    const { tka, tkb } = tokens();
    const sellAmount = parseUnits('1.5', 18);
    const trader = await marketTrader(market, tka, sellAmount);
    const quote = await venue.quote({
      chainId: BASE_CHAIN_ID,
      sellToken: tka.address,
      buyToken: tkb.address,
      sellAmount,
      signal: signal(),
    });
    // About 2,000 TKB per TKA, less the 0.30% pool fee and the price impact of 1.5 TKA.
    expect(quote.buyAmount).toBeGreaterThan(parseUnits('2940', 6));
    expect(quote.buyAmount).toBeLessThan(parseUnits('3000', 6));
    // The fee is 0.30% of what went in, in TKB: about 9 TKB.
    expect(quote.feeAmount).toBeGreaterThan(parseUnits('8.8', 6));
    expect(quote.feeAmount).toBeLessThan(parseUnits('9.1', 6));
    expect(quote.expiresAt.getTime()).toBeGreaterThan(Date.now());

    const plan = await venue.build({
      quote,
      taker: trader.address,
      slippageBps: 50,
      deadline: (await chainSeconds()) + 600n,
      signal: signal(),
    });
    expect(plan.calls).toHaveLength(2);
    expect(plan.calls[0]?.to).toBe(tka.address);
    expect(plan.minBuyAmount).toBe((quote.buyAmount * 9_950n) / 10_000n);

    expect(await trader.send(plan.calls)).toEqual(['success', 'success']);
    // Nobody else trades in this market: the swap delivers the quote to the base unit.
    expect(await trader.balanceOf(tkb)).toBe(quote.buyAmount);
    expect(await trader.balanceOf(tka)).toBe(0n);
  });

  it('refuses a swap past its deadline, and one the market moved beyond the slippage budget', async () => {
    const { tka, tkb } = tokens();
    const sellAmount = parseUnits('1', 18);
    const trader = await marketTrader(market, tka, sellAmount);
    const quote = await venue.quote({
      chainId: BASE_CHAIN_ID,
      sellToken: tka.address,
      buyToken: tkb.address,
      sellAmount,
      signal: signal(),
    });
    const now = await chainSeconds();
    const late = await venue.build({
      quote,
      taker: trader.address,
      slippageBps: 50,
      deadline: now - 1n,
      signal: signal(),
    });
    expect(await trader.send(late.calls)).toEqual(['success', 'reverted']);
    expect(await trader.balanceOf(tka)).toBe(sellAmount);

    // Someone sells 5% of the pool's depth first: the price falls by far more than 0.5%.
    const depth = market.pools.find((p) => p.venue === venue.venue)!.depth[0];
    const whaleAmount = parseUnits(depth, 18) / 20n;
    const whale = await marketTrader(market, tka, whaleAmount);
    const whaleQuote = await venue.quote({
      chainId: BASE_CHAIN_ID,
      sellToken: tka.address,
      buyToken: tkb.address,
      sellAmount: whaleAmount,
      signal: signal(),
    });
    const whalePlan = await venue.build({
      quote: whaleQuote,
      taker: whale.address,
      slippageBps: 100,
      deadline: now + 600n,
      signal: signal(),
    });
    expect(await whale.send(whalePlan.calls)).toEqual(['success', 'success']);

    const stale = await venue.build({
      quote,
      taker: trader.address,
      slippageBps: 50,
      deadline: now + 600n,
      signal: signal(),
    });
    expect(await trader.send(stale.calls)).toEqual(['success', 'reverted']);
    expect(await trader.balanceOf(tka)).toBe(sellAmount);
    expect(await trader.balanceOf(tkb)).toBe(0n);
  });

  it('answers no_quote for a pair without a pool', async () => {
    const { tka, tkc } = tokens();
    const err = await venue
      .quote({
        chainId: BASE_CHAIN_ID,
        sellToken: tka.address,
        buyToken: tkc.address,
        sellAmount: 10n ** 18n,
        signal: signal(),
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VenueError);
    expect(err).toMatchObject({ venue: venue.venue, kind: 'no_quote' });
  });

  it('answers no_quote on a chain it is not configured for', async () => {
    const { tka, tkb } = tokens();
    const err = await venue
      .quote({
        chainId: 84532,
        sellToken: tka.address,
        buyToken: tkb.address,
        sellAmount: 1n,
        signal: signal(),
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ venue: venue.venue, kind: 'no_quote' });
  });
});

describe('on-chain venues whose RPC fails', () => {
  let silent: Server;
  let silentUrl: string;
  const held = new Set<Socket>();
  beforeAll(async () => {
    // Accepts connections and never answers.
    silent = createServer((socket) => {
      held.add(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    const addr = silent.address() as { port: number };
    silentUrl = `http://127.0.0.1:${addr.port}`;
  });
  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('gives up on a hanging RPC at the venue’s own timeout, each venue in parallel', async () => {
    const { tka, tkb } = tokens();
    const started = performance.now();
    const results = await Promise.allSettled(
      venues(silentUrl, 300).map((v) =>
        v.quote({
          chainId: BASE_CHAIN_ID,
          sellToken: tka.address,
          buyToken: tkb.address,
          sellAmount: 10n ** 18n,
          signal: signal(),
        }),
      ),
    );
    const elapsed = performance.now() - started;
    for (const r of results) {
      expect(r.status).toBe('rejected');
      if (r.status === 'rejected') expect(r.reason).toMatchObject({ kind: 'timeout' });
    }
    expect(elapsed).toBeLessThan(2_000);
  });

  it('stops when the caller’s time is up even if the venue’s own timeout is longer', async () => {
    const { tka, tkb } = tokens();
    const [v3] = venues(silentUrl, 30_000);
    const started = performance.now();
    const err = await v3!
      .quote({
        chainId: BASE_CHAIN_ID,
        sellToken: tka.address,
        buyToken: tkb.address,
        sellAmount: 1n,
        signal: AbortSignal.timeout(200),
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'timeout' });
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('reports an unreachable RPC as unavailable', async () => {
    const { tka, tkb } = tokens();
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    for (const v of venues(`http://127.0.0.1:${port}`)) {
      const err = await v
        .quote({
          chainId: BASE_CHAIN_ID,
          sellToken: tka.address as Address,
          buyToken: tkb.address,
          sellAmount: 1n,
          signal: signal(),
        })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ venue: v.venue, kind: 'unavailable' });
    }
  });
});
