// The one place that decides which venue adapters run, and where they point: Uniswap's and
// Aerodrome's Base deployments from config, or, in development, the devnet's contracts on the
// chains the devnet runs (plus its own AMM, `devnet-amm`, which production never has).

import type { Address } from 'viem';
import type { Config } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import { createAggregatorAdapters } from './aggregators.ts';
import type { ChainPort } from '../chain/port.ts';
import {
  createAerodromeVenue,
  createDevnetAmmVenue,
  type AerodromeDeployment,
  type UniswapV2Deployment,
} from './constant-product.ts';
import type { ConversionVenue, VenueAdapter } from './port.ts';
import { createUniswapV3Venue, type UniswapV3Deployment } from './uniswap-v3.ts';

export * from './port.ts';

/** The chain the aggregators and the on-chain venues serve in production. */
const BASE_CHAIN_ID = 8453;

/**
 * A local chain's own venue contracts and aggregator fakes, by chain id: the devnet's (its
 * `DevnetInfo` has this shape). Its chains use these instead of the configured deployments.
 */
export interface LocalVenues {
  chains: Record<
    number,
    {
      chainId: number;
      contracts: {
        uniswapV3QuoterV2?: Address;
        uniswapV3SwapRouter02?: Address;
        aerodromeRouter?: Address;
        aerodromePoolFactory?: Address;
        uniswapV2Router02?: Address;
      };
    }
  >;
  aggregators?: { zeroExBaseUrl: string; zeroExApiKey: string; kyberswapBaseUrl: string; chainIds: number[] };
}

export interface VenueAdapterInput {
  config: Pick<Config, 'env' | 'venues'>;
  chain: ChainPort;
  /** The running devnet (development): its chains use its contracts. */
  devnet?: LocalVenues;
  clock?: Clock;
}

/** Every configured venue adapter, each listing the chains it serves. */
export function createVenueAdapters(input: VenueAdapterInput): VenueAdapter[] {
  const { config, chain, devnet } = input;
  if (config.env === 'production' && devnet) throw new Error('The devnet venues are refused in production.');
  const uniswapV3: Record<number, UniswapV3Deployment> = { ...config.venues.uniswapV3 };
  const aerodrome: Record<number, AerodromeDeployment> = { ...config.venues.aerodrome };
  const devnetAmm: Record<number, UniswapV2Deployment> = {};
  for (const c of Object.values(devnet?.chains ?? {})) {
    const k = c.contracts;
    // A devnet chain has no real deployment: what it lacks is not offered there at all.
    delete uniswapV3[c.chainId];
    delete aerodrome[c.chainId];
    if (k.uniswapV3QuoterV2 && k.uniswapV3SwapRouter02) {
      uniswapV3[c.chainId] = { quoterV2: k.uniswapV3QuoterV2, swapRouter02: k.uniswapV3SwapRouter02 };
    }
    if (k.aerodromeRouter && k.aerodromePoolFactory) {
      aerodrome[c.chainId] = { router: k.aerodromeRouter, poolFactory: k.aerodromePoolFactory };
    }
    if (k.uniswapV2Router02) devnetAmm[c.chainId] = { router02: k.uniswapV2Router02 };
  }
  // Only chains the chain port can reach.
  const reachable = <D>(deployments: Record<number, D>): Record<number, D> =>
    Object.fromEntries(Object.entries(deployments).filter(([id]) => chain.supports(Number(id))));
  const common = {
    chain,
    timeoutMs: config.venues.timeoutMs,
    quoteTtlMs: config.venues.onchainQuoteTtlMs,
    ...(input.clock ? { now: () => input.clock!.now() } : {}),
  };
  const adapters: VenueAdapter[] = [
    createAerodromeVenue({ ...common, deployments: reachable(aerodrome) }),
    createUniswapV3Venue({ ...common, deployments: reachable(uniswapV3) }),
  ];
  if (Object.keys(devnetAmm).length > 0) {
    adapters.push(createDevnetAmmVenue({ ...common, deployments: reachable(devnetAmm) }));
  }
  // The aggregators serve Base; in development, the devnet's fakes stand in for the vendors.
  const local = devnet?.aggregators;
  const aggregatorChains = (local ? local.chainIds : [BASE_CHAIN_ID]).filter((id) => chain.supports(id));
  if (aggregatorChains.length > 0) {
    // The devnet's fakes quote and swap on the chain's Uniswap v2 Router02: their spender and router.
    const localContracts: Record<number, Address> = {};
    for (const id of aggregatorChains) {
      const router = devnet?.chains[id]?.contracts.uniswapV2Router02;
      if (router) localContracts[id] = router;
    }
    adapters.push(
      ...createAggregatorAdapters(config.venues, {
        chainIds: aggregatorChains,
        ...(input.clock ? { clock: input.clock } : {}),
        ...(local ? { local: { ...local, contracts: localContracts } } : {}),
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
