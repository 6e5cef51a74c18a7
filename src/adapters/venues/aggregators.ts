// The aggregator venues the config asks for: `kyberswap` always (it needs no key), `0x` only when
// it has an API key. In development the devnet's fakes stand in for both vendors: pass their
// base URLs (and the fake's key) in `local`.

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
  /**
   * Development: the loopback fakes' URLs and the 0x fake's key, used instead of the config's, and
   * per chain the contract the fakes name as spender and router (instead of the vendors').
   */
  local?: {
    zeroExBaseUrl: string;
    zeroExApiKey: string;
    kyberswapBaseUrl: string;
    contracts?: Readonly<Record<number, Address>>;
  };
}

export function createAggregatorAdapters(
  config: VenuesConfig,
  options: AggregatorAdaptersOptions = {},
): VenueAdapter[] {
  const chainIds = options.chainIds ?? [8453];
  const clock = options.clock ? { clock: options.clock } : {};
  const adapters: VenueAdapter[] = [];
  const zeroExKey = options.local?.zeroExApiKey ?? config.zeroEx.apiKey;
  if (zeroExKey) {
    adapters.push(
      createZeroExAdapter({
        apiKey: zeroExKey,
        baseUrl: options.local?.zeroExBaseUrl ?? config.zeroEx.baseUrl,
        chainIds,
        timeoutMs: config.zeroEx.timeoutMs,
        quoteTtlMs: config.zeroEx.quoteTtlMs,
        ...(options.local?.contracts ? { allowanceHolders: options.local.contracts } : {}),
        ...clock,
      }),
    );
  }
  adapters.push(
    createKyberSwapAdapter({
      baseUrl: options.local?.kyberswapBaseUrl ?? config.kyberswap.baseUrl,
      clientId: config.kyberswap.clientId,
      chainIds,
      timeoutMs: config.kyberswap.timeoutMs,
      quoteTtlMs: config.kyberswap.quoteTtlMs,
      ...(options.local?.contracts ? { routers: options.local.contracts } : {}),
      ...clock,
    }),
  );
  return adapters;
}
