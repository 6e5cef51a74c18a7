// Reconciliation (docs/ledger.md, "Reconciliation and drift"): for every watched wallet, each
// registry token and the native coin, the books against the chain at the last block the watcher
// has passed. What the ledger held at that block is its entries less those of Purser's own
// bookings of transactions mined after it (as for an opening). A difference nothing explains is
// recorded as a drift (drifts.ts), never booked away; a wallet with transfers still held in their
// grace period is compared on a later run.

import type { Address } from 'viem';
import { withTransaction } from '../../core/db/database.ts';
import { recordComparisons, type Comparison } from './drifts.ts';
import { ledgerHoldingsAt, readCursor, watchedWallets, walletsWithHeldTransfers } from './store.ts';
import { chainHoldingsAt, type WatchDeps } from './watcher.ts';

/** Wallets compared per database transaction (and read from the chain at once). */
const CHUNK = 25;

export interface ReconcileReport {
  chainId: number;
  /** The block compared at (the last the watcher passed), null when the chain is not watched yet. */
  block: string | null;
  compared: number;
  /** Wallets left for a later run: transfers of theirs are still held. */
  deferred: number;
  suspected: number;
  raised: number;
  agreed: number;
}

/** Compares books and chain for every watched wallet of one chain (see the file comment). */
export async function reconcileChain(deps: WatchDeps, chainId: number): Promise<ReconcileReport> {
  const report: ReconcileReport = {
    chainId,
    block: null,
    compared: 0,
    deferred: 0,
    suspected: 0,
    raised: 0,
    agreed: 0,
  };
  const cursor = await readCursor(deps.db, chainId);
  if (cursor === null || cursor === 0n) return report;
  const block = cursor - 1n;
  report.block = block.toString();
  const held = await walletsWithHeldTransfers(deps.db, chainId, block);
  const wallets = (await watchedWallets(deps.db, chainId)).filter(
    (w) => w.openedBlock !== null && w.openedBlock <= block,
  );
  const client = deps.chain.publicClient(chainId);
  for (let i = 0; i < wallets.length; i += CHUNK) {
    const chunk = wallets.slice(i, i + CHUNK).filter((w) => {
      if (!held.has(w.address)) return true;
      report.deferred += 1;
      return false;
    });
    const onChain = await Promise.all(
      chunk.map((w) => chainHoldingsAt(client, deps.registry, chainId, w.address as Address, block)),
    );
    const comparisons: Comparison[] = [];
    for (const [j, w] of chunk.entries()) {
      const books = await ledgerHoldingsAt(deps.db, chainId, w.address, block);
      for (const [asset, amount] of onChain[j]!) {
        comparisons.push({
          accountId: w.accountId,
          chainId,
          wallet: w.address,
          asset,
          ledger: books.get(asset) ?? 0n,
          chain: amount,
          block,
        });
      }
    }
    const counts = await withTransaction(deps.db, (tx) =>
      recordComparisons(tx, deps.clock, comparisons, {
        raiseAfterMs: deps.config.chainWatch.graceMs,
        registry: deps.registry,
      }),
    );
    report.compared += chunk.length;
    report.suspected += counts.suspected;
    report.raised += counts.raised;
    report.agreed += counts.agreed;
  }
  return report;
}

/** Reconciles every chain of the port, one after the other. */
export async function reconcileChains(deps: WatchDeps): Promise<ReconcileReport[]> {
  const out: ReconcileReport[] = [];
  for (const chainId of deps.chain.chainIds()) {
    if (!deps.registry.chain(chainId)) continue;
    try {
      out.push(await reconcileChain(deps, chainId));
    } catch (err) {
      deps.log?.warn(
        { chain_id: chainId, err: (err as Error).message.split('\n')[0] },
        'chain reconciliation failed',
      );
    }
  }
  return out;
}
