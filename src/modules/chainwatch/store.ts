// The chain watcher's tables (migration 0040): watched wallets, one cursor (and reader's lease) per
// chain, the hashes of the blocks booked in, the transfers it booked or holds, and the transactions
// Purser's own bookings explain.

import { sql } from 'kysely';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';
import { accountOfAddressSql } from '../account/store.ts';
import { ledgerTotalsByAsset, walletAccount } from '../ledger/index.ts';
import { firstPolicyPerWalletSql } from '../policies/store.ts';
import { firstCredentialPerFunderSql } from '../pm/store.ts';

export type WalletRole = 'policy' | 'pm_funder' | 'executor';
export type TransferState = 'pending' | 'booked' | 'reversed';
export type TransferEvent = 'transfer' | 'wrap' | 'unwrap' | 'gas';

export interface ChainWatchWalletsTable {
  chain_id: number;
  address: string;
  account_id: string;
  role: WalletRole;
  opened_block: string | null;
  opening_group_id: string | null;
  created_at: Timestamp;
}

export interface ChainWatchCursorsTable {
  chain_id: number;
  next_block: string;
  lease_owner: string | null;
  leased_until: Timestamp | null;
  updated_at: Timestamp;
}

export interface ChainWatchBlocksTable {
  chain_id: number;
  number: string;
  hash: string;
}

export interface ChainWatchTransfersTable {
  chain_id: number;
  tx_hash: string;
  log_index: number;
  wallet: string;
  block_number: string;
  block_time: Timestamp;
  token: string;
  event: TransferEvent;
  amount: string;
  state: TransferState;
  group_id: string | null;
  seen_at: Timestamp;
}

export interface ChainTxClaimsTable {
  chain_id: number;
  tx_hash: string;
  wallet: string;
  group_id: string;
  block_number: string | null;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    chain_watch_wallets: ChainWatchWalletsTable;
    chain_watch_cursors: ChainWatchCursorsTable;
    chain_watch_blocks: ChainWatchBlocksTable;
    chain_watch_transfers: ChainWatchTransfersTable;
    chain_tx_claims: ChainTxClaimsTable;
  }
}

export interface WatchedWallet {
  address: string;
  accountId: string;
  role: WalletRole;
  openedBlock: bigint | null;
}

/** One transfer side at a watched wallet, as the watcher records it. */
export interface TransferRow {
  chainId: number;
  txHash: string;
  logIndex: number;
  wallet: string;
  accountId: string;
  blockNumber: bigint;
  blockHash: string;
  blockTime: Date;
  token: string;
  event: TransferEvent;
  /** In positive, out negative. */
  amount: bigint;
}

/**
 * Adds the wallets Purser keeps books for on `chainId` that are not watched yet: the wallets of
 * published policies (under the account that published first), the prediction-market funders of
 * the venue chain, and the treasury executor once it has an account. One statement.
 */
