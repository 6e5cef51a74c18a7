// The only reader of process.env. Parsed once at start; every problem is reported in one message.

import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { privateKeyToAddress } from 'viem/accounts';
import { parseCountryList } from './adapters/geo/countries.ts';
import { DEFAULT_RESTRICTED_COUNTRIES } from './adapters/geo/restricted.ts';
import { parseUsd, usdToMicro } from './core/money.ts';
import { parseKeyMaterial, PUBLIC_DEV_KEY_ID, SEALING_KEY_ID_PATTERN } from './core/sealing.ts';
import { parsePmRateLanes, type PmRateLanes } from './modules/ratelanes/lanes.ts';

export type PurserEnv = 'development' | 'production';

/** Polymarket's contracts on the prediction-market chain (protocols.md 8.2, 8.4). */
export interface PmContracts {
  /** pUSD, the V2 collateral. */
  collateral: `0x${string}`;
  /** USDC.e, wrapped into pUSD by the onramp. */
  usdce: `0x${string}`;
  /** CollateralOnramp: `wrap(asset, to, amount)` after approving it on the asset. */
  onramp: `0x${string}`;
  /** The conditional tokens (ERC-1155 outcome shares). */
  conditionalTokens: `0x${string}`;
  /** The three spenders and operators of the six grants. */
  exchange: `0x${string}`;
  negRiskExchange: `0x${string}`;
  negRiskAdapter: `0x${string}`;
}

/** Polymarket's production addresses on Polygon (protocols.md 8.2; the grant set is unconfirmed, 8.4). */
export const POLYMARKET_CONTRACTS: PmContracts = {
  collateral: '0xc011a7e12a19f7b1f670d46f03b03f3342e82dfb',
  usdce: '0x2791bca1f2de4661ed88a30c99a7a9449aa84174',
  onramp: '0x93070a847efef7f70739046a929d47a521f5b8ee',
  conditionalTokens: '0x4d97dcd97ec945f40cf65f87097ace5ea0476045',
  exchange: '0xe111180000d2663c0091e4f400237545b87b996b',
  negRiskExchange: '0xe2222d279d744050d28e00520010520000310f59',
  negRiskAdapter: '0xd91e80cf2e7be2e162c6513ced06f1dd0da35296',
};

export interface PmConfig {
  /** The chain of the venue accounts (137, Polygon). */
  chainId: number;
  /** Polymarket's contracts there (`PM_CONTRACTS`; the devnet's in development). */
  contracts: PmContracts;
  contractsConfigured: boolean;
  /** The Safe Transaction Service of that chain (funder lookup). */
  safeTxServiceUrl: string;
  safeTxServiceUrlConfigured: boolean;
  /** Sent as `Authorization: Bearer` to Safe's hosted service. */
  safeTxServiceApiKey: string | null;
  /** Polymarket's CLOB (`POLYMARKET_CLOB_URL`; the devnet's CLOB in development). */
  polymarketClobUrl: string;
  polymarketClobUrlConfigured: boolean;
  /** Kalshi's trade API root, with /trade-api/v2 (`KALSHI_API_URL`; the devnet's in development). */
  kalshiApiUrl: string;
  kalshiApiUrlConfigured: boolean;
  /** How long one venue request may take. */
  venueTimeoutMs: number;
  /** The jurisdiction gate of every prediction-market route. */
  geo: {
    restrictedCountries: string[];
    /** Proxies whose country header and X-Forwarded-For are believed (addresses, CIDR blocks). */
    trustedProxies: string[];
    countryHeader: string;
    /** A MaxMind GeoIP2/GeoLite2 Country or City database the operator supplies. */
    maxmindDbPath: string | null;
    /** Loopback clients pass (development default). */
    allowLoopback: boolean;
  };
  /**
   * `PURSER_FAULT_PM_ORDER_CRASH=after_transmit`: a development process kills itself right after
   * the venue accepted an order, before recording it (crash tests). Never in production.
   */
  faultCrash: 'after_transmit' | null;
  /** Platform-wide token buckets of the venue (`PM_RATE_LANES`; docs/rate-lanes.md). */
  rateLanes: PmRateLanes;
  /** The volume watch on venue credentials (a usage burst raises security.alert). */
  watch: { burstMinPerMinute: number; burstFactor: number };
}

