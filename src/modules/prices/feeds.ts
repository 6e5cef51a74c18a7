// Which feeds the price references read: the configured ones (Base's Chainlink feeds by default,
// changed by PRICE_FEEDS), and in development the devnet's DevPriceFeed contracts on the chains
// the devnet serves.

import { getAddress, type Address } from 'viem';
import type { PriceFeedSpec } from '../../adapters/prices/port.ts';
import type { Config } from '../../config.ts';

/** The part of a devnet the price references need: each chain's feeds by pair (`ETH/USD`). */
export interface DevnetPriceFeeds {
  chains: Record<number, { chainId: number; priceFeeds?: Record<string, Address> }>;
}

/** The devnet's feeds as specs, each with `heartbeatSeconds` (nothing posts heartbeat rounds there). */
export function feedsFromDevnet(devnet: DevnetPriceFeeds, heartbeatSeconds: number): PriceFeedSpec[] {
  const specs: PriceFeedSpec[] = [];
  for (const [chain, info] of Object.entries(devnet.chains)) {
    for (const [pair, address] of Object.entries(info.priceFeeds ?? {})) {
      specs.push({ chainId: Number(chain), pair, address: getAddress(address), heartbeatSeconds });
    }
  }
  return specs;
}

/** The configured feeds (`config.prices.feeds`) as specs. */
export function feedsFromConfig(prices: Config['prices']): PriceFeedSpec[] {
  const specs: PriceFeedSpec[] = [];
  for (const [chain, byPair] of Object.entries(prices.feeds)) {
    for (const [pair, feed] of Object.entries(byPair)) {
      specs.push({
        chainId: Number(chain),
        pair,
        address: getAddress(feed.address),
        heartbeatSeconds: feed.heartbeatSeconds,
        ...(feed.decimals === undefined ? {} : { decimals: feed.decimals }),
        ...(feed.description === undefined ? {} : { description: feed.description }),
      });
    }
  }
  return specs;
}

/**
 * The feeds to read. Without a devnet: the configured ones. With one (development): a chain the
 * devnet serves uses the devnet's feeds only, since the real addresses hold nothing there; a chain
 * the operator pointed elsewhere (`RPC_URL_<chain>`) keeps the configured feeds.
 */
export function resolvePriceFeeds(config: Config, devnet?: DevnetPriceFeeds): PriceFeedSpec[] {
  const configured = feedsFromConfig(config.prices);
  if (!devnet) return configured;
  const onDevnet = servedByDevnet(config, devnet);
  return [
    ...configured.filter((f) => !onDevnet(f.chainId)),
    ...feedsFromDevnet(devnet, config.prices.devnetHeartbeatSeconds).filter((f) => onDevnet(f.chainId)),
  ];
}

/** The sequencer uptime feeds to check: the configured ones, except on chains the devnet serves (it has none). */
export function resolveSequencerFeeds(config: Config, devnet?: DevnetPriceFeeds): Record<number, Address> {
  const onDevnet = devnet ? servedByDevnet(config, devnet) : () => false;
  return Object.fromEntries(
    Object.entries(config.prices.sequencers)
      .filter(([chain]) => !onDevnet(Number(chain)))
      .map(([chain, address]) => [chain, getAddress(address)]),
  );
}

function servedByDevnet(config: Config, devnet: DevnetPriceFeeds): (chainId: number) => boolean {
  return (chainId) => chainId in devnet.chains && config.rpcUrls[chainId] === undefined;
}
