// `npm run bench:webhooks` (and the last part of `npm run bench`): webhook delivery to a receiver
// on loopback, end to end. Accounts are seeded with an endpoint pointing at the receiver and a
// sealed secret (through the webhooks module); the service's own delivery workers deliver; a load
// generator commits events, each in its own transaction, and records when COMMIT returned. Two
// runs: events at a fixed rate (default 200/s for 10 s) for the latency from the commit to the
// first delivery attempt, then a burst (default 10,000 events, committed as fast as possible) for
// the deliveries per second sustained until the last one arrived. The receiver verifies every
// signature and counts duplicates; whatever has not arrived when the drain times out is lost.
//
// PostgreSQL (DATABASE_URL set): a fresh database on that server, dropped afterwards; the service
// is `purser serve` in a child process and the load commits from this process through its own
// pool. PGlite: the embedded database belongs to one process, so a child process runs the service
// exactly as `purser worker` does (startService) plus the load generator on the service's own
// database handle; this process holds the receiver. See bench/README.md.

import { SealingKeyring } from '../src/core/sealing.ts';
import { positiveInt } from './common.ts';
import { seedAccount } from './seed.ts';
import { prepareBenchDatabase, type BenchDatabase } from './database.ts';
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { systemClock } from '../src/core/clock.ts';
import { openDatabase, type Db } from '../src/core/db/database.ts';
import { migrate } from '../src/core/db/migrate.ts';
import { createLogger } from '../src/core/log.ts';
import { emitEvent } from '../src/modules/events/index.ts';
import {
  ATTEMPT_HEADER,
  ensureSecret,
  EVENT_ID_HEADER,
  setEndpoint,
  SIGNATURE_HEADER,
  vetDestination,
  type WebhookSettings,
} from '../src/modules/webhooks/index.ts';
import { startService } from '../src/runtime.ts';
import {
  REPO_ROOT,
  describeExit,
  serviceEnv,
  startServiceProcess,
  waitUntilReady,
  type ServiceProcess,
} from '../test/support/service-process.ts';

const RATE = positiveInt('BENCH_WEBHOOK_RATE', 200);
const SECONDS = positiveInt('BENCH_WEBHOOK_SECONDS', 10);
const WARMUP_S = positiveInt('BENCH_WEBHOOK_WARMUP', 2);
const BURST = positiveInt('BENCH_WEBHOOK_BURST', 10_000);
/** Transactions in flight while the burst is committed, and events per transaction. */
const BURST_CONCURRENCY = positiveInt('BENCH_WEBHOOK_CONCURRENCY', 4);
const BURST_BATCH = positiveInt('BENCH_WEBHOOK_BURST_BATCH', 10);
const ACCOUNTS = positiveInt('BENCH_WEBHOOK_ACCOUNTS', 20);
/**
 * A phase ends when every event arrived, or when none arrived for this long: the rest are lost.
 * Longer than the first retry (60 s, plus the 5 s safety poll), so a failed attempt is not a loss.
 */
const DRAIN_TIMEOUT_S = positiveInt('BENCH_WEBHOOK_DRAIN_TIMEOUT', 75);
const TARGET_P99_MS = 100;
const TARGET_PER_SECOND = 500;
const TOLERANCE_S = 300;
const EVENT_KIND = 'bench.webhook';
const RUN_ID = randomBytes(4).toString('hex');
/** Development settings, as the service child has them (serviceEnv drops PURSER_SEALING_KEY). */
const SETTINGS: WebhookSettings = { production: false, keyring: SealingKeyring.publicDevelopmentKeyring() };

// Wall-clock milliseconds with sub-millisecond resolution, comparable across processes: anchored
// on the edge of a Date.now() tick, then carried forward by the monotonic clock.
const anchor = (() => {
  const start = Date.now();
  let wall = start;
  while (wall === start) wall = Date.now();
  return { wall, mono: performance.now() };
})();
const nowMs = () => anchor.wall + (performance.now() - anchor.mono);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

