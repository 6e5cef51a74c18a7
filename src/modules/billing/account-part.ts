// The billing module's part of the account's life cycle (src/core/account-part.ts): the
// auto-top-up rule and its arrows (ready ones leave with offboarding) and the operator's cap.

import { type AccountPart } from '../../core/account-part.ts';
import { exportAutoTopup } from './auto-topup-export.ts';

export const billingAccountPart: AccountPart = {
  module: 'billing',
  tables: [
    {
      table: 'auto_topup_arrows',
      column: 'account_id',
      exported: 'auto_topup.authorizations',
      offboard: 'changed',
    },
    { table: 'auto_topup_rules', column: 'account_id', exported: 'auto_topup', offboard: 'kept' },
    {
      table: 'prepaid_account_caps',
      column: 'account_id',
      exported: { omitted: "the operator's setting for the account, not the account's own data" },
      offboard: 'kept',
    },
  ],
  async exportSections({ tx, accountId, fetch, bounded }) {
    const autoTopup = await exportAutoTopup(tx, accountId, fetch);
    return {
      auto_topup: autoTopup && {
        rule: autoTopup.rule,
        authorizations: bounded('auto_topup.authorizations', autoTopup.authorizations),
      },
    };
  },
};
