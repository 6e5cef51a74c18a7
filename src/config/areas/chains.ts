// The chains' settings: the RPC and bundler endpoints, the devnet, the Kernel modules delegations
// name, the executor of intents, CCTP rebalances and the chain watcher. Read by loadConfig
// (src/config.ts).

import {
  confirmationDepths,
  faultCrash,
  isHttpUrl,
  parseCctpContracts,
  parseDevnetTokenAddresses,
} from '../parse.ts';
import type { EnvReader } from '../reader.ts';
import {
  type Config,
  type KernelModuleAddresses,
  DEFAULT_KERNEL_MODULES,
  SUPPORTED_CHAINS,
} from '../settings.ts';

/**
 * The JSON-RPC URL (`RPC_URL_<chainId>`), bundler URL (`BUNDLER_URL_<chainId>`) and block explorer
 * (`EXPLORER_URL_<chainId>`) per chain.
 */
export function readEndpoints(r: EnvReader): Pick<Config, 'rpcUrls' | 'bundlerUrls' | 'explorerUrls'> {
  const rpcUrls: Record<number, string> = {};
  for (const chainId of SUPPORTED_CHAINS) {
    const url = r.str(`RPC_URL_${chainId}`);
    if (url !== undefined) rpcUrls[chainId] = url;
  }
  const bundlerUrls: Record<number, string> = {};
  for (const chainId of SUPPORTED_CHAINS) {
    const name = `BUNDLER_URL_${chainId}`;
    const url = r.str(name);
    if (url === undefined) continue;
    if (isHttpUrl(url)) bundlerUrls[chainId] = url;
    else r.problems.push(`${name} must be an http(s) URL (got "${url}")`);
  }
  const explorerUrls: Record<number, string> = {};
  for (const chainId of SUPPORTED_CHAINS) {
    const name = `EXPLORER_URL_${chainId}`;
    const url = r.str(name);
    if (url === undefined) continue;
    if (isHttpUrl(url)) explorerUrls[chainId] = url.replace(/\/+$/, '');
    else r.problems.push(`${name} must be an http(s) URL (got "${url}")`);
  }
  return { rpcUrls, bundlerUrls, explorerUrls };
}

/** The limit of one bundler call. */
export function readBundlerTimeout(r: EnvReader): number {
  return r.int('BUNDLER_TIMEOUT_MS', 10_000, 100, 120_000);
}

export type DevnetChains = Pick<Config['devnet'], 'enabled' | 'chainIds' | 'tokenAddresses'>;

/**
 * Whether the devnet runs, on which chains, and the token addresses of one this process did not
 * start: read before the production checks, which refuse it on; its ports come with readDevnet.
 */
export function readDevnetChains(r: EnvReader, production: boolean): DevnetChains {
  const chainsRaw = r.str('DEVNET_CHAINS') ?? '84532,8453,137';
  const chainIds = chainsRaw.split(',').map((s) => Number(s.trim()));
  if (chainIds.some((c) => !SUPPORTED_CHAINS.includes(c))) {
    r.problems.push(
      `DEVNET_CHAINS must list chain ids among ${SUPPORTED_CHAINS.join(', ')} (got "${chainsRaw}")`,
    );
  }
  const enabled = production ? false : r.bool('DEVNET', true);
  const tokenAddresses = parseDevnetTokenAddresses(r.str('DEVNET_TOKEN_ADDRESSES'), production, r.problems);
  return { enabled, chainIds: chainIds.filter((c) => SUPPORTED_CHAINS.includes(c)), tokenAddresses };
}

/** The devnet: its chains (readDevnetChains), the anvils' first port and the keeper's interval. */
export function readDevnet(r: EnvReader, chains: DevnetChains): Config['devnet'] {
  return {
    enabled: chains.enabled,
    chainIds: chains.chainIds,
    basePort: r.int('DEVNET_BASE_PORT', 8545, 0, 65535),
    keeperIntervalMs: r.int('DEVNET_KEEPER_INTERVAL_MS', 2_000, 0, 3_600_000),
    tokenAddresses: chains.tokenAddresses,
  };
}

