// Running a rebalance: the burn (approve + depositForBurn, signed by the executor key, recorded
// before broadcast), the attestation and the mint (receiveMessage on the destination), each step
// re-entrant after a crash: it reads what was recorded and what the chains say, and carries on
// from there. docs/rebalances.md has the phases.
//
// The steps are in run-burn.ts (the burn), run-complete.ts (attestation and the mint sent),
// run-mint.ts (the mint settled, and its job), run-booking.ts (phases moved on with their
// bookings and events), run-broadcast.ts (sending and replacing transactions) and run-deps.ts
// (what a run needs and looks up). This file holds the hourly completion.

import { runBurn } from './run-burn.ts';
import { completeRebalance } from './run-complete.ts';
import type { RebalanceRunDeps } from './run-deps.ts';
import { settleMint } from './run-mint.ts';
import { openRebalances } from './store.ts';

export type { RebalanceLog, RebalanceRunDeps } from './run-deps.ts';
export { runBurn, type BurnStep } from './run-burn.ts';
export { completeRebalance, type CompleteOutcome } from './run-complete.ts';
export { enqueueMintCheck, recoverSubmittedMints, runMintCheck, settleMint } from './run-mint.ts';

/**
 * The hourly completion: every rebalance awaiting attestation is completed as the route does; and
 * whatever a crash or an exhausted job left behind moves on (burns not sent or not settled, mints
 * not settled). Returns what it did.
 */
export async function completePendingRebalances(
  deps: RebalanceRunDeps,
): Promise<{ minted: number; notReady: number; moved: number; failed: number }> {
  const out = { minted: 0, notReady: 0, moved: 0, failed: 0 };
  const now = deps.clock.now();
  const quiet = new Date(now.getTime() - 60_000);
  for (const row of await openRebalances(deps.db, ['burn_pending', 'burn_submitted'], quiet)) {
    try {
      await runBurn(deps, row.id);
      out.moved++;
    } catch (err) {
      out.failed++;
      deps.log.warn({ err, rebalance: row.id }, 'rebalance burn could not be moved on');
    }
  }
  for (const row of await openRebalances(deps.db, ['mint_submitted'], quiet)) {
    try {
      await settleMint(deps, row.id, deps.config.cctp.receiptTimeoutMs);
      out.moved++;
    } catch (err) {
      out.failed++;
      deps.log.warn({ err, rebalance: row.id }, 'rebalance mint could not be settled');
    }
  }
  for (const row of await openRebalances(deps.db, ['awaiting_attestation'], now, 500)) {
    try {
      const done = await completeRebalance(deps, row.id, null, deps.config.cctp.receiptTimeoutMs);
      if (done.state === 'not_ready') out.notReady++;
      else out.minted++;
    } catch (err) {
      out.failed++;
      deps.log.warn({ err, rebalance: row.id }, 'rebalance could not be completed');
    }
  }
  return out;
}
