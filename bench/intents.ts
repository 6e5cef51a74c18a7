// POST /v1/intents admission and the keyed fee path (POST /v1/feedback with an Idempotency-Key)
// against one-round-trip references (bench/reference-admission.ts), on PostgreSQL: docs in
// bench/README.md, "Admission against a reference". Part of `npm run bench`; alone:
// `DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/intents.ts`.

import autocannon, { type Result } from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpuCost, peakResidentMiB, readCpu, runLine, startNodeFlags, type CpuCost } from './common.ts';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { sql } from 'kysely';
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import pg from 'pg';
import { testConfig } from '../src/config.ts';
import { openDatabase } from '../src/core/db/database.ts';
import { migrate } from '../src/core/db/migrate.ts';
import { buildTokenRegistry } from '../src/modules/registry/index.ts';
import {
  describeExit,
  http,
  REPO_ROOT,
  startServiceProcess,
  waitUntilReady,
  type ServiceProcess,
} from '../test/support/service-process.ts';
import { freePort } from '../test/support/throwaway-postgres.ts';
import { prepareBenchDatabase } from './database.ts';
import { REFERENCE_FEEDBACK_FUNCTION, REFERENCE_FUNCTION } from './reference-admission.ts';
import { seedAccount } from './seed.ts';
import { EXECUTE_JOB } from '../src/modules/intents/job-names.ts';

const positiveInt = (name: string, fallback: number) => {
  const n = Number(process.env[name] ?? fallback);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};
const DURATION_S = positiveInt('BENCH_DURATION', 10);
const WARMUP_S = positiveInt('BENCH_WARMUP', 2);
const CONNECTIONS = positiveInt('BENCH_CONNECTIONS', 50);
const ACCOUNTS = positiveInt('BENCH_INTENT_ACCOUNTS', 200);
const REPEAT = positiveInt('BENCH_REPEAT', 3);
/** How long a run may leave the executor busy before the bench gives up on it. */
const DRAIN_LIMIT_MS = 300_000;
const USD = 1_000_000n;
const RUN_ID = randomBytes(4).toString('hex');
const registry = buildTokenRegistry('development');
const USDC = registry.findToken(8453, 'USDC')!.address;
const WETH = registry.findToken(8453, 'WETH')!.address;
/** Caps no run reaches: the figure is the admission's cost, not a refusal's. */
const POLICY = { spend: { per_tx_usd: '1000', daily_usd: '100000000', velocity_per_hour: 100_000 } };

interface BenchAccount {
  accountId: string;
  token: string;
  wallet: string;
  /** One intent of the account's, once admissions have run: what the read fetches. */
  intentId?: string;
}

interface Row {
  name: string;
  rate: 'max' | number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** Bytes of write-ahead log per row the run added (admissions, feature requests), when measured. */
  walPerRow?: number | null;
  /** CPU per row the run added, the warm-up included: the server's process and PostgreSQL's. */
  cpu?: CpuCost | null;
  /** The service's own counters over the run (its metrics port), for the service's runs. */
  counters?: ServiceCounters | null;
}

/** What the service's metrics say about one run: where a request waited. */
interface ServiceCounters {
  /** How late the event loop ran its 10 ms timer: p99 and the largest, in ms. */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** The ledger's batched statements in the run, and the bookings they carried. */
  statements: number;
  bookings: number;
  /** How long a booking waited for its statement: p50 and p99, as bucket upper bounds, in ms. */
  waitP50Ms: number | null;
  waitP99Ms: number | null;
}

/** The service's metrics now, parsed from the text exposition format. */
async function scrapeMetrics(url: string): Promise<ParsedFamily[]> {
  return parsePrometheusTextFormat(await (await fetch(url)).text());
}

