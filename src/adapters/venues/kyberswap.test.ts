// The KyberSwap adapter against the loopback KyberSwap fake, which prices on (and swaps through)
// a Uniswap v2 pool of this file's own on the shared devnet.

import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../../core/clock.ts';
import { startKyberSwapFake, type KyberSwapFake } from '../../devnet/fakes/kyberswap.ts';
import { shapeMismatches } from '../../../test/support/json-shape.ts';
import { venueFailure } from '../../../test/support/venues.ts';
import { deployV2TestPool, newTaker, type V2TestPool } from '../../../test/support/uniswap-v2.ts';
import { createKyberSwapAdapter } from './kyberswap.ts';
import { minimumAfterSlippage, type VenueAdapter, type VenueQuote } from './port.ts';

const devnet = inject('devnet');
const TIMEOUT_MS = 800;
const ONE_A = 10n ** 18n;

// docs.kyberswap.com "EVM Swaps" ([V1] GET /routes, [V1] POST /route/build) and KyberSwap's
// API reference: the documented 200 answers. The fake must answer with these keys and types.
const DOCUMENTED_ROUTES = {
  code: 0,
  message: 'successfully',
  data: {
    routeSummary: {
      tokenIn: '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee',
      amountIn: '1000000000000000000',
      amountInUsd: '2345.67',
      tokenOut: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
      amountOut: '2345670000',
      amountOutUsd: '2345.67',
      gas: '250000',
      gasPrice: '25000000000',
      gasUsd: '3.45',
      extraFee: { feeAmount: '0', chargeFeeBy: '', isInBps: false, feeReceiver: '' },
      route: [
        [
          {
            pool: '0x0000000000000000000000000000000000000001',
            tokenIn: '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee',
            tokenOut: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
            swapAmount: '1000000000000000000',
            amountOut: '2345670000',
            exchange: 'uniswap-v3',
            poolType: 'uni-v3',
            poolExtra: {},
            extra: {},
          },
        ],
      ],
      routeID: 'abc123',
      checksum: '123',
      timestamp: '1700000000',
    },
    routerAddress: '0x6131B5fae19EA4f9D964eAc0408E4408b66337b5',
  },
  requestId: 'req',
};
const DOCUMENTED_BUILD = {
  code: 0,
  message: 'successfully',
  data: {
    amountIn: '1000000000000000000',
    amountInUsd: '2345.67',
    amountOut: '2345670000',
    amountOutUsd: '2345.67',
    gas: '250000',
    gasUsd: '3.45',
    outputChange: { amount: '-11728350', percent: -0.5, level: 0 },
    data: '0x',
    routerAddress: '0x6131B5fae19EA4f9D964eAc0408E4408b66337b5',
    transactionValue: '0',
  },
  requestId: 'req',
};
// KyberSwap's documented error bodies: route not found, and a bad request with field violations.
const DOCUMENTED_ROUTE_NOT_FOUND = { code: 4008, message: 'route not found' };
const DOCUMENTED_BAD_REQUEST = {
  code: 4000,
  message: 'bad request',
  details: [{ fieldViolations: [{ field: 'tokenIn', description: 'invalid' }] }],
};

let pool: V2TestPool;
let fake: KyberSwapFake;
let clock: ManualClock;
let adapter: VenueAdapter;

beforeAll(async () => {
  pool = await deployV2TestPool(devnet);
  fake = await startKyberSwapFake({ chains: { 8453: { rpcUrl: pool.rpcUrl, router: pool.router } } });
  clock = new ManualClock('2026-06-01T12:00:00.000Z');
  adapter = createKyberSwapAdapter({
    baseUrl: fake.url,
    clientId: 'purser-tests',
    timeoutMs: TIMEOUT_MS,
    clock,
  });
});

afterEach(() => fake.reset());

afterAll(async () => {
  await fake?.stop();
});

const quoteRequest = (sellAmount = 1_000n * ONE_A) => ({
  chainId: 8453,
  sellToken: pool.tokenA,
  buyToken: pool.tokenB,
  sellAmount,
  signal: AbortSignal.timeout(30_000),
});

const failure = venueFailure;

async function buildFor(quote: VenueQuote, taker: `0x${string}`, slippageBps: number) {
  return adapter.build({
    quote,
    taker,
    slippageBps,
    deadline: (await pool.chainTime()) + 600n,
    signal: AbortSignal.timeout(30_000),
  });
}

