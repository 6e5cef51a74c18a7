// The payments module's part of the account's life cycle (src/core/account-part.ts): payments to
// the platform (top-ups, x402 fees, auto-top-up arrows), kept for good.

import { type AccountPart } from '../../core/account-part.ts';

export const paymentsAccountPart: AccountPart = {
  module: 'payments',
  tables: [
    { table: 'payment_settlements', column: 'account_id', exported: 'payment_credits', offboard: 'kept' },
  ],
  async exportSections({ tx, accountId, fetch, bounded }) {
    // Never the signature, nor the request the payment carried.
    const rows = await tx
      .selectFrom('payment_settlements')
      .select([
        'id',
        'purpose',
        'chain_id',
        'token',
        'payer',
        'payee',
        'value',
        'nonce',
        'status',
        'tx_hash',
        'fail_reason',
        'created_at',
        'settled_at',
      ])
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(fetch)
      .execute();
    return {
      payment_credits: bounded('payment_credits', rows).map((p) => ({
        ...p,
        created_at: p.created_at.toISOString(),
        settled_at: p.settled_at?.toISOString() ?? null,
      })),
    };
  },
};
