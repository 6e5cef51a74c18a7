// `npm run bench:venues` (and part of `npm run bench`): one concurrent quote over every venue of
// the devnet's Base chain, as the quote endpoint and the planner ask them: the three on-chain
// venues (QuoterV2, Router02, the Aerodrome-format router) and the two aggregator fakes on
// loopback, through the venues module (operator switch check included, on an embedded database).
// Each round sells 5,000 USDC for WETH; rounds run one after another. Reported: p50 and p99 of the
// whole concurrent quote, of the slowest single venue in the same round, and of the sum of all
// venues' times (what asking them one by one would cost). Then POST /v1/quotes over HTTP with
// autocannon: requests per second, p50 and p99. See bench/README.md.

import { PGlite } from '@electric-sql/pglite';
import { parseUnits } from 'viem';
import { createViemChainPort } from '../src/adapters/chain/viem.ts';
import { createVenueAdapters } from '../src/adapters/venues/index.ts';
import { testConfig } from '../src/config.ts';
import { openDatabase } from '../src/core/db/database.ts';
import { migrate } from '../src/core/db/migrate.ts';
import { Deadline } from '../src/core/http/deadline.ts';
import { BASE_CHAIN_ID, devnetRpcUrls, devnetToken, startDevnet } from '../src/devnet/devnet.ts';
import { devnetConfig } from '../src/devnet/config-overrides.ts';
import { quoteAllVenues } from '../src/modules/venues/index.ts';
import autocannon from 'autocannon';
import { createTestApp } from '../test/support/app.ts';
import { devnetDeps } from '../test/support/devnet-deps.ts';
import { machineFacts, runMain, summary, writeResults } from './common.ts';

const rounds = Number(process.env.BENCH_VENUE_ROUNDS ?? 200);
const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_QUOTE_CONNECTIONS ?? 10);

/** POST /v1/quotes over HTTP on an app with the devnet's venues, prices and registry. */
async function benchQuoteRoute(devnet: Awaited<ReturnType<typeof startDevnet>>) {
  const config = testConfig({ publicRateLimitPerMinute: 100_000_000 });
  const chain = createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) });
  const t = await createTestApp({
    config: { publicRateLimitPerMinute: 100_000_000 },
    deps: { ...(await devnetDeps(devnet.info(), config, chain)), devnet: devnet.info() },
  });
  try {
    await t.app.fastify.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.fastify.server.address() as { port: number };
    const result = await autocannon({
      url: `http://127.0.0.1:${port}/v1/quotes`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sell_token: 'USDC', buy_token: 'WETH', sell_amount: '5000000000' }),
      connections,
      duration,
      warmup: { connections, duration: 2 },
      timeout: 10,
    });
    return {
      connections,
      durationSeconds: duration,
      requestsPerSecond: Math.round(result.requests.mean * 10) / 10,
      latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
      requests: result.requests.total,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
      database: t.database.kind,
    };
  } finally {
    await t.close();
  }
}
const warmup = 10;

async function main(): Promise<number> {
  const devnet = await startDevnet({ chainIds: [BASE_CHAIN_ID] });
  const pglite = new PGlite();
  const handle = await openDatabase(testConfig(), { pglite });
  try {
    await migrate(handle.db);
    const config = testConfig();
    const venues = createVenueAdapters({
      config: devnetConfig(config, devnet.info()),
      chain: createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) }),
    });
    const sale = {
      chainId: BASE_CHAIN_ID,
      sellToken: devnetToken(devnet, BASE_CHAIN_ID, 'USDC').address,
      buyToken: devnetToken(devnet, BASE_CHAIN_ID, 'WETH').address,
      sellAmount: parseUnits('5000', 6),
    };
    const deps = { db: handle.db, venues, venueTimeoutMs: config.venues.timeoutMs };
    const whole: number[] = [];
    const slowest: number[] = [];
    const sum: number[] = [];
    const perVenue: Record<string, number[]> = {};
    const failures: string[] = [];
    for (let i = 0; i < warmup + rounds; i++) {
      const started = performance.now();
      const result = await quoteAllVenues(deps, { ...sale, deadline: new Deadline(10_000) });
      const elapsed = performance.now() - started;
      if (i < warmup) continue;
      const times = [
        ...result.quotes.map((q) => [q.venue, q.ms] as const),
        ...result.failures.map((f) => [f.venue, f.ms] as const),
      ];
      for (const f of result.failures) failures.push(`${f.venue}: ${f.kind}`);
      whole.push(elapsed);
      slowest.push(Math.max(...times.map(([, ms]) => ms)));
      sum.push(times.reduce((s, [, ms]) => s + ms, 0));
      for (const [venue, ms] of times) (perVenue[venue] ??= []).push(ms);
    }
    const route = await benchQuoteRoute(devnet);
    const report = {
      startedAt: new Date().toISOString(),
      rounds,
      venues: venues.map((v) => v.venue),
      sale: 'USDC → WETH, 5,000 USDC, chain 8453 (devnet)',
      wholeQuoteMs: summary(whole),
      slowestVenueMs: summary(slowest),
      sumOfVenuesMs: summary(sum),
      perVenueMs: Object.fromEntries(Object.entries(perVenue).map(([v, xs]) => [v, summary(xs)])),
      failures: [...new Set(failures)],
      quoteRoute: route,
      machine: machineFacts(),
    };
    const rows = [
      '| Measure | p50 ms | p99 ms | max ms |',
      '|---|--:|--:|--:|',
      `| whole concurrent quote (${report.venues.length} venues) | ${report.wholeQuoteMs.p50} | ${report.wholeQuoteMs.p99} | ${report.wholeQuoteMs.max} |`,
      `| slowest single venue, same round | ${report.slowestVenueMs.p50} | ${report.slowestVenueMs.p99} | ${report.slowestVenueMs.max} |`,
      `| sum of the venues (one by one) | ${report.sumOfVenuesMs.p50} | ${report.sumOfVenuesMs.p99} | ${report.sumOfVenuesMs.max} |`,
      ...Object.entries(report.perVenueMs).map(([v, s]) => `| ${v} alone | ${s.p50} | ${s.p99} | ${s.max} |`),
    ];
    const markdown =
      `# Purser benchmark: concurrent venue quote\n\n${report.sale}; ${rounds} rounds after ${warmup} warm-up, ` +
      `one at a time; ${report.machine.cpus}× ${report.machine.cpuModel}, Node ${report.machine.node}, ` +
      `commit ${report.machine.commit}.\n\n${rows.join('\n')}\n` +
      (report.failures.length ? `\nVenue failures seen: ${report.failures.join(', ')}\n` : '') +
      `\n## POST /v1/quotes over HTTP (${route.database})\n\n${route.connections} connections, ${route.durationSeconds} s ` +
      `after 2 s warm-up; 5,000 USDC → WETH.\n\n| req/s | p50 ms | p99 ms | max ms | requests | non-2xx | errors |\n` +
      `|--:|--:|--:|--:|--:|--:|--:|\n| ${route.requestsPerSecond} | ${route.latencyMs.p50} | ${route.latencyMs.p99} | ` +
      `${route.latencyMs.max} | ${route.requests} | ${route.non2xx} | ${route.errors} |\n`;
    console.log(`
${markdown}`);
    writeResults({ 'venues.json': `${JSON.stringify(report, null, 2)}\n`, 'venues-latest.md': markdown });
    return report.failures.length > 0 || route.non2xx > 0 || route.errors > 0 ? 1 : 0;
  } finally {
    await handle.close();
    await pglite.close();
    await devnet.stop();
  }
}

runMain(main);
