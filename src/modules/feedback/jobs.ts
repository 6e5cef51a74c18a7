// The feedback module's job: x402 challenges of POST /v1/feedback past their retention.

import { defineJob, type AnyJobDefinition, type JobDeps } from '../../core/jobs/index.ts';
import { purgePaymentChallenges } from './challenges.ts';

export const feedbackJobs: AnyJobDefinition<JobDeps>[] = [
  // Unused ones after 1 day, used ones 7 days after use.
  defineJob({
    name: 'housekeeping.payment_challenges',
    every: 3600,
    run: async (deps: JobDeps) => {
      const deleted = await purgePaymentChallenges(deps.db, deps.clock);
      if (deleted.unused + deleted.used > 0) deps.log.info(deleted, 'expired payment challenges deleted');
    },
  }),
];