export interface Config {
  env: PurserEnv;
  host: string;
  port: number;
  /**
   * Where the Prometheus metrics are served (`GET /metrics`, docs/operations.md "Metrics"): an
   * operator port of their own, never the API's. Null (METRICS_PORT unset): not served.
   */
  metrics: { host: string; port: number } | null;
  /** Base URL clients use to reach the service; docs_url and SIWE URIs are built from it. */
  publicUrl: string;
  /** Whether PURSER_PUBLIC_URL was set; otherwise the URL follows the bound port. */
  publicUrlExplicit: boolean;
  /** PostgreSQL connection string; absent means the embedded PGlite database (development only). */
  databaseUrl: string | null;
  /** Data directory of the embedded database and its lock file. */
  dataDir: string;
  databasePoolSize: number;
  /**
   * Which proxies may set X-Forwarded-For: false (none, the default), a hop count, or a list of
   * addresses and CIDR blocks. The client address feeds IP pins, rate limits and audit context.
   */
  trustProxy: boolean | number | string[];
  logLevel: string;
  /** Per-IP requests per minute on public endpoints. */
  publicRateLimitPerMinute: number;
  /** Time budget of one request, in milliseconds. */
  requestBudgetMs: number;
  /** The most a stop (SIGTERM, SIGINT) takes before the process exits (docs/operations.md). */
  shutdownTimeoutMs: number;
  /** How long a stop waits for requests in flight before it closes their connections. */
  shutdownDrainMs: number;
  /**
   * When the executor's queue refuses an intent (503, written as aborted `queue_refused`): the
   * wallet already has `perWallet` open (planned or executing) intents, or `max` execution jobs
   * wait overall.
   */
  intentQueue: { perWallet: number; max: number };
  bodyLimitBytes: number;
  /**
   * The sealing keyring (AES-256-GCM; docs/operations.md "Sealing keys"), newest first: the first
   * seals, every one opens. From `PURSER_SEALING_KEYS` (`id:key,…`) then `PURSER_SEALING_KEY`
   * (id `default`). Empty in development without keys (the public development key seals webhook
   * secrets; venue credentials are refused).
   */
  sealingKeys: Array<{ id: string; key: string }>;
  /** Bearer token of the operator surface under /v1/ops/. */
  operatorToken: string | null;
  /** The treasury executor's address: only a sign-in of this address reaches executor routes. */
  executorAddress: string | null;
  /**
   * The executor's key (`PURSER_EXECUTOR_PRIVATE_KEY`): signs UserOperations as the session signer
   * delegations name. Always the key of `executorAddress`; null without one (intents then abort
   * EXECUTOR_UNCONFIGURED). Never logged, never returned.
   */
  executorPrivateKey: `0x${string}` | null;
  /** SIWE domain and URI every sign-in message must carry (default: from the public URL). */
  siwe: { domain: string; uri: string; chainId: number };
  /** JSON-RPC URL per chain id. In development with devnet on, filled in by the devnet. */
  rpcUrls: Record<number, string>;
  /**
   * ERC-4337 bundler JSON-RPC URL per chain id (`BUNDLER_URL_<chainId>`, EntryPoint v0.7). In
   * development with the devnet on, chains without one use the devnet's bundler.
   */
  bundlerUrls: Record<number, string>;
  /** Limit of one bundler call (`BUNDLER_TIMEOUT_MS`). */
  bundlerTimeoutMs: number;
  devnet: {
    enabled: boolean;
    chainIds: number[];
    /** First port of the anvil instances; chain i listens on basePort + i. 0 picks free ports. */
    basePort: number;
    /** How often the arbitrage keeper brings the devnet's pools back to the feeds (0: never). */
    keeperIntervalMs: number;
    /**
     * Development only (`DEVNET_TOKEN_ADDRESSES`, JSON `{"8453": {"USDC": "0x…"}}`): the token
     * addresses of a devnet this process did not start (RPC_URL_<chain> points at it), for the
     * token registry. Null: the devnet's own (DEVNET=true) or the real addresses.
     */
    tokenAddresses: Record<number, Record<string, `0x${string}`>> | null;
  };
  screening: {
    /** Where `purser screening sync` downloads the SDN XML from. */
    sdnUrl: string;
  };
  /** ZeroDev Kernel v3 session-key permissions (delegations). */
  kernel: {
    /** Kernel version the permission targets: its EIP-712 domain version when the account cannot say. */
    version: '0.3.1' | '0.3.2' | '0.3.3';
    /** Module addresses per chain id (defaults: ZeroDev SDK constants, the same on every chain). */
    modules: Record<number, KernelModuleAddresses>;
    /** Chains whose addresses `KERNEL_MODULES_<chainId>` set: a devnet never replaces them. */
    configuredChains: number[];
  };
  /**
   * USD per native coin used to value a delegation's `value_limit` against `spend.per_tx_usd`
   * until a price reference is wired in; deliberately high, so the check errs on the strict side.
   */
  nativeUsdReference: string;
  /** Token-conversion venues: on-chain deployments and the aggregators' HTTP APIs (docs/venues.md). */
  venues: VenuesConfig;
  /** The slicing planner (docs/execution.md). */
  planner: {
    /** Most slices one order may be cut into; more needed is DEPTH_COLLAPSE. */
    maxSlices: number;
    /** Time between two slices (at least two Base blocks). */
    sliceIntervalMs: number;
  };
  /** The executor of intents (docs/executor.md). */
  executor: {
    /** How long one run step waits for a slice's receipt before it reschedules itself. */
    receiptTimeoutMs: number;
    /** How often it asks the bundler for that receipt. */
    receiptPollMs: number;
    /** Most reschedulings (between slices, waiting for receipts, redoing a dropped slice) of one intent. */
    maxContinuations: number;
    /** How long a built swap stays valid on chain (its deadline argument), seconds. */
    swapTtlSeconds: number;
    /** Operations of one wallet in flight at once: its nonce lanes (docs/executor.md). */
    nonceLanes: number;
    /** Gas a second swap adds to a slice split between two venues (what a split must beat). */
    splitExtraGas: number;
  };
  /** Cross-chain USDC rebalances over Circle's CCTP V2 (docs/rebalances.md). */
  cctp: CctpConfig;
  /** The chain watcher: books what reaches or leaves watched wallets (docs/ledger.md, "The chain"). */
  chainWatch: ChainWatchConfig;
  /** Prediction markets (docs/prediction-markets.md). */
  pm: PmConfig;
  /** On-chain payments to the platform: top-ups, x402 fees, auto-top-up arrows (USDC, EIP-3009). */
  payments: PaymentsConfig;
  /** Independent USD price references (docs/prices.md). */
  prices: PricesConfig;
  /** Caps on prepaid money (operators can change both at run time; these are the defaults). */
  prepaid: { accountCapMicro: bigint; floatCapMicro: bigint };
  /** The fee schedule (docs/fees.md) and whether metering is enforced. */
  fees: FeeSchedule;
  /** Where statement exports are stored (docs/statements.md). */
  statements: StatementsConfig;
  jobs: {
    /** Whether `serve` also runs the workers. */
    runWorkers: boolean;
    pollIntervalMs: number;
    concurrency: number;
    /** How long a claimed job is held without its worker's heartbeat before another may run it. */
    leaseMs: number;
  };
}

