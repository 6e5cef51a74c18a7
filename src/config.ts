// The only reader of process.env. Parsed once at start; every problem is reported in one message.

import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { privateKeyToAddress } from 'viem/accounts';
import { parseUsd, usdToMicro } from './core/money.ts';
import {
  type PurserEnv,
  type Config,
  BASE_VENUE_DEPLOYMENTS,
  DEVNET_RELAYER_PRIVATE_KEY,
  DEVNET_TREASURY_ADDRESS,
  type KernelModuleAddresses,
  DEFAULT_KERNEL_MODULES,
  DEVNET_EXECUTOR_ADDRESS,
  DEVNET_EXECUTOR_PRIVATE_KEY,
  ConfigError,
  SUPPORTED_CHAINS,
} from './config/settings.ts';
import {
  parseStatementsS3,
  parsePriceFeeds,
  parseSequencerFeeds,
  isHttpUrl,
  parseDevnetTokenAddresses,
  parseTrustProxy,
  parsePmContracts,
  pmFaultCrash,
  pmRateLanes,
  countryList,
  parseSealingKeys,
  confirmationDepths,
  faultCrash,
  parseCctpContracts,
} from './config/parse.ts';

export * from './config/settings.ts';
export { parseCctpContracts, parsePmContracts } from './config/parse.ts';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const str = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
      return fallback;
    }
    return Number(raw);
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };

  const rawEnv = str('PURSER_ENV') ?? 'development';
  let purserEnv: PurserEnv = 'development';
  if (rawEnv === 'development' || rawEnv === 'production') purserEnv = rawEnv;
  else problems.push(`PURSER_ENV must be development or production (got "${rawEnv}")`);
  const production = purserEnv === 'production';

  const host = str('HOST') ?? '127.0.0.1';
  const port = int('PORT', 8080, 0, 65535);
  const metrics =
    str('METRICS_PORT') === undefined
      ? null
      : { host: str('METRICS_HOST') ?? '127.0.0.1', port: int('METRICS_PORT', 0, 0, 65535) };
  const publicUrl = (
    str('PURSER_PUBLIC_URL') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  ).replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s/]+/.test(publicUrl)) problems.push(`PURSER_PUBLIC_URL must be an http(s) URL`);

  const databaseUrl = str('DATABASE_URL') ?? null;
  const sealingKeys = parseSealingKeys(str('PURSER_SEALING_KEYS'), str('PURSER_SEALING_KEY'), problems);
  const operatorToken = str('PURSER_OPERATOR_TOKEN') ?? null;
  const executorAddress =
    str('PURSER_EXECUTOR_ADDRESS')?.toLowerCase() ?? (production ? null : DEVNET_EXECUTOR_ADDRESS);
  if (executorAddress && !/^0x[0-9a-f]{40}$/.test(executorAddress)) {
    problems.push('PURSER_EXECUTOR_ADDRESS must be an address (0x followed by 40 hex characters)');
  }
  // The executor's key signs UserOperations with the session keys delegations name. It must be
  // the key of PURSER_EXECUTOR_ADDRESS: a key for another address would sign for nobody's grant.
  const executorKeyRaw = str('PURSER_EXECUTOR_PRIVATE_KEY');
  let executorPrivateKey: `0x${string}` | null =
    executorKeyRaw === undefined && !production && executorAddress === DEVNET_EXECUTOR_ADDRESS
      ? DEVNET_EXECUTOR_PRIVATE_KEY
      : null;
  if (executorKeyRaw !== undefined) {
    if (!/^0x[0-9a-fA-F]{64}$/.test(executorKeyRaw)) {
      problems.push('PURSER_EXECUTOR_PRIVATE_KEY must be a private key (0x followed by 64 hex characters)');
    } else {
      const keyAddress = privateKeyToAddress(executorKeyRaw as `0x${string}`).toLowerCase();
      if (!executorAddress) {
        problems.push(
          `PURSER_EXECUTOR_PRIVATE_KEY needs PURSER_EXECUTOR_ADDRESS set to its address (${keyAddress})`,
        );
      } else if (keyAddress !== executorAddress) {
        problems.push(
          `PURSER_EXECUTOR_PRIVATE_KEY is the key of ${keyAddress}, not of PURSER_EXECUTOR_ADDRESS ${executorAddress}`,
        );
      } else {
        executorPrivateKey = executorKeyRaw as `0x${string}`;
      }
    }
  }
  let siweDomain = 'localhost';
  try {
    siweDomain = str('SIWE_DOMAIN') ?? new URL(publicUrl).host;
  } catch {
    // reported with PURSER_PUBLIC_URL above
  }
  const siweUri = str('SIWE_URI') ?? publicUrl;
  const siweChainId = int('SIWE_CHAIN_ID', 8453, 1, 2 ** 31 - 1);

  const rpcUrls: Record<number, string> = {};
  for (const chainId of SUPPORTED_CHAINS) {
    const url = str(`RPC_URL_${chainId}`);
    if (url !== undefined) rpcUrls[chainId] = url;
  }

  const bundlerUrls: Record<number, string> = {};
  for (const chainId of SUPPORTED_CHAINS) {
    const name = `BUNDLER_URL_${chainId}`;
    const url = str(name);
    if (url === undefined) continue;
    if (isHttpUrl(url)) bundlerUrls[chainId] = url;
    else problems.push(`${name} must be an http(s) URL (got "${url}")`);
  }

  const devnetChainsRaw = str('DEVNET_CHAINS') ?? '84532,8453,137';
  const devnetChainIds = devnetChainsRaw.split(',').map((s) => Number(s.trim()));
  if (devnetChainIds.some((c) => !SUPPORTED_CHAINS.includes(c))) {
    problems.push(
      `DEVNET_CHAINS must list chain ids among ${SUPPORTED_CHAINS.join(', ')} (got "${devnetChainsRaw}")`,
    );
  }
  const devnetEnabled = production ? false : bool('DEVNET', true);
  const devnetTokenAddresses = parseDevnetTokenAddresses(str('DEVNET_TOKEN_ADDRESSES'), production, problems);

  if (production) {
    const missing: string[] = [];
    if (!databaseUrl) missing.push('DATABASE_URL (the embedded database is refused in production)');
    if (!str('PURSER_PUBLIC_URL')) missing.push('PURSER_PUBLIC_URL');
    if (sealingKeys.length === 0) missing.push('PURSER_SEALING_KEYS (or PURSER_SEALING_KEY)');
    if (!operatorToken) missing.push('PURSER_OPERATOR_TOKEN');
    for (const chainId of SUPPORTED_CHAINS) {
      if (!rpcUrls[chainId]) missing.push(`RPC_URL_${chainId}`);
    }
    if (missing.length > 0) problems.push(`production requires these settings: ${missing.join(', ')}`);
    if (str('DEVNET') !== undefined && bool('DEVNET', false))
      problems.push('DEVNET cannot be on in production');
  }

  const kernelVersion = str('KERNEL_VERSION') ?? '0.3.1';
  if (kernelVersion !== '0.3.1' && kernelVersion !== '0.3.2' && kernelVersion !== '0.3.3') {
    problems.push(`KERNEL_VERSION must be 0.3.1, 0.3.2 or 0.3.3 (got "${kernelVersion}")`);
  }
  const kernelModules: Record<number, KernelModuleAddresses> = {};
  const kernelConfiguredChains: number[] = [];
  for (const chainId of SUPPORTED_CHAINS) {
    const modules = { ...DEFAULT_KERNEL_MODULES };
    // KERNEL_MODULES_<chainId>: a JSON object overriding some of the addresses.
    const raw = str(`KERNEL_MODULES_${chainId}`);
    if (raw !== undefined) {
      kernelConfiguredChains.push(chainId);
      try {
        const parsed = JSON.parse(raw) as Record<string, unknown>;
        for (const [name, value] of Object.entries(parsed)) {
          if (!(name in modules) || typeof value !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(value)) {
            problems.push(`KERNEL_MODULES_${chainId}.${name} must be a known module with an address`);
          } else {
            modules[name as keyof KernelModuleAddresses] = value as `0x${string}`;
          }
        }
      } catch {
        problems.push(`KERNEL_MODULES_${chainId} must be a JSON object of module addresses`);
      }
    }
    kernelModules[chainId] = modules;
  }
  const nativeUsdReference = str('NATIVE_USD_REFERENCE') ?? '10000';
  if (!/^\d{1,9}(\.\d{1,6})?$/.test(nativeUsdReference)) {
    problems.push('NATIVE_USD_REFERENCE must be a decimal USD amount');
  }

  const hexKey = (name: string, fallback: `0x${string}` | null): `0x${string}` | null => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    if (!/^0x[0-9a-fA-F]{64}$/.test(raw)) {
      problems.push(`${name} must be a private key (0x followed by 64 hex characters)`);
      return fallback;
    }
    return raw as `0x${string}`;
  };
  const usd = (name: string, fallback: string): bigint => {
    const raw = str(name) ?? fallback;
    const micro = parseUsd(raw);
    if (micro === null) {
      problems.push(`${name} must be a USD amount such as 12.5 (got "${raw}")`);
      return usdToMicro(fallback);
    }
    return micro;
  };
  const baseUrl = (name: string, fallback: string): string => {
    const raw = (str(name) ?? fallback).replace(/\/+$/, '');
    try {
      const url = new URL(raw);
      if ((url.protocol === 'http:' || url.protocol === 'https:') && !url.search && !url.hash) return raw;
    } catch {
      // reported below
    }
    problems.push(`${name} must be an http(s) URL without a query (got "${raw}")`);
    return fallback;
  };
  const paymentsChainId = int('PAYMENTS_CHAIN_ID', 8453, 1, 2 ** 31);
  if (!SUPPORTED_CHAINS.includes(paymentsChainId)) {
    problems.push(`PAYMENTS_CHAIN_ID must be one of ${SUPPORTED_CHAINS.join(', ')}`);
  }
  const treasury =
    str('PURSER_TREASURY_ADDRESS')?.toLowerCase() ?? (production ? null : DEVNET_TREASURY_ADDRESS);
  if (treasury !== null && !/^0x[0-9a-f]{40}$/.test(treasury)) {
    problems.push('PURSER_TREASURY_ADDRESS must be an address (0x followed by 40 hex characters)');
  }

  const config: Config = {
    env: purserEnv,
    host,
    port,
    metrics,
    publicUrl,
    publicUrlExplicit: str('PURSER_PUBLIC_URL') !== undefined,
    databaseUrl,
    dataDir: str('PURSER_DATA_DIR') ?? '.purser',
    databasePoolSize: int('DATABASE_POOL_SIZE', 10, 1, 200),
    trustProxy: parseTrustProxy(str('TRUST_PROXY'), problems),
    logLevel: str('LOG_LEVEL') ?? 'info',
    publicRateLimitPerMinute: int('RATE_LIMIT_PUBLIC_PER_MINUTE', 300, 1, 10_000_000),
    requestBudgetMs: int('REQUEST_BUDGET_MS', 15_000, 100, 600_000),
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', 10_000, 1_000, 600_000),
    shutdownDrainMs: int('SHUTDOWN_DRAIN_MS', 3_000, 0, 600_000),
    intentQueue: {
      perWallet: int('INTENT_QUEUE_PER_WALLET', 50, 1, 100_000),
      max: int('INTENT_QUEUE_MAX', 10_000, 1, 10_000_000),
    },
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 262_144, 1024, 10_485_760),
    sealingKeys,
    operatorToken,
    executorAddress,
    executorPrivateKey,
    siwe: { domain: siweDomain, uri: siweUri, chainId: siweChainId },
    rpcUrls,
    bundlerUrls,
    bundlerTimeoutMs: int('BUNDLER_TIMEOUT_MS', 10_000, 100, 120_000),
    devnet: {
      enabled: devnetEnabled,
      chainIds: devnetChainIds.filter((c) => SUPPORTED_CHAINS.includes(c)),
      basePort: int('DEVNET_BASE_PORT', 8545, 0, 65535),
      keeperIntervalMs: int('DEVNET_KEEPER_INTERVAL_MS', 2_000, 0, 3_600_000),
      tokenAddresses: devnetTokenAddresses,
    },
    screening: {
      sdnUrl:
        str('SDN_XML_URL') ??
        'https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/SDN.XML',
    },
    kernel: {
      version: kernelVersion === '0.3.2' || kernelVersion === '0.3.3' ? kernelVersion : '0.3.1',
      modules: kernelModules,
      configuredChains: kernelConfiguredChains,
    },
    nativeUsdReference,
    venues: {
      timeoutMs: int('VENUE_TIMEOUT_MS', 4_000, 50, 60_000),
      onchainQuoteTtlMs: int('ONCHAIN_QUOTE_TTL_MS', 15_000, 1_000, 600_000),
      uniswapV3: { 8453: { ...BASE_VENUE_DEPLOYMENTS.uniswapV3 } },
      aerodrome: { 8453: { ...BASE_VENUE_DEPLOYMENTS.aerodrome } },
      devnetAmm: {},
      aggregatorChainIds: [8453],
      aggregatorContracts: {},
      zeroEx: {
        baseUrl: baseUrl('ZEROX_BASE_URL', 'https://api.0x.org'),
        apiKey: str('ZEROX_API_KEY') ?? null,
        timeoutMs: int('ZEROX_TIMEOUT_MS', 4_000, 100, 60_000),
        quoteTtlMs: int('ZEROX_QUOTE_TTL_SECONDS', 30, 1, 600) * 1000,
      },
      kyberswap: {
        baseUrl: baseUrl('KYBERSWAP_BASE_URL', 'https://aggregator-api.kyberswap.com'),
        clientId: str('KYBERSWAP_CLIENT_ID') ?? null,
        timeoutMs: int('KYBERSWAP_TIMEOUT_MS', 4_000, 100, 60_000),
        quoteTtlMs: int('KYBERSWAP_QUOTE_TTL_SECONDS', 10, 1, 600) * 1000,
      },
    },
    planner: {
      maxSlices: int('PLANNER_MAX_SLICES', 20, 1, 200),
      sliceIntervalMs: int('PLANNER_SLICE_INTERVAL_MS', 4_000, 0, 600_000),
    },
    executor: {
      receiptTimeoutMs: int('EXECUTOR_RECEIPT_TIMEOUT_MS', 60_000, 100, 600_000),
      receiptPollMs: int('EXECUTOR_RECEIPT_POLL_MS', 500, 10, 10_000),
      maxContinuations: int('EXECUTOR_MAX_CONTINUATIONS', 200, 1, 10_000),
      swapTtlSeconds: int('EXECUTOR_SWAP_TTL_SECONDS', 300, 30, 3_600),
      nonceLanes: int('EXECUTOR_NONCE_LANES', 4, 1, 64),
      splitExtraGas: int('EXECUTOR_SPLIT_EXTRA_GAS', 160_000, 0, 10_000_000),
    },
    cctp: {
      attestationUrl: baseUrl('CCTP_ATTESTATION_URL', 'https://iris-api.circle.com'),
      attestationUrlConfigured: str('CCTP_ATTESTATION_URL') !== undefined,
      chains: parseCctpContracts(str('CCTP_CONTRACTS'), problems),
      chainsConfigured: str('CCTP_CONTRACTS') !== undefined,
      attestationTimeoutMs: int('CCTP_ATTESTATION_TIMEOUT_MS', 5_000, 100, 60_000),
      attestationMaxPerSecond: int('CCTP_ATTESTATION_MAX_PER_SECOND', 10, 1, 35),
      receiptTimeoutMs: int('REBALANCE_RECEIPT_TIMEOUT_MS', 120_000, 100, 3_600_000),
      mintWaitMs: int('REBALANCE_MINT_WAIT_MS', 10_000, 0, 60_000),
      replaceAfterMs: int('REBALANCE_REPLACE_AFTER_MS', 180_000, 1_000, 3_600_000),
      faultCrash: production ? null : faultCrash(str('PURSER_FAULT_REBALANCE_CRASH'), problems),
    },
    chainWatch: {
      enabled: bool('CHAIN_WATCH', true),
      confirmations: confirmationDepths(str('CHAIN_WATCH_CONFIRMATIONS'), devnetEnabled, problems),
      graceMs: int('CHAIN_WATCH_GRACE_MS', devnetEnabled ? 3_000 : 10_000, 0, 3_600_000),
      maxRange: int('CHAIN_WATCH_MAX_RANGE', 2_000, 1, 100_000),
      everySeconds: int('CHAIN_WATCH_EVERY_SECONDS', devnetEnabled ? 2 : 5, 1, 3_600),
      runBudgetMs: int('CHAIN_WATCH_RUN_BUDGET_MS', 20_000, 100, 600_000),
      reconcileEverySeconds: int('CHAIN_RECONCILE_EVERY_SECONDS', devnetEnabled ? 30 : 60, 1, 86_400),
      faultCrash: !production && bool('PURSER_FAULT_CHAIN_WATCH_CRASH', false),
    },
    pm: {
      polymarketClobUrl: baseUrl('POLYMARKET_CLOB_URL', 'https://clob.polymarket.com'),
      polymarketClobUrlConfigured: str('POLYMARKET_CLOB_URL') !== undefined,
      kalshiApiUrl: baseUrl('KALSHI_API_URL', 'https://api.elections.kalshi.com/trade-api/v2'),
      kalshiApiUrlConfigured: str('KALSHI_API_URL') !== undefined,
      venueTimeoutMs: int('PM_VENUE_TIMEOUT_MS', 5_000, 100, 60_000),
      chainId: 137,
      contracts: parsePmContracts(str('PM_CONTRACTS'), problems),
      contractsConfigured: str('PM_CONTRACTS') !== undefined,
      safeTxServiceUrl: baseUrl('SAFE_TX_SERVICE_URL', 'https://api.safe.global/tx-service/pol'),
      safeTxServiceUrlConfigured: str('SAFE_TX_SERVICE_URL') !== undefined,
      safeTxServiceApiKey: str('SAFE_TX_SERVICE_API_KEY') ?? null,
      geo: {
        restrictedCountries: countryList(str('PM_RESTRICTED_COUNTRIES'), problems),
        trustedProxies: (str('PM_GEO_TRUSTED_PROXIES') ?? '')
          .split(',')
          .map((e) => e.trim())
          .filter((e) => e !== ''),
        countryHeader: (str('PM_GEO_COUNTRY_HEADER') ?? 'cf-ipcountry').toLowerCase(),
        maxmindDbPath: str('PM_GEO_MAXMIND_DB') ?? null,
        allowLoopback: bool('PM_GEO_ALLOW_LOOPBACK', !production),
      },
      rateLanes: pmRateLanes(str('PM_RATE_LANES'), problems),
      faultCrash: production ? null : pmFaultCrash(str('PURSER_FAULT_PM_ORDER_CRASH'), problems),
      watch: {
        burstMinPerMinute: int('PM_CREDENTIAL_BURST_MIN_PER_MINUTE', 60, 1, 1_000_000),
        burstFactor: int('PM_CREDENTIAL_BURST_FACTOR', 10, 1, 1_000_000),
      },
    },
    payments: {
      chainId: paymentsChainId,
      treasury: treasury as `0x${string}` | null,
      relayerPrivateKey: hexKey('PURSER_RELAYER_PRIVATE_KEY', production ? null : DEVNET_RELAYER_PRIVATE_KEY),
      confirmTimeoutMs: int('PAYMENTS_CONFIRM_TIMEOUT_MS', 8_000, 100, 120_000),
      reconcileAfterSeconds: int('PAYMENTS_RECONCILE_AFTER_SECONDS', 30, 1, 86_400),
      minValiditySeconds: int('PAYMENTS_MIN_VALIDITY_SECONDS', 30, 1, 3_600),
      crashAfterBroadcast: !production && bool('PURSER_FAULT_CRASH_AFTER_BROADCAST', false),
    },
    prices: {
      feeds: parsePriceFeeds(str('PRICE_FEEDS'), problems),
      marginSeconds: int('PRICE_STALENESS_MARGIN_SECONDS', 60, 0, 3_600),
      refreshIntervalMs: int('PRICE_REFRESH_INTERVAL_MS', 30_000, 1_000, 3_600_000),
      devnetHeartbeatSeconds: int('PRICE_DEVNET_HEARTBEAT_SECONDS', 604_800, 1, 31_536_000),
      sequencers: parseSequencerFeeds(str('PRICE_SEQUENCER_FEEDS'), problems),
      sequencerGraceSeconds: int('PRICE_SEQUENCER_GRACE_SECONDS', 3_600, 0, 86_400),
    },
    prepaid: {
      accountCapMicro: usd('PREPAID_ACCOUNT_CAP_USD', '1000'),
      floatCapMicro: usd('PREPAID_FLOAT_CAP_USD', '1000000'),
    },
    fees: {
      meteringEnforced: bool('METERING_ENFORCED', true),
      conversionIntentMicro: usd('FEE_CONVERSION_INTENT_USD', '0.05'),
      pmOrderBaseMicro: usd('FEE_PM_ORDER_BASE_USD', '0.02'),
      pmOrderBps: int('FEE_PM_ORDER_BPS', 10, 0, 10_000),
      feedbackMicro: 1_000_000n,
    },
    statements: {
      dir: str('STATEMENTS_DIR') ?? `${(str('PURSER_DATA_DIR') ?? '.purser').replace(/\/+$/, '')}/statements`,
      s3: parseStatementsS3(str, problems),
    },
    jobs: {
      runWorkers: bool('RUN_WORKERS', true),
      pollIntervalMs: int('JOBS_POLL_INTERVAL_MS', 1000, 10, 60_000),
      concurrency: int('JOBS_CONCURRENCY', 4, 1, 64),
      leaseMs: int('JOBS_LEASE_MS', 60_000, 1_000, 600_000),
    },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return freezeAreas(config);
}

