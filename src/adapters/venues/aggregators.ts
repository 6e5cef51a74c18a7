// The aggregator venues the config asks for: `kyberswap` always (it needs no key), `0x` only when
// it has an API key. In development the configuration points both at the devnet's fakes.

import type { Address } from 'viem';
import type { VenuesConfig } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import { createKyberSwapAdapter } from './kyberswap.ts';
import type { VenueAdapter } from './port.ts';
import { createZeroExAdapter } from './zerox.ts';

export interface AggregatorAdaptersOptions {
  /** Chains to offer the aggregators on (default: Base 8453). */
  chainIds?: readonly number[];
  clock?: Clock;
  /** Per chain, the contract the answers name as spender and router, when fixed (the devnet's fakes). */
  contracts?: Readonly<Record<number, Address>>;
}

export function createAggregatorAdapters(
  config: Pick<VenuesConfig, 'zeroEx' | 'kyberswap'>,
  options: AggregatorAdaptersOptions = {},
): VenueAdapter[] {
  const chainIds = options.chainIds ?? [8453];
  const clock = options.clock ? { clock: options.clock } : {};
  const adapters: VenueAdapter[] = [];
  if (config.zeroEx.apiKey) {
    adapters.push(
      createZeroExAdapter({
        apiKey: config.zeroEx.apiKey,
        baseUrl: config.zeroEx.baseUrl,
        chainIds,
        timeoutMs: config.zeroEx.timeoutMs,
        quoteTtlMs: config.zeroEx.quoteTtlMs,
        ...(options.contracts ? { allowanceHolders: options.contracts } : {}),
        ...clock,
      }),
    );
  }
  adapters.push(
    createKyberSwapAdapter({
      baseUrl: config.kyberswap.baseUrl,
      clientId: config.kyberswap.clientId,
      chainIds,
      timeoutMs: config.kyberswap.timeoutMs,
      quoteTtlMs: config.kyberswap.quoteTtlMs,
      ...(options.contracts ? { routers: options.contracts } : {}),
      ...clock,
    }),
  );
  return adapters;
}
