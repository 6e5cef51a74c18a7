// The configuration's shape: every setting's type, its defaults and the constants they come from
// (real deployments, development keys). Read by src/config.ts, which parses the environment.

import { type PmRateLanes } from './rate-lanes.ts';

import type { PurserEnv } from '../core/settings.ts';

export type { PurserEnv };

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
  /**
   * A block explorer per chain id (`EXPLORER_URL_<chainId>`, e.g. https://basescan.org), published
   * in GET /v1/tokens so clients (the console) can link transactions (`<url>/tx/<hash>`). None by
   * default: the devnet's chains have none.
   */
  explorerUrls: Record<number, string>;
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