/**
 * Freezes every area of the configuration (each object-valued setting, deeply): parsed once, read
 * everywhere, changed nowhere. A change is a new configuration (the devnet's door makes one). The
 * top level stays open for the two settings the runtime learns as it starts: the public URL once
 * it listens and a development operator token.
 */
export function freezeAreas(config: Config): Config {
  for (const value of Object.values(config)) deepFreeze(value);
  return config;
}

function deepFreeze(value: unknown): void {
  // Byte arrays (keys) cannot be frozen; nothing writes them.
  if (value === null || typeof value !== 'object' || Object.isFrozen(value) || ArrayBuffer.isView(value))
    return;
  Object.freeze(value);
  for (const inner of Object.values(value)) deepFreeze(inner);
}

/** The tests' sealing key: fixed (child processes of a test open what it sealed), not secret. */
const TEST_SEALING_KEY = createHash('sha256').update('purser test sealing key (not secret)').digest('hex');

export function testConfig(overrides: Partial<Config> = {}): Config {
  const base = loadConfig({
    PURSER_ENV: 'development',
    DEVNET: 'false',
    LOG_LEVEL: 'silent',
    // Tests never write statement exports into the working copy (createTestApp uses its own directory).
    STATEMENTS_DIR: `${tmpdir()}/purser-test-statements`,
    // An operator key (not the public development one), so venue credentials can be stored.
    PURSER_SEALING_KEYS: `test:${TEST_SEALING_KEY}`,
  });
  return { ...base, ...overrides };
}
