// The events module's part of the account's life cycle (src/core/account-part.ts): the account's
// events, append-only and kept for good.

import { type AccountPart, isoTime, jsonColumn } from '../../core/account-part.ts';
import { listEvents } from './store.ts';

export const eventsAccountPart: AccountPart = {
  module: 'events',
  tables: [{ table: 'events', column: 'account_id', exported: 'events', offboard: 'kept' }],
  async exportSections({ tx, accountId, fetch, bounded }) {
    const rows = await listEvents(tx, accountId, fetch);
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
