// `npm run bench:pm-orders` (and the last part of `npm run bench`): prediction-market order
// placement, POST /v1/pm/orders in the hosted flow (the credential, the switches, the policy and
// the wallet's exposure under its lock, the rate lane, the fee, the record, the EIP-712 signature
// with the sealed key and the transmit), against the Polymarket CLOB fake on loopback. The service
// runs as a child process on PGlite, or on a fresh PostgreSQL database with DATABASE_URL. Reported:
// admission latency p50/p99 of the whole request and orders per second (201s), then the venue's
// own share: the fake's round trips of one order (tick size and neg-risk asked side by side, then
// POST /order), timed directly from here. Afterwards the books are checked: orders recorded as
// placed = 201 answers = POST /order the fake received. See bench/README.md.

import autocannon, { type Options, type Result } from 'autocannon';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildOrderV2, createPolymarketClob, signOrderV2 } from '../src/adapters/pm-venue/polymarket.ts';
import { systemClock } from '../src/core/clock.ts';
import { openDatabase } from '../src/core/db/database.ts';
import { migrate } from '../src/core/db/migrate.ts';
import { startClobFake, type ClobFake } from '../src/devnet/fakes/clob.ts';
import { pmOrderFeeMicro } from '../src/modules/billing/index.ts';
import { formatUsd } from '../src/core/money.ts';
import {
  describeExit,
  http,
  startServiceProcess,
  waitUntilReady,
  type ServiceProcess,
} from '../test/support/service-process.ts';
import { binaryMarket, putPmPolicy, storeHostedCredential } from '../test/support/pm-service.ts';
import { machineFacts, positiveInt, runMain, summary, writeResults } from './common.ts';
import { prepareBenchDatabase, type BenchDatabase } from './database.ts';
import { seedAccount } from './seed.ts';

const DURATION_S = positiveInt('BENCH_DURATION', 10);
const WARMUP_S = positiveInt('BENCH_WARMUP', 2);
const CONNECTIONS = positiveInt('BENCH_PM_CONNECTIONS', 10);
/** Sequential direct calls to the fake that time the venue's share. */
const VENUE_PROBES = positiveInt('BENCH_PM_VENUE_PROBES', 200);
const RATE_LIMIT = 10_000_000;
/** Far above any rate this machine reaches: the lane never answers 429 during the run. */
const PM_RATE_LANES = { orders: { capacity: 1_000_000, refill_per_second: 1_000_000 } };

const RUN_ID = randomBytes(4).toString('hex');
const MARKET = `0x${'b7'.repeat(32)}` as const;
const TOKEN = '7001';
/** A buy at 0.05 for 20 shares: 1 USD notional. Nothing sells, so every order rests unfilled. */
const PRICE = '0.05';
const SIZE = '20';
const NOTIONAL_MICRO = 1_000_000n;
/**
 * Orders the policy and the prepaid balance are sized for: 2,000 a second over the warm-up and the
 * run (several times what this stack does on one machine), so neither max_exposure_usd (every
 * order stays open) nor the balance refuses one.
 */
const ORDER_BUDGET = 2_000 * (WARMUP_S + DURATION_S) + 10_000;

/** The two fields of an autocannon 8 client this script drains through (not in its typings). */
interface DrainableClient {
  reqsMade: number;
  responseMax: number | undefined;
}

interface LoadRun {
  result: Result;
  /** Latency of each 2xx, ms, in arrival order. */
  latencies: number[];
  status2xx: number;
  statusCodes: Record<string, number>;
  /** From the start of the load to the last answer, seconds. */
  seconds: number;
}

/**
 * Drives POST /v1/pm/orders for `seconds`, then drains: every connection sends nothing after the
 * answer it waits for, so no request is cut off in flight (autocannon's own stop destroys its
 * sockets with requests still at the service, which would place orders no answer counted).
 */
async function load(url: string, headers: Record<string, string>, body: () => string, seconds: number) {
  const clients: DrainableClient[] = [];
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let status2xx = 0;
  let lastAnswer = 0;
  const options: Options & { setupClient: (client: DrainableClient) => void } = {
    url,
    method: 'POST',
    headers,
    connections: CONNECTIONS,
    // A safety net only: the drain below ends the run.
    duration: seconds + 120,
    timeout: 10,
    requests: [
      {
        setupRequest: (req) => {
          req.body = body();
          return req;
        },
      },
    ],
    setupClient: (client) => void clients.push(client),
  };
  const started = performance.now();
  const instance = autocannon(options);
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, ms: number) => {
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
    if (statusCode >= 200 && statusCode < 300) {
      status2xx += 1;
      latencies.push(ms);
    }
    lastAnswer = performance.now();
  });
  const drain = setTimeout(() => {
    for (const client of clients) client.responseMax = Math.max(1, client.reqsMade);
  }, seconds * 1000);
  try {
    const result = await instance;
    return {
      result,
      latencies,
      status2xx,
      statusCodes,
      seconds: ((lastAnswer || performance.now()) - started) / 1000,
    } satisfies LoadRun;
  } finally {
    clearTimeout(drain);
  }
}

