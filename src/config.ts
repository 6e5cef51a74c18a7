// The only reader of process.env. Parsed once at start; every problem is reported in one message.

export type PurserEnv = 'development' | 'production';

export interface Config {
  env: PurserEnv;
  host: string;
  port: number;
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
  bodyLimitBytes: number;
  /** Secret used to seal credentials (AES-256-GCM); 32 bytes, hex or base64. */
  sealingKey: string | null;
  /** Bearer token of the operator surface under /v1/ops/. */
  operatorToken: string | null;
  /** The treasury executor's address: only a sign-in of this address reaches executor routes. */
  executorAddress: string | null;
  /** SIWE domain and URI every sign-in message must carry (default: from the public URL). */
  siwe: { domain: string; uri: string; chainId: number };
  /** JSON-RPC URL per chain id. In development with devnet on, filled in by the devnet. */
  rpcUrls: Record<number, string>;
  devnet: {
    enabled: boolean;
    chainIds: number[];
    /** First port of the anvil instances; chain i listens on basePort + i. 0 picks free ports. */
    basePort: number;
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
  };
  /**
   * USD per native coin used to value a delegation's `value_limit` against `spend.per_tx_usd`
   * until a price reference is wired in; deliberately high, so the check errs on the strict side.
   */
  nativeUsdReference: string;
  jobs: {
    /** Whether `serve` also runs the workers. */
    runWorkers: boolean;
    pollIntervalMs: number;
    concurrency: number;
  };
}

/** Addresses of the permission modules on one chain (lowercase hex). */
export interface KernelModuleAddresses {
  ecdsaSigner: `0x${string}`;
  callPolicy: `0x${string}`;
  timestampPolicy: `0x${string}`;
  rateLimitPolicy: `0x${string}`;
  ecdsaValidator: `0x${string}`;
}

/** ZeroDev SDK constants (protocol reference §3.8, §3.10); CallPolicy v0.0.4 (storage-rule fix). */
export const DEFAULT_KERNEL_MODULES: KernelModuleAddresses = {
  ecdsaSigner: '0x6A6F069E2a08c2468e7724Ab3250CdBFBA14D4FF',
  callPolicy: '0x9a52283276A0ec8740DF50bF01B28A80D880eaf2',
  timestampPolicy: '0xB9f8f524bE6EcD8C945b1b87f9ae5C192FdCE20F',
  rateLimitPolicy: '0xf63d4139B25c836334edD76641356c6b74C86873',
  ecdsaValidator: '0x845ADb2C711129d4f3966735eD98a9F09fC4cE57',
};

