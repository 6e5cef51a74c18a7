// The ledger's job: holds past their expiry, given back.

import { withTransaction } from '../../core/db/database.ts';
import { defineJob, type AnyJobDefinition, type JobDeps } from '../../core/jobs/index.ts';
import { expireHolds } from './holds.ts';

export const ledgerJobs: AnyJobDefinition<JobDeps>[] = [
  // Ledger holds past their expiry stopped counting already; this gives prepaid reservations back.
  defineJob({
    name: 'ledger.expire_holds',
    every: 60,
    run: async (deps: JobDeps) => {
      const expired = await withTransaction(deps.db, (tx) => expireHolds(tx, deps.clock));
      if (expired.length > 0) deps.log.info({ expired: expired.length }, 'ledger holds expired');
    },
  }),
];
