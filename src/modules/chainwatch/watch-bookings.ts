// The chain watcher's bookings: a range's transfer sides booked against `external:<chain>` a
// chunk per transaction (the cursor moved past the range in the last), matched instead when one
// of Purser's own bookings explains their transaction (claims.ts), or first held for a grace
// period; and the held ones booked once it is over. Idempotent on (chain, transaction, log,
// wallet, block).

import { withTransaction, type DbExecutor } from '../../core/db/database.ts';
import {
  chainNativeAsset,
  erc20Asset,
  externalAccount,
  transfer,
  walletAccount,
  type BatchedGroup,
} from '../ledger/index.ts';
import { lockTransactions } from './claims.ts';
import {
  claimedKeys,
  deleteTransfers,
  duePending,
  holdLease,
  markTransfers,
  moveCursor,
  recordedTransfers,
  rememberBlocks,
  saveTransfers,
  watchedWallets,
  type TransferRow,
} from './store.ts';
import { sidesOf } from './watch-logs.ts';
import {
  blocksFacts,
  bookedAt,
  holdAt,
  LeaseLost,
  postInStatements,
  type RawLog,
  type Run,
} from './watch-run.ts';

/** Transfer sides booked in one transaction. */
const CHUNK = 500;

/** The group booking one transfer side. */
function sideGroup(run: Run, side: TransferRow & { blockHash: string }): BatchedGroup {
  const chainId = run.chainId;
  const wallet = walletAccount(chainId, side.wallet);
  const outside = externalAccount(chainId);
  const native = chainNativeAsset(chainId);
  const entries =
    side.event === 'gas'
      ? transfer(wallet, outside, native, side.amount)
      : transfer(wallet, outside, erc20Asset(chainId, side.token), side.amount);
  // Wrapping pays the native coin in for the token; unwrapping gives it back.
  if (side.event === 'wrap' || side.event === 'unwrap') {
    entries.push(...transfer(outside, wallet, native, side.amount));
  }
  const kind = {
    gas: 'chain.gas',
    wrap: 'chain.wrap',
    unwrap: 'chain.unwrap',
    transfer: side.amount > 0n ? 'chain.deposit' : 'chain.withdrawal',
  }[side.event];
  return {
    at: bookedAt(run, side.blockTime),
    params: {
      settlementId: `chain:${chainId}:${side.txHash}:${side.logIndex}:${side.wallet}:${side.blockHash}`,
      accountId: side.accountId,
      kind,
      entries,
      memo: {
        wallet: side.wallet,
        tx_hash: side.txHash,
        log_index: side.logIndex,
        block: side.blockNumber.toString(),
        block_hash: side.blockHash,
        token: side.token,
      },
    },
  };
}

/**
 * Books (or holds, with a grace period) `sides` in `tx`, which holds their transactions' locks:
 * sides whose transaction Purser explains are matched; sides recorded already are left as they are.
 */
async function bookSides(
  run: Run,
  tx: DbExecutor,
  sides: (TransferRow & { blockHash: string })[],
  pending: boolean,
): Promise<void> {
  const { chainId, deps } = run;
  const hashes = [...new Set(sides.map((s) => s.txHash))];
  await lockTransactions(tx, chainId, hashes);
  const claimed = await claimedKeys(tx, chainId, hashes);
  const recorded = pending ? new Map() : await recordedTransfers(tx, chainId, hashes);
  const now = deps.clock.now();
  const hold = !pending && deps.config.chainWatch.graceMs > 0;
  const matched: typeof sides = [];
  const toBook: typeof sides = [];
  const toHold: typeof sides = [];
  for (const s of sides) {
    if (claimed.has(`${s.txHash}:${s.wallet}`)) matched.push(s);
    else if (!pending && (recorded.get(`${s.txHash}:${s.logIndex}:${s.wallet}`) ?? 'reversed') !== 'reversed')
      continue;
    else if (hold) toHold.push(s);
    else toBook.push(s);
  }
  const groups = toBook.map((s) => sideGroup(run, s));
  const results = await postInStatements(tx, groups);
  const booked = toBook.map((s, i) => {
    const r = results[i]!;
    if (!r.ok) throw new Error(`transfer ${groups[i]!.params.settlementId} refused: ${r.reason}`);
    return { ...s, state: 'booked' as const, groupId: r.groupId, seenAt: now };
  });
  if (pending) {
    await markTransfers(tx, chainId, booked, 'booked');
    await deleteTransfers(tx, chainId, matched);
  } else {
    await saveTransfers(tx, [
      ...booked,
      ...toHold.map((s) => ({ ...s, state: 'pending' as const, groupId: null, seenAt: now })),
    ]);
  }
  run.report.booked += booked.length;
  run.report.held += toHold.length;
  run.report.matched += matched.length;
}

/**
 * Books one range's logs, a chunk of sides per transaction, and moves the cursor past the range in
 * the last one. A crash between chunks leaves the cursor at the range's start: the next run reads
 * the range again and books only what was not booked.
 */
export async function bookRange(run: Run, from: bigint, to: bigint, logs: RawLog[]): Promise<void> {
  const { deps, chainId } = run;
  const watched = new Map((await watchedWallets(deps.db, chainId)).map((w) => [w.address, w]));
  const sides = sidesOf(run, logs, watched);
  const blocks = await blocksFacts(run, [...new Set([...sides.map((s) => s.blockNumber), to])]);
  const timed = sides.map((s) => ({ ...s, blockTime: blocks.get(s.blockNumber)!.time }));
  const end = blocks.get(to)!;
  const chunks: (typeof timed)[] = [];
  for (let i = 0; i < timed.length; i += CHUNK) chunks.push(timed.slice(i, i + CHUNK));
  if (chunks.length === 0) chunks.push([]);
  for (const [i, chunk] of chunks.entries()) {
    const last = i === chunks.length - 1;
    await withTransaction(deps.db, async (tx) => {
      await holdAt(run, tx, from);
      if (chunk.length > 0) await bookSides(run, tx, chunk, false);
      const seen = [...new Set(chunk.map((s) => s.blockNumber))].map((n) => ({
        number: n,
        hash: blocks.get(n)!.hash,
      }));
      await rememberBlocks(tx, chainId, last ? [...seen, { number: to, hash: end.hash }] : seen);
      if (last) await moveCursor(tx, chainId, to + 1n, deps.clock.now());
    });
    if (!last && deps.config.chainWatch.faultCrash) process.kill(process.pid, 'SIGKILL');
  }
}

/** Books the held transfers whose grace period is over (those Purser explained meanwhile are matched). */
export async function bookDue(run: Run): Promise<void> {
  const { deps, chainId } = run;
  const seenBy = new Date(deps.clock.now().getTime() - deps.config.chainWatch.graceMs);
  for (;;) {
    const due = await duePending(deps.db, chainId, seenBy, CHUNK);
    if (due.length === 0) return;
    await withTransaction(deps.db, async (tx) => {
      const cursor = await holdLease(tx, chainId, run.owner, run.leaseUntil());
      if (cursor === null) throw new LeaseLost(chainId);
      await bookSides(run, tx, due, true);
    });
    if (due.length < CHUNK) return;
  }
}