/** Anvil's default account #1: the development executor (session signer) when none is set. */
export const DEVNET_EXECUTOR_ADDRESS = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const SUPPORTED_CHAINS = [8453, 84532, 137];

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
  const publicUrl = (
    str('PURSER_PUBLIC_URL') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  ).replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s/]+/.test(publicUrl)) problems.push(`PURSER_PUBLIC_URL must be an http(s) URL`);

  const databaseUrl = str('DATABASE_URL') ?? null;
  const sealingKey = str('PURSER_SEALING_KEY') ?? null;
  const operatorToken = str('PURSER_OPERATOR_TOKEN') ?? null;
  const executorAddress =
    str('PURSER_EXECUTOR_ADDRESS')?.toLowerCase() ?? (production ? null : DEVNET_EXECUTOR_ADDRESS);
  if (executorAddress && !/^0x[0-9a-f]{40}$/.test(executorAddress)) {
    problems.push('PURSER_EXECUTOR_ADDRESS must be an address (0x followed by 40 hex characters)');
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

  const devnetChainsRaw = str('DEVNET_CHAINS') ?? '84532,8453,137';
  const devnetChainIds = devnetChainsRaw.split(',').map((s) => Number(s.trim()));
  if (devnetChainIds.some((c) => !SUPPORTED_CHAINS.includes(c))) {
    problems.push(
      `DEVNET_CHAINS must list chain ids among ${SUPPORTED_CHAINS.join(', ')} (got "${devnetChainsRaw}")`,
    );
  }
  const devnetEnabled = production ? false : bool('DEVNET', true);

  if (production) {
    const missing: string[] = [];
    if (!databaseUrl) missing.push('DATABASE_URL (the embedded database is refused in production)');
    if (!str('PURSER_PUBLIC_URL')) missing.push('PURSER_PUBLIC_URL');
    if (!sealingKey) missing.push('PURSER_SEALING_KEY');
    if (!operatorToken) missing.push('PURSER_OPERATOR_TOKEN');
    for (const chainId of SUPPORTED_CHAINS) {
      if (!rpcUrls[chainId]) missing.push(`RPC_URL_${chainId}`);
    }
    if (missing.length > 0) problems.push(`production requires these settings: ${missing.join(', ')}`);
    if (str('DEVNET') !== undefined && bool('DEVNET', false))
      problems.push('DEVNET cannot be on in production');
  }
  if (sealingKey && !isKey32(sealingKey)) {
    problems.push('PURSER_SEALING_KEY must be 32 bytes, as 64 hex characters or base64');
  }

  const kernelVersion = str('KERNEL_VERSION') ?? '0.3.1';
  if (kernelVersion !== '0.3.1' && kernelVersion !== '0.3.2' && kernelVersion !== '0.3.3') {
    problems.push(`KERNEL_VERSION must be 0.3.1, 0.3.2 or 0.3.3 (got "${kernelVersion}")`);
  }
  const kernelModules: Record<number, KernelModuleAddresses> = {};
  for (const chainId of SUPPORTED_CHAINS) {
    const modules = { ...DEFAULT_KERNEL_MODULES };
    // KERNEL_MODULES_<chainId>: a JSON object overriding some of the addresses.
    const raw = str(`KERNEL_MODULES_${chainId}`);
    if (raw !== undefined) {
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

  const config: Config = {
    env: purserEnv,
    host,
    port,
    publicUrl,
    publicUrlExplicit: str('PURSER_PUBLIC_URL') !== undefined,
    databaseUrl,
    dataDir: str('PURSER_DATA_DIR') ?? '.purser',
    databasePoolSize: int('DATABASE_POOL_SIZE', 10, 1, 200),
    trustProxy: parseTrustProxy(str('TRUST_PROXY'), problems),
    logLevel: str('LOG_LEVEL') ?? 'info',
    publicRateLimitPerMinute: int('RATE_LIMIT_PUBLIC_PER_MINUTE', 300, 1, 10_000_000),
    requestBudgetMs: int('REQUEST_BUDGET_MS', 15_000, 100, 600_000),
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 262_144, 1024, 10_485_760),
    sealingKey,
    operatorToken,
    executorAddress,
    siwe: { domain: siweDomain, uri: siweUri, chainId: siweChainId },
    rpcUrls,
    devnet: {
      enabled: devnetEnabled,
      chainIds: devnetChainIds.filter((c) => SUPPORTED_CHAINS.includes(c)),
      basePort: int('DEVNET_BASE_PORT', 8545, 0, 65535),
    },
    screening: {
      sdnUrl:
        str('SDN_XML_URL') ??
        'https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/SDN.XML',
    },
    kernel: {
      version: kernelVersion === '0.3.2' || kernelVersion === '0.3.3' ? kernelVersion : '0.3.1',
      modules: kernelModules,
    },
    nativeUsdReference,
    jobs: {
      runWorkers: bool('RUN_WORKERS', true),
      pollIntervalMs: int('JOBS_POLL_INTERVAL_MS', 1000, 10, 60_000),
      concurrency: int('JOBS_CONCURRENCY', 4, 1, 64),
    },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
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

function isKey32(value: string): boolean {
  if (/^(0x)?[0-9a-fA-F]{64}$/.test(value)) return true;
  try {
    return Buffer.from(value, 'base64').length === 32;
  } catch {
    return false;
  }
}

/** A development config for tests: embedded database, no devnet, quiet logs. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  const base = loadConfig({ PURSER_ENV: 'development', DEVNET: 'false', LOG_LEVEL: 'silent' });
  return { ...base, ...overrides };
}