export async function discoverWallets(
  db: DbExecutor,
  at: Date,
  chainId: number,
  sources: { pmChainId: number; executorAddress: string | null },
): Promise<number> {
  const funders =
    chainId === sources.pmChainId
      ? sql`UNION ALL
        (SELECT f.address, f.account_id, 'pm_funder', f.created_at, 2 FROM (${firstCredentialPerFunderSql()}) f)`
      : sql``;
  const executor =
    sources.executorAddress !== null
      ? sql`UNION ALL
        (SELECT x.address, x.account_id, 'executor', x.created_at, 0 FROM (${accountOfAddressSql(sources.executorAddress)}) x)`
      : sql``;
  const result = await sql`
    INSERT INTO chain_watch_wallets (chain_id, address, account_id, role, created_at)
    SELECT DISTINCT ON (c.address) ${chainId}, c.address, c.account_id, c.role, ${at}::timestamptz
    FROM (
      (SELECT p.address, p.account_id, 'policy' AS role, p.created_at, 1 AS rank FROM (${firstPolicyPerWalletSql()}) p)
      ${funders}
      ${executor}
    ) c
    WHERE NOT EXISTS (SELECT 1 FROM chain_watch_wallets w WHERE w.chain_id = ${chainId} AND w.address = c.address)
    ORDER BY c.address, c.rank, c.created_at
    ON CONFLICT (chain_id, address) DO NOTHING`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

export async function watchedWallets(db: DbExecutor, chainId: number): Promise<WatchedWallet[]> {
  const rows = await db
    .selectFrom('chain_watch_wallets')
    .select(['address', 'account_id', 'role', 'opened_block'])
    .where('chain_id', '=', chainId)
    .execute();
  return rows.map((r) => ({
    address: r.address,
    accountId: r.account_id,
    role: r.role,
    openedBlock: r.opened_block === null ? null : BigInt(r.opened_block),
  }));
}

/** The chain's cursor row, created at `startBlock` the first time. */
export async function ensureCursor(
  db: DbExecutor,
  chainId: number,
  startBlock: bigint,
  at: Date,
): Promise<void> {
  await db
    .insertInto('chain_watch_cursors')
    .values({ chain_id: chainId, next_block: startBlock.toString(), updated_at: at })
    .onConflict((oc) => oc.column('chain_id').doNothing())
    .execute();
}

/**
 * Takes (or renews) the chain's reader lease for `owner` until `until`: true when this owner holds
 * it now. A lease held by another and not run out is refused.
 */
export async function takeLease(
  db: DbExecutor,
  chainId: number,
  owner: string,
  now: Date,
  until: Date,
): Promise<boolean> {
  const row = await db
    .updateTable('chain_watch_cursors')
    .set({ lease_owner: owner, leased_until: until })
    .where('chain_id', '=', chainId)
    .where((eb) =>
      eb.or([eb('lease_owner', '=', owner), eb('leased_until', 'is', null), eb('leased_until', '<', now)]),
    )
    .returning('next_block')
    .executeTakeFirst();
  return row !== undefined;
}

/** Renews the lease in the caller's transaction (locking the cursor row): the cursor, or null when lost. */
export async function holdLease(
  tx: DbExecutor,
  chainId: number,
  owner: string,
  until: Date,
): Promise<bigint | null> {
  const row = await tx
    .updateTable('chain_watch_cursors')
    .set({ leased_until: until })
    .where('chain_id', '=', chainId)
    .where('lease_owner', '=', owner)
    .returning('next_block')
    .executeTakeFirst();
  return row ? BigInt(row.next_block) : null;
}

export async function releaseLease(db: DbExecutor, chainId: number, owner: string): Promise<void> {
  await db
    .updateTable('chain_watch_cursors')
    .set({ lease_owner: null, leased_until: null })
    .where('chain_id', '=', chainId)
    .where('lease_owner', '=', owner)
    .execute();
}

export async function readCursor(db: DbExecutor, chainId: number): Promise<bigint | null> {
  const row = await db
    .selectFrom('chain_watch_cursors')
    .select('next_block')
    .where('chain_id', '=', chainId)
    .executeTakeFirst();
  return row ? BigInt(row.next_block) : null;
}

/** Every chain's cursor: the next block to read, and when it last moved. */
export async function watchCursors(
  db: DbExecutor,
): Promise<{ chainId: number; nextBlock: bigint; updatedAt: Date }[]> {
  const rows = await db
    .selectFrom('chain_watch_cursors')
    .select(['chain_id', 'next_block', 'updated_at'])
    .execute();
  return rows.map((r) => ({
    chainId: r.chain_id,
    nextBlock: BigInt(r.next_block),
    updatedAt: new Date(r.updated_at),
  }));
}

export async function moveCursor(tx: DbExecutor, chainId: number, next: bigint, at: Date): Promise<void> {
  await tx
    .updateTable('chain_watch_cursors')
    .set({ next_block: next.toString(), updated_at: at })
    .where('chain_id', '=', chainId)
    .execute();
}

/** Records block hashes (a block seen again keeps its newest hash). */
export async function rememberBlocks(
  tx: DbExecutor,
  chainId: number,
  blocks: { number: bigint; hash: string }[],
): Promise<void> {
  if (blocks.length === 0) return;
  const unique = [...new Map(blocks.map((b) => [b.number, b])).values()];
  await tx
    .insertInto('chain_watch_blocks')
    .values(
      unique.map((b) => ({ chain_id: chainId, number: b.number.toString(), hash: b.hash.toLowerCase() })),
    )
    .onConflict((oc) =>
      oc.columns(['chain_id', 'number']).doUpdateSet((eb) => ({ hash: eb.ref('excluded.hash') })),
    )
    .execute();
}

/** The newest remembered blocks, newest first. */
export async function recentBlocks(
  db: DbExecutor,
  chainId: number,
  limit: number,
): Promise<{ number: bigint; hash: string }[]> {
  const rows = await db
    .selectFrom('chain_watch_blocks')
    .select(['number', 'hash'])
    .where('chain_id', '=', chainId)
    .orderBy('number', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ number: BigInt(r.number), hash: r.hash }));
}

