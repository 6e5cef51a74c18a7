import type { Generated, Insertable } from 'kysely';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';

export interface EventsTable {
  seq: Generated<string>;
  id: string;
  account_id: string;
  kind: string;
  subject: string | null;
  payload: unknown;
  created_at: Timestamp;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    events: EventsTable;
  }
}

export async function insertEvent(db: DbExecutor, row: Insertable<EventsTable>): Promise<void> {
  await db
    .insertInto('events')
    .values({ ...row, payload: JSON.stringify(row.payload) })
    .execute();
}

export async function listEvents(db: DbExecutor, accountId: string, limit: number, beforeSeq?: string) {
  let q = db.selectFrom('events').selectAll().where('account_id', '=', accountId);
  if (beforeSeq !== undefined) q = q.where('seq', '<', beforeSeq);
  return q.orderBy('seq', 'desc').limit(limit).execute();
}
