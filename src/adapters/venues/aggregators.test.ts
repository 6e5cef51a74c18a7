// The wiring the runtime uses: both fakes started for a chain's router, and the adapters the config
// asks for pointed at them.

import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig, type VenuesConfig } from '../../config.ts';
import { startAggregatorFakes, type AggregatorFakes } from '../../devnet/fakes/index.ts';
import { deployV2TestPool, type V2TestPool } from '../../../test/support/uniswap-v2.ts';
import { createAggregatorAdapters } from './aggregators.ts';

const devnet = inject('devnet');
let pool: V2TestPool;
let fakes: AggregatorFakes;

beforeAll(async () => {
  pool = await deployV2TestPool(devnet);
  fakes = await startAggregatorFakes({ chains: { 8453: { rpcUrl: pool.rpcUrl, router: pool.router } } });
});

afterAll(async () => {
  await fakes?.stop();
});

/** The venues' configuration pointed at the fakes, as the devnet's door configures it. */
function atFakes(venues: VenuesConfig): VenuesConfig {
  return {
    ...venues,
    zeroEx: { ...venues.zeroEx, baseUrl: fakes.local.zeroExBaseUrl, apiKey: fakes.local.zeroExApiKey },
    kyberswap: { ...venues.kyberswap, baseUrl: fakes.local.kyberswapBaseUrl },
  };
}

describe('aggregator adapters from the config', () => {
  it('offers 0x and KyberSwap against the devnet fakes, and both quote the same pool', async () => {
    const adapters = createAggregatorAdapters(atFakes(loadConfig({}).venues));
    expect(adapters.map((a) => a.venue)).toEqual(['0x', 'kyberswap']);
    const request = {
      chainId: 8453,
      sellToken: pool.tokenA,
      buyToken: pool.tokenB,
      sellAmount: 10n ** 18n,
      signal: AbortSignal.timeout(10_000),
    };
    const expected = await pool.amountOut(pool.tokenA, pool.tokenB, request.sellAmount);
    const quotes = await Promise.all(adapters.map((a) => a.quote(request)));
    expect(quotes.map((q) => q.buyAmount)).toEqual([expected, expected]);
    expect(fakes.zeroEx.requests.at(-1)?.headers['0x-api-key']).toBe(fakes.local.zeroExApiKey);
  });

  it('leaves 0x out when no API key is configured, and keeps the production URLs by default', () => {
    const adapters = createAggregatorAdapters(loadConfig({}).venues);
    expect(adapters.map((a) => a.venue)).toEqual(['kyberswap']);
    expect(createAggregatorAdapters(loadConfig({ ZEROX_API_KEY: 'k' }).venues).map((a) => a.venue)).toEqual([
      '0x',
      'kyberswap',
    ]);
  });

  it("names the vendors' spender contracts on Base (0x AllowanceHolder, Kyber's router), the fakes' router in development, none elsewhere", async () => {
    const production = createAggregatorAdapters(loadConfig({ ZEROX_API_KEY: 'k' }).venues);
    expect(production.map((a) => [a.venue, a.contracts(8453), a.contracts(84532)])).toEqual([
      ['0x', ['0x0000000000001fF3684f28c67538d4D072C22734'], []],
      ['kyberswap', ['0x6131B5fae19EA4f9D964eAc0408E4408b66337b5'], []],
    ]);
    const local = createAggregatorAdapters(atFakes(loadConfig({}).venues), {
      contracts: { 8453: pool.router },
    });
    expect(local.map((a) => a.contracts(8453))).toEqual([[pool.router], [pool.router]]);
    // The fakes' router is the spender their answers name.
    const quote = await local[1]!.quote({
      chainId: 8453,
      sellToken: pool.tokenA,
      buyToken: pool.tokenB,
      sellAmount: 10n ** 18n,
      signal: AbortSignal.timeout(10_000),
    });
    expect(quote.allowanceTarget.toLowerCase()).toBe(pool.router.toLowerCase());
  });
});
