// The delegations module's job: grants past valid_until, recorded as expired.

import { defineJob, type AnyJobDefinition } from '../../core/jobs/index.ts';
import type { AppDeps } from '../../deps.ts';
import { expireDelegations } from './service.ts';

export const delegationsJobs: AnyJobDefinition<AppDeps>[] = [
  // The chain refuses them already; this records it (event + audit).
  defineJob({
    name: 'delegations.expire',
    every: 60,
    run: async (deps: AppDeps) => {
      const expired = await expireDelegations(deps.db, deps.clock);
      if (expired > 0) deps.log.info({ expired }, 'delegations expired');
    },
  }),
];
