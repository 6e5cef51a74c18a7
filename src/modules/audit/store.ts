import { sql, type Generated, type Insertable } from 'kysely';
import type { Db, DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';
import { deleteInBatches, RETENTION_BATCH_SIZE } from '../../core/db/retention.ts';

export interface AuditLogTable {
  seq: Generated<string>;
  id: string;
  account_id: string | null;
  actor: string;
  action: string;
  subject: string | null;
  details: unknown;
  created_at: Timestamp;
}

export interface NetworkContextTable {
  audit_id: string;
  account_id: string | null;
  client_ip: string | null;
  user_agent: string | null;
  created_at: Timestamp;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    audit_log: AuditLogTable;
    network_context: NetworkContextTable;
  }
}

export async function insertAudit(
  db: DbExecutor,
  row: Insertable<AuditLogTable>,
  network: Insertable<NetworkContextTable> | null,
): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({ ...row, details: JSON.stringify(row.details ?? {}) })
    .execute();
  if (network) await db.insertInto('network_context').values(network).execute();
}

export async function listAudit(db: DbExecutor, accountId: string, limit: number) {
  return db
    .selectFrom('audit_log')
    .leftJoin('network_context', 'network_context.audit_id', 'audit_log.id')
    .select([
      'audit_log.id',
      'audit_log.actor',
      'audit_log.action',
      'audit_log.subject',
      'audit_log.details',
      'audit_log.created_at',
      'network_context.client_ip',
      'network_context.user_agent',
    ])
    .where('audit_log.account_id', '=', accountId)
    .orderBy('audit_log.seq', 'desc')
    .limit(limit)
    .execute();
}

/** Retention: the network context beside audit facts older than `before` (the facts stay). */
export function deleteNetworkContextBefore(db: Db, before: Date): Promise<number> {
  return deleteInBatches(
    db,
    () => sql<{ one: number }>`
      DELETE FROM network_context WHERE audit_id IN (
        SELECT audit_id FROM network_context WHERE created_at < ${before} LIMIT ${RETENTION_BATCH_SIZE})
      RETURNING 1 AS one`,
  );
}
