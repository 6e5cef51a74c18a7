// The service's own settings: the environment it runs in, where it listens, its database and
// keys (sealing, operator, the executor's identity), sign-in (SIWE), what production requires,
// the limits of what it admits, and the job workers. Read by loadConfig (src/config.ts).

import { privateKeyToAddress } from 'viem/accounts';
import { parseSealingKeys, parseTrustProxy } from '../parse.ts';
import type { EnvReader } from '../reader.ts';
import {
  type Config,
  type PurserEnv,
  DEVNET_EXECUTOR_ADDRESS,
  DEVNET_EXECUTOR_PRIVATE_KEY,
  SUPPORTED_CHAINS,
} from '../settings.ts';

/** PURSER_ENV: development (the default) or production. */
export function readEnvironment(r: EnvReader): { env: PurserEnv; production: boolean } {
  const rawEnv = r.str('PURSER_ENV') ?? 'development';
  let env: PurserEnv = 'development';
  if (rawEnv === 'development' || rawEnv === 'production') env = rawEnv;
  else r.problems.push(`PURSER_ENV must be development or production (got "${rawEnv}")`);
  return { env, production: env === 'production' };
}

export type Listening = Pick<Config, 'host' | 'port' | 'metrics' | 'publicUrl' | 'publicUrlExplicit'>;

/** Where the API and the metrics listen, and the public URL clients reach the API at. */
export function readListening(r: EnvReader): Listening {
  const host = r.str('HOST') ?? '127.0.0.1';
  const port = r.int('PORT', 8080, 0, 65535);
  const metrics =
    r.str('METRICS_PORT') === undefined
      ? null
      : { host: r.str('METRICS_HOST') ?? '127.0.0.1', port: r.int('METRICS_PORT', 0, 0, 65535) };
  const publicUrl = (
    r.str('PURSER_PUBLIC_URL') ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  ).replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s/]+/.test(publicUrl)) r.problems.push(`PURSER_PUBLIC_URL must be an http(s) URL`);
  return { host, port, metrics, publicUrl, publicUrlExplicit: r.str('PURSER_PUBLIC_URL') !== undefined };
}

export type Keys = Pick<
  Config,
  'databaseUrl' | 'sealingKeys' | 'operatorToken' | 'executorAddress' | 'executorPrivateKey'
>;

/** The database, the sealing keyring, the operator's token and the executor's address and key. */
export function readKeys(r: EnvReader, production: boolean): Keys {
  const databaseUrl = r.str('DATABASE_URL') ?? null;
  const sealingKeys = parseSealingKeys(r.str('PURSER_SEALING_KEYS'), r.str('PURSER_SEALING_KEY'), r.problems);
  const operatorToken = r.str('PURSER_OPERATOR_TOKEN') ?? null;
  const executorAddress =
    r.str('PURSER_EXECUTOR_ADDRESS')?.toLowerCase() ?? (production ? null : DEVNET_EXECUTOR_ADDRESS);
  if (executorAddress && !/^0x[0-9a-f]{40}$/.test(executorAddress)) {
    r.problems.push('PURSER_EXECUTOR_ADDRESS must be an address (0x followed by 40 hex characters)');
  }
  // The executor's key signs UserOperations with the session keys delegations name. It must be
  // the key of PURSER_EXECUTOR_ADDRESS: a key for another address would sign for nobody's grant.
  const executorKeyRaw = r.str('PURSER_EXECUTOR_PRIVATE_KEY');
  let executorPrivateKey: `0x${string}` | null =
    executorKeyRaw === undefined && !production && executorAddress === DEVNET_EXECUTOR_ADDRESS
      ? DEVNET_EXECUTOR_PRIVATE_KEY
      : null;
  if (executorKeyRaw !== undefined) {
    if (!/^0x[0-9a-fA-F]{64}$/.test(executorKeyRaw)) {
      r.problems.push('PURSER_EXECUTOR_PRIVATE_KEY must be a private key (0x followed by 64 hex characters)');
    } else {
      const keyAddress = privateKeyToAddress(executorKeyRaw as `0x${string}`).toLowerCase();
      if (!executorAddress) {
        r.problems.push(
          `PURSER_EXECUTOR_PRIVATE_KEY needs PURSER_EXECUTOR_ADDRESS set to its address (${keyAddress})`,
        );
      } else if (keyAddress !== executorAddress) {
        r.problems.push(
          `PURSER_EXECUTOR_PRIVATE_KEY is the key of ${keyAddress}, not of PURSER_EXECUTOR_ADDRESS ${executorAddress}`,
        );
      } else {
        executorPrivateKey = executorKeyRaw as `0x${string}`;
      }
    }
  }
  return { databaseUrl, sealingKeys, operatorToken, executorAddress, executorPrivateKey };
}

