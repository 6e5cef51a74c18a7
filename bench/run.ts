// `npm run bench`: starts the service as a child process and drives each scenario with autocannon.
// Embedded PGlite (temporary data directory) by default; with DATABASE_URL, a fresh database on
// that PostgreSQL server, dropped afterwards. Results go to bench/results/. See bench/README.md.

import { prepareBenchDatabase, type BenchDatabase } from './database.ts';
import autocannon, { type Result } from 'autocannon';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { testConfig } from '../src/config.ts';
import { systemClock } from '../src/core/clock.ts';
import { openDatabase } from '../src/core/db/database.ts';
import { migrate } from '../src/core/db/migrate.ts';
import { creditPrepaid } from '../src/modules/billing/prepaid.ts';
import { setAccountPrepaidCap } from '../src/modules/billing/settings.ts';
import { runReserveHarness, type HarnessResult } from './reserve-harness.ts';
import { positiveInt } from './common.ts';
import { seedAccount } from './seed.ts';
import {
  REPO_ROOT,
  describeExit,
  http,
  startServiceProcess,
  waitUntilReady,
  type ServiceProcess,
} from '../test/support/service-process.ts';

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** The replay scenario: the second answer must carry `idempotent-replayed: true`. */
  expectReplay?: boolean;
  /** Sends the bench account's session token (seeded before the scenarios run). */
  session?: true;
  /** Sends a read-scoped API key made through POST /v1/keys with that session. */
  apiKey?: true;
  /**
   * Fee-debiting load: each request carries the session of one of the seeded prepaid accounts,
   * round-robin over `many` accounts or all on the `one` hot account.
   */
  feeAccounts?: 'many' | 'one';
  /** Every request carries its own new Idempotency-Key (the transactional path of a mutation). */
  freshIdempotencyKey?: true;
}

const FEEDBACK_BODY = {
  title: 'Benchmark feature request',
  body: 'A request body long enough to pass validation, sent by the benchmark.',
};
const SCREENED_ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
const RUN_ID = randomBytes(4).toString('hex');
/** The wallet whose policy the checks scenario evaluates. */
const BENCH_WALLET = `0x${randomBytes(20).toString('hex')}`;

/** The scenarios, in order. Every healthy answer is 2xx: anything else marks a scenario broken. */
const SCENARIOS: Scenario[] = [
  { name: 'GET /healthz (baseline)', method: 'GET', path: '/healthz' },
  { name: 'GET /v1/tokens (unauthenticated read)', method: 'GET', path: '/v1/tokens' },
  {
    // The same read as a tool call: the credential lookup, a stateless MCP server, the injected request.
    name: 'POST /v1/mcp tools/call listTokens (GET /v1/tokens as an MCP tool, API key)',
    method: 'POST',
    path: '/v1/mcp',
    apiKey: true,
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'listTokens', arguments: {} } },
  },
  {
    name: 'GET /v1/auth/session (authenticated read, API key)',
    method: 'GET',
    path: '/v1/auth/session',
    apiKey: true,
  },
  {
    // Behind the prediction-market routes' jurisdiction gate (loopback allowed in development).
    name: 'GET /v1/pm/credentials (jurisdiction gate + metadata list, session)',
    method: 'GET',
    path: '/v1/pm/credentials',
    session: true,
  },
  {
    name: 'POST /v1/screenings',
    method: 'POST',
    path: '/v1/screenings',
    body: { address: SCREENED_ADDRESS },
  },
  {
    name: 'POST /v1/screenings, one Idempotency-Key replayed',
    method: 'POST',
    path: '/v1/screenings',
    body: { address: SCREENED_ADDRESS },
    headers: { 'idempotency-key': `bench-${RUN_ID}` },
    expectReplay: true,
  },
  {
    name: 'POST /v1/checks (dry run: active policy + counters)',
    method: 'POST',
    path: '/v1/checks',
    body: {
      wallet: BENCH_WALLET,
      kind: 'conversion',
      amount_usd: '25',
      sell_token: 'USDC',
      buy_token: 'WETH',
      venue: 'aerodrome',
      slippage_bps: 30,
    },
    session: true,
  },
  {
    name: 'POST /v1/feedback, 1 USD prepaid fee, spread over many accounts',
    method: 'POST',
    path: '/v1/feedback',
    body: FEEDBACK_BODY,
    feeAccounts: 'many',
  },
  {
    name: 'POST /v1/feedback, 1 USD prepaid fee, many accounts, a new Idempotency-Key each',
    method: 'POST',
    path: '/v1/feedback',
    body: FEEDBACK_BODY,
    feeAccounts: 'many',
    freshIdempotencyKey: true,
  },
  {
    name: 'POST /v1/feedback, 1 USD prepaid fee, all on one account',
    method: 'POST',
    path: '/v1/feedback',
    body: FEEDBACK_BODY,
    feeAccounts: 'one',
  },
];

