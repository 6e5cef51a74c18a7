// The smart-account module's part of the account's life cycle (src/core/account-part.ts): the gas
// prefunds paid into agents' accounts, whose bookings are in the ledger.

import { type AccountPart } from '../../core/account-part.ts';

export const smartAccountAccountPart: AccountPart = {
  module: 'smart-account',
  tables: [
    {
      table: 'prefund_deposits',
      column: 'account_id',
      exported: { omitted: 'execution state; each deposit is booked in ledger_entries' },
      offboard: 'kept',
    },
  ],
};
