// The job table: every background job the workers run, in one list (the counterpart of
// src/routes.ts). Each module declares its jobs next to its code (name, payload schema, schedule,
// handler and the continuation it returns); add a module's jobs here. Handlers must be idempotent:
// jobs run at least once.

import {
  jobHandlersOf,
  jobSchedulesOf,
  type AnyJobDefinition,
  type JobHandler,
  type JobSchedule,
} from './core/jobs/index.ts';
import type { AppDeps } from './deps.ts';
import { autoTopupJobs } from './modules/billing/auto-topup-jobs.ts';
import { chainwatchJobs } from './modules/chainwatch/jobs.ts';
import { delegationsJobs } from './modules/delegations/jobs.ts';
import { executorJobs } from './modules/executor/jobs.ts';
import { feedbackJobs } from './modules/feedback/jobs.ts';
import { intentsJobs } from './modules/intents/jobs.ts';
import { housekeepingJobs } from './modules/housekeeping/jobs.ts';
import { ledgerJobs } from './modules/ledger/jobs.ts';
import { paymentsJobs } from './modules/payments/jobs.ts';
import { pmJobs } from './modules/pm/jobs.ts';
import { policiesJobs } from './modules/policies/jobs.ts';
import { rebalancesJobs } from './modules/rebalances/jobs.ts';
import { lifecycleJobs } from './lifecycle/jobs.ts';
import { settlementEffects } from './settlement-effects.ts';

export { CHAIN_RECONCILE_JOB, CHAIN_WATCH_JOB } from './modules/chainwatch/jobs.ts';

/** What a settled payment does, per purpose: given to the jobs that finish payments. */
const effects = settlementEffects();

export const jobTable: AnyJobDefinition<AppDeps>[] = [
  ...rebalancesJobs,
  ...executorJobs,
  ...intentsJobs,
  ...housekeepingJobs,
  ...lifecycleJobs,
  ...feedbackJobs,
  ...pmJobs,
  ...policiesJobs,
  ...ledgerJobs,
  ...delegationsJobs,
  ...paymentsJobs(effects),
  ...autoTopupJobs(effects),
  ...chainwatchJobs,
];

export function jobHandlers(deps: AppDeps): Record<string, JobHandler> {
  return jobHandlersOf(jobTable, deps);
}

/** The schedules a worker runs with this configuration (the chain watcher's only when it is on). */
export function schedulesFor(config: AppDeps['config']): JobSchedule[] {
  return jobSchedulesOf(jobTable, config);
}

/** The periodic jobs whose schedule does not depend on the configuration. */
export const jobSchedules: JobSchedule[] = jobSchedulesOf(jobTable);