// ---------------------------------------------------------------------------------------------
// The load generator (this process on PostgreSQL, the service child on PGlite)

type Phase = 'warmup' | 'latency' | 'throughput';

type LoadPlan =
  | { phase: 'warmup' | 'latency'; kind: 'rate'; rate: number; seconds: number; accounts: string[] }
  | {
      phase: 'throughput';
      kind: 'burst';
      count: number;
      concurrency: number;
      perTransaction: number;
      accounts: string[];
    };

interface LoadResult {
  ids: string[];
  /** When COMMIT returned, per event (nowMs). */
  committedAt: number[];
  /** Fixed rate only: when each transaction was due to start. */
  dueAt: number[];
  failed: number;
  startedAt: number;
  endedAt: number;
}

/** Events `from` to `to - 1` (accounts in turn), in one transaction; returns their ids once committed. */
async function commit(db: Db, accounts: string[], phase: Phase, from: number, to: number): Promise<string[]> {
  return db.transaction().execute(async (tx) => {
    const ids: string[] = [];
    for (let n = from; n < to; n++) {
      ids.push(
        await emitEvent(tx, systemClock, {
          accountId: accounts[n % accounts.length] ?? '',
          kind: EVENT_KIND,
          subject: `${phase}-${n}`,
          payload: { phase, n, run: RUN_ID },
        }),
      );
    }
    return ids;
  });
}

async function runLoad(db: Db, plan: LoadPlan): Promise<LoadResult> {
  const result: LoadResult = {
    ids: [],
    committedAt: [],
    dueAt: [],
    failed: 0,
    startedAt: nowMs(),
    endedAt: 0,
  };
  const record = (ids: string[], due: number | null) => {
    const at = nowMs();
    for (const id of ids) {
      result.committedAt.push(at);
      result.ids.push(id);
      if (due !== null) result.dueAt.push(due);
    }
  };
  if (plan.kind === 'rate') {
    // Open loop: each transaction starts when it is due, whether or not earlier ones committed.
    const total = plan.rate * plan.seconds;
    const interval = 1000 / plan.rate;
    const pending: Promise<void>[] = [];
    const start = nowMs() + 20;
    result.startedAt = start;
    for (let n = 0; n < total; n++) {
      const due = start + n * interval;
      const wait = due - nowMs();
      if (wait > 0.5) await sleep(wait);
      pending.push(
        commit(db, plan.accounts, plan.phase, n, n + 1).then(
          (ids) => record(ids, due),
          () => void result.failed++,
        ),
      );
    }
    await Promise.all(pending);
  } else {
    // Closed loop: `concurrency` transactions in flight, each starting when the previous one committed.
    let next = 0;
    await Promise.all(
      Array.from({ length: plan.concurrency }, async () => {
        while (next < plan.count) {
          const from = next;
          const to = Math.min(plan.count, from + plan.perTransaction);
          next = to;
          try {
            record(await commit(db, plan.accounts, plan.phase, from, to), null);
          } catch {
            result.failed += to - from;
          }
          // PGlite answers in-process: without this, transactions chained on promises alone would
          // starve the dispatcher's sockets. Requests reach a real service through I/O.
          await setImmediate();
        }
      }),
    );
  }
  result.endedAt = nowMs();
  return result;
}

interface DeliveryStates {
  /** Rows of webhook_deliveries per state. */
  byState: Record<string, number>;
  /** Rows that took more than one attempt. */
  retried: number;
  /** The last error of every row that has one (failed attempts), with how many rows carry it. */
  errors: Record<string, number>;
}

async function deliveryStates(db: Db): Promise<DeliveryStates> {
  const { rows } = await sql<{ state: string; n: string; retried: string }>`
    SELECT state, count(*)::text AS n, count(*) FILTER (WHERE attempts > 1)::text AS retried
    FROM webhook_deliveries GROUP BY state`.execute(db);
  const errors = await sql<{ state: string; last_error: string; n: string }>`
    SELECT state, last_error, count(*)::text AS n FROM webhook_deliveries
    WHERE last_error IS NOT NULL GROUP BY state, last_error ORDER BY count(*) DESC LIMIT 10`.execute(db);
  return {
    byState: Object.fromEntries(rows.map((r) => [r.state, Number(r.n)])),
    retried: rows.reduce((sum, r) => sum + Number(r.retried), 0),
    errors: Object.fromEntries(errors.rows.map((r) => [`${r.state}: ${r.last_error}`, Number(r.n)])),
  };
}

