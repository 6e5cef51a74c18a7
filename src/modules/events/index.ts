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

export { listEvents };
