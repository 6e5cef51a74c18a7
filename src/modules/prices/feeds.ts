// Which feeds the price references read: the configured ones (Base's Chainlink feeds by default,
// changed by PRICE_FEEDS; in development the devnet's, which it configures through its door).

import { getAddress, type Address } from 'viem';
import type { PriceFeedSpec } from '../../adapters/prices/port.ts';
import type { Config } from '../../config.ts';

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

/** The sequencer uptime feeds to check, by chain id. */
export function sequencerFeeds(prices: Config['prices']): Record<number, Address> {
  return Object.fromEntries(
    Object.entries(prices.sequencers).map(([chain, address]) => [chain, getAddress(address)]),
  );
}
