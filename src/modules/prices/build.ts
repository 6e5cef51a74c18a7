// Builds the price references of a running service from its config and adapters.

import { createChainlinkPriceReferences } from '../../adapters/prices/chainlink.ts';
import type { ChainPort } from '../../adapters/chain/port.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import type { TokenRegistry } from '../registry/index.ts';
import { feedsFromConfig, sequencerFeeds } from './feeds.ts';
import { createPriceReferences, type PriceReferences, type PriceReferencesLog } from './service.ts';

export interface BuildPriceReferencesParameters {
  config: Config;
  chain: ChainPort;
  clock: Clock;
  registry: TokenRegistry;
  log?: PriceReferencesLog;
}

/** Chainlink feeds read over the chain port, cached for synchronous valuations. Call `start()` to refresh. */
export function buildPriceReferences(params: BuildPriceReferencesParameters): PriceReferences {
  const { config } = params;
  return createPriceReferences({
    port: createChainlinkPriceReferences({
      chain: params.chain,
      clock: params.clock,
      marginSeconds: config.prices.marginSeconds,
      sequencers: sequencerFeeds(config.prices),
      sequencerGraceSeconds: config.prices.sequencerGraceSeconds,
    }),
    feeds: feedsFromConfig(config.prices),
    registry: params.registry,
    clock: params.clock,
    marginSeconds: config.prices.marginSeconds,
    refreshIntervalMs: config.prices.refreshIntervalMs,
    ...(params.log ? { log: params.log } : {}),
  });
}
