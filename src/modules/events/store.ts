import type { Generated, Insertable, Selectable } from 'kysely';
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

/** The events of `ids` (kind, payload and time), by id; ids without an event are absent. */
export async function eventsByIds(
  db: DbExecutor,
  ids: readonly string[],
): Promise<Map<string, { kind: string; payload: unknown; created_at: Date }>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('events')
    .select(['id', 'kind', 'payload', 'created_at'])
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Map(
    rows.map((r) => [r.id, { kind: r.kind, payload: r.payload, created_at: new Date(r.created_at) }]),
  );
}

/**
 * Every account's events of one kind created at or after `since`, newest first (created_at, then
 * seq), at most `limit`, and how many there are in all (one statement: the page and the total
 * agree). The operator's alerts read `security.alert` this way.
 */
export async function eventsOfKind(
  db: DbExecutor,
  kind: string,
  since: Date,
  limit: number,
): Promise<{ events: Array<Selectable<EventsTable>>; total: number }> {
  const rows = await db
    .selectFrom('events')
    .selectAll()
    .select((eb) => eb.fn.countAll<string>().over().as('total'))
    .where('kind', '=', kind)
    .where('created_at', '>=', since)
    .orderBy('created_at', 'desc')
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
  return {
    events: rows.map(({ total: _total, ...event }) => event),
    total: rows.length === 0 ? 0 : Number(rows[0]!.total),
  };
}
