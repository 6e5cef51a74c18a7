// The only reader of process.env. Parsed once at start, one frozen object per area; every problem
// is reported in one message. The areas are read in src/config/areas/, through one reader
// (src/config/reader.ts) that gathers the problems.

import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { type Config, ConfigError } from './config/settings.ts';
import { envReader } from './config/reader.ts';
import {
  readEnvironment,
  readListening,
  readKeys,
  readSiwe,
  checkProduction,
  readLimits,
  readJobs,
} from './config/areas/service.ts';
import {
  readEndpoints,
  readBundlerTimeout,
  readDevnetChains,
  readDevnet,
  readKernel,
  readNativeUsdReference,
  readExecutor,
  readCctp,
  readChainWatch,
} from './config/areas/chains.ts';
import { readScreening, readVenues, readPlanner, readPm } from './config/areas/venues.ts';
import {
  readPaymentsTarget,
  readPayments,
  readPrices,
  readPrepaid,
  readFees,
  readStatements,
} from './config/areas/money.ts';

export * from './config/settings.ts';
export { parseCctpContracts, parsePmContracts } from './config/parse.ts';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const r = envReader(env);
  // The areas are read in this order, which is the order their problems are reported in: what
  // the production checks and the other areas need first, then each area as Config lists it.
  const { env: purserEnv, production } = readEnvironment(r);
  const listening = readListening(r);
  const keys = readKeys(r, production);
  const siwe = readSiwe(r, listening.publicUrl);
  const endpoints = readEndpoints(r);
  const devnetChains = readDevnetChains(r, production);
  checkProduction(r, production, { ...keys, rpcUrls: endpoints.rpcUrls });
  const kernel = readKernel(r);
  const nativeUsdReference = readNativeUsdReference(r);
  const paymentsTarget = readPaymentsTarget(r, production);
  const limits = readLimits(r);
  const bundlerTimeoutMs = readBundlerTimeout(r);
  const devnet = readDevnet(r, devnetChains);
  const screening = readScreening(r);
  const venues = readVenues(r);
  const planner = readPlanner(r);
  const executor = readExecutor(r);
  const cctp = readCctp(r, production);
  const chainWatch = readChainWatch(r, production, devnet.enabled);
  const pm = readPm(r, production);
  const payments = readPayments(r, production, paymentsTarget);
  const prices = readPrices(r);
  const prepaid = readPrepaid(r);
  const fees = readFees(r);
  const statements = readStatements(r);
  const jobs = readJobs(r);

  const config: Config = {
    env: purserEnv,
    ...listening,
    databaseUrl: keys.databaseUrl,
    ...limits,
    sealingKeys: keys.sealingKeys,
    operatorToken: keys.operatorToken,
    executorAddress: keys.executorAddress,
    executorPrivateKey: keys.executorPrivateKey,
    siwe,
    rpcUrls: endpoints.rpcUrls,
    bundlerUrls: endpoints.bundlerUrls,
    explorerUrls: endpoints.explorerUrls,
    bundlerTimeoutMs,
    devnet,
    screening,
    kernel,
    nativeUsdReference,
    venues,
    planner,
    executor,
    cctp,
    chainWatch,
    pm,
    payments,
    prices,
    prepaid,
    fees,
    statements,
    jobs,
  };
  if (r.problems.length > 0) throw new ConfigError(r.problems);
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