/** The counters between two scrapes (the event loop's delay is the second scrape's own reading). */
function serviceCounters(before: ParsedFamily[], after: ParsedFamily[]): ServiceCounters {
  const sample = (families: ParsedFamily[], name: string) =>
    families.find((f) => f.name === name)?.metrics[0];
  const delta = (now?: string, then?: string) => Number(now ?? 0) - Number(then ?? 0);
  const [waitsBefore, waitsAfter] = [before, after].map((f) => sample(f, 'purser_ledger_batch_wait_seconds'));
  const [batchesBefore, batchesAfter] = [before, after].map((f) => sample(f, 'purser_ledger_batch_bookings'));
  const buckets = Object.entries(waitsAfter?.buckets ?? {})
    .map(([le, n]) => ({ le: Number(le), n: delta(n, waitsBefore?.buckets?.[le]) }))
    .filter((b) => Number.isFinite(b.le))
    .sort((a, b) => a.le - b.le);
  const waits = delta(waitsAfter?.count, waitsBefore?.count);
  const quantile = (q: number) => {
    const bucket = buckets.find((b) => b.n >= q * waits);
    return waits > 0 && bucket ? bucket.le * 1000 : null;
  };
  const loopDelayMs = (q: string) =>
    Number(
      after
        .find((f) => f.name === 'purser_event_loop_delay_seconds')
        ?.metrics.find((m) => m.labels?.['quantile'] === q)?.value ?? NaN,
    ) * 1000;
  return {
    loopDelayP99Ms: loopDelayMs('0.99'),
    loopDelayMaxMs: loopDelayMs('1'),
    statements: delta(batchesAfter?.count, batchesBefore?.count),
    bookings: delta(batchesAfter?.sum, batchesBefore?.sum),
    waitP50Ms: quantile(0.5),
    waitP99Ms: quantile(0.99),
  };
}

async function seed(config: ReturnType<typeof testConfig>): Promise<BenchAccount[]> {
  const handle = await openDatabase(config);
  try {
    await migrate(handle.db);
    await sql.raw(REFERENCE_FUNCTION).execute(handle.db);
    await sql.raw(REFERENCE_FEEDBACK_FUNCTION).execute(handle.db);
    const accounts: BenchAccount[] = [];
    for (let i = 0; i < ACCOUNTS; i += 1) {
      const seeded = await handle.db.transaction().execute((tx) =>
        seedAccount(tx, {
          session: true,
          prepaidMicro: 100_000n * USD,
          settlementPrefix: `bench:${RUN_ID}`,
        }),
      );
      if (!seeded.token) throw new Error('seeding a bench session failed');
      accounts.push({
        accountId: seeded.accountId,
        token: seeded.token,
        wallet: `0x${randomBytes(20).toString('hex')}`,
      });
    }
    return accounts;
  } finally {
    await handle.close();
  }
}

/** Each account's wallet gets its policy through the route, as an agent's would. */
async function publishPolicies(service: ServiceProcess, accounts: BenchAccount[]): Promise<void> {
  for (const a of accounts) {
    const res = await http(`${service.url}/v1/policies`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${a.token}` },
      body: { version: 1, wallet: a.wallet, chain_id: 8453, ...POLICY },
    });
    if (res.status !== 201) throw new Error(`PUT /v1/policies answered ${res.status}: ${res.text}`);
  }
}

/** One intent per account, admitted through the route: what the read load fetches. */
async function admitOneEach(service: ServiceProcess, accounts: BenchAccount[]): Promise<void> {
  for (const a of accounts) {
    const res = await http(`${service.url}/v1/intents`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${a.token}`,
        'idempotency-key': `bench-${RUN_ID}-one-${a.accountId}`,
      },
      body: JSON.parse(INTENT.body!(a)) as unknown,
    });
    if (res.status !== 201) throw new Error(`POST /v1/intents answered ${res.status}: ${res.text}`);
    a.intentId = (JSON.parse(res.text) as { id: string }).id;
  }
}

/** What the load sends: each account's path, the method and, for a write, each account's body. */
interface Target {
  path: (a: BenchAccount) => string;
  method: 'POST' | 'GET';
  body: ((a: BenchAccount) => string) | null;
}