/** CCTP V2 on one chain: its domain and Circle's two contracts there. */
export interface CctpChain {
  domain: number;
  tokenMessenger: `0x${string}`;
  messageTransmitter: `0x${string}`;
}

export interface CctpConfig {
  /** Circle's attestation service (Iris): `CCTP_ATTESTATION_URL`. */
  attestationUrl: string;
  /** Whether `CCTP_ATTESTATION_URL` set it (a devnet then keeps it). */
  attestationUrlConfigured: boolean;
  /** The chains CCTP serves here: Circle's V2 contracts on Base and Polygon, or `CCTP_CONTRACTS`. */
  chains: Record<number, CctpChain>;
  /** Whether `CCTP_CONTRACTS` set them (a devnet then keeps them). */
  chainsConfigured: boolean;
  /** Timeout of one attestation request. */
  attestationTimeoutMs: number;
  /** Most attestation requests per second this process sends (Iris allows 35). */
  attestationMaxPerSecond: number;
  /** How long the burn job waits for its receipts before it tries again later. */
  receiptTimeoutMs: number;
  /** How long `POST /v1/rebalances/{id}/complete` waits for the mint's receipt before answering. */
  mintWaitMs: number;
  /** How long a transaction of the executor may stay unconfirmed before it is replaced with higher fees. */
  replaceAfterMs: number;
  /**
   * Fault injection for the crash tests (never in production): the process kills itself with
   * SIGKILL right after broadcasting the burn, or right after the attestation arrived.
   */
  faultCrash: 'after_burn_broadcast' | 'after_attestation' | 'after_mint_broadcast' | null;
}

/** Circle's CCTP V2 contracts: the same two addresses on every mainnet chain (protocols.md 5.3). */
export const CIRCLE_CCTP_V2 = {
  tokenMessenger: '0x28b5a0e9C621a5BadaA536219b3a228C8168cf5d',
  messageTransmitter: '0x81D40F21F12A8F0E3252Bccb954D722d4c464B64',
} as const;
/** CCTP domain ids of the chains Purser serves with rebalances (Base Sepolia shares Base's 6). */
export const CCTP_DOMAINS: Record<number, number> = { 8453: 6, 137: 7 };

export interface VenuesConfig {
  /** How long one venue may take to quote or build (each venue is asked in parallel). */
  timeoutMs: number;
  /** How long an on-chain venue's quote stays usable (a few Base blocks). */
  onchainQuoteTtlMs: number;
  /** Uniswap v3 per chain id: QuoterV2 and SwapRouter02 (Uniswap's Base deployments by default). */
  uniswapV3: Record<number, { quoterV2: `0x${string}`; swapRouter02: `0x${string}` }>;
  /** Aerodrome per chain id: its Router and default pool factory (Base by default). */
  aerodrome: Record<number, { router: `0x${string}`; poolFactory: `0x${string}` }>;
  /**
   * The devnet's own constant-product AMM (venue `devnet-amm`) per chain id: a Uniswap v2
   * Router02. Empty unless the devnet, in development, adds its own (src/devnet/door.ts).
   */
  devnetAmm: Record<number, { router02: `0x${string}` }>;
  /** Chains the aggregators (`0x`, `kyberswap`) are offered on: Base, or the devnet's chains. */
  aggregatorChainIds: number[];
  /**
   * Per chain id, the one contract the aggregators' answers name as spender and router, when it is
   * fixed: the devnet's fakes route through its Uniswap v2 router. Empty: the vendors' own.
   */
  aggregatorContracts: Record<number, `0x${string}`>;
  /** 0x Swap API v2 (venue `0x`). Without an API key the venue is not offered. */
  zeroEx: {
    baseUrl: string;
    /** `0x-api-key`. Never logged, never returned, never in an error. */
    apiKey: string | null;
    /** Limit of one call to the API. */
    timeoutMs: number;
    /** How long a price stays usable: 0x's answer carries no expiry. */
    quoteTtlMs: number;
  };
  /** KyberSwap Aggregator API v1 (venue `kyberswap`); keyless. */
  kyberswap: {
    baseUrl: string;
    /** `x-client-id`: optional, a stricter rate limit applies without it. */
    clientId: string | null;
    timeoutMs: number;
    quoteTtlMs: number;
  };
}

