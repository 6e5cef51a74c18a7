import { sql, type RawBuilder } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import { afterCommit, databaseOf, type DbExecutor } from '../../core/db/database.ts';
import { newId } from '../../core/ids.ts';
import { eventsByIds, eventsOfKind, insertEvent, listEvents } from './store.ts';

export interface EmitEventParameters {
  accountId: string;
  kind: string;
  /** The id of the resource the event is about (intent, key, delegation…). */
  subject?: string | null;
  payload: Record<string, unknown>;
}

/** Where a database's committed events go: one log line each, and what counts them. */
export interface EventLog {
  log: { info(obj: object, msg: string): void };
  /** Counts the event (metrics); must not throw. */
  observe?: (kind: string, payload: Record<string, unknown>) => void;
}

const eventLogs = new WeakMap<object, EventLog>();

/** Logs (and counts) every event committed through `db` from now on: the app does this once. */
export function attachEventLog(db: DbExecutor, sink: EventLog): void {
  eventLogs.set(db, sink);
}

/**
 * The event's log line, written once its transaction committed and off the request's path (after
 * the current turn of the event loop, when the answer has gone out). The payload is what the
 * event's webhook carries, so it holds ids and amounts, never a secret.
 */
function logCommitted(db: DbExecutor, id: string, params: EmitEventParameters): void {
  const sink = eventLogs.get(db);
  if (!sink) return;
  setImmediate(() => {
    try {
      sink.log.info(
        {
          event: params.kind,
          event_id: id,
          account_id: params.accountId,
          subject: params.subject ?? null,
          data: params.payload,
        },
        params.kind,
      );
      sink.observe?.(params.kind, params.payload);
    } catch {
      // A log line never fails the work it reports.
    }
  });
}

/**
 * Records an event in the caller's transaction (the transactional outbox): the event exists
 * exactly when the state it reports was committed, and its log line is written after the commit.
 * Returns the event id (`evt_…`).
 */
export async function emitEvent(tx: DbExecutor, clock: Clock, params: EmitEventParameters): Promise<string> {
  const id = newId('evt');
  await insertEvent(tx, {
    id,
    account_id: params.accountId,
    kind: params.kind,
    subject: params.subject ?? null,
    payload: params.payload,
    created_at: clock.now(),
  });
  afterCommit(tx, () => logCommitted(databaseOf(tx), id, params));
  return id;
}

export interface EventCall {
  /** The event id it will have. */
  id: string;
  call: RawBuilder<unknown>;
  /** Writes its log line: the caller says so once the statement that records it has committed. */
  committed(db: DbExecutor): void;
}

/**
 * The same event as a SQL call (`purser_emit_event`, migration 0015), for a write that records it
 * in its own statement (the ledger's `then`).
 */
export function eventCall(clock: Clock, params: EmitEventParameters): EventCall {
  const id = newId('evt');
  return {
    id,
    call: sql`purser_emit_event(${id}, ${params.accountId}, ${params.kind}, ${params.subject ?? null},
      ${JSON.stringify(params.payload)}::jsonb, ${clock.now()}::timestamptz)`,
    committed: (db) => afterCommit(db, () => logCommitted(databaseOf(db), id, params)),
  };
}

export { eventsByIds, eventsOfKind, listEvents };
