// Webhook delivery workers. The outbox rows come from a trigger on `events` (same transaction as
// the event), whose NOTIFY on `purser_webhooks` wakes every dispatcher at commit; a slow safety
// poll covers a lost listening connection and retries that fall due. A claim takes a lease: a
// dispatcher killed mid-delivery loses nothing, another one retries the row once the lease ends
// (delivery is at least once; receivers dedupe on the event id).

import { eventsByIds } from '../events/index.ts';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { sql } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { DatabaseHandle, Db } from '../../core/db/database.ts';
import { webhookSecretContext, type SealingKeyring } from '../../core/sealing.ts';
import { deliveryBody, DELIVERY_TIMEOUT_MS, sendDelivery, type DeliveryOutcome } from './send.ts';

/** Seconds to wait after failed attempt n (index n-1): 1m, 5m, 30m, 2h, 6h, 12h, 24h, 24h. */
export const RETRY_SCHEDULE_SECONDS = [60, 300, 1800, 7200, 21_600, 43_200, 86_400, 86_400] as const;
/** The first attempt plus one per step of the schedule; then the delivery is dead-lettered. */
export const MAX_DELIVERY_ATTEMPTS = RETRY_SCHEDULE_SECONDS.length + 1;
export const WEBHOOK_CHANNEL = 'purser_webhooks';

export interface DispatcherLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface WebhookDispatcherParameters {
  db: Db;
  clock: Clock;
  log: DispatcherLogger;
  keyring: SealingKeyring;
  /** Production: every connection re-checks the resolved address (no private targets). */
  production: boolean;
  /** Wakes the dispatcher on NOTIFY; without it, only the poll interval does. */
  listen?: DatabaseHandle['listen'];
  /** Deliveries in flight at once; default 32. */
  concurrency?: number;
  /** Safety poll when no NOTIFY arrives; default 5000 ms. */
  pollIntervalMs?: number;
  /** How long a claim holds a delivery; default 30 s (longer than the request timeout). */
  leaseMs?: number;
  /** Per-attempt request timeout; default 10 s. */
  timeoutMs?: number;
  workerId?: string;
  /** Counts a settled delivery (metrics): its outcome, the event's kind, seconds since the event. */
  observe?: (outcome: 'delivered' | 'dead_lettered', kind: string, seconds: number) => void;
}

export interface WebhookDispatcher {
  readonly workerId: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Claims one batch of due deliveries, attempts them and returns how many it attempted. */
  runOnce(): Promise<number>;
  /** Runs batches until none is due. Returns the attempts made. */
  drain(): Promise<number>;
}

interface Claimed {
  id: string;
  account_id: string;
  event_id: string;
  attempts: number;
  created_at: Date;
  kind: string;
  payload: unknown;
  event_created_at: Date;
  url: string | null;
  secret_sealed: string | null;
}

type Outcome = DeliveryOutcome;

interface Attempted {
  row: Claimed;
  outcome: Outcome;
}

