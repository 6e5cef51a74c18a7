// The executor's jobs (docs/executor.md): one step of an intent's run, whose next step is a new
// job so no worker sleeps between slices, and the reconciliation of what ended runs left behind.

import { Type } from 'typebox';
import { defineJob, type AnyJobDefinition } from '../../core/jobs/index.ts';
import type { AppDeps } from '../../deps.ts';
import { EXECUTE_JOB } from '../intents/index.ts';
import { reconcilePrefundDeposits } from '../smart-account/index.ts';
import { failIntent, reconcileAbandonedSlices, runIntentStep } from './run.ts';
import type { RunDeps } from './start.ts';

/** What the executor runs with, from the application's dependencies (null without a chain port). */
export function executorDeps(deps: AppDeps): RunDeps | null {
  if (!deps.chain) return null;
  return {
    config: deps.config,
    clock: deps.clock,
    db: deps.db,
    registry: deps.tokenRegistry,
    chain: deps.chain,
    bundler: deps.bundler,
    venues: deps.venues ?? [],
    prices: deps.prices,
    log: deps.log,
  };
}

export const executorJobs: AnyJobDefinition<AppDeps>[] = [
  // A step that keeps failing ends the intent EXECUTION_ERROR on its last attempt.
  defineJob({
    name: EXECUTE_JOB,
    payload: Type.Object({ intent_id: Type.String() }),
    run: async (deps: AppDeps, { intent_id: id }, { attempt, job }) => {
      const executor = executorDeps(deps);
      try {
        if (!executor) throw new Error('the executor has no chain port');
        const step = await runIntentStep(executor, id);
        if (step.state !== 'continue') return;
        return {
          runAt: step.runAt,
          payload: { intent_id: id },
          singletonKey: `${id}:${step.runAt.getTime()}`,
        };
      } catch (err) {
        if (attempt < job.max_attempts || !executor) throw err;
        const ended = await failIntent(executor, id, (err as Error).message);
        deps.log.error({ err, intent: id, ended }, 'intent step failed on its last attempt');
      }
    },
  }),
  // Operations of ended runs that were unconfirmed when they ended: ledgered if they land late.
  // Relayer deposits a crash or a timeout left unsettled: booked from their receipts.
  defineJob({
    name: 'executor.reconcile',
    every: 60,
    run: async (deps: AppDeps) => {
      const executor = executorDeps(deps);
      if (!executor) return;
      const settled = await reconcileAbandonedSlices(executor);
      if (settled > 0) deps.log.info({ settled }, 'slices of ended intents settled');
      const deposits = await reconcilePrefundDeposits(executor);
      if (deposits > 0) deps.log.info({ deposits }, 'relayer prefund deposits settled');
    },
  }),
];
