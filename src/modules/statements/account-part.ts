// The statements module's part of the account's life cycle (src/core/account-part.ts): the
// objects its statement exports were written to, deleted by a sweep after offboarding.

import { type AccountPart } from '../../core/account-part.ts';
import { listStatementExportKeys } from './store.ts';

/** Whether statement exports go to an S3 bucket (configuration), for `statements_manifest`. */
export function statementsAccountPart(bucketBound: boolean): AccountPart {
  return {
    module: 'statements',
    tables: [
      {
        table: 'statement_exports',
        column: 'account_id',
        exported: 'statements_manifest',
        offboard: 'scheduled',
      },
    ],
    async exportSections({ tx, accountId, fetch, bounded }) {
      const keys = await listStatementExportKeys(tx, accountId, fetch);
      return {
        statements_manifest: { bucket_bound: bucketBound, keys: bounded('statements_manifest.keys', keys) },
      };
    },
  };
}