const RATE_LIMIT = 10_000_000;
/** Prepaid accounts of the spread fee scenario. */
const FEE_ACCOUNTS = positiveInt('BENCH_FEE_ACCOUNTS', 200);

const DURATION_S = positiveInt('BENCH_DURATION', 10);
const WARMUP_S = positiveInt('BENCH_WARMUP', 2);
const CONNECTIONS = positiveInt('BENCH_CONNECTIONS', 50);
/** Runs of each scenario; the report shows the median run (the machine's speed drifts between runs). */
const REPEAT = positiveInt('BENCH_REPEAT', 1);

interface ScenarioResult {
  name: string;
  method: string;
  path: string;
  /** The answer to one request sent before the load. */
  preflight: { status: number; body: string; replayed: boolean | null };
  requestsPerSecond: { mean: number; p50: number; stddev: number; min: number; max: number };
  latencyMs: { mean: number; p50: number; p97_5: number; p99: number; max: number };
  requests: number;
  status2xx: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  durationS: number;
  /** Why the figures do not measure what the scenario means; empty when healthy. */
  problems: string[];
  warnings: string[];
  /** With BENCH_REPEAT > 1: req/s of every run, in order (the other figures are the median run's). */
  runs?: number[];
}

/** The median run (by req/s; the lower middle one of an even count), with every run's problems. */
function medianRun(results: ScenarioResult[]): ScenarioResult {
  const sorted = [...results].sort((a, b) => a.requestsPerSecond.mean - b.requestsPerSecond.mean);
  const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
  if (results.length === 1) return median;
  return {
    ...median,
    problems: [...new Set(results.flatMap((r) => r.problems))],
    warnings: [...new Set(results.flatMap((r) => r.warnings))],
    runs: results.map((r) => Math.round(r.requestsPerSecond.mean)),
  };
}

function requestOptions(scenario: Scenario): { headers: Record<string, string>; body?: string } {
  const headers: Record<string, string> = { ...scenario.headers };
  if (scenario.body === undefined) return { headers };
  headers['content-type'] = 'application/json';
  return { headers, body: JSON.stringify(scenario.body) };
}

let current: ReturnType<typeof autocannon> | null = null;
/** The last Idempotency-Key number sent: never reset, so a repeated run sends new keys too. */
let keySeq = 0;
let interrupted = false;

/**
 * A test-fixture account with one session, written straight into the fresh bench database before
 * the service starts (signing in through SIWE needs a chain RPC, which the bench does not run).
 * The rows are those the sign-in flow writes: only the token's hash is stored.
 */
async function seedSession(database: BenchDatabase): Promise<string> {
  const config = testConfig(
    database.kind === 'postgres'
      ? { databaseUrl: database.env['DATABASE_URL'] ?? null }
      : { databaseUrl: null, dataDir: database.env['PURSER_DATA_DIR'] ?? '' },
  );
  const handle = await openDatabase(config);
  try {
    await migrate(handle.db);
    const { token } = await seedAccount(handle.db, { session: true });
    if (!token) throw new Error('seeding the bench session failed');
    return token;
  } finally {
    await handle.close();
  }
}

interface FeeAccounts {
  many: string[];
  one: string[];
  accountIds: string[];
}

/**
 * The prepaid accounts of the fee scenarios, seeded like seedSession: `count` accounts with 100,000
 * USD each, and one hot account whose prepaid cap an operator raised to 10,000,000 USD, holding
 * that much. Credits go through the ledger's own booking (creditPrepaid), as a top-up's would.
 */
