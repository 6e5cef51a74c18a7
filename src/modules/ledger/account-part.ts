// The ledger module's part of the account's life cycle (src/core/account-part.ts): the account's
// groups and entries (append-only, kept for good), its holds and its prepaid balance.

import { type AccountPart, isoTime, jsonColumn } from '../../core/account-part.ts';

export const ledgerAccountPart: AccountPart = {
  module: 'ledger',
  tables: [
    {
      table: 'ledger_holds',
      column: 'account_id',
      exported: { omitted: 'amounts held while an action runs; posted holds are in ledger_entries' },
      offboard: 'kept',
    },
    // Its entries go with each group (ON DELETE CASCADE).
    { table: 'ledger_groups', column: 'account_id', exported: 'ledger_entries', offboard: 'kept' },
    { table: 'prepaid_balances', column: 'account_id', exported: 'balance', offboard: 'kept' },
  ],
  async exportSections({ tx, accountId, fetch, bounded }) {
    const entries = await tx
      .selectFrom('ledger_entries')
      .innerJoin('ledger_groups', 'ledger_groups.id', 'ledger_entries.group_id')
      .select([
        'ledger_entries.seq',
        'ledger_entries.group_id',
        'ledger_groups.kind',
        'ledger_groups.settlement_id',
        'ledger_groups.policy_hash',
        'ledger_groups.reverses',
        'ledger_groups.memo',
        'ledger_entries.ledger_account',
        'ledger_entries.asset',
        'ledger_entries.amount',
        'ledger_groups.created_at',
      ])
      .where('ledger_groups.account_id', '=', accountId)
      .orderBy('ledger_entries.seq', 'desc')
      .limit(fetch)
      .execute();
    const balance = await tx
      .selectFrom('prepaid_balances')
      .select(['balance_micro'])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return {
      ledger_entries: bounded('ledger_entries', entries).map((e) => ({
        seq: Number(e.seq),
        group_id: e.group_id,
        kind: e.kind,
        settlement_id: e.settlement_id,
        policy_hash: e.policy_hash,
        reverses: e.reverses,
        memo: jsonColumn(e.memo),
        ledger_account: e.ledger_account,
        asset: e.asset,
        amount: String(e.amount),
        created_at: isoTime(e.created_at),
      })),
      balance: balance ? { micro: String(balance.balance_micro) } : null,
    };
  },
};