/** Uniswap's and Aerodrome's deployments on Base (docs.uniswap.org, Aerodrome's Base contracts). */
export const BASE_VENUE_DEPLOYMENTS = {
  uniswapV3: {
    quoterV2: '0x3d4e44Eb1374240CE5F1B871ab261CD16335B76a',
    swapRouter02: '0x2626664c2603336E57B271c5C0b26F421741e481',
  },
  aerodrome: {
    router: '0xcF77a3Ba9A5CA399B7c97c74d54e5b1Beb874E43',
    poolFactory: '0x420DD381b31aEf6683db6B902084cB0FFECe40Da',
  },
} as const;

export interface StatementsConfig {
  /** Directory of the filesystem store (`STATEMENTS_DIR`, default `<PURSER_DATA_DIR>/statements`). */
  dir: string;
  /** An S3-compatible bucket that holds the exports instead; null: the filesystem store. */
  s3: StatementsS3Config | null;
}

export interface StatementsS3Config {
  /** `http(s)://host[:port]` of the S3 API; requests are path-style (`<endpoint>/<bucket>/<key>`). */
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  /** Never logged, never returned. */
  secretAccessKey: string;
}

export interface PaymentsConfig {
  /** The chain whose USDC pays the platform (x402 `network`); 8453 (Base) by default. */
  chainId: number;
  /** The platform treasury: the payee of every authorization. Null: payments unconfigured (503). */
  treasury: `0x${string}` | null;
  /** Key of the relayer that submits `transferWithAuthorization` and pays its gas. Null: unconfigured. */
  relayerPrivateKey: `0x${string}` | null;
  /** How long a request waits for the settlement receipt before answering 202 pending. */
  confirmTimeoutMs: number;
  /** A settlement left unfinished this long is the reconciler's (a crashed or timed-out request). */
  reconcileAfterSeconds: number;
  /** An authorization must stay valid at least this long after it reaches the service. */
  minValiditySeconds: number;
  /**
   * Development only, for the crash test: the process kills itself (SIGKILL) right after a
   * settlement transaction is broadcast and before its hash is recorded.
   */
  crashAfterBroadcast: boolean;
}

export interface PricesConfig {
  /**
   * Chainlink feeds per chain id and pair (`ETH/USD`): the Base defaults of DEFAULT_PRICE_FEEDS,
   * changed by `PRICE_FEEDS`. In development the devnet's own feeds replace those of the chains
   * the devnet serves.
   */
  feeds: Record<number, Record<string, PriceFeedConfig>>;
  /** Seconds allowed beyond a feed's heartbeat before a reading is stale. */
  marginSeconds: number;
  /** How often the cache reads every feed (off the request path). */
  refreshIntervalMs: number;
  /** Heartbeat given to the devnet's feeds (development only: no keeper posts rounds there). */
  devnetHeartbeatSeconds: number;
  /**
   * Chainlink L2 sequencer uptime feed per chain id (Base by default, `PRICE_SEQUENCER_FEEDS`):
   * while the sequencer is down, and for the grace period after, no price of the chain is used.
   */
  sequencers: Record<number, `0x${string}`>;
  sequencerGraceSeconds: number;
}

export interface PriceFeedConfig {
  address: `0x${string}`;
  heartbeatSeconds: number;
  /** Expected `decimals()` of the feed; absent: whatever it reports. */
  decimals?: number;
  /** Expected `description()` when it is not the pair's own spelling. */
  description?: string;
}

const feed = (address: `0x${string}`, heartbeatSeconds: number): PriceFeedConfig => ({
  address,
  heartbeatSeconds,
  decimals: 8,
});

/**
 * Chainlink USD feeds on Base (proxy addresses, 8 decimals; heartbeats from Chainlink's feed list
 * as mirrored in the execution reference, section 2.1).
 */
export const DEFAULT_PRICE_FEEDS: Record<number, Record<string, PriceFeedConfig>> = {
  8453: {
    'ETH/USD': feed('0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70', 1200),
    'BTC/USD': feed('0x64c911996D3c6aC71f9b455B1E8E7266BcbD848F', 1200),
    'cbBTC/USD': feed('0x07DA0E54543a844a80ABE69c8A12F22B3aA59f9D', 1200),
    'cbETH/USD': feed('0xd7818272B9e248357d13057AAb0B417aF31E817d', 1200),
    'USDC/USD': feed('0x7e860098F58bBFC8648a4311b374B1D669a2bc6B', 86400),
    'USDT/USD': feed('0xf19d560eB8d2ADf07BD6D13ed03e1D11215721F9', 86400),
    'DAI/USD': feed('0x591e79239a7d679378eC8c847e5038150364C78F', 86400),
    'EURC/USD': feed('0xDAe398520e2B67cd3f27aeF9Cf14D93D927f8250', 86400),
    'AERO/USD': feed('0x4EC5970fC728C5f65ba413992CD5fF6FD70fcfF0', 86400),
    'LINK/USD': feed('0x17CAb8FE31E32f08326e5E27412894e49B0f9D65', 86400),
  },
};

/** Chainlink's L2 sequencer uptime feed on Base (execution reference, section 2.1). */
export const DEFAULT_SEQUENCER_FEEDS: Record<number, `0x${string}`> = {
  8453: '0xBCF85224fc0756B9Fa45aA7892530B47e10b6433',
};