describe('KyberSwap adapter: quote, build, swap on the devnet', () => {
  it('quotes the pool’s price and builds calls that deliver at least the minimum when sent', async () => {
    const sellAmount = 1_000n * ONE_A;
    const poolOut = await pool.amountOut(pool.tokenA, pool.tokenB, sellAmount);
    const quote = await adapter.quote(quoteRequest(sellAmount));
    expect(quote).toMatchObject({
      venue: 'kyberswap',
      chainId: 8453,
      sellAmount,
      buyAmount: poolOut,
      feeAmount: 0n,
    });
    expect(quote.allowanceTarget).toBe(pool.router);
    expect(quote.expiresAt.toISOString()).toBe('2026-06-01T12:00:10.000Z');

    const taker = await newTaker(devnet, pool, pool.tokenA, sellAmount);
    const slippageBps = 50;
    const plan = await buildFor(quote, taker.address, slippageBps);
    expect(plan.allowanceTarget).toBe(pool.router);
    expect(plan.calls.map((c) => c.to)).toEqual([pool.tokenA, pool.router]);
    expect(plan.minBuyAmount).toBe(minimumAfterSlippage(quote.buyAmount, slippageBps));

    // The routeSummary went back exactly as it came, with the client id.
    const buildCall = fake.requests.find((r) => r.path === '/base/api/v1/route/build');
    const sent = JSON.parse(buildCall?.body ?? '{}') as Record<string, unknown>;
    expect(sent.routeSummary).toEqual(quote.route.routeSummary);
    expect(sent).toMatchObject({ sender: taker.address, recipient: taker.address, slippageTolerance: 50 });
    expect(buildCall?.headers['x-client-id']).toBe('purser-tests');

    const before = await pool.balanceOf(pool.tokenB, taker.address);
    for (const call of plan.calls) await taker.send(call);
    const received = (await pool.balanceOf(pool.tokenB, taker.address)) - before;
    expect(received).toBeGreaterThanOrEqual(plan.minBuyAmount);
    expect(received).toBe(plan.expectedBuyAmount);
    expect(await pool.balanceOf(pool.tokenA, taker.address)).toBe(0n);
  });

  it('builds calls whose on-chain minimum is the slippage floor: the swap reverts below it', async () => {
    const sellAmount = 50n * ONE_A;
    const quote = await adapter.quote(quoteRequest(sellAmount));
    // Someone trades ahead in the same pool, moving the price by more than the 10 bps budget.
    const ahead = await newTaker(devnet, pool, pool.tokenA, 20_000n * ONE_A);
    const aheadQuote = await adapter.quote(quoteRequest(20_000n * ONE_A));
    for (const call of (await buildFor(aheadQuote, ahead.address, 100)).calls) await ahead.send(call);

    const taker = await newTaker(devnet, pool, pool.tokenA, sellAmount);
    fake.knobs.priceSkewBps = 500; // the build step still claims the old price
    const plan = await buildFor(quote, taker.address, 10);
    await expect(async () => {
      for (const call of plan.calls) await taker.send(call);
    }).rejects.toThrow(/reverted/);
    expect(await pool.balanceOf(pool.tokenB, taker.address)).toBe(0n);
  });
});

