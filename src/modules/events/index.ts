import { sql, type RawBuilder } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { newId } from '../../core/ids.ts';
import { insertEvent, listEvents } from './store.ts';

export interface EmitEventParameters {
  accountId: string;
  kind: string;
  /** The id of the resource the event is about (intent, key, delegation…). */
  subject?: string | null;
  payload: Record<string, unknown>;
}

/**
 * Records an event in the caller's transaction (the transactional outbox): the event exists
 * exactly when the state it reports was committed. Returns the event id (`evt_…`).
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
  return id;
}

/**
 * The same event as a SQL call (`purser_emit_event`, migration 0015), for a write that records it
 * in its own statement (the ledger's `then`). Returns the event id it will have.
 */
export function eventCall(
  clock: Clock,
  params: EmitEventParameters,
): { id: string; call: RawBuilder<unknown> } {
  const id = newId('evt');
  return {
    id,
    call: sql`purser_emit_event(${id}, ${params.accountId}, ${params.kind}, ${params.subject ?? null},
      ${JSON.stringify(params.payload)}::jsonb, ${clock.now()}::timestamptz)`,
  };
}

export { listEvents };