/** Forgets block hashes below `below` (older than any reorganization the watcher looks for). */
export async function forgetBlocksBelow(db: DbExecutor, chainId: number, below: bigint): Promise<void> {
  await db
    .deleteFrom('chain_watch_blocks')
    .where('chain_id', '=', chainId)
    .where('number', '<', below.toString())
    .execute();
}

export async function forgetBlocksFrom(tx: DbExecutor, chainId: number, from: bigint): Promise<void> {
  await tx
    .deleteFrom('chain_watch_blocks')
    .where('chain_id', '=', chainId)
    .where('number', '>=', from.toString())
    .execute();
}

/** The transactions (of `hashes`) Purser's own bookings explain, as `<tx>:<wallet>` keys. */
export async function claimedKeys(tx: DbExecutor, chainId: number, hashes: string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const rows = await tx
    .selectFrom('chain_tx_claims')
    .select(['tx_hash', 'wallet'])
    .where('chain_id', '=', chainId)
    .where('tx_hash', 'in', hashes)
    .execute();
  return new Set(rows.map((r) => `${r.tx_hash}:${r.wallet}`));
}

/** Transfers already recorded (any state), as `<tx>:<log>:<wallet>` keys with their state. */
export async function recordedTransfers(
  tx: DbExecutor,
  chainId: number,
  hashes: string[],
): Promise<Map<string, TransferState>> {
  if (hashes.length === 0) return new Map();
  const rows = await tx
    .selectFrom('chain_watch_transfers')
    .select(['tx_hash', 'log_index', 'wallet', 'state'])
    .where('chain_id', '=', chainId)
    .where('tx_hash', 'in', hashes)
    .execute();
  return new Map(rows.map((r) => [`${r.tx_hash}:${r.log_index}:${r.wallet}`, r.state]));
}