async function seedFeeAccounts(database: BenchDatabase, count: number): Promise<FeeAccounts> {
  const handle = await openDatabase(benchConfig(database));
  try {
    const now = new Date();
    const many: string[] = [];
    const accountIds: string[] = [];
    let hot = '';
    for (let i = 0; i <= count; i += 1) {
      const amount = i === count ? 10_000_000n * 1_000_000n : 100_000n * 1_000_000n;
      const { accountId, token } = await handle.db.transaction().execute(async (tx) => {
        const seeded = await seedAccount(tx, { session: true });
        // The hot account's cap is raised before its credit, which passes the default cap.
        if (i === count) await setAccountPrepaidCap(tx, seeded.accountId, amount, 'bench', now);
        const credit = await creditPrepaid(tx, systemClock, {
          accountId: seeded.accountId,
          amountMicroUsd: amount,
          settlementId: `bench:${RUN_ID}:${seeded.accountId}`,
        });
        if (!credit.ok) throw new Error('seeding a prepaid balance failed');
        return seeded;
      });
      accountIds.push(accountId);
      if (!token) throw new Error('seeding a bench session failed');
      if (i === count) hot = token;
      else many.push(token);
    }
    return { many, one: [hot], accountIds };
  } finally {
    await handle.close();
  }
}

/**
 * After the load: every 2xx of the fee scenarios must be exactly one 1 USD fee group, and every
 * balance row must equal minus the sum of its account's prepaid entries.
 */
async function checkFeeBooks(
  database: BenchDatabase,
): Promise<{ feeGroups: number; featureRequests: number; balanceMismatches: number }> {
  const handle = await openDatabase(benchConfig(database));
  try {
    const fees = await sql<{ n: string; requests: string }>`
      SELECT count(*)::text AS n, (SELECT count(*) FROM feature_requests)::text AS requests
        FROM ledger_groups WHERE kind = 'fee.feedback'`.execute(handle.db);
    const mismatches = await sql<{ n: string }>`
      SELECT count(*)::text AS n FROM prepaid_balances b
       WHERE b.balance_micro <> -(SELECT coalesce(sum(e.amount), 0) FROM ledger_entries e
                                   WHERE e.ledger_account = 'account:' || b.account_id || ':prepaid')`.execute(
      handle.db,
    );
    return {
      feeGroups: Number(fees.rows[0]?.n ?? 0),
      featureRequests: Number(fees.rows[0]?.requests ?? 0),
      balanceMismatches: Number(mismatches.rows[0]?.n ?? 0),
    };
  } finally {
    await handle.close();
  }
}

function benchConfig(database: BenchDatabase) {
  return database.config;
}

let feeAccounts: FeeAccounts | null = null;

