// The delegations module's job: grants past valid_until, recorded as expired.

import { defineJob, type AnyJobDefinition, type JobDeps } from '../../core/jobs/index.ts';
import { expireDelegations } from './service.ts';

export const delegationsJobs: AnyJobDefinition<JobDeps>[] = [
  // The chain refuses them already; this records it (event + audit).
  defineJob({
    name: 'delegations.expire',
    every: 60,
    run: async (deps: JobDeps) => {
      const expired = await expireDelegations(deps.db, deps.clock);
      if (expired > 0) deps.log.info({ expired }, 'delegations expired');
    },
  }),
];
