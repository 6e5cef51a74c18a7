// The chain watcher's part of the account's life cycle (src/core/account-part.ts): the wallets it
// keeps books for and the drifts it found between them and the chain.

import { type AccountPart } from '../../core/account-part.ts';
import { accountWatch } from './store.ts';

export const chainwatchAccountPart: AccountPart = {
  module: 'chainwatch',
  tables: [
    { table: 'chain_watch_wallets', column: 'account_id', exported: 'watched_wallets', offboard: 'kept' },
    {
      table: 'ledger_drifts',
      column: 'account_id',
      exported: { omitted: 'operator findings; each correction is booked in ledger_entries' },
      offboard: 'kept',
    },
  ],
  async exportSections({ tx, accountId, fetch, bounded }) {
    return { watched_wallets: bounded('watched_wallets', await accountWatch(tx, accountId, fetch)) };
  },
};
