// The one place that decides which venue adapters run, and where they point, all from the
// configuration: Uniswap's and Aerodrome's deployments, the devnet's own AMM (`devnet-amm`, only
// when the devnet added it in development) and the aggregators' chains and URLs.

import type { Address } from 'viem';
import type { Config } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import { createAggregatorAdapters } from './aggregators.ts';
import type { ChainPort } from '../chain/port.ts';
import { createAerodromeVenue, createDevnetAmmVenue } from './constant-product.ts';
import type { ConversionVenue, VenueAdapter } from './port.ts';
import { createUniswapV3Venue } from './uniswap-v3.ts';

export * from './port.ts';

export interface VenueAdapterInput {
  config: Pick<Config, 'env' | 'venues'>;
  chain: ChainPort;
  clock?: Clock;
}

/** Every configured venue adapter, each listing the chains it serves. */
export function createVenueAdapters(input: VenueAdapterInput): VenueAdapter[] {
  const { config, chain } = input;
  const venues = config.venues;
  if (config.env === 'production' && Object.keys(venues.devnetAmm).length > 0) {
    throw new Error('The devnet venues are refused in production.');
  }
  // Only chains the chain port can reach.
  const reachable = <D>(deployments: Record<number, D>): Record<number, D> =>
    Object.fromEntries(Object.entries(deployments).filter(([id]) => chain.supports(Number(id))));
  const common = {
    chain,
    timeoutMs: venues.timeoutMs,
    quoteTtlMs: venues.onchainQuoteTtlMs,
    ...(input.clock ? { now: () => input.clock!.now() } : {}),
  };
  const adapters: VenueAdapter[] = [
    createAerodromeVenue({ ...common, deployments: reachable(venues.aerodrome) }),
    createUniswapV3Venue({ ...common, deployments: reachable(venues.uniswapV3) }),
  ];
  if (Object.keys(venues.devnetAmm).length > 0) {
    adapters.push(createDevnetAmmVenue({ ...common, deployments: reachable(venues.devnetAmm) }));
  }
  const aggregatorChains = venues.aggregatorChainIds.filter((id) => chain.supports(id));
  if (aggregatorChains.length > 0) {
    const fixed: Record<number, Address> = {};
    for (const id of aggregatorChains) {
      const contract = venues.aggregatorContracts[id];
      if (contract) fixed[id] = contract;
    }
    adapters.push(
      ...createAggregatorAdapters(venues, {
        chainIds: aggregatorChains,
        ...(input.clock ? { clock: input.clock } : {}),
        ...(Object.keys(fixed).length > 0 ? { contracts: fixed } : {}),
      }),
    );
  }
  return adapters.filter((a) => a.chains().length > 0);
}

/** The contracts of each venue on `chainId` (allowance targets and routers), venue by venue. */
export function venueContracts(
  adapters: readonly VenueAdapter[],
  chainId: number,
): Array<{ venue: ConversionVenue; address: Address }> {
  return adapters.flatMap((a) => a.contracts(chainId).map((address) => ({ venue: a.venue, address })));
}

/** Chain id → the venues that settle conversions there (what the token registry lists as settling). */
export function settlingVenues(adapters: readonly VenueAdapter[]): Record<number, ConversionVenue[]> {
  const out: Record<number, ConversionVenue[]> = {};
  for (const a of adapters) for (const chainId of a.chains()) (out[chainId] ??= []).push(a.venue);
  return out;
}
