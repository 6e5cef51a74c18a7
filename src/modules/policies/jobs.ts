// The policies module's job: spend reservations past their expiry, closed for the record.

import { defineJob, type AnyJobDefinition, type JobDeps } from '../../core/jobs/index.ts';
import { expireReservations } from './reservations.ts';

export const policiesJobs: AnyJobDefinition<JobDeps>[] = [
  // Pending spend holds stop counting at their expiry anyway; this closes them for the record.
  defineJob({
    name: 'reservations.expire',
    every: 60,
    run: async (deps: JobDeps) => {
      const expired = await expireReservations(deps.db, deps.clock);
      if (expired.length > 0) deps.log.info({ expired: expired.length }, 'spend reservations expired');
    },
  }),
];