// ---------------------------------------------------------------------------------------------
// The PGlite child: the service (startService, as `purser worker`) plus the load generator

type HostRequest = { cmd: 'load'; plan: LoadPlan } | { cmd: 'states' } | { cmd: 'stop' };
type HostReply =
  | { type: 'ready' }
  | { type: 'load'; result: LoadResult }
  | { type: 'states'; states: DeliveryStates }
  | { type: 'error'; message: string };

async function runHost(): Promise<void> {
  const send = (reply: HostReply) => process.send?.(reply);
  const config = loadConfig();
  const service = await startService(config, createLogger(config.logLevel), { api: false, workers: true });
  const db = service.deps.db;
  process.on('message', (request: HostRequest) => {
    const answer = async (): Promise<HostReply | null> => {
      if (request.cmd === 'load') return { type: 'load', result: await runLoad(db, request.plan) };
      if (request.cmd === 'states') return { type: 'states', states: await deliveryStates(db) };
      await service.stop();
      process.exit(0);
    };
    answer().then(
      (reply) => reply && send(reply),
      (err: unknown) => send({ type: 'error', message: String(err) }),
    );
  });
  send({ type: 'ready' });
}

// ---------------------------------------------------------------------------------------------
// The receiver

interface Receiver {
  url: string;
  /** The account secrets, by account id (the last segment of each endpoint's path). */
  secrets: Map<string, string>;
  /** First verified arrival per event id: when the request reached the receiver, and its attempt. */
  arrivals: Map<string, { at: number; attempt: number }>;
  requests: number;
  duplicates: number;
  badSignatures: number;
  /** Verified deliveries whose attempt header was above 1. */
  retries: number;
  problems: string[];
  close(): Promise<void>;
}

function verifySignature(secret: string, header: string, eventId: string, raw: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match?.[1] || !match[2]) return false;
  if (Math.abs(Math.floor(nowMs() / 1000) - Number(match[1])) > TOLERANCE_S) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.${eventId}.${raw}`).digest();
  return timingSafeEqual(expected, Buffer.from(match[2], 'hex'));
}

async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    secrets: new Map(),
    arrivals: new Map(),
    requests: 0,
    duplicates: 0,
    badSignatures: 0,
    retries: 0,
    problems: [],
    close: async () => undefined,
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const at = nowMs();
    receiver.requests++;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const accountId = (req.url ?? '').split('/').pop() ?? '';
      const secret = receiver.secrets.get(accountId);
      const eventId = String(req.headers[EVENT_ID_HEADER] ?? '');
      const header = String(req.headers[SIGNATURE_HEADER] ?? '');
      if (!secret || !eventId || !verifySignature(secret, header, eventId, raw)) {
        receiver.badSignatures++;
        if (receiver.problems.length < 10) receiver.problems.push(`bad signature: ${req.url} ${eventId}`);
        res.writeHead(400).end();
        return;
      }
      const body = JSON.parse(raw) as { id?: unknown };
      if (body.id !== eventId && receiver.problems.length < 10) {
        receiver.problems.push(`the body's id differs from ${EVENT_ID_HEADER}: ${eventId}`);
      }
      const attempt = Number(req.headers[ATTEMPT_HEADER] ?? 0);
      if (attempt > 1) receiver.retries++;
      if (receiver.arrivals.has(eventId)) receiver.duplicates++;
      else receiver.arrivals.set(eventId, { at, attempt });
      res.writeHead(204).end();
    });
  };
  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

// ---------------------------------------------------------------------------------------------
// Database, seeding and the service

