// The configuration the devnet's door hands the service: what the rest of the code reads in place
// of a devnet.

import type { Address } from 'viem';
import { describe, expect, inject, it } from 'vitest';
import { testConfig } from '../config.ts';
import { feedsFromConfig, sequencerFeeds } from '../modules/prices/index.ts';
import { devnetConfig, withDevnetPriceFeeds } from './config-overrides.ts';
import type { DevnetInfo } from './devnet.ts';

describe('the devnet price feeds in the configuration', () => {
  const config = testConfig();
  const fake = {
    chains: {
      8453: {
        chainId: 8453,
        priceFeeds: { 'ETH/USD': '0x00000000000000000000000000000000000000e1' as Address },
      },
      84532: {
        chainId: 84532,
        priceFeeds: { 'USDC/USD': '0x00000000000000000000000000000000000000e2' as Address },
      },
    },
  } as unknown as DevnetInfo;
  const served = (rpcUrls: Record<number, string>) => (chainId: number) =>
    chainId in fake.chains && rpcUrls[chainId] === undefined;

  it('reads the devnet feeds on devnet chains (its heartbeat, no sequencer) and the configured ones elsewhere', () => {
    const prices = withDevnetPriceFeeds({ ...config.prices, devnetHeartbeatSeconds: 77 }, fake, served({}));
    const specs = feedsFromConfig(prices);
    expect(
      specs.filter((f) => f.chainId === 8453).map((f) => [f.pair, f.address, f.heartbeatSeconds]),
    ).toEqual([['ETH/USD', '0x00000000000000000000000000000000000000e1', 77]]);
    expect(specs.filter((f) => f.chainId === 84532).map((f) => f.pair)).toEqual(['USDC/USD']);
    expect(feedsFromConfig(config.prices).length).toBe(10);
    // The devnet has no sequencer uptime feed: Base's is checked only where Base is real.
    expect(sequencerFeeds(prices)).toEqual({});
  });

  it('keeps the configured feeds and sequencer of a chain the operator pointed elsewhere', () => {
    const prices = withDevnetPriceFeeds(config.prices, fake, served({ 8453: 'http://base.example' }));
    expect(feedsFromConfig(prices).find((f) => f.chainId === 8453 && f.pair === 'ETH/USD')?.address).toBe(
      '0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70',
    );
    expect(sequencerFeeds(prices)).toEqual({ 8453: '0xBCF85224fc0756B9Fa45aA7892530B47e10b6433' });
  });
});

describe('devnetConfig', () => {
  it("points RPC, bundlers, venues, feeds and the registry at the running devnet, leaving the operator's settings", () => {
    const devnet = inject('devnet');
    const base = devnet.chains[8453]!;
    const config = { ...testConfig(), rpcUrls: { 84532: 'http://sepolia.example' } };
    const out = devnetConfig(config, devnet);
    expect(out.rpcUrls[8453]).toBe(base.rpcUrl);
    expect(out.rpcUrls[84532]).toBe('http://sepolia.example');
    expect(out.bundlerUrls[8453]).toBe(base.bundlerUrl);
    expect(out.bundlerUrls[84532]).toBeUndefined();
    expect(out.venues.devnetAmm[8453]).toEqual({ router02: base.contracts.uniswapV2Router02 });
    expect(out.venues.uniswapV3[8453]?.quoterV2).toBe(base.contracts.uniswapV3QuoterV2);
    expect(out.venues.kyberswap.baseUrl).toBe(devnet.aggregators?.kyberswapBaseUrl);
    expect(out.prices.feeds[8453]?.['ETH/USD']?.address).toBe(base.priceFeeds['ETH/USD']);
    expect(out.devnet.tokenAddresses?.[8453]?.USDC).toBe(base.contracts.usdc);
    // The configuration it was given is untouched: the devnet's is a new one.
    expect(config.venues.devnetAmm).toEqual({});
    expect(config.rpcUrls).toEqual({ 84532: 'http://sepolia.example' });
  });
});