export interface FeeSchedule {
  /** Whether fees are debited (operators can switch it at run time; this is the default). */
  meteringEnforced: boolean;
  conversionIntentMicro: bigint;
  pmOrderBaseMicro: bigint;
  pmOrderBps: number;
  /** The spec fixes it: 1 USD per feature request. */
  feedbackMicro: bigint;
}

/** Anvil's default account #3: the development relayer of payment settlements. */
export const DEVNET_RELAYER_PRIVATE_KEY =
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6';
/** Anvil's default account #4: the development platform treasury. */
export const DEVNET_TREASURY_ADDRESS = '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65';

/** Addresses of the Kernel deployment and the permission modules on one chain. */
export interface KernelModuleAddresses {
  /** KernelFactory and the implementation its accounts proxy to (counterfactual addresses). */
  factory: `0x${string}`;
  implementation: `0x${string}`;
  ecdsaSigner: `0x${string}`;
  callPolicy: `0x${string}`;
  timestampPolicy: `0x${string}`;
  rateLimitPolicy: `0x${string}`;
  ecdsaValidator: `0x${string}`;
}

/** ZeroDev SDK constants (protocol reference §3.8, §3.10); CallPolicy v0.0.4 (storage-rule fix). */
export const DEFAULT_KERNEL_MODULES: KernelModuleAddresses = {
  factory: '0xaac5D4240AF87249B3f71BC8E4A2cae074A3E419',
  implementation: '0xBAC849bB641841b44E965fB01A4Bf5F074f84b4D',
  ecdsaSigner: '0x6A6F069E2a08c2468e7724Ab3250CdBFBA14D4FF',
  callPolicy: '0x9a52283276A0ec8740DF50bF01B28A80D880eaf2',
  timestampPolicy: '0xB9f8f524bE6EcD8C945b1b87f9ae5C192FdCE20F',
  rateLimitPolicy: '0xf63d4139B25c836334edD76641356c6b74C86873',
  ecdsaValidator: '0x845ADb2C711129d4f3966735eD98a9F09fC4cE57',
};

/** Anvil's default account #1: the development executor (session signer) when none is set. */
export const DEVNET_EXECUTOR_ADDRESS = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
/** The key of anvil's default account #1 (public: the "test … junk" mnemonic). Development only. */
export const DEVNET_EXECUTOR_PRIVATE_KEY =
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as const;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export interface ChainWatchConfig {
  /** Off: no watcher job (the ledger then holds only what Purser itself moved). */
  enabled: boolean;
  /** Blocks the watcher stays behind each chain's head, by chain id (`CHAIN_WATCH_CONFIRMATIONS`). */
  confirmations: Record<number, number>;
  /** How long an unexplained transfer waits for one of Purser's own bookings before it is external. */
  graceMs: number;
  /** Most blocks one `eth_getLogs` asks for (halved while the provider refuses a range). */
  maxRange: number;
  /** How often the job runs, seconds. */
  everySeconds: number;
  /** Time one run of the job may spend before it leaves the rest to the next, ms. */
  runBudgetMs: number;
  /** How often reconciliation compares books and chain for every watched wallet, seconds. */
  reconcileEverySeconds: number;
  /** Fault injection for the crash test (never in production): die after the first chunk commits. */
  faultCrash: boolean;
}

/** Confirmation depths the watcher keeps when nothing says otherwise (docs/ledger.md). */
export const DEFAULT_CONFIRMATIONS: Readonly<Record<number, number>> = { 8453: 12, 84532: 12, 137: 32 };

/** The chains Purser serves; a wallet's statement covers its ledger accounts on each. */
export const SUPPORTED_CHAINS: readonly number[] = [8453, 84532, 137];

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
  return config;
}

const S3_SETTINGS = [
  'STATEMENTS_S3_ENDPOINT',
  'STATEMENTS_S3_BUCKET',
  'STATEMENTS_S3_ACCESS_KEY_ID',
  'STATEMENTS_S3_SECRET_ACCESS_KEY',
] as const;

/** The statements bucket: all four settings or none (the region defaults to us-east-1). */
function parseStatementsS3(
  str: (name: string) => string | undefined,
  problems: string[],
): StatementsS3Config | null {
  const present = S3_SETTINGS.filter((name) => str(name) !== undefined);
  if (present.length === 0) {
    if (str('STATEMENTS_S3_REGION') !== undefined) problems.push('STATEMENTS_S3_REGION needs a bucket');
    return null;
  }
  if (present.length < S3_SETTINGS.length) {
    const missing = S3_SETTINGS.filter((name) => str(name) === undefined);
    problems.push(`a statements bucket needs ${missing.join(', ')} as well`);
    return null;
  }
  const endpoint = (str('STATEMENTS_S3_ENDPOINT') ?? '').replace(/\/+$/, '');
  const bucket = str('STATEMENTS_S3_BUCKET') ?? '';
  const region = str('STATEMENTS_S3_REGION') ?? 'us-east-1';
  let endpointOk = false;
  try {
    const url = new URL(endpoint);
    endpointOk = (url.protocol === 'http:' || url.protocol === 'https:') && !url.search && !url.hash;
  } catch {
    endpointOk = false;
  }
  if (!endpointOk) problems.push('STATEMENTS_S3_ENDPOINT must be an http(s) URL without a query');
  // S3 bucket naming rules: 3 to 63 lowercase letters, digits, dots and hyphens.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    problems.push('STATEMENTS_S3_BUCKET must be a bucket name (3 to 63 lowercase letters, digits, . and -)');
  }
  if (!/^[a-z0-9-]{1,32}$/.test(region)) problems.push('STATEMENTS_S3_REGION must be a region name');
  return {
    endpoint,
    bucket,
    region,
    accessKeyId: str('STATEMENTS_S3_ACCESS_KEY_ID') ?? '',
    secretAccessKey: str('STATEMENTS_S3_SECRET_ACCESS_KEY') ?? '',
  };
}

