// Reorganizations, for the chain watcher: the first remembered block whose hash the chain no
// longer has, and what was booked from it on rolled back (bookings reversed, held transfers
// forgotten, openings reversed, the cursor moved back).

import { withTransaction } from '../../core/db/database.ts';
import { reverseGroup } from '../ledger/index.ts';
import {
  deleteTransfers,
  forgetBlocksFrom,
  holdLease,
  markOpened,
  markTransfers,
  moveCursor,
  openedFrom,
  recentBlocks,
  transfersFrom,
} from './store.ts';
import { blockFacts, LeaseLost, type Run } from './watch-run.ts';

/** How many of the newest remembered blocks a run compares with the chain. */
const REORG_WINDOW = 64;

/** The first block whose remembered hash the chain no longer has, or null. */
export async function findReorg(run: Run): Promise<bigint | null> {
  const recent = await recentBlocks(run.deps.db, run.chainId, REORG_WINDOW);
  let from: bigint | null = null;
  for (const b of recent) {
    const onChain = await blockFacts(run, b.number).catch(() => null);
    if (onChain && onChain.hash === b.hash) break;
    from = b.number;
  }
  return from;
}

/**
 * Rolls back what was booked in blocks from `from` on: each booked transfer reversed (new entries,
 * the ledger stays append-only), held ones forgotten, openings at those blocks reversed (the wallet
 * is opened again), and the cursor moved back to `from`.
 */
export async function rollBack(run: Run, from: bigint): Promise<void> {
  const { deps, chainId } = run;
  await withTransaction(deps.db, async (tx) => {
    const cursor = await holdLease(tx, chainId, run.owner, run.leaseUntil());
    if (cursor === null) throw new LeaseLost(chainId);
    const dropped = await transfersFrom(tx, chainId, from);
    const booked = dropped.filter((t) => t.state === 'booked' && t.groupId !== null);
    for (const t of booked) {
      const res = await reverseGroup(tx, deps.clock, {
        groupId: t.groupId!,
        accountId: t.accountId,
        reason: `block reorganized away (from block ${from})`,
      });
      if (!res.ok) throw new Error(`reversing ${t.groupId} after a reorganization: ${res.reason}`);
    }
    await markTransfers(
      tx,
      chainId,
      booked.map((t) => ({ ...t, groupId: t.groupId })),
      'reversed',
    );
    await deleteTransfers(
      tx,
      chainId,
      dropped.filter((t) => t.state === 'pending'),
    );
    for (const w of await openedFrom(tx, chainId, from)) {
      if (w.groupId !== null) {
        const res = await reverseGroup(tx, deps.clock, {
          groupId: w.groupId,
          accountId: w.accountId,
          reason: `opening block reorganized away (from block ${from})`,
        });
        if (!res.ok) throw new Error(`reversing opening ${w.groupId}: ${res.reason}`);
      }
      await markOpened(tx, chainId, w.address, null, null);
    }
    await forgetBlocksFrom(tx, chainId, from);
    if (from < cursor) await moveCursor(tx, chainId, from, deps.clock.now());
  });
  run.report.reorgFrom = from.toString();
  deps.log?.warn({ chain_id: chainId, from_block: from.toString() }, 'chain reorganization rolled back');
}
