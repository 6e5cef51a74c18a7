// The devnet's market dependencies as `npm start` builds them (src/runtime.ts): the venue
// adapters, the token registry with the venues that settle, and the price references, read once.

import type { ChainPort } from '../../src/adapters/chain/port.ts';
import { createViemChainPort } from '../../src/adapters/chain/viem.ts';
import { createVenueAdapters, settlingVenues } from '../../src/adapters/venues/index.ts';
import { testConfig, type Config } from '../../src/config.ts';
import { devnetConfig } from '../../src/devnet/config-overrides.ts';
import { systemClock } from '../../src/core/clock.ts';
import { createLogger } from '../../src/core/log.ts';
import {
  devnetBundlerUrls,
  devnetRpcUrls,
  devnetTokenAddresses,
  type DevnetInfo,
} from '../../src/devnet/devnet.ts';
import { createJsonRpcBundler } from '../../src/adapters/bundler/json-rpc.ts';
import { withDevnetKernelModules } from '../../src/devnet/kernel-accounts.ts';
import type { AppDeps } from '../../src/deps.ts';
import { buildPriceReferences } from '../../src/modules/prices/index.ts';
import { buildTokenRegistry, type DevnetTokenAddresses } from '../../src/modules/registry/index.ts';
import { createTestApp, type TestApp } from './app.ts';

export interface DevnetDepsOptions {
  /** Registry symbols of chain 8453 moved onto other addresses (a test's own tokens). */
  relocate?: DevnetTokenAddresses[number];
  /** false: no price references at all. */
  prices?: boolean;
}

export async function devnetDeps(
  devnet: DevnetInfo,
  config: Config,
  chain: ChainPort,
  options: DevnetDepsOptions = {},
): Promise<Pick<AppDeps, 'chain' | 'venues' | 'tokenRegistry' | 'prices'>> {
  const venues = createVenueAdapters({ config: devnetConfig(config, devnet), chain });
  const tokens = devnetTokenAddresses(devnet);
  if (options.relocate) tokens[8453] = { ...tokens[8453], ...options.relocate };
  const tokenRegistry = buildTokenRegistry('development', tokens, settlingVenues(venues));
  if (options.prices === false) return { chain, venues, tokenRegistry };
  const prices = buildPriceReferences({
    config: devnetConfig(config, devnet),
    chain,
    clock: systemClock,
    registry: tokenRegistry,
    log: createLogger('silent'),
  });
  await prices.refresh();
  return { chain, venues, tokenRegistry, prices };
}

/** The Kernel configuration `npm start` uses on the devnet: its own factory, implementation and modules. */
export function devnetKernelConfig(devnet: DevnetInfo, config: Config): Config['kernel'] {
  return { ...config.kernel, modules: withDevnetKernelModules(config.kernel.modules, [], devnet) };
}

/**
 * A test app on the devnet as the smart-account tests need it: the devnet's market (without price
 * references unless `prices`; registry symbols moved onto a test's tokens with `relocate`), its
 * Kernel modules, its bundler, and the devnet in the deps; `config` overrides settings.
 */
export async function devnetKernelApp(
  devnet: DevnetInfo,
  options: { prices?: boolean; relocate?: DevnetTokenAddresses[number]; config?: Partial<Config> } = {},
): Promise<TestApp> {
  const config = testConfig();
  // With the relayer, as `npm start` has it: it deposits the prefund of an account with no ETH.
  const chain = createViemChainPort({
    rpcUrls: devnetRpcUrls(devnet),
    ...(config.payments.relayerPrivateKey ? { relayerPrivateKey: config.payments.relayerPrivateKey } : {}),
  });
  const market = await devnetDeps(devnet, config, chain, {
    ...(options.prices ? {} : { prices: false }),
    ...(options.relocate ? { relocate: options.relocate } : {}),
  });
  return createTestApp({
    config: { kernel: devnetKernelConfig(devnet, config), ...options.config },
    deps: { ...market, devnet, bundler: createJsonRpcBundler({ urls: devnetBundlerUrls(devnet) }) },
  });
}
