// The rebalances module's jobs (docs/rebalances.md): a planned rebalance's burn, a submitted
// mint's check, and the hourly completion of what awaits its attestation.

import { Type } from 'typebox';
import { defineJob, type AnyJobDefinition } from '../../core/jobs/index.ts';
import type { AppDeps } from '../../deps.ts';
import { rebalanceRunDeps } from './routes.ts';
import { completePendingRebalances, runBurn, runMintCheck } from './run.ts';
import { BURN_JOB, MINT_JOB } from './service.ts';

/** How long the burn job waits before looking again at a burn whose receipts did not come. */
const BURN_RECHECK_MS = 30_000;
/** How long the mint job waits before looking again at a mint whose receipt did not come. */
const MINT_RECHECK_MS = 60_000;

const RebalancePayload = Type.Object({ rebalance_id: Type.String() });

function runDeps(deps: AppDeps) {
  const rebalances = rebalanceRunDeps(deps);
  if (!rebalances) throw new Error('rebalances need a chain port and an attestation service');
  return rebalances;
}

export const rebalancesJobs: AnyJobDefinition<AppDeps>[] = [
  // Signed, recorded, sent, then booked once its receipts are in; a burn still unconfirmed is
  // looked at again (and by the hourly job).
  defineJob({
    name: BURN_JOB,
    payload: RebalancePayload,
    run: async (deps: AppDeps, { rebalance_id: id }) => {
      const step = await runBurn(runDeps(deps), id);
      if (step.state !== 'waiting') return;
      const runAt = new Date(deps.clock.now().getTime() + BURN_RECHECK_MS);
      return { runAt, payload: { rebalance_id: id }, singletonKey: `${id}:${runAt.getTime()}` };
    },
  }),
  // Settled once its receipt is in, looked at again every minute until then, so a process killed
  // after the broadcast delays it by a minute at most.
  defineJob({
    name: MINT_JOB,
    payload: RebalancePayload,
    run: async (deps: AppDeps, { rebalance_id: id }) => {
      if ((await runMintCheck(runDeps(deps), id)) !== 'waiting') return;
      const runAt = new Date(deps.clock.now().getTime() + MINT_RECHECK_MS);
      return { runAt, payload: { rebalance_id: id }, singletonKey: `${id}:mint:${runAt.getTime()}` };
    },
  }),
  // Spec: an hourly job completes every rebalance awaiting attestation (and moves on what a crash
  // left behind).
  defineJob({
    name: 'rebalances.complete',
    every: 3600,
    run: async (deps: AppDeps) => {
      const rebalances = rebalanceRunDeps(deps);
      if (!rebalances) return;
      const done = await completePendingRebalances(rebalances);
      if (done.minted + done.moved + done.failed > 0)
        deps.log.info(done, 'rebalances completed by the hourly job');
    },
  }),
];