/**
 * `PRICE_FEEDS`: `{"<chain id>": {"<pair>": {"address": "0x…", "heartbeat_seconds": 1200,
 * "decimals": 8, "description": "…"} | null}}` over the defaults; null removes a default feed.
 */
function parsePriceFeeds(
  raw: string | undefined,
  problems: string[],
): Record<number, Record<string, PriceFeedConfig>> {
  const feeds: Record<number, Record<string, PriceFeedConfig>> = {};
  for (const [chain, byPair] of Object.entries(DEFAULT_PRICE_FEEDS)) feeds[Number(chain)] = { ...byPair };
  if (raw === undefined) return feeds;
  const fail = (why: string) => {
    problems.push(
      `PRICE_FEEDS must be a JSON object of chain id → {pair: {"address", "heartbeat_seconds", "decimals"?, "description"?} or null}: ${why}`,
    );
    return feeds;
  };
  const entries = jsonObjectEntries(raw);
  if (typeof entries === 'string') return fail(entries);
  for (const [chain, byPair] of entries) {
    const chainId = Number(chain);
    if (!SUPPORTED_CHAINS.includes(chainId)) return fail(`${chain} is not a supported chain id`);
    if (typeof byPair !== 'object' || byPair === null || Array.isArray(byPair)) {
      return fail(`chain ${chain} must map pairs to feeds`);
    }
    const target = (feeds[chainId] ??= {});
    for (const [pair, entry] of Object.entries(byPair as Record<string, unknown>)) {
      if (!/^[A-Za-z0-9.]{1,16}\/[A-Za-z0-9.]{1,16}$/.test(pair))
        return fail(`${pair} is not a pair such as ETH/USD`);
      if (entry === null) {
        delete target[pair];
        continue;
      }
      if (typeof entry !== 'object' || Array.isArray(entry))
        return fail(`${chain} ${pair} must be an object or null`);
      const e = entry as Record<string, unknown>;
      const unknown = Object.keys(e).filter(
        (k) => !['address', 'heartbeat_seconds', 'decimals', 'description'].includes(k),
      );
      if (unknown.length > 0) return fail(`${chain} ${pair} has unknown fields ${unknown.join(', ')}`);
      if (typeof e.address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(e.address)) {
        return fail(`${chain} ${pair}.address must be an address`);
      }
      const heartbeat = e.heartbeat_seconds;
      if (
        typeof heartbeat !== 'number' ||
        !Number.isInteger(heartbeat) ||
        heartbeat < 1 ||
        heartbeat > 31_536_000
      ) {
        return fail(`${chain} ${pair}.heartbeat_seconds must be an integer from 1 to 31536000`);
      }
      const decimals = e.decimals;
      if (
        decimals !== undefined &&
        (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 36)
      ) {
        return fail(`${chain} ${pair}.decimals must be an integer from 0 to 36`);
      }
      if (e.description !== undefined && (typeof e.description !== 'string' || e.description.length > 64)) {
        return fail(`${chain} ${pair}.description must be a string`);
      }
      target[pair] = {
        address: e.address as `0x${string}`,
        heartbeatSeconds: heartbeat,
        ...(decimals === undefined ? {} : { decimals }),
        ...(e.description === undefined ? {} : { description: e.description }),
      };
    }
  }
  return feeds;
}

/** `PRICE_SEQUENCER_FEEDS`: `{"<chain id>": "0x…" | null}` over the defaults; null removes one. */
function parseSequencerFeeds(raw: string | undefined, problems: string[]): Record<number, `0x${string}`> {
  const feeds: Record<number, `0x${string}`> = { ...DEFAULT_SEQUENCER_FEEDS };
  if (raw === undefined) return feeds;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = null;
  }
  const entries =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? Object.entries(parsed as Record<string, unknown>)
      : null;
  const valid =
    entries?.every(
      ([chain, address]) =>
        SUPPORTED_CHAINS.includes(Number(chain)) &&
        (address === null || (typeof address === 'string' && /^0x[0-9a-fA-F]{40}$/.test(address))),
    ) ?? false;
  if (!entries || !valid) {
    problems.push('PRICE_SEQUENCER_FEEDS must be a JSON object of supported chain id → address or null');
    return feeds;
  }
  for (const [chain, address] of entries) {
    if (address === null) delete feeds[Number(chain)];
    else feeds[Number(chain)] = address as `0x${string}`;
  }
  return feeds;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host !== '';
  } catch {
    return false;
  }
}

