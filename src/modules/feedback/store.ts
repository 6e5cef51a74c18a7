import { sql, type Generated, type Insertable, type RawBuilder, type Selectable } from 'kysely';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';

export const FEATURE_REQUEST_STATUSES = ['open', 'planned', 'shipped', 'declined'] as const;
export type FeatureRequestStatus = (typeof FEATURE_REQUEST_STATUSES)[number];

export interface FeatureRequestsTable {
  id: string;
  /** Insertion order: breaks ties between requests created in the same instant. */
  seq: Generated<string>;
  account_id: string;
  title: string;
  body: string;
  status: FeatureRequestStatus;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    feature_requests: FeatureRequestsTable;
  }
}

type FeatureRequestRow = Selectable<FeatureRequestsTable>;

/** What the public list shows of a request: never its body nor its requester. */
export type PublicFeatureRequestRow = Pick<FeatureRequestRow, 'id' | 'title' | 'status' | 'created_at'>;

export async function insertFeatureRequest(
  db: DbExecutor,
  row: Insertable<FeatureRequestsTable>,
): Promise<void> {
  await db.insertInto('feature_requests').values(row).execute();
}

/** Newest first. Selects only the public columns, so a body or requester cannot leak by accident. */
export async function listPublicFeatureRequests(
  db: DbExecutor,
  limit: number,
): Promise<PublicFeatureRequestRow[]> {
  return db
    .selectFrom('feature_requests')
    .select(['id', 'title', 'status', 'created_at'])
    .orderBy('created_at', 'desc')
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
}

/** One request of the account (its id, status and timestamps), or undefined. */
export async function findFeatureRequest(
  db: DbExecutor,
  accountId: string,
  id: string,
): Promise<{ id: string; status: FeatureRequestStatus; created_at: Date } | undefined> {
  return db
    .selectFrom('feature_requests')
    .select(['id', 'status', 'created_at'])
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** The insert as a SQL call (`purser_insert_feature_request`), for the fee's booking statement. */
export function featureRequestCall(row: Omit<FeatureRequestRow, 'seq' | 'updated_at'>): RawBuilder<unknown> {
  return sql`purser_insert_feature_request(${row.id}, ${row.account_id}, ${row.title}, ${row.body},
    ${row.status}, ${row.created_at}::timestamptz)`;
}

/**
 * Operator: sets a request's status. Returns the request with its previous status, or undefined
 * when there is no such request. The row is locked first, so the previous status is exact.
 */
export async function updateFeatureRequestStatus(
  db: DbExecutor,
  id: string,
  status: FeatureRequestStatus,
  at: Date,
): Promise<
  | {
      id: string;
      account_id: string;
      title: string;
      status: FeatureRequestStatus;
      previous: FeatureRequestStatus;
      updated_at: Date;
    }
  | undefined
> {
  const before = await db
    .selectFrom('feature_requests')
    .select(['status'])
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  if (!before) return undefined;
  const row = await db
    .updateTable('feature_requests')
    .set({ status, updated_at: at })
    .where('id', '=', id)
    .returning(['id', 'account_id', 'title', 'status', 'updated_at'])
    .executeTakeFirstOrThrow();
  return { ...row, previous: before.status };
}
