// The Prometheus metrics as an operator's scraper reads them: served on their own port only,
// in the text exposition format (parsed here by a Prometheus text-format parser), counting the
// API's requests by route pattern, status and error code, the committed domain events and ended
// intents, and reading the job queue, open intents, the webhook backlog, a rate lane's tokens,
// the chain watcher's lag and (on PostgreSQL) the database pool when scraped; the event loop's
// delay between scrapes and the ledger's batched statements.

import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/support/app.ts';
import { bearer, createAccountWithSession } from '../../test/support/identity.ts';
import { createViemChainPort } from '../adapters/chain/viem.ts';
import { devnetRpcUrls } from '../devnet/devnet.ts';
import { emitEvent } from '../modules/events/index.ts';
import { rateLaneName, takeTokens } from '../modules/ratelanes/index.ts';
import { withTransaction, type Tx } from './db/database.ts';
import { registerBatchMetrics, registerScrapedGauges } from '../metrics.ts';
import { groupBatcher, prepaidAccount, transfer, TREASURY, USD } from '../modules/ledger/index.ts';
import { newId } from './ids.ts';
import { enqueueJob } from './jobs/index.ts';
import { createMetrics, serveMetrics } from './metrics.ts';

const devnet = inject('devnet');
const metrics = createMetrics();
let t: TestApp;
let served: Awaited<ReturnType<typeof serveMetrics>>;

beforeAll(async () => {
  t = await createTestApp({ deps: { metrics } });
  registerScrapedGauges(metrics, {
    db: t.db.db,
    clock: t.deps.clock,
    chain: createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) }),
    rateLanes: t.deps.config.pm.rateLanes,
    ...(t.db.kind === 'postgres' ? { pool: t.db.pool } : {}),
  });
  registerBatchMetrics(metrics, t.db.db);
  served = await serveMetrics(metrics, '127.0.0.1', 0);
});
afterAll(async () => {
  await served?.close();
  await t?.close();
});

async function scrape(): Promise<ParsedFamily[]> {
  return parsePrometheusTextFormat(await scrapeText());
}

async function scrapeText(): Promise<string> {
  const res = await fetch(served.url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
  return res.text();
}

const family = (families: ParsedFamily[], name: string) => {
  const found = families.find((f) => f.name === name);
  expect(found, `no ${name} in the scrape`).toBeDefined();
  return found!;
};
const sample = (f: ParsedFamily, labels: Record<string, string>) =>
  f.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));

