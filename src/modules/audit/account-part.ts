// The audit module's part of the account's life cycle (src/core/account-part.ts): audit facts,
// kept for good, with the network context beside them (kept 90 days).

import { type AccountPart, isoTime, jsonColumn } from '../../core/account-part.ts';
import { listAudit } from './store.ts';

export const auditAccountPart: AccountPart = {
  module: 'audit',
  tables: [
    { table: 'network_context', column: 'account_id', exported: 'audit_log', offboard: 'kept' },
    { table: 'audit_log', column: 'account_id', exported: 'audit_log', offboard: 'kept' },
  ],
  async exportSections({ tx, accountId, fetch, bounded }) {
    const rows = await listAudit(tx, accountId, fetch);
    return {
      audit_log: bounded('audit_log', rows).map((a) => ({
        id: a.id,
        actor: a.actor,
        action: a.action,
        subject: a.subject,
        details: jsonColumn(a.details),
        created_at: isoTime(a.created_at),
        client_ip: a.client_ip,
        user_agent: a.user_agent,
      })),
    };
  },
};
