// Both aggregator fakes at once, for the devnet: each prices through (and swaps on) the Uniswap v2
// Router02 of the chains given. Development and tests only.

import { startKyberSwapFake, type KyberSwapFake } from './kyberswap.ts';
import type { FakeChain } from './uniswap-v2.ts';
import { startZeroExFake, type ZeroExFake } from './zerox.ts';

/** The key the devnet's 0x fake accepts (and the development 0x adapter sends). Not a secret. */
export const DEVNET_ZEROX_API_KEY = 'devnet-0x-api-key';

export interface AggregatorFakes {
  zeroEx: ZeroExFake;
  kyberswap: KyberSwapFake;
  /** What createAggregatorAdapters takes as `local`. */
  local: { zeroExBaseUrl: string; zeroExApiKey: string; kyberswapBaseUrl: string };
  stop(): Promise<void>;
}

export async function startAggregatorFakes(options: {
  /** Chain id → RPC URL and the devnet's `contracts.uniswapV2Router02`. */
  chains: Record<number, FakeChain>;
  host?: string;
  zeroExApiKey?: string;
}): Promise<AggregatorFakes> {
  const apiKey = options.zeroExApiKey ?? DEVNET_ZEROX_API_KEY;
  const host = options.host === undefined ? {} : { host: options.host };
  const zeroEx = await startZeroExFake({ chains: options.chains, apiKey, ...host });
  let kyberswap: KyberSwapFake;
  try {
    kyberswap = await startKyberSwapFake({ chains: options.chains, ...host });
  } catch (err) {
    await zeroEx.stop();
    throw err;
  }
  return {
    zeroEx,
    kyberswap,
    local: { zeroExBaseUrl: zeroEx.url, zeroExApiKey: apiKey, kyberswapBaseUrl: kyberswap.url },
    stop: async () => {
      await Promise.all([zeroEx.stop(), kyberswap.stop()]);
    },
  };
}

export { defaultKnobs, type FakeKnobs, type RunningFake } from './loopback.ts';
export type { FakeChain } from './uniswap-v2.ts';
export type { KyberSwapFake } from './kyberswap.ts';
export type { ZeroExFake, ZeroExFakeKnobs } from './zerox.ts';
