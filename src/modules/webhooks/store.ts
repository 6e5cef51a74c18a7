import { createHash } from 'node:crypto';
import { sql, type ColumnType, type Generated } from 'kysely';
import type { Db, DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';
import { deleteInBatches, RETENTION_BATCH_SIZE } from '../../core/db/retention.ts';

type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>;

export interface WebhookEndpointsTable {
  account_id: string;
  url: string | null;
  secret_sealed: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type DeliveryState = 'pending' | 'delivered' | 'dead';

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  account_id: string;
  event_id: string;
  state: Generated<DeliveryState>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  locked_by: string | null;
  locked_until: NullableTimestamp;
  last_status: number | null;
  last_error: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  settled_at: NullableTimestamp;
}

export interface WebhookDeadLettersTable {
  id: Generated<string>;
  account_id: string;
  event_id: string;
  kind: string;
  body: string | null;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  first_attempt_at: Timestamp;
  dead_at: Timestamp;
}

/** The signed envelope of an event's delivery (migration 0016); body and signature go at compaction. */
export interface WebhookEnvelopesTable {
  event_id: string;
  account_id: string;
  body: string | null;
  signature: string | null;
  attempts: number;
  first_signed_at: Timestamp;
  last_signed_at: Timestamp;
  hash: string | null;
  compacted_at: NullableTimestamp;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    webhook_endpoints: WebhookEndpointsTable;
    webhook_deliveries: WebhookDeliveriesTable;
    webhook_dead_letters: WebhookDeadLettersTable;
    webhook_envelopes: WebhookEnvelopesTable;
  }
}

export async function getEndpoint(db: DbExecutor, accountId: string) {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export async function upsertEndpointUrl(
  db: DbExecutor,
  accountId: string,
  url: string,
  now: Date,
): Promise<void> {
  await db
    .insertInto('webhook_endpoints')
    .values({ account_id: accountId, url, secret_sealed: null, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ url, updated_at: now }))
    .execute();
}

/** Stores the sealed secret unless one exists; returns the sealed secret that won. */
export async function putSecretIfAbsent(
  db: DbExecutor,
  accountId: string,
  sealed: string,
  now: Date,
): Promise<string> {
  await db
    .insertInto('webhook_endpoints')
    .values({ account_id: accountId, url: null, secret_sealed: sealed, created_at: now, updated_at: now })
    .onConflict((oc) =>
      oc
        .column('account_id')
        .doUpdateSet({ secret_sealed: sealed, updated_at: now })
        .where('webhook_endpoints.secret_sealed', 'is', null),
    )
    .execute();
  const row = await getEndpoint(db, accountId);
  if (!row?.secret_sealed) throw new Error('webhook secret was not stored');
  return row.secret_sealed;
}

export async function listDeadLetters(db: DbExecutor, accountId: string, limit: number, before?: number) {
  let q = db.selectFrom('webhook_dead_letters').selectAll().where('account_id', '=', accountId);
  if (before !== undefined) q = q.where('id', '<', String(before));
  return q.orderBy('id', 'desc').limit(limit).execute();
}

/**
 * What a compacted envelope keeps: `sha256:<hex>` of the UTF-8 text `<signature header value>`,
 * LF, `<raw body>`. The SQL of `compactEnvelopes` computes the same.
 */
export function envelopeHash(signature: string, body: string): string {
  return `sha256:${createHash('sha256').update(`${signature}\n${body}`, 'utf8').digest('hex')}`;
}

/**
 * Compacts at most `limit` envelopes to their hash (body and signature dropped): those first
 * signed before `before`, or every one of `accountId`. Returns how many; one statement.
 */
export async function compactEnvelopes(
  db: DbExecutor,
  now: Date,
  which: { before: Date } | { accountId: string },
  limit: number,
): Promise<number> {
  const due =
    'before' in which ? sql`first_signed_at < ${which.before}` : sql`account_id = ${which.accountId}`;
  const result = await sql<{ one: number }>`
    UPDATE webhook_envelopes
    SET hash = 'sha256:' || encode(sha256(convert_to(signature || chr(10) || body, 'UTF8')), 'hex'),
        body = NULL, signature = NULL, compacted_at = ${now}
    WHERE event_id IN (
      SELECT event_id FROM webhook_envelopes WHERE hash IS NULL AND ${due} LIMIT ${limit})
    RETURNING 1 AS one`.execute(db);
  return result.rows.length;
}

const ENVELOPE_BATCH = 1000;

export interface RetiredWebhooks {
  /** The account had a signing secret, now deleted. */
  secretRemoved: boolean;
  /** The destination that was cleared, if any. */
  endpointCleared: boolean;
  failuresRemoved: number;
  /** Outbox rows still pending, settled without a delivery (nothing more is sent). */
  deliveriesCancelled: number;
  envelopesCompacted: number;
}

/**
 * Offboarding, in the caller's transaction: the endpoint row goes (destination and sealed secret),
 * so events the same transaction emits afterwards get no outbox row; dead letters (with their
 * bodies) are deleted; pending deliveries are settled as `dead` without a dead letter; the
 * account's envelopes are compacted to their hash. Events themselves stay.
 */
export async function retireAccountWebhooks(
  tx: DbExecutor,
  accountId: string,
  now: Date,
): Promise<RetiredWebhooks> {
  const endpoint = await tx
    .deleteFrom('webhook_endpoints')
    .where('account_id', '=', accountId)
    .returning(['url', 'secret_sealed'])
    .executeTakeFirst();
  const failures = await tx
    .deleteFrom('webhook_dead_letters')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  const cancelled = await tx
    .updateTable('webhook_deliveries')
    .set({
      state: 'dead',
      settled_at: now,
      updated_at: now,
      last_error: 'account offboarded',
      locked_by: null,
      locked_until: null,
    })
    .where('account_id', '=', accountId)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  let envelopesCompacted = 0;
  for (;;) {
    const n = await compactEnvelopes(tx, now, { accountId }, ENVELOPE_BATCH);
    envelopesCompacted += n;
    if (n < ENVELOPE_BATCH) break;
  }
  return {
    secretRemoved: endpoint?.secret_sealed != null,
    endpointCleared: endpoint?.url != null,
    failuresRemoved: Number(failures.numDeletedRows),
    deliveriesCancelled: Number(cancelled.numUpdatedRows),
    envelopesCompacted,
  };
}

/** Deliveries still to make (pending) and how long the oldest has waited since its event. */
export async function deliveryBacklog(
  db: DbExecutor,
  now: Date,
): Promise<{ pending: number; oldestSeconds: number }> {
  const rows = await sql<{ n: string; oldest: number | null }>`
    SELECT count(*) AS n, extract(epoch FROM ${now}::timestamptz - min(created_at))::float8 AS oldest
    FROM webhook_deliveries WHERE state = 'pending'`.execute(db);
  const row = rows.rows[0];
  return { pending: Number(row?.n ?? 0), oldestSeconds: Math.max(0, row?.oldest ?? 0) };
}

/**
 * Retention: outbox rows settled (delivered or dead) before `before`. Pending rows are never
 * touched, and neither are dead letters (their own table).
 */
export function deleteSettledDeliveriesBefore(db: Db, before: Date): Promise<number> {
  return deleteInBatches(
    db,
    () => sql<{ one: number }>`
      DELETE FROM webhook_deliveries WHERE id IN (
        SELECT id FROM webhook_deliveries
        WHERE state IN ('delivered', 'dead') AND settled_at < ${before}
        LIMIT ${RETENTION_BATCH_SIZE})
      RETURNING 1 AS one`,
  );
}
