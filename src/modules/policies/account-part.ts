// The policies module's part of the account's life cycle (src/core/account-part.ts): every policy
// version (kept for good: they explain the books) and the spend reservations held against them.

import { type AccountPart, isoTime, jsonColumn } from '../../core/account-part.ts';

export const policiesAccountPart: AccountPart = {
  module: 'policies',
  tables: [
    {
      table: 'spend_reservations',
      column: 'account_id',
      exported: { omitted: 'working state of the spend limits; the intents and ledger show the spending' },
      offboard: 'kept',
    },
    { table: 'policies', column: 'account_id', exported: 'policies', offboard: 'kept' },
  ],
  async exportSections({ tx, accountId, fetch, bounded }) {
    const rows = await tx
      .selectFrom('policies')
      .select(['wallet', 'version', 'hash', 'document', 'defaulted', 'created_at'])
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('wallet')
      .orderBy('version', 'desc')
      .limit(fetch)
      .execute();
    return {
      policies: bounded('policies', rows).map((p) => ({
        ...p,
        document: jsonColumn(p.document),
        created_at: isoTime(p.created_at),
      })),
    };
  },
};