/** Inserts transfer rows, or moves a reversed one (seen again in a new block) to its new state. */
export async function saveTransfers(
  tx: DbExecutor,
  rows: (TransferRow & { state: TransferState; groupId: string | null; seenAt: Date })[],
): Promise<void> {
  if (rows.length === 0) return;
  await tx
    .insertInto('chain_watch_transfers')
    .values(
      rows.map((r) => ({
        chain_id: r.chainId,
        tx_hash: r.txHash,
        log_index: r.logIndex,
        wallet: r.wallet,
        block_number: r.blockNumber.toString(),
        block_time: r.blockTime,
        token: r.token,
        event: r.event,
        amount: r.amount.toString(),
        state: r.state,
        group_id: r.groupId,
        seen_at: r.seenAt,
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(['chain_id', 'tx_hash', 'log_index', 'wallet'])
        .doUpdateSet((eb) => ({
          block_number: eb.ref('excluded.block_number'),
          block_time: eb.ref('excluded.block_time'),
          state: eb.ref('excluded.state'),
          group_id: eb.ref('excluded.group_id'),
          seen_at: eb.ref('excluded.seen_at'),
        }))
        .where('chain_watch_transfers.state', '=', 'reversed'),
    )
    .execute();
}

/** Pending transfers first seen at or before `seenBy`, oldest first. */
export async function duePending(
  db: DbExecutor,
  chainId: number,
  seenBy: Date,
  limit: number,
): Promise<(TransferRow & { blockHash: string })[]> {
  const rows = await db
    .selectFrom('chain_watch_transfers as t')
    .innerJoin('chain_watch_wallets as w', (j) =>
      j.onRef('w.chain_id', '=', 't.chain_id').onRef('w.address', '=', 't.wallet'),
    )
    .leftJoin('chain_watch_blocks as b', (j) =>
      j.onRef('b.chain_id', '=', 't.chain_id').onRef('b.number', '=', 't.block_number'),
    )
    .select([
      't.tx_hash',
      't.log_index',
      't.wallet',
      't.block_number',
      't.block_time',
      't.token',
      't.event',
      't.amount',
      'w.account_id',
      'b.hash',
    ])
    .where('t.chain_id', '=', chainId)
    .where('t.state', '=', 'pending')
    .where('t.seen_at', '<=', seenBy)
    .orderBy('t.seen_at')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    chainId,
    txHash: r.tx_hash,
    logIndex: r.log_index,
    wallet: r.wallet,
    accountId: r.account_id,
    blockNumber: BigInt(r.block_number),
    blockHash: r.hash ?? '',
    blockTime: new Date(r.block_time),
    token: r.token,
    event: r.event,
    amount: BigInt(r.amount),
  }));
}

/** The keys of transfer rows as parallel arrays, for one statement over all of them. */
function keyArrays(keys: { txHash: string; logIndex: number; wallet: string }[]) {
  return {
    hashes: keys.map((k) => k.txHash),
    logs: keys.map((k) => k.logIndex),
    wallets: keys.map((k) => k.wallet),
  };
}

/** Sets the state (and group) of transfer rows: one statement. */
export async function markTransfers(
  tx: DbExecutor,
  chainId: number,
  keys: { txHash: string; logIndex: number; wallet: string; groupId: string | null }[],
  state: TransferState,
): Promise<void> {
  if (keys.length === 0) return;
  const { hashes, logs, wallets } = keyArrays(keys);
  await sql`
    UPDATE chain_watch_transfers t SET state = ${state}, group_id = k.group_id
    FROM unnest(${hashes}::text[], ${logs}::int[], ${wallets}::text[], ${keys.map((k) => k.groupId)}::text[])
      AS k(tx_hash, log_index, wallet, group_id)
    WHERE t.chain_id = ${chainId} AND t.tx_hash = k.tx_hash AND t.log_index = k.log_index
      AND t.wallet = k.wallet`.execute(tx);
}

/** Deletes transfer rows: one statement. */
export async function deleteTransfers(
  tx: DbExecutor,
  chainId: number,
  keys: { txHash: string; logIndex: number; wallet: string }[],
): Promise<void> {
  if (keys.length === 0) return;
  const { hashes, logs, wallets } = keyArrays(keys);
  await sql`
    DELETE FROM chain_watch_transfers t
    USING unnest(${hashes}::text[], ${logs}::int[], ${wallets}::text[]) AS k(tx_hash, log_index, wallet)
    WHERE t.chain_id = ${chainId} AND t.tx_hash = k.tx_hash AND t.log_index = k.log_index
      AND t.wallet = k.wallet`.execute(tx);
}

/** The transfers recorded in blocks from `from` on that a reorganization may have dropped. */
export async function transfersFrom(
  tx: DbExecutor,
  chainId: number,
  from: bigint,
): Promise<
  {
    txHash: string;
    logIndex: number;
    wallet: string;
    state: TransferState;
    groupId: string | null;
    accountId: string;
  }[]
