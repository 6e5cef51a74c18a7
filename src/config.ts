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
  jobs: {
    /** Whether `serve` also runs the workers. */
    runWorkers: boolean;
    pollIntervalMs: number;
    concurrency: number;
  };
}

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
  const executorAddress = str('PURSER_EXECUTOR_ADDRESS')?.toLowerCase() ?? null;
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
