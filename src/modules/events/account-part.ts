// The events module's part of the account's life cycle (src/core/account-part.ts): the account's
// events, append-only and kept for good.

import { type AccountPart, isoTime, jsonColumn } from '../../core/account-part.ts';

export const eventsAccountPart: AccountPart = {
  module: 'events',
  tables: [{ table: 'events', column: 'account_id', exported: 'events', offboard: 'kept' }],
  async exportSections({ tx, accountId, fetch, bounded }) {
    const rows = await tx
      .selectFrom('events')
      .select(['seq', 'id', 'kind', 'subject', 'payload', 'created_at'])
      .where('account_id', '=', accountId)
      .orderBy('seq', 'desc')
      .limit(fetch)
      .execute();
    return {
      events: bounded('events', rows).map((e) => ({
        id: e.id,
        kind: e.kind,
        subject: e.subject,
        created_at: isoTime(e.created_at),
        data: jsonColumn(e.payload),
      })),
    };
  },
};
