// The Prometheus metrics as an operator's scraper reads them: served on their own port only,
// in the text exposition format (parsed here by a Prometheus text-format parser), counting the
// API's requests by route pattern, status and error code, and reading the job queue, open
// intents, the webhook backlog and (on PostgreSQL) the database pool when scraped.

import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/support/app.ts';
import { registerScrapedGauges } from '../metrics.ts';
import { enqueueJob } from './jobs/index.ts';
import { createMetrics, serveMetrics } from './metrics.ts';

const metrics = createMetrics();
let t: TestApp;
let served: Awaited<ReturnType<typeof serveMetrics>>;

beforeAll(async () => {
  t = await createTestApp({ deps: { metrics } });
  registerScrapedGauges(metrics, {
    db: t.db.db,
    clock: t.deps.clock,
    ...(t.db.kind === 'postgres' ? { pool: t.db.pool } : {}),
  });
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

  it('answer nothing but GET /metrics on their port', async () => {
    expect((await fetch(served.url.replace('/metrics', '/v1/tokens'))).status).toBe(404);
    expect((await fetch(served.url, { method: 'POST' })).status).toBe(404);
  });
});
