// The intents module's part of the account's life cycle (src/core/account-part.ts): every intent
// with its parameters and report, kept for good.

import { type AccountPart, isoTime, jsonColumn } from '../../core/account-part.ts';
import { formatUsd } from '../../core/money.ts';

export const intentsAccountPart: AccountPart = {
  module: 'intents',
  tables: [
    {
      table: 'intent_approvals',
      column: 'account_id',
      exported: {
        omitted: "an intent's approval (quorum, approvers, signers) is its report.approval on the API",
      },
      offboard: 'kept',
    },
    { table: 'intents', column: 'account_id', exported: 'intents', offboard: 'kept' },
  ],
  async exportSections({ tx, accountId, fetch, bounded }) {
    const rows = await tx
      .selectFrom('intents')
      .select([
        'id',
        'wallet',
        'chain_id',
        'kind',
        'status',
        'policy_version',
        'policy_hash',
        'params',
        'report',
        'value_micro_usd',
        'fee_micro_usd',
        'created_at',
        'updated_at',
      ])
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(fetch)
      .execute();
    return {
      intents: bounded('intents', rows).map((i) => ({
        id: i.id,
        wallet: i.wallet,
        chain_id: i.chain_id,
        kind: i.kind,
        status: i.status,
        policy_version: i.policy_version,
        policy_hash: i.policy_hash,
        params: jsonColumn(i.params),
        report: jsonColumn(i.report),
        value_usd: formatUsd(BigInt(i.value_micro_usd)),
        fee_usd: formatUsd(BigInt(i.fee_micro_usd)),
        created_at: isoTime(i.created_at),
        updated_at: isoTime(i.updated_at),
      })),
    };
  },
};