describe('KyberSwap adapter: failures', () => {
  it('maps HTTP 429 to rate_limited with the Retry-After delay', async () => {
    fake.knobs.rateLimitRetryAfter = '3';
    const err = await failure(adapter.quote(quoteRequest()));
    expect(err).toMatchObject({ kind: 'rate_limited', venue: 'kyberswap', retryAfterMs: 3000 });
  });

  it('gives up on a hung answer within its own timeout', async () => {
    fake.knobs.hang = true;
    const started = performance.now();
    const err = await failure(adapter.quote(quoteRequest()));
    const elapsed = performance.now() - started;
    expect(err.kind).toBe('timeout');
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 1_500);
  });

  it('gives up on a hung build as well', async () => {
    const quote = await adapter.quote(quoteRequest(ONE_A));
    fake.knobs.hang = true;
    const started = performance.now();
    const err = await failure(buildFor(quote, pool.tokenA, 50));
    expect(err.kind).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 1_500);
  });

  it('maps a body that is not JSON to bad_response and 5xx to unavailable', async () => {
    fake.knobs.malformedJson = true;
    expect((await failure(adapter.quote(quoteRequest()))).kind).toBe('bad_response');
    fake.reset();
    fake.knobs.serverError = 502;
    expect((await failure(adapter.quote(quoteRequest()))).kind).toBe('unavailable');
  });

  it('maps Kyber’s route-not-found error (knob, or no pool) to no_quote', async () => {
    fake.knobs.liquidity = false;
    const err = await failure(adapter.quote(quoteRequest()));
    expect(err.kind).toBe('no_quote');
    expect(err.message).toMatch(/code 4008: route not found/);
    fake.reset();
    expect((await failure(adapter.quote({ ...quoteRequest(), buyToken: pool.unpooled }))).kind).toBe(
      'no_quote',
    );
  });

  it('is refused when the route summary is not passed back verbatim', async () => {
    const quote = await adapter.quote(quoteRequest(ONE_A));
    const summary = quote.route.routeSummary as Record<string, unknown>;
    const tampered: VenueQuote = {
      ...quote,
      route: {
        ...quote.route,
        routeSummary: { ...summary, amountOut: (BigInt(String(summary.amountOut)) * 2n).toString() },
      },
    };
    const err = await failure(buildFor(tampered, pool.tokenA, 50));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toMatch(/code 4000/);
  });

  it('refuses a route answer with a zero or missing amount as bad_response', async () => {
    fake.knobs.priceSkewBps = -10_000;
    const err = await failure(adapter.quote(quoteRequest()));
    expect(err.kind).toBe('bad_response');
    expect(err.message).toMatch(/amountOut is 0/);
  });

  it('refuses a build whose amount falls below the slippage budget of the quote', async () => {
    const quote = await adapter.quote(quoteRequest(ONE_A));
    fake.knobs.priceSkewBps = -200;
    const err = await failure(buildFor(quote, pool.tokenA, 100));
    expect(err.kind).toBe('bad_response');
    expect(err.message).toMatch(/below the slippage budget/);
  });

  it('refuses, before any request, a chain it has no slug for', async () => {
    expect(() => createKyberSwapAdapter({ chainIds: [999_999] })).toThrow(/no chain slug/);
    const before = fake.requests.length;
    expect((await failure(adapter.quote({ ...quoteRequest(), chainId: 137 }))).kind).toBe('no_quote');
    expect(fake.requests.length).toBe(before);
  });
});

describe('KyberSwap fake speaks Kyber’s format', () => {
  it('answers routes and build with the documented keys and types, and errors in Kyber’s envelope', async () => {
    const routesUrl = `${fake.url}/base/api/v1/routes?${new URLSearchParams({
      tokenIn: pool.tokenA,
      tokenOut: pool.tokenB,
      amountIn: ONE_A.toString(),
    })}`;
    const routes = (await (await fetch(routesUrl)).json()) as typeof DOCUMENTED_ROUTES;
    expect(shapeMismatches(routes, DOCUMENTED_ROUTES)).toEqual([]);

    const taker = await newTaker(devnet, pool, pool.tokenA, 0n);
    const buildRes = await fetch(`${fake.url}/base/api/v1/route/build`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        routeSummary: routes.data.routeSummary,
        sender: taker.address,
        recipient: taker.address,
        slippageTolerance: 10,
        deadline: Number(await pool.chainTime()) + 600,
      }),
    });
    expect(buildRes.status).toBe(200);
    expect(shapeMismatches(await buildRes.json(), DOCUMENTED_BUILD)).toEqual([]);

    fake.knobs.liquidity = false;
    const none = await fetch(routesUrl);
    expect(none.status).toBe(400);
    expect(shapeMismatches(await none.json(), DOCUMENTED_ROUTE_NOT_FOUND)).toEqual([]);

    const bad = await fetch(`${fake.url}/base/api/v1/routes?tokenIn=0x12&tokenOut=${pool.tokenB}&amountIn=1`);
    expect(bad.status).toBe(400);
    const badBody = await bad.json();
    expect(shapeMismatches(badBody, DOCUMENTED_BAD_REQUEST)).toEqual([]);
    expect(badBody).toMatchObject({
      details: [{ fieldViolations: [{ field: 'tokenIn', description: 'invalid' }] }],
    });
  });
});
