// The 0x adapter against the loopback 0x fake, which prices on (and swaps through) a Uniswap v2
// pool of this file's own on the shared devnet.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../../core/clock.ts';
import { startZeroExFake, ZEROX_NO_KEY_MESSAGE, type ZeroExFake } from '../../devnet/fakes/zerox.ts';
import { shapeMismatches } from '../../../test/support/json-shape.ts';
import { venueFailure } from '../../../test/support/venues.ts';
import { deployV2TestPool, newTaker, type V2TestPool } from '../../../test/support/uniswap-v2.ts';
import { minimumAfterSlippage, type VenueAdapter } from './port.ts';
import { createZeroExAdapter } from './zerox.ts';

const devnet = inject('devnet');
const API_KEY = 'zx-test-key-0123456789';
const TIMEOUT_MS = 800;
const ONE_A = 10n ** 18n;

// docs.0x.org API reference, getPrice (Allowance Holder) / getQuote (Allowance Holder): the
// documented 200 example, trimmed to one fill. The fake must answer with these keys and types.
const DOCUMENTED_PRICE = {
  blockNumber: '20114692',
  buyAmount: '100037537',
  buyToken: '0xdac17f958d2ee523a2206206994597c13d831ec7',
  fees: { integratorFee: null, zeroExFee: null, gasFee: null },
  gas: '288095',
  gasPrice: '7062490000',
  issues: {
    allowance: { actual: '0', spender: '0x0000000000001ff3684f28c67538d4d072c22734' },
    balance: { token: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', actual: '0', expected: '100000000' },
    simulationIncomplete: false,
    invalidSourcesPassed: [],
  },
  liquidityAvailable: true,
  minBuyAmount: '99037162',
  route: {
    fills: [
      {
        from: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
        to: '0xdac17f958d2ee523a2206206994597c13d831ec7',
        source: 'SolidlyV3',
        proportionBps: '10000',
      },
    ],
    tokens: [{ address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', symbol: 'USDC' }],
  },
  sellAmount: '100000000',
  sellToken: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
  tokenMetadata: {
    buyToken: { buyTaxBps: '0', sellTaxBps: '0' },
    sellToken: { buyTaxBps: '0', sellTaxBps: '0' },
  },
  totalNetworkFee: '1393685870940000',
  zid: '0x111111111111111111111111',
};
const DOCUMENTED_QUOTE = {
  ...DOCUMENTED_PRICE,
  transaction: {
    to: '0x7f6cee965959295cc64d0e6c00d99d6532d8e86b',
    data: '0x1fff991f',
    gas: '288079',
    gasPrice: '4837860000',
    value: '0',
  },
};
// The documented answer when nothing can fill, and the error envelope of a 400.
const DOCUMENTED_NO_LIQUIDITY = { liquidityAvailable: false, zid: '0x111111111111111111111111' };
const DOCUMENTED_INPUT_INVALID = {
  name: 'INPUT_INVALID',
  message: 'string',
  data: { zid: 'string', details: [{ field: 'string', reason: 'string' }] },
};

let pool: V2TestPool;
let fake: ZeroExFake;
let clock: ManualClock;
let adapter: VenueAdapter;

beforeAll(async () => {
  pool = await deployV2TestPool(devnet);
  fake = await startZeroExFake({
    chains: { 8453: { rpcUrl: pool.rpcUrl, router: pool.router } },
    apiKey: API_KEY,
  });
  clock = new ManualClock('2026-06-01T12:00:00.000Z');
  adapter = createZeroExAdapter({ apiKey: API_KEY, baseUrl: fake.url, timeoutMs: TIMEOUT_MS, clock });
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

describe('0x adapter: quote, build, swap on the devnet', () => {
  it('quotes the pool’s price and builds calls that deliver at least the minimum when sent', async () => {
    const sellAmount = 1_000n * ONE_A;
    const poolOut = await pool.amountOut(pool.tokenA, pool.tokenB, sellAmount);
    const quote = await adapter.quote(quoteRequest(sellAmount));
    expect(quote).toMatchObject({
      venue: '0x',
      chainId: 8453,
      sellAmount,
      buyAmount: poolOut,
      feeAmount: 0n,
    });
    expect(quote.allowanceTarget).toBe(pool.router);
    expect(quote.expiresAt.toISOString()).toBe('2026-06-01T12:00:30.000Z');

    const taker = await newTaker(devnet, pool, pool.tokenA, sellAmount);
    const slippageBps = 50;
    const plan = await adapter.build({
      quote,
      taker: taker.address,
      slippageBps,
      deadline: (await pool.chainTime()) + 600n,
      signal: AbortSignal.timeout(30_000),
    });
    expect(plan.allowanceTarget).toBe(pool.router);
    expect(plan.calls).toHaveLength(2);
    expect(plan.calls[0]?.to).toBe(pool.tokenA);
    expect(plan.calls[1]?.to).toBe(pool.router);
    expect(plan.minBuyAmount).toBeGreaterThanOrEqual(minimumAfterSlippage(quote.buyAmount, slippageBps));

    const before = await pool.balanceOf(pool.tokenB, taker.address);
    for (const call of plan.calls) await taker.send(call);
    const received = (await pool.balanceOf(pool.tokenB, taker.address)) - before;
    expect(received).toBeGreaterThanOrEqual(plan.minBuyAmount);
    expect(received).toBeGreaterThanOrEqual(minimumAfterSlippage(quote.buyAmount, slippageBps));
    expect(received).toBe(plan.expectedBuyAmount);
    expect(await pool.balanceOf(pool.tokenA, taker.address)).toBe(0n);

    const quoteCall = fake.requests.find((r) => r.path === '/swap/allowance-holder/quote');
    expect(quoteCall?.query).toMatchObject({ taker: taker.address, slippageBps: '50', chainId: '8453' });
    expect(quoteCall?.headers['0x-version']).toBe('v2');
  });

  it('sends a different recipient the proceeds when one is named', async () => {
    const sellAmount = 10n * ONE_A;
    const quote = await adapter.quote(quoteRequest(sellAmount));
    const taker = await newTaker(devnet, pool, pool.tokenA, sellAmount);
    const recipient = (await newTaker(devnet, pool, pool.tokenA, 0n)).address;
    const plan = await adapter.build({
      quote,
      taker: taker.address,
      recipient,
      slippageBps: 100,
      deadline: (await pool.chainTime()) + 600n,
      signal: AbortSignal.timeout(30_000),
    });
    for (const call of plan.calls) await taker.send(call);
    expect(await pool.balanceOf(pool.tokenB, recipient)).toBeGreaterThanOrEqual(plan.minBuyAmount);
    expect(await pool.balanceOf(pool.tokenB, taker.address)).toBe(0n);
  });

  it('reports 0x’s fee in buy-token units, already out of the buy amount', async () => {
    fake.knobs.zeroExFeeBps = 30;
    const sellAmount = 100n * ONE_A;
    const poolOut = await pool.amountOut(pool.tokenA, pool.tokenB, sellAmount);
    const quote = await adapter.quote(quoteRequest(sellAmount));
    expect(quote.feeAmount).toBe((poolOut * 30n) / 10_000n);
    expect(quote.buyAmount + quote.feeAmount).toBe(poolOut);
  });
});

describe('0x adapter: failures', () => {
  it('maps HTTP 429 to rate_limited with Retry-After in seconds or as an HTTP date', async () => {
    fake.knobs.rateLimitRetryAfter = '7';
    const bySeconds = await failure(adapter.quote(quoteRequest()));
    expect(bySeconds.kind).toBe('rate_limited');
    expect(bySeconds.retryAfterMs).toBe(7000);

    fake.knobs.rateLimitRetryAfter = new Date(clock.now().getTime() + 12_000).toUTCString();
    const byDate = await failure(adapter.quote(quoteRequest()));
    expect(byDate.kind).toBe('rate_limited');
    expect(byDate.retryAfterMs).toBe(12_000);
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

  it('stops as soon as the caller’s signal is aborted, before its own timeout', async () => {
    fake.knobs.hang = true;
    const slow = createZeroExAdapter({ apiKey: API_KEY, baseUrl: fake.url, timeoutMs: 20_000, clock });
    const started = performance.now();
    const err = await failure(slow.quote({ ...quoteRequest(), signal: AbortSignal.timeout(200) }));
    expect(err.kind).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(2_500);
  });

  it('answers timeout when the added latency exceeds the limit, and a quote when it does not', async () => {
    fake.knobs.latencyMs = TIMEOUT_MS + 400;
    expect((await failure(adapter.quote(quoteRequest()))).kind).toBe('timeout');
    fake.knobs.latencyMs = 100;
    expect((await adapter.quote(quoteRequest())).buyAmount).toBeGreaterThan(0n);
  });

  it('maps a body that is not JSON to bad_response', async () => {
    fake.knobs.malformedJson = true;
    expect((await failure(adapter.quote(quoteRequest()))).kind).toBe('bad_response');
  });

  it('maps 5xx and an unreachable host to unavailable', async () => {
    fake.knobs.serverError = 503;
    expect((await failure(adapter.quote(quoteRequest()))).kind).toBe('unavailable');
    const nowhere = createZeroExAdapter({
      apiKey: API_KEY,
      baseUrl: 'http://127.0.0.1:9',
      timeoutMs: 2_000,
      clock,
    });
    expect((await failure(nowhere.quote(quoteRequest()))).kind).toBe('unavailable');
  });

  it('maps liquidityAvailable:false (the knob, or a pair with no pool) to no_quote', async () => {
    fake.knobs.liquidity = false;
    expect((await failure(adapter.quote(quoteRequest()))).kind).toBe('no_quote');
    fake.reset();
    const unpooled = await failure(adapter.quote({ ...quoteRequest(), buyToken: pool.unpooled }));
    expect(unpooled.kind).toBe('no_quote');
    expect(unpooled.message).toMatch(/no liquidity/);
  });

  it('names the venue on a refused API key and never repeats the key', async () => {
    const wrongKey = 'zx-wrong-key-9876543210';
    const wrong = createZeroExAdapter({ apiKey: wrongKey, baseUrl: fake.url, timeoutMs: TIMEOUT_MS, clock });
    const err = await failure(wrong.quote(quoteRequest()));
    expect(err.kind).toBe('unavailable');
    expect(err.venue).toBe('0x');
    expect(err.message).toMatch(/^0x price: the API key was refused \(HTTP 401/);
    expect(err.message).toContain('ZEROX_API_KEY');
    const everything = JSON.stringify({ message: err.message, stack: err.stack, cause: String(err.cause) });
    expect(everything).not.toContain(wrongKey);
    expect(everything).not.toContain(API_KEY);
  });

  it('refuses a firm quote whose minimum is below the slippage budget of the price', async () => {
    const sellAmount = 10n * ONE_A;
    const quote = await adapter.quote(quoteRequest(sellAmount));
    const taker = await newTaker(devnet, pool, pool.tokenA, sellAmount);
    fake.knobs.priceSkewBps = -300; // the firm quote comes back 3% worse than the price
    const err = await failure(
      adapter.build({
        quote,
        taker: taker.address,
        slippageBps: 100,
        deadline: (await pool.chainTime()) + 600n,
        signal: AbortSignal.timeout(30_000),
      }),
    );
    expect(err.kind).toBe('bad_response');
    expect(err.message).toMatch(/below the slippage budget/);
  });

  it('refuses an answer about other tokens than the ones asked (0x’s own documented example)', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(DOCUMENTED_PRICE));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const other = createZeroExAdapter({
        apiKey: API_KEY,
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        timeoutMs: TIMEOUT_MS,
        clock,
      });
      const err = await failure(other.quote(quoteRequest()));
      expect(err.kind).toBe('bad_response');
      expect(err.message).toMatch(/sellToken/);
    } finally {
      server.close();
    }
  });

  it('refuses, before any request, a chain it does not serve', async () => {
    const before = fake.requests.length;
    const err = await failure(adapter.quote({ ...quoteRequest(), chainId: 137 }));
    expect(err.kind).toBe('no_quote');
    expect(fake.requests.length).toBe(before);
  });
});

describe('0x fake speaks 0x’s format', () => {
  const get = async (path: string, query: Record<string, string>, headers: Record<string, string>) => {
    const res = await fetch(`${fake.url}${path}?${new URLSearchParams(query)}`, { headers });
    return { status: res.status, body: (await res.json()) as unknown };
  };
  const headers = { '0x-api-key': API_KEY, '0x-version': 'v2' };

  it('answers price and quote with the documented keys and types', async () => {
    const taker = await newTaker(devnet, pool, pool.tokenA, 0n); // no balance, no allowance: both issues
    const query = {
      chainId: '8453',
      sellToken: pool.tokenA,
      buyToken: pool.tokenB,
      sellAmount: (5n * ONE_A).toString(),
      taker: taker.address,
    };
    const price = await get('/swap/allowance-holder/price', query, headers);
    expect(price.status).toBe(200);
    expect(shapeMismatches(price.body, DOCUMENTED_PRICE)).toEqual([]);
    const quote = await get('/swap/allowance-holder/quote', query, headers);
    expect(quote.status).toBe(200);
    expect(shapeMismatches(quote.body, DOCUMENTED_QUOTE)).toEqual([]);
    expect(quote.body).toMatchObject({
      issues: { allowance: { actual: '0', spender: pool.router }, balance: { actual: '0' } },
    });

    fake.knobs.liquidity = false;
    const none = await get('/swap/allowance-holder/price', query, headers);
    expect(shapeMismatches(none.body, DOCUMENTED_NO_LIQUIDITY)).toEqual([]);
    expect(Object.keys(none.body as object).sort()).toEqual(['liquidityAvailable', 'zid']);
  });

  it('refuses a missing or wrong key with 401, and a missing 0x-version and bad input with INPUT_INVALID', async () => {
    const query = { chainId: '8453', sellToken: pool.tokenA, buyToken: pool.tokenB, sellAmount: '1000' };
    const noKey = await get('/swap/allowance-holder/price', query, { '0x-version': 'v2' });
    expect(noKey).toMatchObject({ status: 401, body: { message: ZEROX_NO_KEY_MESSAGE } });
    const badKey = await get('/swap/allowance-holder/price', query, {
      '0x-api-key': 'nope',
      '0x-version': 'v2',
    });
    expect(badKey.status).toBe(401);

    const noVersion = await get('/swap/allowance-holder/price', query, { '0x-api-key': API_KEY });
    expect(noVersion.status).toBe(400);
    expect(shapeMismatches(noVersion.body, DOCUMENTED_INPUT_INVALID)).toEqual([]);
    expect(noVersion.body).toMatchObject({ data: { details: [{ field: '0x-version' }] } });

    const noTaker = await get('/swap/allowance-holder/quote', query, headers);
    expect(noTaker.status).toBe(400);
    expect(noTaker.body).toMatchObject({ name: 'INPUT_INVALID', data: { details: [{ field: 'taker' }] } });
  });
});
