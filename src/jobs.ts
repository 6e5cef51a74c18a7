// The job table: every background job the workers run and every periodic schedule, in one place
// (the counterpart of src/routes.ts). Handlers must be idempotent: jobs run at least once.

import type { JobHandler, JobSchedule } from './core/jobs/index.ts';
import { purgeExpiredIdempotencyKeys } from './core/http/idempotency.ts';
import type { AppDeps } from './deps.ts';

export function jobHandlers(deps: AppDeps): Record<string, JobHandler> {
  return {
    'housekeeping.idempotency_keys': async () => {
      const deleted = await purgeExpiredIdempotencyKeys(deps.db, deps.clock);
      if (deleted > 0) deps.log.info({ deleted }, 'expired idempotency keys deleted');
    },
  };
}

export const jobSchedules: JobSchedule[] = [
  { name: 'housekeeping.idempotency_keys', everySeconds: 3600, jobName: 'housekeeping.idempotency_keys' },
];
