// The chain watcher's jobs (docs/ledger.md, "The chain"), scheduled when CHAIN_WATCH is on.

import { defineJob, type AnyJobDefinition } from '../../core/jobs/index.ts';
import type { AppDeps } from '../../deps.ts';
import { reconcileChains } from './reconcile.ts';
import { chainWatchDeps } from './routes.ts';
import { watchChains } from './watcher.ts';

/** The chain watcher's job, and reconciliation's. */
export const CHAIN_WATCH_JOB = 'chain.watch';
export const CHAIN_RECONCILE_JOB = 'chain.reconcile';

export const chainwatchJobs: AnyJobDefinition<AppDeps>[] = [
  // Books what reached or left watched wallets.
  defineJob({
    name: CHAIN_WATCH_JOB,
    every: (config: AppDeps['config']) => (config.chainWatch.enabled ? config.chainWatch.everySeconds : null),
    run: async (deps: AppDeps) => {
      const watch = chainWatchDeps(deps);
      if (!watch || !deps.config.chainWatch.enabled) return;
      for (const r of await watchChains(watch)) {
        if (r.booked > 0 || r.opened > 0 || r.reorgFrom !== null || !r.caughtUp)
          deps.log.info({ ...r }, 'chain watched');
      }
    },
  }),
  // Books against chain for every watched wallet; drifts raised.
  defineJob({
    name: CHAIN_RECONCILE_JOB,
    every: (config: AppDeps['config']) =>
      config.chainWatch.enabled ? config.chainWatch.reconcileEverySeconds : null,
    run: async (deps: AppDeps) => {
      const watch = chainWatchDeps(deps);
      if (!watch || !deps.config.chainWatch.enabled) return;
      for (const r of await reconcileChains(watch)) {
        if (r.raised > 0 || r.agreed > 0)
          deps.log.warn({ ...r }, 'books and chain reconciled: drift changed');
      }
    },
  }),
];