> {
  const rows = await tx
    .selectFrom('chain_watch_transfers as t')
    .innerJoin('chain_watch_wallets as w', (j) =>
      j.onRef('w.chain_id', '=', 't.chain_id').onRef('w.address', '=', 't.wallet'),
    )
    .select(['t.tx_hash', 't.log_index', 't.wallet', 't.state', 't.group_id', 'w.account_id'])
    .where('t.chain_id', '=', chainId)
    .where('t.block_number', '>=', from.toString())
    .where('t.state', 'in', ['pending', 'booked'])
    .execute();
  return rows.map((r) => ({
    txHash: r.tx_hash,
    logIndex: r.log_index,
    wallet: r.wallet,
    state: r.state,
    groupId: r.group_id,
    accountId: r.account_id,
  }));
}

/**
 * What the ledger held for a wallet at `block`, per asset: its entries so far, less those of
 * Purser's own bookings of transactions mined after that block.
 */
export async function ledgerHoldingsAt(
  db: DbExecutor,
  chainId: number,
  wallet: string,
  block: bigint,
): Promise<Map<string, bigint>> {
  return ledgerTotalsByAsset(db, walletAccount(chainId, wallet), {
    excludeGroup: (groupId) => sql<boolean>`EXISTS (
      SELECT 1 FROM chain_tx_claims c
      WHERE c.group_id = ${groupId} AND c.chain_id = ${chainId} AND c.block_number > ${block.toString()}::bigint)`,
  });
}

export async function markOpened(
  tx: DbExecutor,
  chainId: number,
  wallet: string,
  block: bigint | null,
  groupId: string | null,
): Promise<void> {
  await tx
    .updateTable('chain_watch_wallets')
    .set({ opened_block: block === null ? null : block.toString(), opening_group_id: groupId })
    .where('chain_id', '=', chainId)
    .where('address', '=', wallet)
    .execute();
}

/** Wallets whose opening was at or after `from` (a reorganization dropped its block). */
export async function openedFrom(
  tx: DbExecutor,
  chainId: number,
  from: bigint,
): Promise<{ address: string; accountId: string; groupId: string | null }[]> {
  const rows = await tx
    .selectFrom('chain_watch_wallets')
    .select(['address', 'account_id', 'opening_group_id'])
    .where('chain_id', '=', chainId)
    .where('opened_block', '>=', from.toString())
    .execute();
  return rows.map((r) => ({ address: r.address, accountId: r.account_id, groupId: r.opening_group_id }));
}

/** An account's watched wallets with their chain's cursor (the account export). */
export async function accountWatch(
  db: DbExecutor,
  accountId: string,
  limit: number,
): Promise<
  {
    chain_id: number;
    address: string;
    role: WalletRole;
    opened_block: string | null;
    next_block: string | null;
  }[]
> {
  const rows = await db
    .selectFrom('chain_watch_wallets as w')
    .leftJoin('chain_watch_cursors as c', 'c.chain_id', 'w.chain_id')
    .select(['w.chain_id', 'w.address', 'w.role', 'w.opened_block', 'c.next_block'])
    .where('w.account_id', '=', accountId)
    .orderBy('w.chain_id')
    .orderBy('w.address')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    chain_id: r.chain_id,
    address: r.address,
    role: r.role,
    opened_block: r.opened_block === null ? null : String(r.opened_block),
    next_block: r.next_block === null ? null : String(r.next_block),
  }));
}

/** Wallets with transfers still held (grace period) in blocks up to `block`. */
export async function walletsWithHeldTransfers(
  db: DbExecutor,
  chainId: number,
  block: bigint,
): Promise<Set<string>> {
  const rows = await db
    .selectFrom('chain_watch_transfers')
    .select('wallet')
    .distinct()
    .where('chain_id', '=', chainId)
    .where('state', '=', 'pending')
    .where('block_number', '<=', block.toString())
    .execute();
  return new Set(rows.map((r) => r.wallet));
}