/** The bench account with its session and prepaid balance, written before the service starts. */
async function seed(database: BenchDatabase, prepaidMicro: bigint): Promise<string> {
  const handle = await openDatabase(database.config);
  try {
    await migrate(handle.db);
    const { token } = await handle.db
      .transaction()
      .execute((tx) => seedAccount(tx, { session: true, prepaidMicro, settlementPrefix: `bench:${RUN_ID}` }));
    if (!token) throw new Error('seeding the bench session failed');
    return token;
  } finally {
    await handle.close();
  }
}

/** Orders recorded as placed (with the service stopped: PGlite has one process at a time). */
async function placedOrders(database: BenchDatabase): Promise<{ placed: number; other: string }> {
  const handle = await openDatabase(database.config);
  try {
    const rows = await sql<{ status: string; n: string }>`
      SELECT status, count(*)::text AS n FROM pm_orders GROUP BY status ORDER BY status`.execute(handle.db);
    const placed = Number(rows.rows.find((r) => r.status === 'placed')?.n ?? 0);
    const other = rows.rows
      .filter((r) => r.status !== 'placed')
      .map((r) => `${r.status} ${r.n}`)
      .join(', ');
    return { placed, other };
  } finally {
    await handle.close();
  }
}

/**
 * The venue's share, from this process straight to the fake with Purser's own CLOB client: per
 * order, the tick size and neg-risk flag asked side by side (as admission does), then POST /order
 * of an order signed beforehand (the signature is not timed). One at a time, the service stopped.
 */
async function probeVenue(clob: ClobFake, signerKey: `0x${string}`) {
  const port = createPolymarketClob({
    baseUrl: clob.url,
    chainId: 137,
    timeoutMs: 5_000,
    clock: systemClock,
  });
  const account = privateKeyToAccount(signerKey);
  const auth = { address: account.address, creds: await port.deriveApiCredentials(signerKey) };
  const market: number[] = [];
  const post: number[] = [];
  const both: number[] = [];
  for (let i = 0; i < VENUE_PROBES + 10; i++) {
    const order = buildOrderV2({
      maker: account.address,
      signer: account.address,
      signatureType: 0,
      tokenId: TOKEN,
      side: 'BUY',
      price: PRICE,
      size: SIZE,
      tickSize: '0.01',
    });
    const signed = await signOrderV2(order, account, { chainId: 137, negRisk: false });
    const t0 = performance.now();
    await Promise.all([port.tickSize(TOKEN), port.negRisk(TOKEN)]);
    const t1 = performance.now();
    const answer = await port.postOrder(auth, signed, { orderType: 'GTC' });
    const t2 = performance.now();
    if (!answer.success) throw new Error(`the fake refused a probe order: ${answer.errorMsg}`);
    if (i < 10) continue; // warm-up
    market.push(t1 - t0);
    post.push(t2 - t1);
    both.push(t2 - t0);
  }
  return { marketMs: summary(market), postOrderMs: summary(post), bothMs: summary(both) };
}

/** Every answer of a load, whatever its status, and every request that got none. */
const answers = (r: LoadRun) => Object.values(r.statusCodes).reduce((n, c) => n + c, 0) + r.result.errors;

const postsToFake = (clob: ClobFake) =>
  clob.requests.filter((r) => r.method === 'POST' && r.path === '/order').length;

