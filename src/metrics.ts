// The gauges read when the metrics are scraped, each from the module that owns what it counts:
// the job queue by job name, open intents by status, the webhook backlog, and the database pool;
// and the counters of what happened, fed by the committed domain events and webhook deliveries.

import type pg from 'pg';
import type { Clock } from './core/clock.ts';
import type { Db } from './core/db/database.ts';
import { jobQueueStats } from './core/jobs/index.ts';
import { Counter, Histogram } from 'prom-client';
import type { ChainPort } from './adapters/chain/port.ts';
import { gaugeOnScrape, type GaugeReading, type Metrics } from './core/metrics.ts';
import { watchCursors } from './modules/chainwatch/index.ts';
import { peekTokens, PM_RATE_LANE_KINDS, rateLaneName, type PmRateLanes } from './modules/ratelanes/index.ts';
import { openIntentCounts } from './modules/intents/index.ts';
import { observeBatches } from './modules/ledger/index.ts';
import { deliveryBacklog } from './modules/webhooks/index.ts';

export function registerScrapedGauges(
  metrics: Metrics,
  deps: { db: Db; clock: Clock; pool?: pg.Pool; chain?: ChainPort; rateLanes?: PmRateLanes },
): void {
  const { db, clock } = deps;
  // Names with a job waiting, scheduled or running (not those with only recent failures).
  const jobs = async () =>
    (await jobQueueStats(db, clock.now())).filter((j) => j.waiting + j.scheduled + j.running > 0);
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
  const lanes = deps.rateLanes;
  if (lanes) {
    gaugeOnScrape(metrics, {
      name: 'purser_rate_lane_tokens',
      help: "Tokens left in a platform rate lane now (a venue's orders, cancels, reads), and its capacity.",
      labelNames: ['lane', 'of'],
      read: async () => {
        const readings: GaugeReading[] = [];
        for (const kind of PM_RATE_LANE_KINDS) {
          const lane = rateLaneName('polymarket', kind);
          const now = await peekTokens(db, clock, lane, lanes[kind]);
          readings.push({ labels: { lane, of: 'left' }, value: now.tokens });
          readings.push({ labels: { lane, of: 'capacity' }, value: now.capacity });
        }
        return readings;
      },
    });
  }
  const chain = deps.chain;
  if (chain) {
    gaugeOnScrape(metrics, {
      name: 'purser_chain_watch_lag_blocks',
      help: "Blocks between a chain's head and the next block the chain watcher reads, by chain.",
      labelNames: ['chain_id'],
      read: async () => {
        const readings: GaugeReading[] = [];
        for (const cursor of await watchCursors(db)) {
          // A chain whose node does not answer is left out of this scrape, not reported as 0.
          const head = await chain.getBlockNumber(cursor.chainId).catch(() => null);
          if (head === null) continue;
          const lag = head + 1n - cursor.nextBlock;
          readings.push({ labels: { chain_id: String(cursor.chainId) }, value: Number(lag > 0n ? lag : 0n) });
        }
        return readings;
      },
    });
  }
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

export interface DomainObservers {
  /** A committed domain event (the events module's log sink calls it once per event). */
  event(kind: string, payload: Record<string, unknown>): void;
  /** A webhook delivery settled: delivered, or dead-lettered; seconds since its event. */
  delivery(outcome: 'delivered' | 'dead_lettered', kind: string, seconds: number): void;
}

const observers = new WeakMap<Metrics, DomainObservers>();

/** The counters fed by domain events and webhook deliveries, registered once per `metrics`. */
export function domainObservers(metrics: Metrics): DomainObservers {
  const known = observers.get(metrics);
  if (known) return known;
  const registers = [metrics.registry];
  const events = new Counter({
    name: 'purser_events_total',
    help: 'Domain events committed, by kind (intent.planned, intent.filled, rebalance.minted…).',
    labelNames: ['kind'] as const,
    registers,
  });
  const intentsEnded = new Counter({
    name: 'purser_intents_ended_total',
    help: 'Intents that ended, by status (filled, aborted, cancelled) and abort reason.',
    labelNames: ['status', 'reason'] as const,
    registers,
  });
  const slices = new Histogram({
    name: 'purser_slice_seconds',
    help: "A slice's time from its start to its settlement on chain, by venue and state.",
    labelNames: ['venue', 'state'] as const,
    buckets: [0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300],
    registers,
  });
  const deliveries = new Counter({
    name: 'purser_webhook_deliveries_total',
    help: 'Webhook deliveries settled, by outcome (delivered, dead_lettered).',
    labelNames: ['outcome'] as const,
    registers,
  });
  const deliveryLatency = new Histogram({
    name: 'purser_webhook_delivery_seconds',
    help: 'Time from an event to its webhook delivered (or dead-lettered), by outcome.',
    labelNames: ['outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600],
    registers,
  });
  const made: DomainObservers = {
    event(kind, payload) {
      events.inc({ kind });
      if (kind === 'intent.filled') intentsEnded.inc({ status: 'filled', reason: '' });
      else if (kind === 'intent.cancelled') intentsEnded.inc({ status: 'cancelled', reason: '' });
      else if (kind === 'intent.aborted') {
        intentsEnded.inc({
          status: 'aborted',
          reason: typeof payload.reason === 'string' ? payload.reason : '',
        });
      } else if (kind === 'intent.slice_settled') {
        const total = (payload.timings_ms as { total?: unknown } | undefined)?.total;
        if (typeof total === 'number') {
          slices.observe(
            { venue: String(payload.venue ?? ''), state: String(payload.state ?? '') },
            total / 1000,
          );
        }
      }
    },
    delivery(outcome, _kind, seconds) {
      deliveries.inc({ outcome });
      deliveryLatency.observe({ outcome }, seconds);
    },
  };
  observers.set(metrics, made);
  return made;
}

/**
 * The ledger's batched bookings (group commit): how many bookings each statement carried, how long
 * each booking waited for its statement, and the batches whose statement failed as a whole (their
 * bookings then go one by one). Registered once per `metrics`, for `db`'s batcher.
 */
export function registerBatchMetrics(metrics: Metrics, db: Db): void {
  const registers = [metrics.registry];
  const bookings = new Histogram({
    name: 'purser_ledger_batch_bookings',
    help: 'Bookings per batched statement of the ledger (fees and other bookings that commit alone).',
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers,
  });
  const wait = new Histogram({
    name: 'purser_ledger_batch_wait_seconds',
    help: 'Time a booking waited in the batcher before its statement went out.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5],
    registers,
  });
  const fallbacks = new Counter({
    name: 'purser_ledger_batch_fallbacks_total',
    help: 'Batched statements that failed as a whole, their bookings then retried one by one.',
    registers,
  });
  observeBatches(db, {
    statement(count, waitedSeconds) {
      bookings.observe(count);
      for (const seconds of waitedSeconds) wait.observe(seconds);
    },
    fallback() {
      fallbacks.inc();
    },
  });
}