/**
 * Accounts with a webhook endpoint at the receiver, through the module's own functions (the
 * destination vetted as the route does, the secret sealed as in production). Returns their ids
 * and gives the receiver their secrets.
 */
async function seedAccounts(database: BenchDatabase, receiver: Receiver): Promise<string[]> {
  const handle = await openDatabase(database.config);
  try {
    await migrate(handle.db);
    const ids: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const { accountId } = await seedAccount(handle.db);
      const url = await vetDestination(`${receiver.url}/${accountId}`, SETTINGS);
      const secret = await handle.db.transaction().execute(async (tx) => {
        await setEndpoint(tx, systemClock, SETTINGS, accountId, url);
        return ensureSecret(tx, systemClock, SETTINGS, accountId);
      });
      receiver.secrets.set(accountId, secret);
      ids.push(accountId);
    }
    return ids;
  } finally {
    await handle.close();
  }
}

/** Where the load runs and how the service is stopped: see the header comment. */
interface Driver {
  topology: string;
  load(plan: LoadPlan): Promise<LoadResult>;
  states(): Promise<DeliveryStates>;
  /** Why the service stopped early, or null while it runs. */
  exited(): string | null;
  stop(): Promise<string | null>;
}

async function postgresDriver(database: BenchDatabase): Promise<Driver> {
  const service: ServiceProcess = await startServiceProcess({
    env: { ...database.env, LOG_LEVEL: 'warn' },
  });
  await waitUntilReady(service, 60_000);
  const handle = await openDatabase(database.config);
  return {
    topology:
      '`purser serve` in a child process (its delivery workers, woken by LISTEN/NOTIFY); the load commits ' +
      `from the bench process through its own pool (${database.config.databasePoolSize} connections), which also runs the receiver`,
    load: (plan) => runLoad(handle.db, plan),
    states: () => deliveryStates(handle.db),
    exited: () => {
      const status = service.exitStatus();
      return status ? `${describeExit(status)}; last output:\n${service.tail(10)}` : null;
    },
    stop: async () => {
      await handle.close();
      const early = service.exitStatus();
      if (early) return `${describeExit(early)} during the run; last output:\n${service.tail(10)}`;
      const stopped = await service.stop('SIGTERM', 15_000);
      return stopped.code === 0 && !stopped.signal
        ? null
        : `${describeExit(stopped)} on SIGTERM; last output:\n${service.tail(10)}`;
    },
  };
}