/** `{"<chain id>": {"<symbol>": "0x<address>"}}`, development only (see Config.devnet.tokenAddresses). */
function parseDevnetTokenAddresses(
  raw: string | undefined,
  production: boolean,
  problems: string[],
): Record<number, Record<string, `0x${string}`>> | null {
  if (raw === undefined) return null;
  if (production) {
    problems.push('DEVNET_TOKEN_ADDRESSES is refused in production: the registry lists real addresses only');
    return null;
  }
  const fail = () => {
    problems.push(
      'DEVNET_TOKEN_ADDRESSES must be a JSON object of chain id → {symbol: address}, e.g. {"8453":{"USDC":"0x…"}}',
    );
    return null;
  };
  const entries = jsonObjectEntries(raw);
  if (typeof entries === 'string') return fail();
  const out: Record<number, Record<string, `0x${string}`>> = {};
  for (const [chain, tokens] of entries) {
    if (!SUPPORTED_CHAINS.includes(Number(chain)) || typeof tokens !== 'object' || tokens === null)
      return fail();
    const byToken: Record<string, `0x${string}`> = {};
    for (const [symbol, address] of Object.entries(tokens as Record<string, unknown>)) {
      if (typeof address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(address)) return fail();
      byToken[symbol] = address as `0x${string}`;
    }
    out[Number(chain)] = byToken;
  }
  return out;
}

function parseTrustProxy(raw: string | undefined, problems: string[]): boolean | number | string[] {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d{1,2}$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((s) => s.trim());
  if (entries.some((e) => !/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(e))) {
    problems.push(
      'TRUST_PROXY must be false, true, a hop count, or a comma-separated list of addresses/CIDR blocks',
    );
    return false;
  }
  return entries;
}

const PM_CONTRACT_FIELDS: Record<keyof PmContracts, string> = {
  collateral: 'collateral',
  usdce: 'usdce',
  onramp: 'onramp',
  conditionalTokens: 'conditional_tokens',
  exchange: 'exchange',
  negRiskExchange: 'neg_risk_exchange',
  negRiskAdapter: 'neg_risk_adapter',
};

/**
 * `PM_CONTRACTS`: a JSON object overriding some of Polymarket's addresses on Polygon, keys
 * `collateral, usdce, onramp, conditional_tokens, exchange, neg_risk_exchange, neg_risk_adapter`.
 */
export function parsePmContracts(raw: string | undefined, problems: string[]): PmContracts {
  if (raw === undefined) return { ...POLYMARKET_CONTRACTS };
  const entries = jsonObjectEntries(raw);
  const fail = (why: string) => {
    problems.push(`PM_CONTRACTS must be a JSON object of contract name → address: ${why}`);
    return { ...POLYMARKET_CONTRACTS };
  };
  if (typeof entries === 'string') return fail(entries);
  const out: PmContracts = { ...POLYMARKET_CONTRACTS };
  const byField = new Map(Object.entries(PM_CONTRACT_FIELDS).map(([k, f]) => [f, k as keyof PmContracts]));
  for (const [field, value] of entries) {
    const key = byField.get(field);
    if (!key) return fail(`unknown contract "${field}" (known: ${[...byField.keys()].join(', ')})`);
    if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(value))
      return fail(`"${field}" must be an address`);
    out[key] = value.toLowerCase() as `0x${string}`;
  }
  return out;
}

function pmFaultCrash(raw: string | undefined, problems: string[]): PmConfig['faultCrash'] {
  if (raw === undefined || raw === '') return null;
  if (raw === 'after_transmit') return raw;
  problems.push('PURSER_FAULT_PM_ORDER_CRASH must be after_transmit');
  return null;
}

function pmRateLanes(raw: string | undefined, problems: string[]): PmRateLanes {
  const parsed = parsePmRateLanes(raw);
  problems.push(...parsed.problems);
  return parsed.lanes;
}

/** `PM_RESTRICTED_COUNTRIES`: ISO 3166-1 alpha-2 codes, comma-separated; default Polymarket's list. */
function countryList(raw: string | undefined, problems: string[]): string[] {
  if (raw === undefined) return [...DEFAULT_RESTRICTED_COUNTRIES];
  const entries = raw
    .split(',')
    .map((e) => e.trim().toUpperCase())
    .filter((e) => e !== '');
  try {
    return [...parseCountryList(entries, 'PM_RESTRICTED_COUNTRIES')];
  } catch (err) {
    problems.push((err as Error).message);
    return [...DEFAULT_RESTRICTED_COUNTRIES];
  }
}

/**
 * `PURSER_SEALING_KEYS` is `id:key` pairs, comma-separated, newest first; `PURSER_SEALING_KEY`, a
 * single key, joins the ring last as `default` (how a deployment of before the keyring rotates:
 * add a new key to PURSER_SEALING_KEYS and keep the old one where it is until the re-seal job ran).
 * A key is 32 bytes as 64 hex characters or base64. Never echoes key material.
 */