const INTENT: Target = {
  path: () => '/v1/intents',
  method: 'POST',
  body: (a) =>
    JSON.stringify({
      wallet: a.wallet,
      kind: 'conversion',
      sell_token: USDC,
      buy_token: WETH,
      sell_amount: String(10n * USD),
    }),
};
const FEEDBACK: Target = {
  path: () => '/v1/feedback',
  method: 'POST',
  body: () =>
    JSON.stringify({
      title: 'Benchmark feature request',
      body: 'A request body long enough to pass validation, sent by the benchmark.',
    }),
};
/** The authenticated read: each account's own intent, by id (read after the admissions). */
const READ_INTENT: Target = {
  path: (a) => `/v1/intents/${a.intentId ?? 'none'}`,
  method: 'GET',
  body: null,
};
/** Fastify's hello-world, the read's floor. */
const HELLO: Target = { path: () => '/', method: 'GET', body: null };

let keySeq = 0;

/** One autocannon run: round-robin over the accounts, a new Idempotency-Key on every request. */
async function load(
  name: string,
  url: string,
  target: Target,
  accounts: BenchAccount[],
  rate: 'max' | number,
  connections = CONNECTIONS,
): Promise<Row> {
  // One request first: a server that refuses is reported with its answer, not loaded.
  const a0 = accounts[0]!;
  const headers = (a: BenchAccount): Record<string, string> => ({
    authorization: `Bearer ${a.token}`,
    ...(target.method === 'POST' ? { 'idempotency-key': `bench-${RUN_ID}-${(keySeq += 1)}` } : {}),
    // The reference needs the account for the fee's fingerprint; the service ignores it.
    'x-account': a.accountId,
  });
  const first = await http(`${url}${target.path(a0)}`, {
    method: target.method,
    headers: headers(a0),
    ...(target.body ? { body: JSON.parse(target.body(a0)) as unknown } : {}),
  });
  const expected = target.method === 'POST' ? 201 : 200;
  if (first.status !== expected)
    throw new Error(`${name}: the first request answered ${first.status}: ${first.text}`);
  let turn = 0;
  const result: Result = await autocannon({
    url: `${url}${target.path(a0)}`,
    method: target.method,
    headers: target.body ? { 'content-type': 'application/json' } : {},
    connections,
    duration: DURATION_S,
    timeout: 10,
    title: name,
    ...(rate === 'max' ? { warmup: { connections, duration: WARMUP_S } } : { overallRate: rate }),
    requests: [
      {
        setupRequest: (req: { headers?: Record<string, string>; body?: string; path?: string }) => {
          turn = (turn + 1) % accounts.length;
          const a = accounts[turn]!;
          req.path = target.path(a);
          req.headers = { ...req.headers, ...headers(a) };
          if (target.body) req.body = target.body(a);
          return req;
        },
      },
    ],
  });
  return {
    name,
    rate,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** The reference server as a child process; resolves with its URL once it listens. */
function startReference(env: Record<string, string>, poolSize: number) {
  return startChildServer('bench/reference-admission.ts', {
    ...env,
    POOL_SIZE: String(poolSize),
    INTENT_FEE_MICRO: String(testConfig().fees.conversionIntentMicro),
    FEEDBACK_FEE_MICRO: String(testConfig().fees.feedbackMicro),
  });
}

/** A bench server script as a child process; resolves with its URL once it prints `listening <port>`. */
async function startChildServer(script: string, env: Record<string, string> = {}) {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const m = /^listening (\d+)$/.exec(line);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`${script} exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}

/** The service's counters of its write runs, as lines of the report. */
function counterLines(rows: Row[]): string[] {
  const measured = rows.filter((r) => r.counters);
  if (measured.length === 0) return [];
  const ms = (n: number | null) => (n === null || !Number.isFinite(n) ? '–' : n.toFixed(1));
  return [
    '| Service run | event loop delay p99 / max ms | batched statements | bookings per statement | booking wait p50 / p99 ms (≤) |',
    '|---|--:|--:|--:|--:|',
    ...measured.map((r) => {
      const c = r.counters!;
      return `| ${r.name} | ${ms(c.loopDelayP99Ms)} / ${ms(c.loopDelayMaxMs)} | ${c.statements.toLocaleString('en-US')} | ${
        c.statements > 0 ? (c.bookings / c.statements).toFixed(1) : '–'
      } | ${ms(c.waitP50Ms)} / ${ms(c.waitP99Ms)} |`;
    }),
    '',
  ];
}

/**
 * Where the machine's time went in the write runs: core µs per admitted row in the server's
 * process and in PostgreSQL's, and how busy both cores were (the load generator and the bench
 * process make up the rest).
 */
function cpuLines(rows: Row[]): string[] {
  const measured = rows.filter((r) => r.cpu);
  if (measured.length === 0) return [];
  return [
    '| Run | cores busy | server core µs per row | PostgreSQL core µs per row |',
    '|---|--:|--:|--:|',
    ...measured.map(
      (r) => `| ${r.name} | ${r.cpu!.busyPercent}% | ${r.cpu!.serverMicros} | ${r.cpu!.databaseMicros} |`,
    ),
    '',
  ];
}

async function main(): Promise<number> {
  if (!process.env['DATABASE_URL']) {
    console.log('bench/intents.ts: skipped, it measures PostgreSQL (set DATABASE_URL).');
    return 0;
  }
  const database = await prepareBenchDatabase('intents');
  let service: ServiceProcess | null = null;
  let reference: Awaited<ReturnType<typeof startReference>> | null = null;
  let hello: Awaited<ReturnType<typeof startChildServer>> | null = null;
  try {
    const accounts = await seed(database.config);
    const metricsPort = await freePort();
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const poolSize = database.config.databasePoolSize;
    // As `npm start` runs it (its Node flags), unless BENCH_NODE_ARGS says otherwise
    // (space-separated; empty for Node's defaults).
    const serviceNodeArgs =
      process.env['BENCH_NODE_ARGS'] !== undefined
        ? process.env['BENCH_NODE_ARGS'].split(' ').filter(Boolean)
        : startNodeFlags();
    service = await startServiceProcess({
      env: {
        ...database.env,
        // The service logs as it does in production (info: one line per request or domain event);
        // BENCH_LOG_LEVEL=warn leaves the lines out.
        LOG_LEVEL: process.env['BENCH_LOG_LEVEL'] ?? 'info',
        RATE_LIMIT_PUBLIC_PER_MINUTE: '10000000',
        // No executor drains the queue during a bench: its bounds must not refuse the load.
        INTENT_QUEUE_PER_WALLET: '100000',
        INTENT_QUEUE_MAX: '10000000',
        METRICS_PORT: String(metricsPort),
        ...(process.env['BENCH_RUN_WORKERS'] ? { RUN_WORKERS: process.env['BENCH_RUN_WORKERS'] } : {}),
      },
      // BENCH_CPU_PROF=<dir>: the service writes a V8 CPU profile there when it stops.
      nodeArgs: [
        ...serviceNodeArgs,
        ...(process.env['BENCH_CPU_PROF']
          ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_CPU_PROF']}`]
          : []),
      ],
      startTimeoutMs: 60_000,
    });
    await waitUntilReady(service, 60_000);
    await publishPolicies(service, accounts);
    reference = await startReference(database.env, poolSize);

    const ref = reference;
    const svc = service;
    // The write-ahead log a run writes per row it adds to `table` (its admissions or feature
    // requests), everything those requests set off included: the database's share of the work.
    const probe = new pg.Client({ connectionString: database.env['DATABASE_URL'] });
    await probe.connect();
    // The executor's backlog: with the workers running, every admitted intent (the reference's too:
    // it enqueues the same job) is executed, here aborted, after its run. The next run waits until
    // that is done, so no run is measured while the workers finish the one before it.
    const drains: { after: string; intents: number; seconds: number }[] = [];
    const drained = async (after: string) => {
      if (process.env['BENCH_RUN_WORKERS'] === 'false') return;
      const started = Date.now();
      let first: number | null = null;
      for (;;) {
        const { rows } = await probe.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM jobs WHERE name = $1 AND state IN ('available', 'running')`,
          [EXECUTE_JOB],
        );
        first ??= rows[0]!.n;
        if (rows[0]!.n === 0) break;
        if (Date.now() - started > DRAIN_LIMIT_MS)
          throw new Error(
            `${rows[0]!.n} intents were still waiting for the executor ${DRAIN_LIMIT_MS / 1000} s after ${after}`,
          );
        await new Promise((r) => setTimeout(r, 250));
      }
      if (first > 0) drains.push({ after, intents: first, seconds: (Date.now() - started) / 1000 });
    };
    const walPerRow = async (table: string, pid: number, run: () => Promise<Row>): Promise<Row> => {
      const at = async () =>
        (
          await probe.query<{ lsn: string; n: string }>(
            `SELECT pg_current_wal_lsn()::text AS lsn, (SELECT count(*) FROM ${table})::text AS n`,
          )
        ).rows[0]!;
      const before = await at();
      const cpuBefore = readCpu(pid);
      const row = await run();
      const cpuAfter = readCpu(pid);
      const after = await at();
      const { rows } = await probe.query<{ bytes: string }>(
        'SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::text AS bytes',
        [after.lsn, before.lsn],
      );
      const added = Number(after.n) - Number(before.n);
      return {
        ...row,
        walPerRow: added > 0 ? Math.round(Number(rows[0]!.bytes) / added) : null,
        cpu: cpuCost(cpuBefore, cpuAfter, added),
      };
    };
    interface Side {
      label: string;
      url: string;
      /** The server's process, for its CPU counters. */
      pid: number;
      /** The server's metrics (the service's), read before and after each of its runs. */
      metrics?: string;
      target: Target;
    }
    // Two servers alternate, REPEAT pairs at the maximum rate, so drift of the shared machine hits
    // both alike; the median pair (by ratio) is reported, every pair listed.
    const compare = async (first: Side, second: Side, table: string | null) => {
      const pairs: { service: Row; reference: Row; ratio: number }[] = [];
      const run = async (side: Side) => {
        const go = () => load(side.label, side.url, side.target, accounts, 'max');
        const before = side.metrics ? await scrapeMetrics(side.metrics) : null;
        let row = await (table ? walPerRow(table, side.pid, go) : go());
        if (before && side.metrics)
          row = { ...row, counters: serviceCounters(before, await scrapeMetrics(side.metrics)) };
        if (table) await drained(row.name);
        return row;
      };
      for (let i = 0; i < REPEAT; i += 1) {
        const s = await run(first);
        const r = await run(second);
        pairs.push({ service: s, reference: r, ratio: s.rps / r.rps });
      }
      const median = [...pairs].sort((a, b) => a.ratio - b.ratio)[Math.floor((pairs.length - 1) / 2)]!;
      return { pairs, median };
    };
    // The authenticated read first, while no backlog of admitted intents keeps the workers busy:
    // each account fetching one of its own intents, against Fastify's hello-world in the same run.
    await admitOneEach(svc, accounts);
    hello = await startChildServer('bench/hello-fastify.ts');
    const reads = await compare(
      { label: 'GET /v1/intents/{id}, authenticated read', url: svc.url, pid: svc.pid, target: READ_INTENT },
      {
        label: "Fastify's hello-world (GET /, no auth, no database)",
        url: hello.url,
        pid: hello.pid,
        target: HELLO,
      },
      null,
    );
    const referenceSide = (target: Target): Side => ({
      label: `reference for ${target.path(accounts[0]!)}: one SQL function call`,
      url: ref.url,
      pid: ref.pid,
      target,
    });
    const intents = await compare(
      {
        label: 'POST /v1/intents (admission), a new Idempotency-Key each',
        url: svc.url,
        pid: svc.pid,
        metrics: metricsUrl,
        target: INTENT,
      },
      referenceSide(INTENT),
      'intents',
    );
    const half = Math.max(1, Math.round(intents.median.service.rps / 2));
    const thenDrained = async (row: Row) => {
      await drained(row.name);
      return row;
    };
    const halfRows = [
      await thenDrained(
        await load('POST /v1/intents at half its maximum rate', svc.url, INTENT, accounts, half),
      ),
      await thenDrained(
        await load(
          'reference for /v1/intents at half its maximum rate',
          ref.url,
          INTENT,
          accounts,
          Math.max(1, Math.round(intents.median.reference.rps / 2)),
        ),
      ),
      // One request at a time: the latency of a lone admission, with nothing queued before it.
      await thenDrained(await load('POST /v1/intents, one connection', svc.url, INTENT, accounts, 'max', 1)),
      await thenDrained(
        await load('reference for /v1/intents, one connection', ref.url, INTENT, accounts, 'max', 1),
      ),
    ];
    const feedback = await compare(
      {
        label: 'POST /v1/feedback (1 USD prepaid fee), a new Idempotency-Key each',
        url: svc.url,
        pid: svc.pid,
        metrics: metricsUrl,
        target: FEEDBACK,
      },
      referenceSide(FEEDBACK),
      'feature_requests',
    );
    await probe.end();
    const others = (c: typeof intents) =>
      c.pairs.filter((p) => p !== c.median).flatMap((p) => [p.service, p.reference]);
    const rows: Row[] = [
      intents.median.service,
      intents.median.reference,
      ...halfRows,
      feedback.median.service,
      feedback.median.reference,
      reads.median.service,
      reads.median.reference,
      ...others(intents),
      ...others(feedback),
      ...others(reads),
    ];

    const exit = svc.exitStatus();
    const problems = rows
      .filter((r) => r.non2xx > 0 || r.errors > 0 || r.requests === 0)
      .map((r) => `${r.name}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.requests} requests`);
    if (exit) problems.push(`the service exited (${describeExit(exit)})`);
    // The books: one planned intent per fee group of its kind, one feature request per fee.
    const handle = await openDatabase(database.config);
    let books = '';
    try {
      const { rows: counts } = await sql<{
        intents: string;
        fees: string;
        requests: string;
        feedback: string;
      }>`
        SELECT (SELECT count(*) FROM intents) AS intents,
               (SELECT count(*) FROM ledger_groups WHERE kind = 'fee.conversion_intent') AS fees,
               (SELECT count(*) FROM feature_requests) AS requests,
               (SELECT count(*) FROM ledger_groups WHERE kind = 'fee.feedback') AS feedback`.execute(
        handle.db,
      );
      const c = counts[0]!;
      books =
        `${c.intents} intents and ${c.fees} intent fee groups; ${c.requests} feature requests and ` +
        `${c.feedback} feedback fee groups (service and reference together)`;
      if (c.intents !== c.fees || c.requests !== c.feedback) problems.push(`the books differ: ${books}`);
    } finally {
      await handle.close();
    }

    const walOf = (r: Row) => (r.walPerRow == null ? 'unmeasured' : fmt(r.walPerRow));
    const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 1 });
    const ratios = (c: typeof intents) =>
      `**${c.median.ratio.toFixed(2)}**, the median of ${REPEAT} alternating pairs (all: ${c.pairs
        .map((p) => p.ratio.toFixed(2))
        .join(', ')})`;
    const peak = peakResidentMiB(service.pid);
    const md = [
      '# Admission against one-round-trip references (PostgreSQL)',
      '',
      runLine(),
      `- Database: ${database.description}; pool of ${poolSize} in the service and in the reference`,
      `- Load: ${CONNECTIONS} connections, ${DURATION_S} s after a ${WARMUP_S} s warm-up (maximum rate); ${ACCOUNTS} accounts round-robin, a new Idempotency-Key on every request`,
      `- The service: Node ${process.version} with ${serviceNodeArgs.length > 0 ? serviceNodeArgs.join(' ') : 'its default flags'}; its peak resident memory ${peak === null ? 'unmeasured' : `${peak} MiB`}`,
      '',
      '| Run | rate | req/s | p50 ms | p99 ms | max ms | requests | non-2xx | errors | WAL bytes per row |',
      '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
      ...rows.map(
        (r) =>
          `| ${r.name} | ${r.rate === 'max' ? 'max' : `${fmt(r.rate)}/s`} | ${fmt(r.rps)} | ${r.p50} | ${r.p99} | ${r.max} | ${fmt(r.requests)} | ${r.non2xx} | ${r.errors} | ${r.walPerRow == null ? '' : fmt(r.walPerRow)} |`,
      ),
      '',
      `Intent admission / reference: ${ratios(intents)}; goal ≥ 0.85. p99 at half the maximum rate: ` +
        `${halfRows[0]!.p99} ms (goal ≤ 25 ms; the reference's: ${halfRows[1]!.p99} ms). One request at a time: ` +
        `p50 ${halfRows[2]!.p50} ms, p99 ${halfRows[2]!.p99} ms (the reference's: ${halfRows[3]!.p50} and ${halfRows[3]!.p99} ms).`,
      '',
      `Keyed fee path / reference: ${ratios(feedback)}.`,
      '',
      `Authenticated read (GET /v1/intents/{id}) / Fastify's hello-world: ${ratios(reads)}.`,
      '',
      `Write-ahead log per admission: ${walOf(intents.median.service)} bytes by the service, ` +
        `${walOf(intents.median.reference)} by the reference; per feature request ` +
        `${walOf(feedback.median.service)} and ${walOf(feedback.median.reference)} (what each admitted row set off, ` +
        'workers included, while its run lasted).',
      '',
      ...cpuLines([
        intents.median.service,
        intents.median.reference,
        feedback.median.service,
        feedback.median.reference,
      ]),
      ...counterLines([intents.median.service, feedback.median.service]),
      ...(drains.length > 0
        ? [
            `The executor's backlog after each admitting run, waited for before the next run: ${drains
              .map((d) => `${fmt(d.intents)} intents in ${d.seconds.toFixed(1)} s`)
              .join('; ')}.`,
            '',
          ]
        : []),
      'The first rows are the median pairs; the last rows the other pairs.',
      '',
      `Books after the load: ${books}.`,
      ...(problems.length > 0 ? ['', `**BROKEN**: ${problems.join('; ')}`] : []),
      '',
    ].join('\n');
    console.log(md);
    const dir = join(REPO_ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'intents-latest.md'), md);
    writeFileSync(
      join(dir, 'intents-postgres.json'),
      `${JSON.stringify(
        {
          at: new Date().toISOString(),
          rows,
          intents: { ratio: intents.median.ratio, ratios: intents.pairs.map((p) => p.ratio) },
          feedback: { ratio: feedback.median.ratio, ratios: feedback.pairs.map((p) => p.ratio) },
          reads: { ratio: reads.median.ratio, ratios: reads.pairs.map((p) => p.ratio) },
          service: { nodeArgs: serviceNodeArgs, peakResidentMiB: peak },
          books,
          drains,
          problems,
        },
        null,
        2,
      )}\n`,
    );
    return problems.length > 0 ? 1 : 0;
  } finally {
    reference?.stop();
    hello?.stop();
    await service?.stop('SIGTERM').catch(() => undefined);
    await database.drop().catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