/** Publishes the policy the checks scenario evaluates, through the route. */
async function publishBenchPolicy(service: ServiceProcess, token: string): Promise<void> {
  const policy = await http(`${service.url}/v1/policies`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}` },
    body: {
      version: 1,
      wallet: BENCH_WALLET,
      chain_id: 8453,
      spend: { per_tx_usd: '100', daily_usd: '10000' },
    },
  });
  if (policy.status !== 201) throw new Error(`PUT /v1/policies answered ${policy.status}: ${policy.text}`);
}

let sessionToken: string | null = null;
let apiKeyToken: string | null = null;
let policyPublished = false;

/** A read-scoped API key, made the way an agent would: POST /v1/keys with its session. */
async function createBenchKey(service: ServiceProcess, session: string): Promise<string> {
  const res = await http(`${service.url}/v1/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${session}` },
    body: { name: 'bench', scopes: ['read'] },
  });
  if (res.status !== 201) throw new Error(`POST /v1/keys answered ${res.status}: ${res.text}`);
  return (JSON.parse(res.text) as { token: string }).token;
}

async function runScenario(service: ServiceProcess, scenario: Scenario): Promise<ScenarioResult> {
  const url = service.url + scenario.path;
  if (scenario.session && !policyPublished) {
    if (sessionToken === null) return skipped(scenario, 'no bench session was seeded');
    try {
      await publishBenchPolicy(service, sessionToken);
      policyPublished = true;
    } catch (err) {
      return skipped(scenario, `publishing the bench policy failed: ${String(err)}`);
    }
  }
  const { headers, body } = requestOptions(scenario);
  if (scenario.session && sessionToken) headers['authorization'] = `Bearer ${sessionToken}`;
  if (scenario.apiKey) {
    if (sessionToken === null) return skipped(scenario, 'no bench session was seeded');
    try {
      apiKeyToken ??= await createBenchKey(service, sessionToken);
    } catch (err) {
      return skipped(scenario, `creating the bench API key failed: ${String(err)}`);
    }
    headers['authorization'] = `Bearer ${apiKeyToken}`;
  }
  const rotation = scenario.feeAccounts ? (feeAccounts?.[scenario.feeAccounts] ?? []) : [];
  if (scenario.feeAccounts) {
    if (rotation.length === 0) return skipped(scenario, 'no prepaid bench accounts were seeded');
    headers['authorization'] = `Bearer ${rotation[0]}`;
  }
  let turn = 0;
  const send = () =>
    http(url, {
      method: scenario.method,
      headers,
      timeoutMs: 60_000,
      ...(scenario.body !== undefined ? { body: scenario.body } : {}),
    });

  // One request first: a route that does not answer at all is reported, not loaded for 10 s.
  let first: { status: number; text: string };
  try {
    first = await send();
  } catch (err) {
    return skipped(scenario, `the first request got no answer: ${String(err)}`);
  }
  let replayed: boolean | null = null;
  if (scenario.expectReplay) replayed = (await send()).headers['idempotent-replayed'] === 'true';

  current = autocannon({
    url,
    method: scenario.method,
    headers,
    ...(body !== undefined ? { body } : {}),
    connections: CONNECTIONS,
    duration: DURATION_S,
    warmup: { connections: CONNECTIONS, duration: WARMUP_S },
    timeout: 10,
    title: scenario.name,
    ...(rotation.length > 1 || scenario.freshIdempotencyKey
      ? {
          requests: [
            {
              setupRequest: (req: { headers?: Record<string, string> }) => {
                turn = (turn + 1) % rotation.length;
                req.headers = {
                  ...req.headers,
                  ...(rotation.length > 1 ? { authorization: `Bearer ${rotation[turn]}` } : {}),
                  ...(scenario.freshIdempotencyKey
                    ? { 'idempotency-key': `bench-${RUN_ID}-${(keySeq += 1)}` }
                    : {}),
                };
                return req;
              },
            },
          ],
        }
      : {}),
  });
  const result: Result = await current;
  current = null;

  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]),
  );
  const problems: string[] = [];
  const warnings: string[] = [];
  if (first.status < 200 || first.status >= 300) {
    problems.push(`the first request answered ${first.status}: ${first.text.slice(0, 200)}`);
  }
  if (result.non2xx > 0) {
    const share = result.requests.total > 0 ? (100 * result.non2xx) / result.requests.total : 100;
    const codes = Object.entries(statusCodes)
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, n]) => `${code} x${n}`)
      .join(', ');
    problems.push(`${share.toFixed(share < 1 ? 2 : 0)}% of answers were not 2xx (${codes})`);
  }
  if (result.errors > 0)
    problems.push(`${result.errors} requests got no answer (${result.timeouts} timeouts)`);
  if (result.requests.total === 0) problems.push('no request completed');
  if (replayed === false) {
    warnings.push(
      'no replay: the second answer lacked `idempotent-replayed: true`, so the route ignores Idempotency-Key ' +
        'and this row measures fresh requests, not replays',
    );
  }
  const exit = service.exitStatus();
  if (exit) problems.push(`the service exited (${describeExit(exit)})`);

  return {
    name: scenario.name,
    method: scenario.method,
    path: scenario.path,
    preflight: { status: first.status, body: first.text.slice(0, 300), replayed },
    requestsPerSecond: {
      mean: result.requests.mean,
      p50: result.requests.p50,
      stddev: result.requests.stddev,
      min: result.requests.min,
      max: result.requests.max,
    },
    latencyMs: {
      mean: result.latency.mean,
      p50: result.latency.p50,
      p97_5: result.latency.p97_5,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    requests: result.requests.total,
    status2xx: result['2xx'],
    non2xx: result.non2xx,
    statusCodes,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: result.duration,
    problems,
    warnings,
  };
}

function skipped(scenario: Scenario, problem: string): ScenarioResult {
  return {
    name: scenario.name,
    method: scenario.method,
    path: scenario.path,
    preflight: { status: 0, body: '', replayed: null },
    requestsPerSecond: { mean: NaN, p50: NaN, stddev: NaN, min: NaN, max: NaN },
    latencyMs: { mean: NaN, p50: NaN, p97_5: NaN, p99: NaN, max: NaN },
    requests: 0,
    status2xx: 0,
    non2xx: 0,
    statusCodes: {},
    errors: 1,
    timeouts: 0,
    durationS: 0,
    problems: [`${problem}; not loaded`],
    warnings: [],
  };
}

function machineFacts() {
  const cpuList = cpus();
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    if (dirty) commit += ' (with uncommitted changes)';
  } catch {
    // not a git checkout
  }
  const pkg = (name: string) => {
    try {
      return (
        JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
          version: string;
        }
      ).version;
    } catch {
      return 'unknown';
    }
  };
  return {
    node: process.version,
    platform: `${process.platform} ${release()} ${process.arch}`,
    cpus: cpuList.length,
    cpuModel: cpuList[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    loadAverageAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
    commit,
    autocannon: pkg('autocannon'),
    fastify: pkg('fastify'),
  };
}

const fmt = (n: number, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '-';

function markdown(report: Report): string {
  const m = report.machine;
  const lines = [
    `# Purser benchmark: ${report.database.kind}`,
    '',
    `- Run: ${report.startedAt}, commit ${m.commit}`,
    `- Machine: Node ${m.node}, ${m.cpus} x ${m.cpuModel}, ${m.memoryGb} GB RAM, ${m.platform}; load average at start ${m.loadAverageAtStart.join(' / ')}`,
    `- Database: ${report.database.description}`,
    `- Load: autocannon ${m.autocannon}, ${report.connections} connections, ${report.durationS} s per scenario after a ${report.warmupS} s warm-up; ` +
      (report.repeat > 1
        ? `each scenario run ${report.repeat} times, the table showing its median run (every run's req/s below); `
        : '') +
      'client and server share the machine',
    `- Service: \`purser serve\` as a child process, DEVNET=false, LOG_LEVEL=warn, ` +
      `RATE_LIMIT_PUBLIC_PER_MINUTE=${RATE_LIMIT} so the per-IP limiter never caps the load (its bookkeeping still runs); ` +
      `ready ${fmt(report.startupMs / 1000, 1)} s after spawn`,
    '',
    '| Scenario | req/s mean | req/s p50 | p50 ms | p97.5 ms | p99 ms | max ms | requests | non-2xx | errors | verdict |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|',
  ];
  for (const s of report.scenarios) {
    const verdict = s.problems.length > 0 ? '**BROKEN**' : s.warnings.length > 0 ? 'warning' : 'ok';
    lines.push(
      `| ${s.name} | ${fmt(s.requestsPerSecond.mean)} | ${fmt(s.requestsPerSecond.p50)} | ${fmt(s.latencyMs.p50)} | ` +
        `${fmt(s.latencyMs.p97_5)} | ${fmt(s.latencyMs.p99)} | ${fmt(s.latencyMs.max)} | ${fmt(s.requests)} | ` +
        `${fmt(s.non2xx)} | ${fmt(s.errors)} | ${verdict} |`,
    );
  }
  const repeated = report.scenarios.filter((s) => s.runs && s.runs.length > 1);
  if (repeated.length > 0) {
    lines.push('', `Every run's req/s (BENCH_REPEAT=${report.repeat}):`, '');
    for (const s of repeated) lines.push(`- ${s.name}: ${s.runs!.map((r) => fmt(r)).join(', ')}`);
  }
  // Authentication cost: the API-key read against unauthenticated reads of the same kind (no
  // database work either way): /healthz answers a body of the same size, /v1/tokens a larger one.
  const authenticated = report.scenarios.find((s) => s.path === '/v1/auth/session');
  if (authenticated) {
    for (const path of ['/healthz', '/v1/tokens']) {
      const plain = report.scenarios.find((s) => s.path === path);
      if (!plain || plain.requestsPerSecond.mean <= 0) continue;
      const cost = 1 - authenticated.requestsPerSecond.mean / plain.requestsPerSecond.mean;
      lines.push(
        '',
        `Authentication cost against GET ${path}: ${fmt(authenticated.requestsPerSecond.mean)} req/s with an API key ` +
          `vs ${fmt(plain.requestsPerSecond.mean)} req/s unauthenticated: ${fmt(cost * 100, 1)}% less throughput ` +
          '(target: under 15%).',
      );
    }
  }
  if (report.harness.length > 0) {
    lines.push(
      '',
      `Reserving harness (bench/reserve-harness.ts, ${report.database.kind === 'postgres' ? 'the same PostgreSQL database' : 'a fresh in-memory PGlite in the bench process'}; ` +
        `${report.connections} transactions in flight, each BEGIN + one reserveSpend statement + COMMIT):`,
      '',
      '| Harness | reservations/s | p50 ms | p99 ms | max ms | committed | refused |',
      '|---|--:|--:|--:|--:|--:|--:|',
      ...report.harness.map(
        (h) =>
          `| ${h.name} | ${fmt(h.perSecond)} | ${fmt(h.latencyMs.p50, 1)} | ${fmt(h.latencyMs.p99, 1)} | ` +
          `${fmt(h.latencyMs.max, 1)} | ${fmt(h.committed)} | ${fmt(h.refused)} |`,
      ),
    );
  }
  if (report.fees) {
    lines.push(
      '',
      `Fee books after the load: ${fmt(report.fees.feeGroups)} fee groups of 1 USD, ${fmt(report.fees.featureRequests)} ` +
        `feature requests, ${report.fees.balanceMismatches} balance rows differing from their entries.`,
    );
  }
  const notes = report.scenarios.flatMap((s) => [
    ...s.problems.map((p) => `- **${s.name}: BROKEN**: ${p}`),
    ...s.warnings.map((w) => `- ${s.name}: ${w}`),
  ]);
  if (report.serviceExit) notes.push(`- The service exited: ${report.serviceExit}`);
  if (notes.length > 0) lines.push('', ...notes);
  return lines.join('\n') + '\n';
}

