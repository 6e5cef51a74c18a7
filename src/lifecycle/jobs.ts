// The account life cycle's hourly sweeps (src/lifecycle/purge.ts), named with the other
// retention sweeps.

import { defineJob, type AnyJobDefinition } from '../core/jobs/index.ts';
import type { AppDeps } from '../deps.ts';
import { HOURLY, hourlySweep } from '../modules/housekeeping/jobs.ts';
import { purgeOffboardedStatementExports, purgeTestAccounts } from './purge.ts';

export const lifecycleJobs: AnyJobDefinition<AppDeps>[] = [
  defineJob({
    name: 'housekeeping.test_accounts',
    every: HOURLY,
    run: async (deps: AppDeps) => {
      const deleted = await purgeTestAccounts(deps.db, deps.clock, deps.config.env);
      if (deleted.length > 0) deps.log.info({ deleted }, 'development test accounts deleted');
    },
  }),
  // Offboarding schedules these: objects first, then their rows.
  hourlySweep(
    'housekeeping.statement_exports',
    (deps) => purgeOffboardedStatementExports(deps.db, deps.objectStore),
    'statement exports of offboarded accounts deleted',
  ),
];
