// The gauges read when the metrics are scraped, each from the module that owns what it counts:
// the job queue by job name, open intents by status, the webhook backlog, and the database pool.

import type pg from 'pg';
import type { Clock } from './core/clock.ts';
import type { Db } from './core/db/database.ts';
import { jobQueueStats } from './core/jobs/index.ts';
import { gaugeOnScrape, type Metrics } from './core/metrics.ts';
import { openIntentCounts } from './modules/intents/index.ts';
import { deliveryBacklog } from './modules/webhooks/index.ts';

export function registerScrapedGauges(
  metrics: Metrics,
  deps: { db: Db; clock: Clock; pool?: pg.Pool },
): void {
  const { db, clock } = deps;
  const jobs = () => jobQueueStats(db, clock.now());
  gaugeOnScrape(metrics, {
    name: 'purser_jobs_waiting',
    help: 'Jobs due to run and not yet taken, by job name.',
    labelNames: ['name'],
    read: async () => (await jobs()).map((j) => ({ labels: { name: j.name }, value: j.waiting })),
  });
  gaugeOnScrape(metrics, {
    name: 'purser_jobs_running',
    help: 'Jobs a worker holds now, by job name.',
    labelNames: ['name'],
    read: async () => (await jobs()).map((j) => ({ labels: { name: j.name }, value: j.running })),
  });
  gaugeOnScrape(metrics, {
    name: 'purser_jobs_oldest_waiting_seconds',
    help: 'How long the oldest job due to run has waited, by job name.',
    labelNames: ['name'],
    read: async () =>
      (await jobs()).map((j) => ({ labels: { name: j.name }, value: j.oldestWaitingSeconds })),
  });
  gaugeOnScrape(metrics, {
    name: 'purser_intents_open',
    help: 'Intents not finished yet, by status (planned, executing).',
    labelNames: ['status'],
    read: async () =>
      (await openIntentCounts(db)).map((r) => ({ labels: { status: r.status }, value: r.count })),
  });
  gaugeOnScrape(metrics, {
    name: 'purser_webhook_backlog',
    help: 'Webhook deliveries still to make.',
    labelNames: [],
    read: async () => [{ labels: {}, value: (await deliveryBacklog(db, clock.now())).pending }],
  });
  gaugeOnScrape(metrics, {
    name: 'purser_webhook_oldest_pending_seconds',
    help: 'How long the oldest webhook delivery still to make has waited since its event.',
    labelNames: [],
    read: async () => [{ labels: {}, value: (await deliveryBacklog(db, clock.now())).oldestSeconds }],
  });
  const pool = deps.pool;
  if (pool) {
    gaugeOnScrape(metrics, {
      name: 'purser_db_pool_connections',
      help: 'Database pool connections: open in total, idle, and requests waiting for one.',
      labelNames: ['state'],
      read: () =>
        Promise.resolve([
          { labels: { state: 'total' }, value: pool.totalCount },
          { labels: { state: 'idle' }, value: pool.idleCount },
          { labels: { state: 'waiting' }, value: pool.waitingCount },
        ]),
    });
  }
}
