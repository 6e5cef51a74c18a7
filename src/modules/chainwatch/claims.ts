// Purser's own bookings of on-chain transactions (a fill, a burn, a mint, a wrap, a prefund
// deposit) claim their transaction for the wallet, in the booking's transaction: the watcher then
// matches that wallet's transfers in it instead of booking them again. Both sides take the
// transaction's lock first, so whichever comes second sees the other: a claim that comes after the
// watcher booked the transfers (past its grace period) reverses those bookings, and one that comes
// while they are held drops them.

import { sql } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import { lockUntilCommit, type DbExecutor } from '../../core/db/database.ts';
import { reverseGroup } from '../ledger/index.ts';

const lockName = (chainId: number, txHash: string) => `chaintx:${chainId}:${txHash.toLowerCase()}`;

/** Takes the locks of several transactions of a chain, in one order (the watcher's side). */
export async function lockTransactions(tx: DbExecutor, chainId: number, hashes: string[]): Promise<void> {
  if (hashes.length === 0) return;
  const names = [...new Set(hashes.map((h) => lockName(chainId, h)))].sort();
  await sql`SELECT count(pg_advisory_xact_lock(k)) FROM (
      SELECT hashtextextended(n, 0) AS k FROM unnest(${names}::text[]) AS n ORDER BY 1) AS s`.execute(tx);
}

export interface ChainClaim {
  chainId: number;
  txHash: string;
  /** The wallet whose transfers in the transaction the booking explains. */
  wallet: string;
  /** The group that books them. */
  groupId: string;
  /** The transaction's block, when known (an opening counts the claim at its block). */
  blockNumber: bigint | null;
}

/** Claims a transaction for a wallet in the caller's transaction (see the file comment). */
export async function claimChainTransaction(tx: DbExecutor, clock: Clock, claim: ChainClaim): Promise<void> {
  const txHash = claim.txHash.toLowerCase();
  const wallet = claim.wallet.toLowerCase();
  await lockUntilCommit(tx, lockName(claim.chainId, txHash));
  await tx
    .insertInto('chain_tx_claims')
    .values({
      chain_id: claim.chainId,
      tx_hash: txHash,
      wallet,
      group_id: claim.groupId,
      block_number: claim.blockNumber === null ? null : claim.blockNumber.toString(),
    })
    .onConflict((oc) => oc.columns(['chain_id', 'tx_hash', 'wallet']).doNothing())
    .execute();
  const seen = await tx
    .selectFrom('chain_watch_transfers as t')
    .innerJoin('chain_watch_wallets as w', (j) =>
      j.onRef('w.chain_id', '=', 't.chain_id').onRef('w.address', '=', 't.wallet'),
    )
    .select(['t.log_index', 't.state', 't.group_id', 'w.account_id'])
    .where('t.chain_id', '=', claim.chainId)
    .where('t.tx_hash', '=', txHash)
    .where('t.wallet', '=', wallet)
    .where('t.state', 'in', ['pending', 'booked'])
    .execute();
  for (const t of seen) {
    if (t.state === 'booked' && t.group_id !== null) {
      const res = await reverseGroup(tx, clock, {
        groupId: t.group_id,
        accountId: t.account_id,
        reason: `explained by ${claim.groupId}`,
      });
      if (!res.ok) throw new Error(`reversing ${t.group_id} for claim ${claim.groupId}: ${res.reason}`);
      await tx
        .updateTable('chain_watch_transfers')
        .set({ state: 'reversed' })
        .where('chain_id', '=', claim.chainId)
        .where('tx_hash', '=', txHash)
        .where('log_index', '=', t.log_index)
        .where('wallet', '=', wallet)
        .execute();
    } else {
      await tx
        .deleteFrom('chain_watch_transfers')
        .where('chain_id', '=', claim.chainId)
        .where('tx_hash', '=', txHash)
        .where('log_index', '=', t.log_index)
        .where('wallet', '=', wallet)
        .execute();
    }
  }
}