/** The domain, URI and chain every sign-in message carries (default: from the public URL). */
export function readSiwe(r: EnvReader, publicUrl: string): Config['siwe'] {
  let domain = 'localhost';
  try {
    domain = r.str('SIWE_DOMAIN') ?? new URL(publicUrl).host;
  } catch {
    // reported with PURSER_PUBLIC_URL
  }
  const uri = r.str('SIWE_URI') ?? publicUrl;
  const chainId = r.int('SIWE_CHAIN_ID', 8453, 1, 2 ** 31 - 1);
  return { domain, uri, chainId };
}

/** What production requires: every setting development defaults, and the devnet off. */
export function checkProduction(
  r: EnvReader,
  production: boolean,
  settings: Pick<Config, 'databaseUrl' | 'sealingKeys' | 'operatorToken' | 'rpcUrls'>,
): void {
  if (!production) return;
  const missing: string[] = [];
  if (!settings.databaseUrl) missing.push('DATABASE_URL (the embedded database is refused in production)');
  if (!r.str('PURSER_PUBLIC_URL')) missing.push('PURSER_PUBLIC_URL');
  if (settings.sealingKeys.length === 0) missing.push('PURSER_SEALING_KEYS (or PURSER_SEALING_KEY)');
  if (!settings.operatorToken) missing.push('PURSER_OPERATOR_TOKEN');
  for (const chainId of SUPPORTED_CHAINS) {
    if (!settings.rpcUrls[chainId]) missing.push(`RPC_URL_${chainId}`);
  }
  if (missing.length > 0) r.problems.push(`production requires these settings: ${missing.join(', ')}`);
  if (r.str('DEVNET') !== undefined && r.bool('DEVNET', false))
    r.problems.push('DEVNET cannot be on in production');
}

export type Limits = Pick<
  Config,
  | 'dataDir'
  | 'databasePoolSize'
  | 'trustProxy'
  | 'logLevel'
  | 'publicRateLimitPerMinute'
  | 'requestBudgetMs'
  | 'shutdownTimeoutMs'
  | 'shutdownDrainMs'
  | 'intentQueue'
  | 'bodyLimitBytes'
>;

/** The data directory, the database pool, proxies, logging, and the limits of what is admitted. */
export function readLimits(r: EnvReader): Limits {
  return {
    dataDir: r.str('PURSER_DATA_DIR') ?? '.purser',
    databasePoolSize: r.int('DATABASE_POOL_SIZE', 10, 1, 200),
    trustProxy: parseTrustProxy(r.str('TRUST_PROXY'), r.problems),
    logLevel: r.str('LOG_LEVEL') ?? 'info',
    publicRateLimitPerMinute: r.int('RATE_LIMIT_PUBLIC_PER_MINUTE', 300, 1, 10_000_000),
    requestBudgetMs: r.int('REQUEST_BUDGET_MS', 15_000, 100, 600_000),
    shutdownTimeoutMs: r.int('SHUTDOWN_TIMEOUT_MS', 10_000, 1_000, 600_000),
    shutdownDrainMs: r.int('SHUTDOWN_DRAIN_MS', 3_000, 0, 600_000),
    intentQueue: {
      perWallet: r.int('INTENT_QUEUE_PER_WALLET', 50, 1, 100_000),
      max: r.int('INTENT_QUEUE_MAX', 10_000, 1, 10_000_000),
    },
    bodyLimitBytes: r.int('BODY_LIMIT_BYTES', 262_144, 1024, 10_485_760),
  };
}

/** The job workers: whether `serve` runs them, how often they poll, how many, their lease. */
export function readJobs(r: EnvReader): Config['jobs'] {
  return {
    runWorkers: r.bool('RUN_WORKERS', true),
    pollIntervalMs: r.int('JOBS_POLL_INTERVAL_MS', 1000, 10, 60_000),
    concurrency: r.int('JOBS_CONCURRENCY', 4, 1, 64),
    leaseMs: r.int('JOBS_LEASE_MS', 60_000, 1_000, 600_000),
  };
}
