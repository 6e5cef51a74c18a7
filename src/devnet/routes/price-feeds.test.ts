import { parseEther } from 'viem';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import { testFeedDeployer, type TestFeed } from '../../../test/support/price-feeds.ts';
import { createViemChainPort } from '../../adapters/chain/viem.ts';
import { devnetConfig } from '../config-overrides.ts';
import { testConfig } from '../../config.ts';
import { ManualClock } from '../../core/clock.ts';
import { devnetRpcUrls, devnetTokenAddresses, type DevnetInfo } from '../devnet.ts';
import { buildPriceReferences, type PriceReferences } from '../../modules/prices/index.ts';
import { buildTokenRegistry } from '../../modules/registry/index.ts';

const shared = inject('devnet');
const CHAIN = 8453;
let t: TestApp;
let prices: PriceReferences;
let clock: ManualClock;
let eth: TestFeed;

beforeAll(async () => {
  const deployer = await testFeedDeployer(shared, CHAIN);
  eth = await deployer.deploy('ETH / USD', 3000_00000000n);
  // The shared devnet, seen with feeds of this file's own: moving them disturbs no other test.
  const chains = {
    ...shared.chains,
    [CHAIN]: { ...shared.chains[CHAIN]!, priceFeeds: { 'ETH/USD': eth.address } },
  };
  const devnet = { chains } as DevnetInfo;
  clock = new ManualClock(new Date(Number(await deployer.chainTime()) * 1000));
  prices = buildPriceReferences({
    config: devnetConfig(testConfig(), devnet),
    chain: createViemChainPort({ rpcUrls: devnetRpcUrls(shared), retryCount: 0 }),
    clock,
    registry: buildTokenRegistry('development', devnetTokenAddresses(shared)),
  });
  await prices.refresh();
  t = await createTestApp({ clock, deps: { devnet, prices } });
});
afterAll(async () => {
  await t.close();
});

const move = (payload: Record<string, unknown>) =>
  t.app.fastify.inject({ method: 'POST', url: '/v1/dev/price-feeds', payload });

describe('POST /v1/dev/price-feeds', () => {
  it('moves a devnet price, and the next valuation uses it', async () => {
    const before = prices.valueUsdMicro(CHAIN, 'WETH', parseEther('1'));
    expect(before.ok && before.usdMicro).toBe(3000_000000n);
    const res = await move({ chain_id: CHAIN, pair: 'eth/usd', answer: '3456.78' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      chain_id: CHAIN,
      pair: 'ETH/USD',
      address: eth.address,
      decimals: 8,
      answer: '3456.78',
      answer_raw: '345678000000',
      reference: { usable: true },
    });
    const after = prices.valueUsdMicro(CHAIN, 'WETH', parseEther('1'));
    expect(after.ok && after.usdMicro).toBe(3456_780000n);
  });

  it('makes a feed stale or bad on purpose, and valuations refuse it', async () => {
    const now = Math.floor(clock.now().getTime() / 1000);
    const stale = await move({
      chain_id: CHAIN,
      pair: 'ETH/USD',
      answer: '3000',
      updated_at: now - 30 * 86400,
    });
    expect(stale.statusCode, stale.body).toBe(200);
    expect(stale.json()).toMatchObject({
      updated_at: now - 30 * 86400,
      reference: { usable: false, refusal: { kind: 'stale' } },
    });
    const refused = prices.valueUsdMicro(CHAIN, 'WETH', 1n);
    expect(!refused.ok && refused.refusal.kind).toBe('stale');

    const negative = await move({ chain_id: CHAIN, pair: 'ETH/USD', answer: '-1.5' });
    expect(negative.json()).toMatchObject({
      answer: '-1.5',
      reference: { usable: false, refusal: { kind: 'bad_answer' } },
    });
    expect(prices.valueUsdMicro(CHAIN, 'WETH', 1n).ok).toBe(false);

    const back = await move({ chain_id: CHAIN, pair: 'ETH/USD', answer: '2999.99999999' });
    expect(back.json()).toMatchObject({ answer_raw: '299999999999', reference: { usable: true } });
    expect(prices.valueUsdMicro(CHAIN, 'WETH', parseEther('2')).ok).toBe(true);
  });

  it('refuses pairs and chains the devnet lacks and answers finer than the feed', async () => {
    const pair = await move({ chain_id: CHAIN, pair: 'DOGE/USD', answer: '1' });
    expect(expectErrorBody(pair, 400, 'INVALID_REQUEST').message).toContain('ETH/USD');
    const chain = await move({ chain_id: 1, pair: 'ETH/USD', answer: '1' });
    expect(expectErrorBody(chain, 400, 'INVALID_REQUEST').message).toContain('8453');
    const fine = await move({ chain_id: CHAIN, pair: 'ETH/USD', answer: '1.000000001' });
    expect(expectErrorBody(fine, 400, 'INVALID_REQUEST').message).toContain('8 decimals');
    const malformed = await move({ chain_id: CHAIN, pair: 'ETH/USD', answer: '1e3' });
    expect(expectErrorBody(malformed, 400, 'INVALID_REQUEST').message).toContain('answer');
    const value = prices.valueUsdMicro(CHAIN, 'WETH', parseEther('1'));
    expect(value.ok && value.usdMicro).toBe(2999_999999n + 1n);
  });

  it('answers 503 without a devnet, and is not mounted in production', async () => {
    const noDevnet = await createTestApp();
    try {
      expectErrorBody(
        await noDevnet.app.fastify.inject({
          method: 'POST',
          url: '/v1/dev/price-feeds',
          payload: { chain_id: CHAIN, pair: 'ETH/USD', answer: '1' },
        }),
        503,
        'UNAVAILABLE',
      );
    } finally {
      await noDevnet.close();
    }
    const production = await createTestApp({ config: { env: 'production' } });
    try {
      expectErrorBody(
        await production.app.fastify.inject({
          method: 'POST',
          url: '/v1/dev/price-feeds',
          payload: { chain_id: CHAIN, pair: 'ETH/USD', answer: '1' },
        }),
        404,
        'NOT_FOUND',
      );
    } finally {
      await production.close();
    }
  });
});