/** The Kernel version delegations target and its module addresses per chain (`KERNEL_MODULES_<chainId>`). */
export function readKernel(r: EnvReader): Config['kernel'] {
  const version = r.str('KERNEL_VERSION') ?? '0.3.1';
  if (version !== '0.3.1' && version !== '0.3.2' && version !== '0.3.3') {
    r.problems.push(`KERNEL_VERSION must be 0.3.1, 0.3.2 or 0.3.3 (got "${version}")`);
  }
  const modules: Record<number, KernelModuleAddresses> = {};
  const configuredChains: number[] = [];
  for (const chainId of SUPPORTED_CHAINS) {
    const chainModules = { ...DEFAULT_KERNEL_MODULES };
    // KERNEL_MODULES_<chainId>: a JSON object overriding some of the addresses.
    const raw = r.str(`KERNEL_MODULES_${chainId}`);
    if (raw !== undefined) {
      configuredChains.push(chainId);
      try {
        const parsed = JSON.parse(raw) as Record<string, unknown>;
        for (const [name, value] of Object.entries(parsed)) {
          if (!(name in chainModules) || typeof value !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(value)) {
            r.problems.push(`KERNEL_MODULES_${chainId}.${name} must be a known module with an address`);
          } else {
            chainModules[name as keyof KernelModuleAddresses] = value as `0x${string}`;
          }
        }
      } catch {
        r.problems.push(`KERNEL_MODULES_${chainId} must be a JSON object of module addresses`);
      }
    }
    modules[chainId] = chainModules;
  }
  return {
    version: version === '0.3.2' || version === '0.3.3' ? version : '0.3.1',
    modules,
    configuredChains,
  };
}

/** USD per native coin, valuing a delegation's `value_limit` (deliberately high). */
export function readNativeUsdReference(r: EnvReader): string {
  const reference = r.str('NATIVE_USD_REFERENCE') ?? '10000';
  if (!/^\d{1,9}(\.\d{1,6})?$/.test(reference)) {
    r.problems.push('NATIVE_USD_REFERENCE must be a decimal USD amount');
  }
  return reference;
}

/** The executor of intents: receipts, continuations, swap deadlines, nonce lanes, split gas. */
export function readExecutor(r: EnvReader): Config['executor'] {
  return {
    receiptTimeoutMs: r.int('EXECUTOR_RECEIPT_TIMEOUT_MS', 60_000, 100, 600_000),
    receiptPollMs: r.int('EXECUTOR_RECEIPT_POLL_MS', 500, 10, 10_000),
    maxContinuations: r.int('EXECUTOR_MAX_CONTINUATIONS', 200, 1, 10_000),
    swapTtlSeconds: r.int('EXECUTOR_SWAP_TTL_SECONDS', 300, 30, 3_600),
    nonceLanes: r.int('EXECUTOR_NONCE_LANES', 4, 1, 64),
    splitExtraGas: r.int('EXECUTOR_SPLIT_EXTRA_GAS', 160_000, 0, 10_000_000),
  };
}

/** Cross-chain USDC rebalances over CCTP V2: Circle's attestation API, the contracts, the waits. */
export function readCctp(r: EnvReader, production: boolean): Config['cctp'] {
  return {
    attestationUrl: r.baseUrl('CCTP_ATTESTATION_URL', 'https://iris-api.circle.com'),
    attestationUrlConfigured: r.str('CCTP_ATTESTATION_URL') !== undefined,
    chains: parseCctpContracts(r.str('CCTP_CONTRACTS'), r.problems),
    chainsConfigured: r.str('CCTP_CONTRACTS') !== undefined,
    attestationTimeoutMs: r.int('CCTP_ATTESTATION_TIMEOUT_MS', 5_000, 100, 60_000),
    attestationMaxPerSecond: r.int('CCTP_ATTESTATION_MAX_PER_SECOND', 10, 1, 35),
    receiptTimeoutMs: r.int('REBALANCE_RECEIPT_TIMEOUT_MS', 120_000, 100, 3_600_000),
    mintWaitMs: r.int('REBALANCE_MINT_WAIT_MS', 10_000, 0, 60_000),
    replaceAfterMs: r.int('REBALANCE_REPLACE_AFTER_MS', 180_000, 1_000, 3_600_000),
    faultCrash: production ? null : faultCrash(r.str('PURSER_FAULT_REBALANCE_CRASH'), r.problems),
  };
}

/** The chain watcher; its defaults are quicker on the devnet. */
export function readChainWatch(
  r: EnvReader,
  production: boolean,
  devnetEnabled: boolean,
): Config['chainWatch'] {
  return {
    enabled: r.bool('CHAIN_WATCH', true),
    confirmations: confirmationDepths(r.str('CHAIN_WATCH_CONFIRMATIONS'), devnetEnabled, r.problems),
    graceMs: r.int('CHAIN_WATCH_GRACE_MS', devnetEnabled ? 3_000 : 10_000, 0, 3_600_000),
    maxRange: r.int('CHAIN_WATCH_MAX_RANGE', 2_000, 1, 100_000),
    everySeconds: r.int('CHAIN_WATCH_EVERY_SECONDS', devnetEnabled ? 2 : 5, 1, 3_600),
    runBudgetMs: r.int('CHAIN_WATCH_RUN_BUDGET_MS', 20_000, 100, 600_000),
    reconcileEverySeconds: r.int('CHAIN_RECONCILE_EVERY_SECONDS', devnetEnabled ? 30 : 60, 1, 86_400),
    faultCrash: !production && r.bool('PURSER_FAULT_CHAIN_WATCH_CRASH', false),
  };
}
