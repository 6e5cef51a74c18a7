import { sql, type RawBuilder } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { newId } from '../../core/ids.ts';
import { insertAudit, listAudit } from './store.ts';

export interface NetworkContext {
  clientIp: string | null;
  userAgent: string | null;
}

export interface RecordAuditParameters {
  accountId: string | null;
  /** `session:<id>`, `key:<id>`, `operator` or `system`. */
  actor: string;
  action: string;
  subject?: string | null;
  details?: Record<string, unknown>;
  network?: NetworkContext | null;
}

export const USER_AGENT_MAX = 200;

/** Records an audit fact in the caller's transaction. Never pass secrets in `details`. */
export async function recordAudit(
  tx: DbExecutor,
  clock: Clock,
  params: RecordAuditParameters,
): Promise<string> {
  const id = newId('aud');
  const now = clock.now();
  await insertAudit(
    tx,
    {
      id,
      account_id: params.accountId,
      actor: params.actor,
      action: params.action,
      subject: params.subject ?? null,
      details: params.details ?? {},
      created_at: now,
    },
    params.network
      ? {
          audit_id: id,
          account_id: params.accountId,
          client_ip: params.network.clientIp,
          user_agent: params.network.userAgent?.slice(0, USER_AGENT_MAX) ?? null,
          created_at: now,
        }
      : null,
  );
  return id;
}

/**
 * The same audit fact as a SQL call (`purser_record_audit`, migration 0015), for a write that
 * records it in its own statement (the ledger's `then`). Never pass secrets in `details`.
 */
export function auditCall(
  clock: Clock,
  params: RecordAuditParameters,
): { id: string; call: RawBuilder<unknown> } {
  const id = newId('aud');
  const network = params.network ?? null;
  return {
    id,
    call: sql`purser_record_audit(${id}, ${params.accountId}, ${params.actor}, ${params.action},
      ${params.subject ?? null}, ${JSON.stringify(params.details ?? {})}::jsonb, ${clock.now()}::timestamptz,
      ${network !== null}, ${network?.clientIp ?? null}, ${network?.userAgent?.slice(0, USER_AGENT_MAX) ?? null})`,
  };
}

export { listAudit };
export { deleteNetworkContextBefore } from './store.ts';
