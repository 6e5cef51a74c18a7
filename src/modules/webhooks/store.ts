import type { ColumnType, Generated } from 'kysely';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';

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

declare module '../../core/db/schema.ts' {
  interface Database {
    webhook_endpoints: WebhookEndpointsTable;
    webhook_deliveries: WebhookDeliveriesTable;
    webhook_dead_letters: WebhookDeadLettersTable;
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