async function main(): Promise<number> {
  const startedAt = new Date().toISOString();
  const machine = machineFacts();
  const database = await prepareBenchDatabase('pmorders');
  const feeMicro = pmOrderFeeMicro(database.config, NOTIONAL_MICRO);
  const prepaidMicro = feeMicro * BigInt(ORDER_BUDGET);
  const sealing = `bench:${randomBytes(32).toString('hex')}`;
  const signerKey = generatePrivateKey();
  const wallet = privateKeyToAccount(signerKey).address.toLowerCase();
  let clob: ClobFake | null = null;
  let service: ServiceProcess | null = null;
  const problems: string[] = [];
  try {
    console.log(`Database: ${database.description}`);
    clob = await startClobFake({ markets: [binaryMarket(MARKET, TOKEN, '7002')] });
    const token = await seed(database, prepaidMicro);
    const spawned = performance.now();
    service = await startServiceProcess({
      env: {
        ...database.env,
        DEVNET: 'false',
        LOG_LEVEL: 'warn',
        POLYMARKET_CLOB_URL: clob.url,
        KALSHI_API_URL: `${clob.url}/trade-api/v2`,
        PURSER_SEALING_KEYS: sealing,
        PM_RATE_LANES: JSON.stringify(PM_RATE_LANES),
        PM_GEO_ALLOW_LOOPBACK: 'true',
        RATE_LIMIT_PUBLIC_PER_MINUTE: String(RATE_LIMIT),
      },
    });
    await waitUntilReady(service, 60_000);
    const startupMs = performance.now() - spawned;
    console.log(`Service ready at ${service.url} after ${(startupMs / 1000).toFixed(1)} s.`);

    const auth = { authorization: `Bearer ${token}` };
    const credentialId = await storeHostedCredential(service.url, auth, signerKey);
    await putPmPolicy(service.url, auth, wallet, {
      max_order_usd: '10',
      max_exposure_usd: formatUsd(NOTIONAL_MICRO * BigInt(ORDER_BUDGET)),
    });

    let sequence = 0;
    const orderBody = () =>
      JSON.stringify({
        wallet,
        credential_id: credentialId,
        condition_id: MARKET,
        token_id: TOKEN,
        action: 'buy',
        price_usd: PRICE,
        size_shares: SIZE,
        client_order_id: `bench-${RUN_ID}-${(sequence += 1)}`,
      });
    const url = `${service.url}/v1/pm/orders`;
    const headers = { ...auth, 'content-type': 'application/json' };

    // One order first: a route that refuses is reported at once, not loaded for 10 s.
    const first = await http(url, { method: 'POST', headers: auth, body: JSON.parse(orderBody()) });
    if (first.status !== 201) throw new Error(`the first order answered ${first.status}: ${first.text}`);

    console.log(
      `Placing orders: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s, ` +
        `each drained (no request cut off) ...`,
    );
    const warm = await load(url, headers, orderBody, WARMUP_S);
    const run = await load(url, headers, orderBody, DURATION_S);
    const answered2xx = 1 + warm.status2xx + run.status2xx;
    const sent = sequence;
    for (const [what, r] of [
      ['warm-up', warm],
      ['run', run],
    ] as const) {
      const off = Object.entries(r.statusCodes).filter(([code]) => !code.startsWith('2'));
      if (off.length > 0) {
        problems.push(`${what}: answers that were not 2xx: ${off.map(([c, n]) => `${c} x${n}`).join(', ')}`);
      }
      if (r.result.errors > 0) {
        problems.push(`${what}: ${r.result.errors} requests got no answer (${r.result.timeouts} timeouts)`);
      }
    }
    const exit = service.exitStatus();
    if (exit)
      problems.push(`the service exited during the run (${describeExit(exit)}):\n${service.tail(10)}`);

    const stopped = await service.stop('SIGTERM', 15_000);
    if (!exit && (stopped.code !== 0 || stopped.signal)) {
      problems.push(`the service ${describeExit(stopped)} on SIGTERM:\n${service.tail(10)}`);
    }
    service = null;

    // The books: every 201 is one order recorded as placed and one POST /order at the venue.
    const atVenue = postsToFake(clob);
    const recorded = await placedOrders(database);
    const consistent = recorded.placed === answered2xx && atVenue === answered2xx;
    console.log(
      `Books: ${recorded.placed} orders recorded as placed${recorded.other ? ` (other statuses: ${recorded.other})` : ''}, ` +
        `${answered2xx} answered 2xx, ${atVenue} POST /order at the fake, ${sent} sent: ` +
        (consistent ? 'consistent' : 'INCONSISTENT'),
    );
    if (!consistent) {
      problems.push(
        `the books do not add up: ${recorded.placed} placed, ${answered2xx} answered 2xx, ${atVenue} POST /order at the fake`,
      );
    }
    // Every body built was sent and answered (the drain cuts nothing off): no order is unaccounted.
    const answeredAll = 1 + answers(warm) + answers(run);
    if (sent !== answeredAll) problems.push(`${sent} orders were sent, ${answeredAll} answered`);

    console.log(`Timing the venue directly: ${VENUE_PROBES} orders, one at a time ...`);
    const venue = await probeVenue(clob, signerKey);

    const admission = summary(run.latencies);
    // Every order stays open and admission sums the wallet's open orders: a drift would show here.
    const fifth = Math.max(1, Math.floor(run.latencies.length / 5));
    const drift = {
      firstFifthP50: summary(run.latencies.slice(0, fifth)).p50,
      lastFifthP50: summary(run.latencies.slice(-fifth)).p50,
    };
    const ordersPerSecond = Math.round((run.status2xx / run.seconds) * 10) / 10;
    const report = {
      startedAt,
      database: { kind: database.kind, description: database.description },
      connections: CONNECTIONS,
      durationS: DURATION_S,
      warmupS: WARMUP_S,
      startupMs: Math.round(startupMs),
      order: {
        price_usd: PRICE,
        size_shares: SIZE,
        notional_usd: formatUsd(NOTIONAL_MICRO),
        fee_usd: formatUsd(feeMicro),
      },
      settings: { PM_RATE_LANES, RATE_LIMIT_PUBLIC_PER_MINUTE: RATE_LIMIT, PM_GEO_ALLOW_LOOPBACK: true },
      admissionMs: admission,
      ordersPerSecond,
      run: {
        seconds: Math.round(run.seconds * 100) / 100,
        orders2xx: run.status2xx,
        statusCodes: run.statusCodes,
        errors: run.result.errors,
        autocannonLatencyMs: { p50: run.result.latency.p50, p99: run.result.latency.p99 },
      },
      warmup: {
        seconds: Math.round(warm.seconds * 100) / 100,
        orders2xx: warm.status2xx,
        statusCodes: warm.statusCodes,
      },
      venue: { probes: VENUE_PROBES, ...venue },
      admissionDriftMs: drift,
      venueShareOfP50: Math.round((venue.bothMs.p50 / admission.p50) * 1000) / 10,
      books: {
        placed: recorded.placed,
        otherStatuses: recorded.other,
        answered2xx,
        postOrderAtFake: atVenue,
        sent,
      },
      problems,
      machine,
    };
    const markdown = [
      `# Purser benchmark: prediction-market orders (${database.kind})`,
      '',
      `POST /v1/pm/orders (hosted flow) against the CLOB fake on loopback: buys of ${SIZE} shares at ${PRICE} ` +
        `(1 USD, fee ${formatUsd(feeMicro)} USD), none filled; ${CONNECTIONS} connections, ${WARMUP_S} s warm-up, ` +
        `${DURATION_S} s measured (drained: ${report.run.seconds} s to the last answer). ${database.description}; ` +
        `${machine.cpus}× ${machine.cpuModel}, Node ${machine.node}, commit ${machine.commit}; ` +
        `client, service and fake share the machine. PM_RATE_LANES orders lane raised out of reach.`,
      '',
      '| orders/s | p50 ms | p99 ms | max ms | orders (201) | non-2xx | errors |',
      '|--:|--:|--:|--:|--:|--:|--:|',
      `| ${ordersPerSecond} | ${admission.p50} | ${admission.p99} | ${admission.max} | ${run.status2xx} | ` +
        `${run.result.non2xx} | ${run.result.errors} |`,
      '',
      `p50 of the first fifth of the run's orders ${drift.firstFifthP50} ms, of the last fifth ${drift.lastFifthP50} ms ` +
        `(every order stays open; admission sums the wallet's open orders).`,
      '',
      `The venue alone (the fake, timed from the bench process, ${VENUE_PROBES} orders one at a time, service stopped):`,
      '',
      '| venue round trips of one order | p50 ms | p99 ms | max ms |',
      '|---|--:|--:|--:|',
      `| GET /tick-size and GET /neg-risk, side by side | ${venue.marketMs.p50} | ${venue.marketMs.p99} | ${venue.marketMs.max} |`,
      `| POST /order | ${venue.postOrderMs.p50} | ${venue.postOrderMs.p99} | ${venue.postOrderMs.max} |`,
      `| both | ${venue.bothMs.p50} | ${venue.bothMs.p99} | ${venue.bothMs.max} |`,
      '',
      `The venue's round trips are ${report.venueShareOfP50}% of the admission p50 (unloaded venue against loaded admission).`,
      '',
      `Books after the run: ${recorded.placed} orders recorded as placed, ${answered2xx} answered 201 (first order, ` +
        `warm-up and run), ${atVenue} POST /order received by the fake: ${consistent ? 'equal' : '**NOT EQUAL**'}.`,
      ...(problems.length > 0 ? ['', ...problems.map((p) => `- **BROKEN**: ${p}`)] : []),
      '',
    ].join('\n');
    console.log(`\n${markdown}`);
    writeResults({
      [`pm-orders-${database.kind}.json`]: `${JSON.stringify(report, null, 2)}\n`,
      [`pm-orders-latest-${database.kind}.md`]: markdown,
    });
    if (problems.length > 0) {
      console.error(`\nBROKEN: ${problems.join('; ')}`);
      return 1;
    }
    return 0;
  } finally {
    if (service) await service.stop('SIGTERM', 15_000).catch(() => undefined);
    await clob?.stop();
    await database
      .drop()
      .catch((err: unknown) => console.error(`could not drop the bench database: ${String(err)}`));
  }
}

runMain(main);