export function createWebhookDispatcher(params: WebhookDispatcherParameters): WebhookDispatcher {
  const { db, clock, log } = params;
  const concurrency = params.concurrency ?? 32;
  const pollIntervalMs = params.pollIntervalMs ?? 5000;
  const leaseMs = params.leaseMs ?? 30_000;
  const timeoutMs = params.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const workerId = params.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const secrets = new Map<string, string>();
  const stopAll = new AbortController();
  let phase: 'idle' | 'running' | 'stopped' = 'idle';
  let loop: Promise<void> | null = null;
  let wake: (() => void) | null = null;
  let woken = false;
  let unlisten: (() => Promise<void>) | null = null;

  function poke(): void {
    woken = true;
    wake?.();
  }

  async function claim(limit: number): Promise<Claimed[]> {
    const now = clock.now();
    const leaseEnd = new Date(now.getTime() + leaseMs);
    const { rows } = await sql<Omit<Claimed, 'kind' | 'payload' | 'event_created_at'>>`
      WITH picked AS MATERIALIZED (
        SELECT id FROM webhook_deliveries
        WHERE state = 'pending' AND next_attempt_at <= ${now}
          AND (locked_until IS NULL OR locked_until < ${now})
        ORDER BY next_attempt_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ), claimed AS (
        UPDATE webhook_deliveries d SET
          locked_by = ${workerId}, locked_until = ${leaseEnd}, attempts = d.attempts + 1, updated_at = ${now}
        FROM picked WHERE d.id = picked.id
        RETURNING d.id, d.account_id, d.event_id, d.attempts, d.created_at
      )
      SELECT c.*, w.url, w.secret_sealed
      FROM claimed c
      LEFT JOIN webhook_endpoints w ON w.account_id = c.account_id`.execute(db);
    // The events module reads the events the deliveries carry (append-only: no snapshot needed).
    const events = await eventsByIds(
      db,
      rows.map((r) => r.event_id),
    );
    return rows.flatMap((row) => {
      const event = events.get(row.event_id);
      return event
        ? [{ ...row, kind: event.kind, payload: event.payload, event_created_at: event.created_at }]
        : [];
    });
  }

  function secretOf(row: Claimed): string {
    if (!row.secret_sealed) throw new Error('the account has no webhook secret');
    const cacheKey = `${row.account_id}:${row.secret_sealed}`;
    let secret = secrets.get(cacheKey);
    if (secret === undefined) {
      secret = params.keyring.open(webhookSecretContext(row.account_id), row.secret_sealed);
      secrets.set(cacheKey, secret);
    }
    return secret;
  }

  async function attempt(row: Claimed): Promise<Outcome> {
    let body: string;
    try {
      body = deliveryBody({
        id: row.event_id,
        kind: row.kind,
        created_at: row.event_created_at,
        payload: row.payload,
      });
    } catch (err) {
      return {
        status: null,
        error: (err instanceof Error ? err.message : String(err)).slice(0, 500),
        envelope: null,
      };
    }
    return sendDelivery(
      {
        url: row.url,
        secret: () => secretOf(row),
        eventId: row.event_id,
        body,
        attempt: row.attempts,
        unixSeconds: Math.floor(clock.now().getTime() / 1000),
      },
      {
        production: params.production,
        signal: AbortSignal.any([stopAll.signal, AbortSignal.timeout(timeoutMs)]),
      },
    );
  }

  /**
   * The signed envelopes of these attempts, kept with their events (migration 0016) in the
   * statement that records the outcomes, while each delivery is still in the outbox (offboarding
   * settles it). A compacted envelope is never written again. Null when none got as far as signing.
   * One statement never holds two attempts of one event (event_id is unique in the outbox).
   */
  function envelopeCte(attempts: Attempted[], now: Date) {
    const signed = attempts.flatMap(({ row, outcome }) =>
      outcome.envelope
        ? [
            sql`(${row.id}::bigint, ${row.event_id}, ${row.account_id}, ${outcome.envelope.body},
              ${outcome.envelope.signature}, ${row.attempts}::integer)`,
          ]
        : [],
    );
    if (signed.length === 0) return null;
    return sql`envelope AS (
        INSERT INTO webhook_envelopes
          (event_id, account_id, body, signature, attempts, first_signed_at, last_signed_at)
        SELECT s.event_id, s.account_id, s.body, s.signature, s.attempts, ${now}, ${now}
        FROM (VALUES ${sql.join(signed)}) AS s (delivery_id, event_id, account_id, body, signature, attempts)
        WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = s.delivery_id AND state = 'pending')
        ON CONFLICT (event_id) DO UPDATE SET signature = EXCLUDED.signature, attempts = EXCLUDED.attempts,
          last_signed_at = EXCLUDED.last_signed_at
        WHERE webhook_envelopes.hash IS NULL
      )`;
  }

  /**
   * The successful attempts of one batch, settled in one statement: one round trip and one commit
   * for the batch instead of one per delivery.
   */
  async function recordDelivered(delivered: Attempted[]) {
    const now = clock.now();
    const envelope = envelopeCte(delivered, now);
    const settled = sql.join(
      delivered.map(({ row, outcome }) => sql`(${row.id}::bigint, ${outcome.status}::integer)`),
    );
    await sql`
      WITH ${envelope ? sql`${envelope},` : sql``} settled (id, status) AS (VALUES ${settled})
      UPDATE webhook_deliveries d SET state = 'delivered', settled_at = ${now}, updated_at = ${now},
        last_status = settled.status, last_error = NULL, locked_by = NULL, locked_until = NULL
      FROM settled
      WHERE d.id = settled.id AND d.locked_by = ${workerId} AND d.state = 'pending'`.execute(db);
  }

  /** A failed attempt: the next one is scheduled, or the delivery is dead-lettered. */
  async function recordFailure(row: Claimed, outcome: Outcome) {
    const now = clock.now();
    const owned = sql`id = ${row.id} AND locked_by = ${workerId} AND state = 'pending'`;
    const envelope = envelopeCte([{ row, outcome }], now);
    const withEnvelope = envelope ? sql`WITH ${envelope}` : sql``;
    const wait = RETRY_SCHEDULE_SECONDS[row.attempts - 1];
    if (wait !== undefined) {
      await sql`${withEnvelope}
        UPDATE webhook_deliveries SET next_attempt_at = ${new Date(now.getTime() + wait * 1000)},
          updated_at = ${now}, last_status = ${outcome.status}, last_error = ${outcome.error},
          locked_by = NULL, locked_until = NULL
        WHERE ${owned}`.execute(db);
      return;
    }
    // Retries exhausted: settle the outbox row and list the dead letter, in one statement.
    await sql`
      WITH ${envelope ? sql`${envelope},` : sql``} dead AS (
        UPDATE webhook_deliveries SET state = 'dead', settled_at = ${now}, updated_at = ${now},
          last_status = ${outcome.status}, last_error = ${outcome.error}, locked_by = NULL, locked_until = NULL
        WHERE ${owned}
        RETURNING account_id, event_id, attempts, created_at
      )
      INSERT INTO webhook_dead_letters
        (account_id, event_id, kind, body, attempts, last_status, last_error, first_attempt_at, dead_at)
      SELECT dead.account_id, dead.event_id, ${row.kind},
        ${deliveryBody({ id: row.event_id, kind: row.kind, created_at: row.event_created_at, payload: row.payload })},
        dead.attempts, ${outcome.status}, ${outcome.error}, dead.created_at, ${now}
      FROM dead
      ON CONFLICT (event_id) DO NOTHING`.execute(db);
    settled(row, 'dead_lettered', outcome, now);
  }

  /** The line (and count) of a delivery settled: delivered, or dead-lettered after its last retry. */
  function settled(row: Claimed, outcome: 'delivered' | 'dead_lettered', attempt: Outcome, now: Date) {
    const seconds = Math.max(0, (now.getTime() - new Date(row.event_created_at).getTime()) / 1000);
    const line = {
      event: `webhook.${outcome}`,
      event_id: row.event_id,
      account_id: row.account_id,
      kind: row.kind,
      attempts: row.attempts,
      status: attempt.status,
      seconds_since_event: seconds,
    };
    if (outcome === 'delivered') log.info(line, 'webhook.delivered');
    else log.warn({ ...line, error: attempt.error }, 'webhook.dead_lettered');
    params.observe?.(outcome, row.kind, seconds);
  }

  async function runOnce(): Promise<number> {
    const rows = await claim(concurrency);
    const delivered: Attempted[] = [];
    await Promise.all(
      rows.map(async (row) => {
        const outcome = await attempt(row);
        if (stopAll.signal.aborted) {
          // Stopping: give the attempt back so another dispatcher takes the row at once.
          await sql`UPDATE webhook_deliveries SET locked_by = NULL, locked_until = NULL, attempts = attempts - 1
            WHERE id = ${row.id} AND locked_by = ${workerId} AND state = 'pending'`
            .execute(db)
            .catch(() => undefined);
          return;
        }
        if (outcome.error === null) {
          delivered.push({ row, outcome });
          return;
        }
        await recordFailure(row, outcome).catch((err: unknown) =>
          log.error({ err, eventId: row.event_id }, 'could not record a webhook delivery outcome'),
        );
      }),
    );
    // Left unrecorded (a lost connection), the rows stay leased and are delivered again after the lease.
    if (delivered.length > 0) {
      await recordDelivered(delivered).then(
        () => {
          const now = clock.now();
          for (const d of delivered) settled(d.row, 'delivered', d.outcome, now);
        },
        (err: unknown) => log.error({ err, events: delivered.length }, 'could not record webhook deliveries'),
      );
    }
    return rows.length;
  }

  async function drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await runOnce();
      total += n;
      if (n === 0) return total;
    }
  }

  async function pollLoop(): Promise<void> {
    while (phase === 'running') {
      woken = false;
      let n = 0;
      try {
        n = await runOnce();
      } catch (err) {
        log.warn({ err, workerId }, 'webhook dispatcher poll failed; retrying');
      }
      if (phase !== 'running') break;
      // A short batch took everything due when it was claimed: claim again only if a NOTIFY came
      // in since (retries falling due and expired leases wait for the safety poll).
      if (n >= concurrency || woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollIntervalMs);
        wake = () => {
          clearTimeout(timer);
          done();
        };
        function done() {
          wake = null;
          resolve();
        }
      });
    }
  }

  return {
    workerId,
    async start() {
      if (phase !== 'idle') throw new Error('The webhook dispatcher was already started.');
      if (params.listen) {
        unlisten = await params.listen(WEBHOOK_CHANNEL, poke, (live) => {
          if (live) poke();
        });
      }
      phase = 'running';
      loop = pollLoop();
    },
    async stop() {
      if (phase === 'stopped') return;
      phase = 'stopped';
      wake?.();
      stopAll.abort(new Error('The webhook dispatcher is stopping.'));
      await loop;
      await unlisten?.();
    },
    runOnce,
    drain,
  };
}
