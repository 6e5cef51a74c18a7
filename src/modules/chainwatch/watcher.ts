// The chain watcher (docs/ledger.md, "The chain"): books what reaches or leaves the wallets Purser
// keeps books for, so that a wallet's books equal the chain.
//
// One run per chain, under the chain's reader lease (one process at a time; a lease whose holder
// died runs out and is taken over): new wallets are added and given their opening, a changed block
// hash rolls the bookings of the dropped blocks back, then the blocks from the cursor up to the
// head less the confirmation depth are read one range at a time, one `eth_getLogs` per range for
// every registry token of the chain. Each transfer side at a watched wallet is booked against
// `external:<chain>` unless one of Purser's own bookings explains its transaction (claims.ts);
// with a grace period it is first held, so that a booking of Purser's that comes a moment later
// (an operation's receipt) is not anticipated. Bookings are idempotent on (chain, transaction,
// log, wallet, block): replays, restarts and two processes book once.
//
// This file holds the runs (every chain, one chain); their steps are in watch-reorgs.ts,
// watch-openings.ts, watch-logs.ts and watch-bookings.ts, and what they share in watch-run.ts.

import { newId } from '../../core/ids.ts';
import { discoverWallets, ensureCursor, forgetBlocksBelow, releaseLease, takeLease } from './store.ts';
import { bookDue, bookRange } from './watch-bookings.ts';
import { transferLogs } from './watch-logs.ts';
import { openWallets } from './watch-openings.ts';
import { findReorg, rollBack } from './watch-reorgs.ts';
import {
  currentCursor,
  LeaseLost,
  type ChainWatchReport,
  type RawLog,
  type Run,
  type WatchDeps,
} from './watch-run.ts';

export type { ChainWatchReport, WatchDeps } from './watch-run.ts';
export { chainHoldingsAt } from './watch-openings.ts';

/** Remembered block hashes older than this many blocks behind the cursor are forgotten. */
const KEEP_BLOCKS = 1_024n;

/** This process's identity as a lease holder. */
const OWNER = `watch_${newId('w').slice(2)}`;

/** Per chain: failed runs in a row, and when the next may start (this process's backoff). */
const backoff = new Map<number, { failures: number; retryAt: number }>();
/** The longest a chain whose node keeps failing waits between two runs. */
const MAX_BACKOFF_MS = 300_000;

/**
 * One run over every chain of the port (each in turn). A chain whose run fails (its node down, a
 * refused range) is logged and left alone for a while, doubling from 2 s up to five minutes, while
 * the other chains go on.
 */
export async function watchChains(deps: WatchDeps, owner = OWNER): Promise<ChainWatchReport[]> {
  const out: ChainWatchReport[] = [];
  const started = performance.now();
  for (const chainId of deps.chain.chainIds()) {
    if (!deps.registry.chain(chainId)) continue;
    const left = deps.config.chainWatch.runBudgetMs - (performance.now() - started);
    if (left <= 0) break;
    const waiting = backoff.get(chainId);
    if (waiting && performance.now() < waiting.retryAt) continue;
    try {
      out.push(await watchChain(deps, chainId, { owner, budgetMs: left }));
      backoff.delete(chainId);
    } catch (err) {
      const failures = (waiting?.failures ?? 0) + 1;
      const delayMs = Math.min(MAX_BACKOFF_MS, 2_000 * 2 ** (failures - 1));
      backoff.set(chainId, { failures, retryAt: performance.now() + delayMs });
      deps.log?.warn(
        { chain_id: chainId, failures, retry_in_ms: delayMs, err: (err as Error).message.split('\n')[0] },
        'chain watch failed',
      );
    }
  }
  return out;
}

/** One run over one chain (see the file comment). */
export async function watchChain(
  deps: WatchDeps,
  chainId: number,
  options: { owner?: string; budgetMs?: number } = {},
): Promise<ChainWatchReport> {
  const owner = options.owner ?? OWNER;
  const cfg = deps.config.chainWatch;
  const budgetMs = options.budgetMs ?? cfg.runBudgetMs;
  const started = performance.now();
  const timeLeft = () => budgetMs - (performance.now() - started);
  const leaseMs = budgetMs + 10_000;
  const leaseUntil = () => new Date(deps.clock.now().getTime() + leaseMs);

  const head = await deps.chain.getBlockNumber(chainId);
  const safe = head - BigInt(cfg.confirmations[chainId] ?? 0);
  const report: ChainWatchReport = {
    chainId,
    leased: false,
    head: head.toString(),
    nextBlock: null,
    opened: 0,
    booked: 0,
    held: 0,
    matched: 0,
    reorgFrom: null,
    caughtUp: true,
  };
  if (safe < 0n) return report;
  await discoverWallets(deps.db, deps.clock.now(), chainId, {
    pmChainId: deps.config.pm.chainId,
    executorAddress: deps.config.executorAddress,
  });
  // A chain seen for the first time starts at its safe head: what came before is in the openings.
  await ensureCursor(deps.db, chainId, safe + 1n, deps.clock.now());
  if (!(await takeLease(deps.db, chainId, owner, deps.clock.now(), leaseUntil()))) {
    report.leased = true;
    return report;
  }
  const run: Run = { deps, chainId, owner, leaseUntil, client: deps.chain.publicClient(chainId), report };
  try {
    const reorg = await findReorg(run);
    if (reorg !== null) await rollBack(run, reorg);
    await openWallets(run);
    let next = await currentCursor(run);
    let range = BigInt(cfg.maxRange);
    while (next <= safe) {
      if (timeLeft() <= 0) {
        report.caughtUp = false;
        break;
      }
      const to = next + range - 1n < safe ? next + range - 1n : safe;
      let logs: RawLog[];
      try {
        logs = await transferLogs(run, next, to);
      } catch (err) {
        // A provider's log limit (or any refusal of a range): ask for half as much, down to one block.
        if (range > 1n) {
          range = (range + 1n) / 2n;
          continue;
        }
        throw err;
      }
      await bookRange(run, next, to, logs);
      next = to + 1n;
      if (range < BigInt(cfg.maxRange)) range *= 2n;
    }
    await bookDue(run);
    await forgetBlocksBelow(deps.db, chainId, next - KEEP_BLOCKS);
    report.nextBlock = next.toString();
    return report;
  } catch (err) {
    if (err instanceof LeaseLost) {
      report.leased = true;
      return report;
    }
    throw err;
  } finally {
    await releaseLease(deps.db, chainId, owner).catch(() => undefined);
  }
}