describe('metrics', () => {
  it('count requests by route pattern, status and error code, with their latency', async () => {
    for (let i = 0; i < 3; i += 1) {
      expect(
        (await t.app.fastify.inject({ method: 'GET', url: '/v1/tokens?chain_id=8453' })).statusCode,
      ).toBe(200);
    }
    const id = '00000000-0000-4000-8000-000000000000';
    const denied = await t.app.fastify.inject({ method: 'GET', url: `/v1/intents/${id}` });
    expect(denied.statusCode).toBe(401);
    await t.app.fastify.inject({ method: 'GET', url: '/v1/nowhere/at/all' });

    const text = await scrapeText();
    const families = parsePrometheusTextFormat(text);
    const requests = family(families, 'purser_http_requests_total');
    expect(requests.type).toBe('COUNTER');
    expect(sample(requests, { method: 'GET', route: '/v1/tokens', status: '200', code: '' })?.value).toBe(
      '3',
    );
    // The route's pattern, never the raw path: ids do not become labels.
    expect(
      sample(requests, {
        route: '/v1/intents/:id',
        status: '401',
        code: denied.json<{ code: string }>().code,
      })?.value,
    ).toBe('1');
    expect(requests.metrics.some((m) => m.labels?.['route']?.includes(id))).toBe(false);
    expect(sample(requests, { route: 'unmatched', status: '404', code: 'NOT_FOUND' })?.value).toBe('1');

    // The parser folds a labelled histogram's series together: the type from it, each series'
    // count and sum from their lines.
    expect(family(families, 'purser_http_request_duration_seconds').type).toBe('HISTOGRAM');
    const series = 'method="GET",route="/v1/tokens"';
    expect(text).toContain(`purser_http_request_duration_seconds_count{${series}} 3\n`);
    expect(text).toContain(`purser_http_request_duration_seconds_bucket{le="+Inf",${series}} 3\n`);
    const sumLine = text
      .split('\n')
      .find((l) => l.startsWith(`purser_http_request_duration_seconds_sum{${series}} `));
    expect(Number(sumLine?.split(' ').at(-1))).toBeGreaterThan(0);
  });

  it('read the job queue, open intents and the webhook backlog when scraped', async () => {
    const before = await scrape();
    const waitingBefore = Number(
      sample(family(before, 'purser_jobs_waiting'), { name: 'metrics.test' })?.value ?? '0',
    );
    const due = new Date(t.deps.clock.now().getTime() - 90_000);
    await enqueueJob(t.db.db, t.deps.clock, { name: 'metrics.test', runAt: due });
    await enqueueJob(t.db.db, t.deps.clock, { name: 'metrics.test' });
    // Not due yet: not waiting.
    await enqueueJob(t.db.db, t.deps.clock, {
      name: 'metrics.test',
      runAt: new Date(t.deps.clock.now().getTime() + 3_600_000),
    });

    const families = await scrape();
    expect(sample(family(families, 'purser_jobs_waiting'), { name: 'metrics.test' })?.value).toBe(
      String(waitingBefore + 2),
    );
    const oldest = Number(
      sample(family(families, 'purser_jobs_oldest_waiting_seconds'), { name: 'metrics.test' })?.value,
    );
    expect(oldest).toBeGreaterThanOrEqual(90);
    expect(family(families, 'purser_jobs_running').type).toBe('GAUGE');
    expect(family(families, 'purser_intents_open').type).toBe('GAUGE');
    expect(family(families, 'purser_webhook_backlog').metrics[0]?.value).toBe('0');
    if (t.db.kind === 'postgres') {
      const pool = family(families, 'purser_db_pool_connections');
      expect(Number(sample(pool, { state: 'total' })?.value)).toBeGreaterThanOrEqual(1);
    }
  });

  it('count committed domain events by kind and ended intents by status and reason, not a rolled-back one', async () => {
    const count = (families: ParsedFamily[], name: string, labels: Record<string, string>) => {
      const f = families.find((x) => x.name === name);
      return Number((f && sample(f, labels)?.value) ?? '0');
    };
    const before = await scrape();
    const user = await createAccountWithSession(t.db.db);
    const made = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/keys',
      headers: bearer(user.sessionToken),
      payload: {},
    });
    expect(made.statusCode, made.body).toBe(201);
    const aborted = (reason: string) => (tx: Tx) =>
      emitEvent(tx, t.deps.clock, {
        accountId: user.accountId,
        kind: 'intent.aborted',
        subject: 'int_metrics',
        payload: { id: 'int_metrics', reason },
      });
    await withTransaction(t.db.db, aborted('SLIPPAGE_EXCEEDED'));
    await expect(
      withTransaction(t.db.db, async (tx) => {
        await aborted('NEVER_COMMITTED')(tx);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    // Counted with the event's log line, a turn of the event loop after the commit.
    await new Promise((r) => setImmediate(r));

    const after = await scrape();
    expect(family(after, 'purser_events_total').type).toBe('COUNTER');
    expect(count(after, 'purser_events_total', { kind: 'key.created' })).toBe(
      count(before, 'purser_events_total', { kind: 'key.created' }) + 1,
    );
    const ended = { status: 'aborted', reason: 'SLIPPAGE_EXCEEDED' };
    expect(count(after, 'purser_intents_ended_total', ended)).toBe(
      count(before, 'purser_intents_ended_total', ended) + 1,
    );
    expect(count(after, 'purser_intents_ended_total', { status: 'aborted', reason: 'NEVER_COMMITTED' })).toBe(
      0,
    );
  });

  it("report how late the event loop ran between two scrapes, and the ledger's batched statements", async () => {
    // The first scrape starts the loop's timer (and any earlier one reads it); then the loop is
    // blocked for 80 ms by synchronous work, as a slow handler would.
    await scrape();
    await new Promise((r) => setTimeout(r, 30));
    const until = performance.now() + 80;
    while (performance.now() < until) {
      // blocking the event loop on purpose
    }
    await new Promise((r) => setTimeout(r, 30));
    const delay = family(await scrape(), 'purser_event_loop_delay_seconds');
    expect(delay.type).toBe('GAUGE');
    expect(Number(sample(delay, { quantile: '1' })?.value)).toBeGreaterThanOrEqual(0.06);
    expect(Number(sample(delay, { quantile: '0.5' })?.value)).toBeLessThan(0.06);
    // Nothing blocked since: the next scrape reads a quiet loop.
    await new Promise((r) => setTimeout(r, 50));
    const quiet = family(await scrape(), 'purser_event_loop_delay_seconds');
    expect(Number(sample(quiet, { quantile: '1' })?.value)).toBeLessThan(0.06);

    // Twelve bookings handed to the batcher at once go out in fewer statements, each counted once.
    const histogram = (families: ParsedFamily[], name: string) => {
      const m = family(families, name).metrics[0] as { count?: string; sum?: string } | undefined;
      return { count: Number(m?.count ?? 0), sum: Number(m?.sum ?? 0) };
    };
    const before = await scrape();
    const user = await createAccountWithSession(t.db.db);
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        groupBatcher(t.db.db).post(t.deps.clock, {
          settlementId: `metrics:${newId('n')}`,
          accountId: user.accountId,
          kind: 'topup',
          entries: transfer(TREASURY, prepaidAccount(user.accountId), USD, 1_000_000n),
        }),
      ),
    );
    expect(results.every((r) => r.ok && !r.replayed)).toBe(true);
    const after = await scrape();
    const statements = histogram(after, 'purser_ledger_batch_bookings');
    const statementsBefore = histogram(before, 'purser_ledger_batch_bookings');
    expect(statements.sum - statementsBefore.sum).toBe(12);
    expect(statements.count - statementsBefore.count).toBeGreaterThanOrEqual(1);
    expect(statements.count - statementsBefore.count).toBeLessThan(12);
    const waits = histogram(after, 'purser_ledger_batch_wait_seconds');
    expect(waits.count - histogram(before, 'purser_ledger_batch_wait_seconds').count).toBe(12);
    expect(family(after, 'purser_ledger_batch_fallbacks_total').type).toBe('COUNTER');
  });

  it("read a rate lane's tokens left and the chain watcher's lag behind the head when scraped", async () => {
    const lane = rateLaneName('polymarket', 'orders');
    const config = t.deps.config.pm.rateLanes.orders;
    const taken = await takeTokens(t.db.db, t.deps.clock, lane, config, 3);
    expect(taken.ok).toBe(true);
    // The watcher's cursor on Base at block 1: the lag is the head's number.
    const client = createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) });
    await t.db.db
      .insertInto('chain_watch_cursors')
      .values({ chain_id: 8453, next_block: '1', updated_at: t.deps.clock.now() })
      .execute();
    const head = await client.getBlockNumber(8453);

    const families = await scrape();
    const tokens = family(families, 'purser_rate_lane_tokens');
    expect(Number(sample(tokens, { lane, of: 'capacity' })?.value)).toBe(config.capacity);
    const left = Number(sample(tokens, { lane, of: 'left' })?.value);
    expect(left).toBeGreaterThanOrEqual(config.capacity - 3);
    expect(left).toBeLessThan(config.capacity);
    const lag = Number(
      sample(family(families, 'purser_chain_watch_lag_blocks'), { chain_id: '8453' })?.value,
    );
    expect(lag).toBeGreaterThanOrEqual(Number(head));
  });

  it('answer nothing but GET /metrics on their port', async () => {
    expect((await fetch(served.url.replace('/metrics', '/v1/tokens'))).status).toBe(404);
    expect((await fetch(served.url, { method: 'POST' })).status).toBe(404);
  });
});
