// Prometheus metrics (prom-client): what the process counts as it works (HTTP requests by route,
// status and error code, their latency) and gauges read when scraped (queues, backlogs, the
// database pool), served on an operator port of their own (METRICS_PORT), never on the public API.
// docs/operations.md, "Metrics", lists them with a starter dashboard's queries.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  /** One answered request: `route` is the route's pattern (never the raw path), `code` its error code or ''. */
  observeRequest(method: string, route: string, status: number, code: string, seconds: number): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const requests = new Counter({
    name: 'purser_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern, status and error code.',
    labelNames: ['method', 'route', 'status', 'code'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'purser_http_request_duration_seconds',
    help: 'Time from receiving a request to answering it, by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  eventLoopDelay(registry);
  return {
    registry,
    observeRequest(method, route, status, code, seconds) {
      requests.inc({ method, route, status: String(status), code });
      duration.observe({ method, route }, seconds);
    },
  };
}

/**
 * How late the event loop ran a 10 ms timer between two scrapes (the median, the 99th percentile
 * and the largest, in seconds): synchronous work that blocks the loop delays every request waiting
 * on it. The timer starts at the first scrape, which reports nothing, so a process never scraped
 * runs none.
 */
function eventLoopDelay(registry: Registry): void {
  let histogram: IntervalHistogram | null = null;
  new Gauge({
    name: 'purser_event_loop_delay_seconds',
    help: 'How late the event loop ran a 10 ms timer since the previous scrape: quantile 0.5, 0.99 and 1 (the largest).',
    labelNames: ['quantile'],
    registers: [registry],
    collect() {
      this.reset();
      if (!histogram) {
        histogram = monitorEventLoopDelay({ resolution: 10 });
        histogram.enable();
        return;
      }
      if (histogram.count > 0) {
        this.set({ quantile: '0.5' }, histogram.percentile(50) / 1e9);
        this.set({ quantile: '0.99' }, histogram.percentile(99) / 1e9);
        this.set({ quantile: '1' }, histogram.max / 1e9);
      }
      histogram.reset();
    },
  });
}

export interface GaugeReading {
  labels: Record<string, string>;
  value: number;
}

/** A gauge whose values are read when it is scraped (`read`), replacing the previous reading. */
export function gaugeOnScrape(
  metrics: Metrics,
  spec: { name: string; help: string; labelNames: string[]; read: () => Promise<GaugeReading[]> },
): void {
  new Gauge({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labelNames,
    registers: [metrics.registry],
    async collect() {
      const readings = await spec.read();
      this.reset();
      for (const r of readings) this.set(r.labels, r.value);
    },
  });
}

/** The metrics on http://host:port/metrics (text exposition format); every other path is 404. */
export async function serveMetrics(
  metrics: Metrics,
  host: string,
  port: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: GET /metrics\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (err: Error) =>
        res
          .writeHead(503, { 'content-type': 'text/plain; charset=utf-8' })
          .end(`Metrics unavailable: ${err.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${address.port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
