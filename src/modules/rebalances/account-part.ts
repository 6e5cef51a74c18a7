// The rebalances module's part of the account's life cycle (src/core/account-part.ts): the
// progress of each cross-chain rebalance, whose intent and report are exported with the intents.

import { type AccountPart } from '../../core/account-part.ts';

export const rebalancesAccountPart: AccountPart = {
  module: 'rebalances',
  tables: [
    {
      table: 'rebalances',
      column: 'account_id',
      exported: { omitted: "execution state; each rebalance's intent and report are in intents" },
      offboard: 'kept',
    },
  ],
};
