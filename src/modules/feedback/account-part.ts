// The feedback module's part of the account's life cycle (src/core/account-part.ts): feature
// requests and the x402 payment challenges issued to the account.

import { type AccountPart } from '../../core/account-part.ts';

export const feedbackAccountPart: AccountPart = {
  module: 'feedback',
  tables: [
    {
      table: 'feature_requests',
      column: 'account_id',
      exported: { omitted: 'posted publicly; GET /v1/feature-requests lists them' },
      offboard: 'kept',
    },
    {
      table: 'payment_challenges',
      column: 'account_id',
      exported: { omitted: 'short-lived payment terms; the payments are in payment_credits' },
      offboard: 'kept',
    },
  ],
};