interface Report {
  startedAt: string;
  database: { kind: string; description: string };
  connections: number;
  durationS: number;
  warmupS: number;
  /** Runs of each scenario (BENCH_REPEAT). */
  repeat: number;
  rateLimitPerMinute: number;
  startupMs: number;
  machine: ReturnType<typeof machineFacts>;
  scenarios: ScenarioResult[];
  /** The bench-only reserving path (no HTTP): see bench/reserve-harness.ts. */
  harness: HarnessResult[];
  /** The fee scenarios' books, checked after the load (see checkFeeBooks). */
  fees: { feeGroups: number; featureRequests: number; balanceMismatches: number } | null;
  serviceExit: string | null;
}

async function main(): Promise<number> {
  const startedAt = new Date().toISOString().slice(0, 19) + 'Z';
  const machine = machineFacts();
  process.once('SIGINT', () => {
    interrupted = true;
    current?.stop?.();
    console.error('\ninterrupted: stopping after the current scenario, then cleaning up');
  });

  const database = await prepareBenchDatabase('run');
  let service: ServiceProcess | null = null;
  const scenarios: ScenarioResult[] = [];
  let startupMs = 0;
  let serviceExit: string | null = null;
  let harness: HarnessResult[] = [];
  let fees: Awaited<ReturnType<typeof checkFeeBooks>> | null = null;
  /** 2xx answers of the fee scenarios over every run (each one paid a fee). */
  let paidAnswers = 0;
  try {
    console.log(`Database: ${database.description}`);
    console.log(
      `Rate limit raised to ${RATE_LIMIT} per minute (RATE_LIMIT_PUBLIC_PER_MINUTE) so it does not cap the benchmark.`,
    );
    sessionToken = await seedSession(database);
    feeAccounts = await seedFeeAccounts(database, FEE_ACCOUNTS);
    const spawned = performance.now();
    service = await startServiceProcess({
      env: { ...database.env, LOG_LEVEL: 'warn', RATE_LIMIT_PUBLIC_PER_MINUTE: String(RATE_LIMIT) },
    });
    await waitUntilReady(service, 60_000);
    startupMs = performance.now() - spawned;
    console.log(`Service ready at ${service.url} after ${(startupMs / 1000).toFixed(1)} s.`);

    const only = process.env.BENCH_ONLY;
    for (const scenario of SCENARIOS.filter((s) => !only || s.name.includes(only))) {
      if (interrupted) break;
      const runs: ScenarioResult[] = [];
      for (let run = 1; run <= REPEAT && !interrupted; run++) {
        console.log(
          `Running ${scenario.name}${REPEAT > 1 ? ` (run ${run} of ${REPEAT})` : ''}: ` +
            `${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s ...`,
        );
        const result = await runScenario(service, scenario);
        runs.push(result);
        if (scenario.path === '/v1/feedback') paidAnswers += result.status2xx;
        console.log(
          `  ${fmt(result.requestsPerSecond.mean)} req/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, ` +
            `${result.non2xx} non-2xx, ${result.errors} errors`,
        );
      }
      if (runs.length > 0) scenarios.push(medianRun(runs));
    }
  } finally {
    if (service) {
      const exit = service.exitStatus();
      if (exit) serviceExit = `${describeExit(exit)} during the run; last output:\n${service.tail(10)}`;
      const stopped = await service.stop('SIGTERM', 15_000);
      if (!exit && (stopped.code !== 0 || stopped.signal)) {
        serviceExit = `${describeExit(stopped)} on SIGTERM; last output:\n${service.tail(10)}`;
      }
    }
    try {
      if (scenarios.some((s) => s.path === '/v1/feedback' && s.requests > 0)) {
        fees = await checkFeeBooks(database);
        const paid = paidAnswers;
        console.log(
          `Fee books: ${fees.feeGroups} fee groups, ${fees.featureRequests} feature requests, ` +
            `${paid} 2xx measured (plus warm-up), ${fees.balanceMismatches} balance rows off their entries`,
        );
        if (fees.feeGroups !== fees.featureRequests || fees.feeGroups < paid || fees.balanceMismatches > 0) {
          serviceExit = `the fee books do not add up: ${JSON.stringify(fees)}; ${paid} paid answers`;
        }
      }
    } catch (err) {
      console.error(`checking the fee books failed: ${String(err)}`);
    }
    // After the service stopped: the harness measures the database alone, not a shared CPU.
    try {
      if (!interrupted && !process.env.BENCH_ONLY) {
        console.log(`Running the reserving harness (bench/reserve-harness.ts): ${CONNECTIONS} in flight ...`);
        harness = await runReserveHarness({
          databaseUrl: database.kind === 'postgres' ? (database.env['DATABASE_URL'] ?? null) : null,
          concurrency: CONNECTIONS,
          durationS: DURATION_S,
          warmupS: WARMUP_S,
        });
        for (const h of harness)
          console.log(`  ${h.name}: ${fmt(h.perSecond)} reservations/s, p99 ${fmt(h.latencyMs.p99, 1)} ms`);
      }
    } catch (err) {
      console.error(`the reserving harness failed: ${String(err)}`);
    }
    await database
      .drop()
      .catch((err: unknown) => console.error(`could not drop the bench database: ${String(err)}`));
  }

  const report: Report = {
    startedAt,
    database: { kind: database.kind, description: database.description },
    connections: CONNECTIONS,
    durationS: DURATION_S,
    warmupS: WARMUP_S,
    repeat: REPEAT,
    rateLimitPerMinute: RATE_LIMIT,
    startupMs: Math.round(startupMs),
    machine,
    scenarios,
    harness,
    fees,
    serviceExit,
  };
  const dir = join(REPO_ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const stamp = startedAt.replace(/:/g, '-');
  const table = markdown(report);
  writeFileSync(join(dir, `${stamp}-${database.kind}.json`), JSON.stringify(report, null, 2) + '\n');
  writeFileSync(join(dir, 'latest.md'), table);
  writeFileSync(join(dir, `latest-${database.kind}.md`), table);
  console.log(`\n${table}`);
  console.log(
    `Written: bench/results/${stamp}-${database.kind}.json, bench/results/latest.md, latest-${database.kind}.md`,
  );

  if (interrupted) return 130;
  const broken = scenarios.filter((s) => s.problems.length > 0);
  if (broken.length > 0 || serviceExit) {
    console.error(
      `\nBROKEN: ${broken.map((s) => s.name).join('; ') || 'the service'}: these figures do not measure the service.`,
    );
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
