// The feedback module's job: x402 challenges of POST /v1/feedback past their retention.

import { defineJob, type AnyJobDefinition } from '../../core/jobs/index.ts';
import type { AppDeps } from '../../deps.ts';
import { purgePaymentChallenges } from './challenges.ts';

export const feedbackJobs: AnyJobDefinition<AppDeps>[] = [
  // Unused ones after 1 day, used ones 7 days after use.
  defineJob({
    name: 'housekeeping.payment_challenges',
    every: 3600,
    run: async (deps: AppDeps) => {
      const deleted = await purgePaymentChallenges(deps.db, deps.clock);
      if (deleted.unused + deleted.used > 0) deps.log.info(deleted, 'expired payment challenges deleted');
    },
  }),
];