function parseSealingKeys(
  ring: string | undefined,
  single: string | undefined,
  problems: string[],
): Array<{ id: string; key: string }> {
  const keys: Array<{ id: string; key: string }> = [];
  for (const [i, entry] of (ring ?? '').split(',').entries()) {
    if (entry.trim() === '') continue;
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon).trim();
    const key = colon < 0 ? '' : entry.slice(colon + 1).trim();
    if (!SEALING_KEY_ID_PATTERN.test(id)) {
      problems.push(
        `PURSER_SEALING_KEYS entry ${i + 1} must be <id>:<key> with an id of 1 to 32 letters, digits, _ or -`,
      );
    } else if (parseKeyMaterial(key) === null) {
      problems.push(`PURSER_SEALING_KEYS key "${id}" must be 32 bytes, as 64 hex characters or base64`);
    } else if (id === PUBLIC_DEV_KEY_ID || keys.some((k) => k.id === id)) {
      problems.push(`PURSER_SEALING_KEYS key id "${id}" is reserved or used twice`);
    } else {
      keys.push({ id, key });
    }
  }
  if (single !== undefined) {
    if (parseKeyMaterial(single) === null) {
      problems.push('PURSER_SEALING_KEY must be 32 bytes, as 64 hex characters or base64');
    } else if (keys.some((k) => k.id === 'default')) {
      problems.push('PURSER_SEALING_KEYS cannot name a key "default" while PURSER_SEALING_KEY is set');
    } else {
      keys.push({ id: 'default', key: single });
    }
  }
  return keys;
}

/** A development config for tests: embedded database, no devnet, quiet logs. */
/** A JSON object's entries, or why the text is not one ("not JSON", "not an object"). */
function jsonObjectEntries(raw: string): [string, unknown][] | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return 'not JSON';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'not an object';
  return Object.entries(parsed as Record<string, unknown>);
}

/** `PURSER_FAULT_REBALANCE_CRASH`: where a development process kills itself (crash tests). */
/**
 * `CHAIN_WATCH_CONFIRMATIONS`: `<chain id>:<blocks>,…` over the defaults (Base 12, Polygon 32; every
 * chain 0 on the devnet, whose blocks are final when mined).
 */
function confirmationDepths(
  raw: string | undefined,
  devnet: boolean,
  problems: string[],
): Record<number, number> {
  const out: Record<number, number> = devnet
    ? Object.fromEntries(SUPPORTED_CHAINS.map((c) => [c, 0]))
    : { ...DEFAULT_CONFIRMATIONS };
  for (const part of (raw ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const m = /^(\d+):(\d+)$/.exec(part);
    if (!m || !SUPPORTED_CHAINS.includes(Number(m[1])) || Number(m[2]) > 10_000) {
      problems.push(
        `CHAIN_WATCH_CONFIRMATIONS must be <chain id>:<blocks> pairs (chains ${SUPPORTED_CHAINS.join(', ')}, at most 10000 blocks; got "${part}")`,
      );
      continue;
    }
    out[Number(m[1])] = Number(m[2]);
  }
  return out;
}

function faultCrash(raw: string | undefined, problems: string[]): CctpConfig['faultCrash'] {
  if (raw === undefined || raw === '') return null;
  if (raw === 'after_burn_broadcast' || raw === 'after_attestation' || raw === 'after_mint_broadcast')
    return raw;
  problems.push(
    'PURSER_FAULT_REBALANCE_CRASH must be after_burn_broadcast, after_attestation or after_mint_broadcast',
  );
  return null;
}

/**
 * `CCTP_CONTRACTS`: a JSON object of chain id → `{"domain", "token_messenger",
 * "message_transmitter"}`, replacing the defaults (Circle's V2 contracts on Base and Polygon).
 */
export function parseCctpContracts(raw: string | undefined, problems: string[]): Record<number, CctpChain> {
  const defaults: Record<number, CctpChain> = {};
  for (const [chain, domain] of Object.entries(CCTP_DOMAINS)) {
    defaults[Number(chain)] = { domain, ...CIRCLE_CCTP_V2 };
  }
  if (raw === undefined) return defaults;
  const fail = (why: string) => {
    problems.push(
      `CCTP_CONTRACTS must be a JSON object of chain id → {"domain", "token_messenger", "message_transmitter"}: ${why}`,
    );
    return defaults;
  };
  const entries = jsonObjectEntries(raw);
  if (typeof entries === 'string') return fail(entries);
  const chains: Record<number, CctpChain> = {};
  const address = /^0x[0-9a-fA-F]{40}$/;
  for (const [chain, entry] of entries) {
    const chainId = Number(chain);
    if (!SUPPORTED_CHAINS.includes(chainId)) return fail(`${chain} is not a supported chain id`);
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      return fail(`chain ${chain} must be an object`);
    }
    const e = entry as Record<string, unknown>;
    const unknown = Object.keys(e).filter(
      (k) => !['domain', 'token_messenger', 'message_transmitter'].includes(k),
    );
    if (unknown.length > 0) return fail(`chain ${chain} has unknown fields ${unknown.join(', ')}`);
    if (
      typeof e.domain !== 'number' ||
      !Number.isInteger(e.domain) ||
      e.domain < 0 ||
      e.domain > 0xffffffff
    ) {
      return fail(`chain ${chain} needs "domain", a CCTP domain id`);
    }
    if (typeof e.token_messenger !== 'string' || !address.test(e.token_messenger)) {
      return fail(`chain ${chain} needs "token_messenger", an address`);
    }
    if (typeof e.message_transmitter !== 'string' || !address.test(e.message_transmitter)) {
      return fail(`chain ${chain} needs "message_transmitter", an address`);
    }
    chains[chainId] = {
      domain: e.domain,
      tokenMessenger: e.token_messenger as `0x${string}`,
      messageTransmitter: e.message_transmitter as `0x${string}`,
    };
  }
  return chains;
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