async function pgliteDriver(database: BenchDatabase): Promise<Driver> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--host'], {
    cwd: REPO_ROOT,
    execArgv: ['--import', 'tsx'],
    env: serviceEnv({ ...database.env, LOG_LEVEL: 'warn' }),
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  let exit: string | null = null;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = signal ? `signal ${signal}` : `code ${code}`;
      resolve();
    }),
  );
  const tail = () => output.join('').split('\n').slice(-10).join('\n');
  const expect = <T extends HostReply['type']>(type: T) =>
    new Promise<Extract<HostReply, { type: T }>>((resolve, reject) => {
      const onMessage = (reply: HostReply) => {
        if (reply.type !== type && reply.type !== 'error') return;
        child.off('message', onMessage);
        if (reply.type === 'error') reject(new Error(`the service child failed: ${reply.message}`));
        else resolve(reply as Extract<HostReply, { type: T }>);
      };
      child.on('message', onMessage);
      void exited.then(() => reject(new Error(`the service child exited (${exit}):\n${tail()}`)));
    });
  const ask = <T extends HostReply['type']>(request: HostRequest, type: T) => {
    const reply = expect(type);
    child.send(request);
    return reply;
  };
  await expect('ready').catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  return {
    topology:
      'one child process runs the service as `purser worker` does (startService: its delivery workers, woken by ' +
      "PGlite's LISTEN/NOTIFY) and the load, committing through the service's own database handle (PGlite " +
      'belongs to one process); the bench process runs the receiver',
    load: async (plan) => (await ask({ cmd: 'load', plan }, 'load')).result,
    states: async () => (await ask({ cmd: 'states' }, 'states')).states,
    exited: () => (exit ? `${exit}; last output:\n${tail()}` : null),
    stop: async () => {
      if (exit) return `${exit} during the run; last output:\n${tail()}`;
      child.send({ cmd: 'stop' } satisfies HostRequest);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
      return exit === 'code 0' ? null : `${exit} on stop; last output:\n${tail()}`;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Measuring

/** Waits until every id arrived, or until nothing arrived for DRAIN_TIMEOUT_S. */
async function drain(receiver: Receiver, ids: string[], driver: Driver): Promise<void> {
  let missing = ids.filter((id) => !receiver.arrivals.has(id));
  let lastProgress = nowMs();
  while (missing.length > 0 && nowMs() - lastProgress < DRAIN_TIMEOUT_S * 1000 && !driver.exited()) {
    await sleep(20);
    const still = missing.filter((id) => !receiver.arrivals.has(id));
    if (still.length < missing.length) lastProgress = nowMs();
    missing = still;
  }
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

function percentiles(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) =>
    sorted.length === 0
      ? NaN
      : (sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN);
  return {
    min: round(sorted[0] ?? NaN),
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    p99: round(at(0.99)),
    max: round(sorted.at(-1) ?? NaN),
  };
}

interface PhaseReport {
  name: string;
  /** Events committed (and so expected at the receiver). */
  committed: number;
  failedCommits: number;
  received: number;
  lost: number;
  /** Events whose first arrival carried an attempt number above 1. */
  firstArrivalNotFirstAttempt: number;
  commitsPerSecond: number;
  /** Milliseconds from COMMIT returning to the first attempt reaching the receiver. */
  latencyMs: ReturnType<typeof percentiles>;
  /** Fixed rate: how late transactions committed against their schedule (load generator health). */
  commitLagMs: ReturnType<typeof percentiles> | null;
  /** Burst: deliveries per second from the first arrival to the last. */
  deliveriesPerSecond: number | null;
  /** Burst: events per second from the first commit to the last arrival. */
  endToEndPerSecond: number | null;
  /** Burst: the slowest and the median whole second of arrivals. */
  perSecondMin: number | null;
  perSecondMedian: number | null;
  loadAverage: number[];
}

function measure(name: string, load: LoadResult, receiver: Receiver, burst: boolean): PhaseReport {
  const latencies: number[] = [];
  const arrivals: number[] = [];
  let notFirst = 0;
  load.ids.forEach((id, i) => {
    const arrival = receiver.arrivals.get(id);
    if (!arrival) return;
    latencies.push(arrival.at - (load.committedAt[i] ?? NaN));
    arrivals.push(arrival.at);
    if (arrival.attempt !== 1) notFirst++;
  });
  arrivals.sort((a, b) => a - b);
  const first = arrivals[0] ?? NaN;
  const last = arrivals.at(-1) ?? NaN;
  const commitSpan = (load.committedAt.reduce((a, b) => Math.max(a, b), -Infinity) - load.startedAt) / 1000;
  let perSecondMin: number | null = null;
  let perSecondMedian: number | null = null;
  if (burst && arrivals.length > 0) {
    const buckets = new Array<number>(Math.max(0, Math.floor((last - first) / 1000))).fill(0);
    for (const at of arrivals) {
      const b = Math.floor((at - first) / 1000);
      if (b < buckets.length) buckets[b] = (buckets[b] ?? 0) + 1;
    }
    if (buckets.length > 0) {
      const sorted = [...buckets].sort((a, b) => a - b);
      perSecondMin = sorted[0] ?? null;
      perSecondMedian = sorted[Math.floor(sorted.length / 2)] ?? null;
    }
  }
  return {
    name,
    committed: load.ids.length,
    failedCommits: load.failed,
    received: arrivals.length,
    lost: load.ids.length - arrivals.length,
    firstArrivalNotFirstAttempt: notFirst,
    commitsPerSecond: round(load.ids.length / commitSpan, 0),
    latencyMs: percentiles(latencies),
    commitLagMs:
      load.dueAt.length > 0
        ? percentiles(load.dueAt.map((due, i) => (load.committedAt[i] ?? NaN) - due))
        : null,
    deliveriesPerSecond: burst ? round(((arrivals.length - 1) * 1000) / (last - first), 0) : null,
    endToEndPerSecond: burst ? round((arrivals.length * 1000) / (last - load.startedAt), 0) : null,
    perSecondMin,
    perSecondMedian,
    loadAverage: loadavg().map((l) => round(l, 2)),
  };
}

// ---------------------------------------------------------------------------------------------
// Reporting

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
  return {
    node: process.version,
    platform: `${process.platform} ${release()} ${process.arch}`,
    cpus: cpuList.length,
    cpuModel: cpuList[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    loadAverageAtStart: loadavg().map((l) => round(l, 2)),
    commit,
  };
}

interface Report {
  startedAt: string;
  database: { kind: string; description: string };
  topology: string;
  settings: {
    accounts: number;
    rate: number;
    seconds: number;
    warmupS: number;
    burst: number;
    burstConcurrency: number;
    burstEventsPerTransaction: number;
    drainTimeoutS: number;
  };
  machine: ReturnType<typeof machineFacts>;
  phases: PhaseReport[];
  receiver: {
    requests: number;
    verified: number;
    duplicates: number;
    badSignatures: number;
    retries: number;
  };
  unexpected: number;
  deliveryStates: DeliveryStates | null;
  targets: { p99: boolean; throughput: boolean; noDuplicate: boolean; noLoss: boolean };
  problems: string[];
}

const fmt = (n: number | null, digits = 0) =>
  n !== null && Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '-';
const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');

function markdown(report: Report, heading: string): string {
  const m = report.machine;
  const s = report.settings;
  const latency = report.phases.find((p) => p.name.startsWith('fixed rate'));
  const burst = report.phases.find((p) => p.name.startsWith('burst'));
  const lines = [
    `${heading} Webhook delivery: ${report.database.kind}`,
    '',
    `- Run: ${report.startedAt}, commit ${m.commit}; \`bench/webhooks.ts\``,
    `- Machine: Node ${m.node}, ${m.cpus} x ${m.cpuModel}, ${m.memoryGb} GB RAM; load average at start ` +
      `${m.loadAverageAtStart.join(' / ')}, after the fixed-rate run ${latency?.loadAverage.join(' / ') ?? '-'}, ` +
      `after the burst ${burst?.loadAverage.join(' / ') ?? '-'}`,
    `- Database: ${report.database.description}`,
    `- Topology: ${report.topology}; receiver on loopback (node:http, verifies every signature); ` +
      'everything shares the machine',
    `- Load: ${s.accounts} accounts with an endpoint; events through emitEvent; ` +
      `fixed rate ${s.rate}/s, one event per transaction, for ${s.seconds} s after ${s.warmupS} s of warm-up; ` +
      `burst of ${fmt(s.burst)} events, ` +
      `${s.burstEventsPerTransaction} per transaction, ${s.burstConcurrency} transactions in flight; drain timeout ${s.drainTimeoutS} s without an arrival`,
    '',
    '| Run | events committed | committed/s | received | lost | commit→first attempt p50 ms | p95 ms | p99 ms | max ms | deliveries/s |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const p of report.phases) {
    if (p.name === 'warm-up') continue;
    lines.push(
      `| ${p.name} | ${fmt(p.committed)} | ${fmt(p.commitsPerSecond)} | ${fmt(p.received)} | ${fmt(p.lost)} | ` +
        `${fmt(p.latencyMs.p50, 1)} | ${fmt(p.latencyMs.p95, 1)} | ${fmt(p.latencyMs.p99, 1)} | ` +
        `${fmt(p.latencyMs.max, 1)} | ${fmt(p.deliveriesPerSecond)} |`,
    );
  }
  const r = report.receiver;
  lines.push(
    '',
    `Receiver: ${fmt(r.requests)} requests, ${fmt(r.verified)} distinct events verified, ${r.duplicates} duplicates, ` +
      `${r.badSignatures} bad signatures, ${r.retries} retried attempts, ${report.unexpected} unexpected events.`,
  );
  if (burst) {
    lines.push(
      `Burst: ${fmt(burst.deliveriesPerSecond)} deliveries/s from the first arrival to the last ` +
        `(slowest whole second ${fmt(burst.perSecondMin)}, median ${fmt(burst.perSecondMedian)}); ` +
        `${fmt(burst.endToEndPerSecond)} events/s from the first commit to the last arrival; ` +
        `the load committed ${fmt(burst.commitsPerSecond)} events/s.`,
    );
  }
  if (latency?.commitLagMs) {
    lines.push(
      `Fixed rate: transactions committed ${fmt(latency.commitLagMs.p50, 1)} ms (p50) / ${fmt(latency.commitLagMs.p99, 1)} ms (p99) ` +
        'after they were due to start (the load generator kept its schedule when these are small).',
    );
  }
  if (report.deliveryStates) {
    const states = Object.entries(report.deliveryStates.byState)
      .map(([state, n]) => `${state} ${fmt(n)}`)
      .join(', ');
    const errors = Object.entries(report.deliveryStates.errors)
      .map(([error, n]) => `${error} (${fmt(n)})`)
      .join('; ');
    lines.push(
      `Outbox after the run: ${states}; ${report.deliveryStates.retried} rows needed more than one attempt` +
        (errors ? `; failed attempts: ${errors}.` : '; no failed attempt.'),
    );
  }
  const t = report.targets;
  lines.push(
    '',
    `Targets: p99 commit→first attempt ≤ ${TARGET_P99_MS} ms at ${s.rate} events/s: ${verdict(t.p99)}; ` +
      `≥ ${TARGET_PER_SECOND} deliveries/s sustained: ${verdict(t.throughput)}; ` +
      `no duplicate: ${verdict(t.noDuplicate)}; no lost event: ${verdict(t.noLoss)}.`,
  );
  if (report.problems.length > 0) lines.push('', ...report.problems.map((p) => `- **BROKEN**: ${p}`));
  return lines.join('\n') + '\n';
}

const SECTION_START = '<!-- bench/webhooks.ts -->';

/** Adds the section to a table `npm run bench` just wrote for the same database (replacing an older one). */
function appendToLatest(path: string, kind: string, section: string): boolean {
  if (!existsSync(path)) return false;
  const current = readFileSync(path, 'utf8');
  if (!current.startsWith(`# Purser benchmark: ${kind}\n`)) return false;
  const kept = current.split(SECTION_START)[0]?.trimEnd() ?? '';
  writeFileSync(path, `${kept}\n\n${SECTION_START}\n${section}`);
  return true;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const startedAt = new Date().toISOString().slice(0, 19) + 'Z';
  const machine = machineFacts();
  const database = await prepareBenchDatabase('webhooks');
  const receiver = await startReceiver();
  const phases: PhaseReport[] = [];
  const expected = new Set<string>();
  const problems: string[] = [];
  let driver: Driver | null = null;
  let states: DeliveryStates | null = null;
  try {
    console.log(`Database: ${database.description}`);
    const accounts = await seedAccounts(database, receiver);
    console.log(`Seeded ${accounts.length} accounts with an endpoint at ${receiver.url}/<account>.`);
    driver = database.kind === 'postgres' ? await postgresDriver(database) : await pgliteDriver(database);
    console.log(`Service running: ${driver.topology}.`);

    const run = async (name: string, plan: LoadPlan) => {
      console.log(`Running ${name} ...`);
      const load = await driver!.load(plan);
      for (const id of load.ids) expected.add(id);
      await drain(receiver, load.ids, driver!);
      const report = measure(name, load, receiver, plan.kind === 'burst');
      phases.push(report);
      console.log(
        `  ${report.committed} committed (${report.commitsPerSecond}/s), ${report.received} received, ${report.lost} lost; ` +
          `commit→first attempt p50 ${report.latencyMs.p50} ms, p99 ${report.latencyMs.p99} ms, max ${report.latencyMs.max} ms` +
          (report.deliveriesPerSecond !== null ? `; ${report.deliveriesPerSecond} deliveries/s` : ''),
      );
    };
    await run('warm-up', { phase: 'warmup', kind: 'rate', rate: RATE, seconds: WARMUP_S, accounts });
    await run(`fixed rate, ${RATE} events/s for ${SECONDS} s`, {
      phase: 'latency',
      kind: 'rate',
      rate: RATE,
      seconds: SECONDS,
      accounts,
    });
    await run(`burst of ${BURST} events`, {
      phase: 'throughput',
      kind: 'burst',
      count: BURST,
      concurrency: BURST_CONCURRENCY,
      perTransaction: BURST_BATCH,
      accounts,
    });
    // Late duplicates (a retry of something already delivered) would show up now.
    await sleep(1000);
    states = await driver.states();
  } catch (err) {
    problems.push(`the run failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    if (driver) {
      const stopped = await driver.stop().catch((err: unknown) => String(err));
      if (stopped) problems.push(`the service exited: ${stopped}`);
    }
    await receiver.close();
    await database
      .drop()
      .catch((err: unknown) => console.error(`could not drop the bench database: ${String(err)}`));
  }

  const unexpected = [...receiver.arrivals.keys()].filter((id) => !expected.has(id)).length;
  const lost = phases.reduce((n, p) => n + p.lost, 0);
  if (lost > 0) problems.push(`${lost} events never arrived`);
  const failedCommits = phases.reduce((n, p) => n + p.failedCommits, 0);
  if (failedCommits > 0) problems.push(`${failedCommits} events could not be committed`);
  if (receiver.badSignatures > 0) problems.push(`${receiver.badSignatures} deliveries failed verification`);
  if (unexpected > 0) problems.push(`${unexpected} events arrived that the load did not commit`);
  problems.push(...receiver.problems);
  const latency = phases.find((p) => p.name.startsWith('fixed rate'));
  const burst = phases.find((p) => p.name.startsWith('burst'));
  const report: Report = {
    startedAt,
    database: { kind: database.kind, description: database.description },
    topology: driver?.topology ?? '-',
    settings: {
      accounts: ACCOUNTS,
      rate: RATE,
      seconds: SECONDS,
      warmupS: WARMUP_S,
      burst: BURST,
      burstConcurrency: BURST_CONCURRENCY,
      burstEventsPerTransaction: BURST_BATCH,
      drainTimeoutS: DRAIN_TIMEOUT_S,
    },
    machine,
    phases,
    receiver: {
      requests: receiver.requests,
      verified: receiver.arrivals.size,
      duplicates: receiver.duplicates,
      badSignatures: receiver.badSignatures,
      retries: receiver.retries,
    },
    unexpected,
    deliveryStates: states,
    targets: {
      p99: latency !== undefined && latency.latencyMs.p99 <= TARGET_P99_MS,
      throughput: (burst?.deliveriesPerSecond ?? 0) >= TARGET_PER_SECOND,
      noDuplicate: receiver.duplicates === 0,
      noLoss: phases.length === 3 && lost === 0,
    },
    problems,
  };

  const dir = join(REPO_ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const written = [`webhooks-${database.kind}.json`, `webhooks-latest-${database.kind}.md`];
  writeFileSync(join(dir, written[0]!), JSON.stringify(report, null, 2) + '\n');
  writeFileSync(join(dir, written[1]!), markdown(report, '#'));
  if (process.argv.includes('--append-to-latest')) {
    for (const name of ['latest.md', `latest-${database.kind}.md`]) {
      if (appendToLatest(join(dir, name), database.kind, markdown(report, '##'))) written.push(name);
    }
  }
  console.log(`\n${markdown(report, '#')}`);
  console.log(`Written: ${written.map((name) => `bench/results/${name}`).join(', ')}`);
  return problems.length > 0 ? 1 : 0;
}

if (process.argv.includes('--host')) {
  runHost().catch((err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  });
} else {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exit(1);
    },
  );
}
