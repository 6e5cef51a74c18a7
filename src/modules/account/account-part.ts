// The account module's part of the account's life cycle (src/core/account-part.ts): the account's
// own row, retired in place by offboarding (contact scrubbed) and deleted last by the purge.

import { type AccountPart, isoTime, isoTimeOrNull } from '../../core/account-part.ts';
import { AppError } from '../../core/errors/app-error.ts';
import { findAccountById } from './store.ts';

export const accountAccountPart: AccountPart = {
  module: 'account',
  tables: [{ table: 'accounts', column: 'id', exported: 'account', offboard: 'changed' }],
  async exportSections({ tx, accountId }) {
    const account = await findAccountById(tx, accountId);
    if (!account) throw new AppError('UNAUTHORIZED', 'The account of this credential does not exist.');
    return {
      account: {
        address: account.address,
        contact: account.contact,
        kind: account.kind,
        created_at: isoTime(account.created_at),
        offboarded_at: isoTimeOrNull(account.offboarded_at),
      },
    };
  },
};
