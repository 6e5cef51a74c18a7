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

import { erc20Abi, parseAbi, type Address, type Hex } from 'viem';
import { ENTRY_POINT_V07_ADDRESS } from '../../adapters/bundler/port.ts';
import type { ChainClient, ChainPort } from '../../adapters/chain/port.ts';
import type { Clock } from '../../core/clock.ts';
import { withTransaction, type Db, type DbExecutor } from '../../core/db/database.ts';
import { newId } from '../../core/ids.ts';
import type { ChainWatchConfig } from '../../config.ts';
import {
  chainNativeAsset,
  erc20Asset,
  externalAccount,
  postGroups,
  reverseGroup,
  transfer,
  walletAccount,
  type BatchedGroup,
  type LedgerEntryInput,
} from '../ledger/index.ts';
import type { TokenRegistry } from '../registry/index.ts';
import { lockTransactions } from './claims.ts';
import {
  claimedKeys,
  deleteTransfers,
  discoverWallets,
  duePending,
  ensureCursor,
  forgetBlocksBelow,
  forgetBlocksFrom,
  holdLease,
  ledgerHoldingsAt,
  markOpened,
  markTransfers,
  moveCursor,
  openedFrom,
  recentBlocks,
  recordedTransfers,
  rememberBlocks,
  releaseLease,
  saveTransfers,
  takeLease,
  transfersFrom,
  watchedWallets,
  type TransferRow,
  type WatchedWallet,
} from './store.ts';

const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
/** WETH9's `Deposit(address indexed dst, uint256 wad)` and `Withdrawal(address indexed src, uint256 wad)`. */
const DEPOSIT_TOPIC = '0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c';
const WITHDRAWAL_TOPIC = '0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65';
/**
 * EntryPoint v0.7's `UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address
 * indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)`:
 * the gas an operation's sender paid out of its native holdings (balance and deposit).
 */
const USER_OPERATION_TOPIC = '0x49628fd1471006c1482da88028e9ce4dbb080b815c9b0344d39e5a8e6ec1419f';
const ENTRY_POINT = ENTRY_POINT_V07_ADDRESS.toLowerCase();

const entryPointAbi = parseAbi(['function balanceOf(address account) view returns (uint256)']);

/** Transfer sides booked in one transaction. */
const CHUNK = 500;
/** Groups in one booking statement. */
const STATEMENT_GROUPS = 100;
/** How many of the newest remembered blocks a run compares with the chain. */
const REORG_WINDOW = 64;
/** Remembered block hashes older than this many blocks behind the cursor are forgotten. */
const KEEP_BLOCKS = 1_024n;
/** Wallets opened in one transaction. */
const OPEN_CHUNK = 100;

export interface WatchDeps {
  db: Db;
  clock: Clock;
  chain: ChainPort;
  registry: TokenRegistry;
  config: {
    chainWatch: ChainWatchConfig;
    executorAddress: string | null;
    pm: { chainId: number };
  };
  log?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** What one run did on one chain. */
export interface ChainWatchReport {
  chainId: number;
  /** Another process held the chain's lease: nothing was done. */
  leased: boolean;
  head: string;
  /** The cursor after the run: the next block to read. */
  nextBlock: string | null;
  opened: number;
  booked: number;
  held: number;
  matched: number;
  /** The first block of a reorganization rolled back in this run. */
  reorgFrom: string | null;
  /** False when the run stopped at its time budget before reaching the head. */
  caughtUp: boolean;
}

class LeaseLost extends Error {
  constructor(chainId: number) {
    super(`the chain ${chainId} watcher lease was taken over`);
  }
}

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

interface Run {
  deps: WatchDeps;
  chainId: number;
  owner: string;
  leaseUntil: () => Date;
  client: ChainClient;
  report: ChainWatchReport;
}

interface RawLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  logIndex: string;
}

async function currentCursor(run: Run): Promise<bigint> {
  return withTransaction(run.deps.db, async (tx) => {
    const cursor = await holdLease(tx, run.chainId, run.owner, run.leaseUntil());
    if (cursor === null) throw new LeaseLost(run.chainId);
    return cursor;
  });
}

/** Renews the lease in `tx`, checking the cursor is still `expected`. */
async function holdAt(run: Run, tx: DbExecutor, expected: bigint): Promise<void> {
  const cursor = await holdLease(tx, run.chainId, run.owner, run.leaseUntil());
  if (cursor === null || cursor !== expected) throw new LeaseLost(run.chainId);
}

/** The booking time of something that happened in a block: its time, never after now. */
function bookedAt(run: Run, blockTime: Date): Date {
  const now = run.deps.clock.now();
  return blockTime.getTime() < now.getTime() ? blockTime : now;
}

async function blockFacts(run: Run, number: bigint): Promise<{ hash: string; time: Date }> {
  const block = await run.client.getBlock({ blockNumber: number });
  return { hash: block.hash!.toLowerCase(), time: new Date(Number(block.timestamp) * 1000) };
}

/** Facts of several blocks, fetched a few at a time. */
async function blocksFacts(run: Run, numbers: bigint[]): Promise<Map<bigint, { hash: string; time: Date }>> {
  const out = new Map<bigint, { hash: string; time: Date }>();
  const queue = [...numbers];
  const worker = async () => {
    for (let n = queue.shift(); n !== undefined; n = queue.shift()) out.set(n, await blockFacts(run, n));
  };
  await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reorganizations

/** The first block whose remembered hash the chain no longer has, or null. */
async function findReorg(run: Run): Promise<bigint | null> {
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
async function rollBack(run: Run, from: bigint): Promise<void> {
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

// ---------------------------------------------------------------------------------------------
// Openings

/** The native coin a wallet holds: its balance and, for a smart account, its EntryPoint deposit. */
async function nativeHoldings(client: ChainClient, wallet: Address, blockNumber: bigint): Promise<bigint> {
  const [balance, deposit] = await Promise.all([
    client.getBalance({ address: wallet, blockNumber }),
    client
      .readContract({
        address: ENTRY_POINT_V07_ADDRESS,
        abi: entryPointAbi,
        functionName: 'balanceOf',
        args: [wallet],
        blockNumber,
      })
      .catch(() => 0n),
  ]);
  return balance + deposit;
}

/** A wallet's holdings at a block: every registry token of the chain and the native coin, by asset. */
export async function chainHoldingsAt(
  client: ChainClient,
  registry: TokenRegistry,
  chainId: number,
  wallet: Address,
  blockNumber: bigint,
): Promise<Map<string, bigint>> {
  const tokens = registry.chain(chainId)?.tokens ?? [];
  const [native, ...balances] = await Promise.all([
    nativeHoldings(client, wallet, blockNumber),
    ...tokens.map((t) =>
      client
        .readContract({
          address: t.address,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [wallet],
          blockNumber,
        })
        .catch(() => 0n),
    ),
  ]);
  const out = new Map<string, bigint>([[chainNativeAsset(chainId), native]]);
  tokens.forEach((t, i) => out.set(erc20Asset(chainId, t.address), balances[i]!));
  return out;
}

/**
 * Books the opening of every watched wallet that has none, at the block before the cursor: for each
 * registry token and the native coin, the chain's balance there less what the ledger held for the
 * wallet then, against `external:<chain>`.
 */
async function openWallets(run: Run): Promise<void> {
  const { deps, chainId } = run;
  const unopened = (await watchedWallets(deps.db, chainId)).filter((w) => w.openedBlock === null);
  if (unopened.length === 0) return;
  const cursor = await currentCursor(run);
  const block = cursor - 1n;
  const facts = await blockFacts(run, block);
  for (let i = 0; i < unopened.length; i += OPEN_CHUNK) {
    const chunk = unopened.slice(i, i + OPEN_CHUNK);
    const holdings = await Promise.all(
      chunk.map((w) => chainHoldingsAt(run.client, deps.registry, chainId, w.address as Address, block)),
    );
    await withTransaction(deps.db, async (tx) => {
      await holdAt(run, tx, cursor);
      const groups: BatchedGroup[] = [];
      const walletOf: string[] = [];
      for (const [j, w] of chunk.entries()) {
        const ledger = await ledgerHoldingsAt(tx, chainId, w.address, block);
        const entries: LedgerEntryInput[] = [];
        for (const [asset, onChain] of holdings[j]!) {
          const diff = onChain - (ledger.get(asset) ?? 0n);
          if (diff !== 0n)
            entries.push(
              ...transfer(walletAccount(chainId, w.address), externalAccount(chainId), asset, diff),
            );
        }
        if (entries.length === 0) continue;
        walletOf.push(w.address);
        groups.push({
          at: bookedAt(run, facts.time),
          params: {
            settlementId: `chain:opening:${chainId}:${w.address}:${block}`,
            accountId: w.accountId,
            kind: 'chain.opening',
            entries,
            memo: { wallet: w.address, opening: true, block: block.toString(), block_hash: facts.hash },
          },
        });
      }
      const groupOf = new Map<string, string>();
      (await postInStatements(tx, groups)).forEach((r, k) => {
        if (!r.ok) throw new Error(`opening ${groups[k]!.params.settlementId} refused: ${r.reason}`);
        groupOf.set(walletOf[k]!, r.groupId);
      });
      for (const w of chunk) await markOpened(tx, chainId, w.address, block, groupOf.get(w.address) ?? null);
      await rememberBlocks(tx, chainId, [{ number: block, hash: facts.hash }]);
    });
    run.report.opened += chunk.length;
  }
}

// ---------------------------------------------------------------------------------------------
// Ranges

async function transferLogs(run: Run, from: bigint, to: bigint): Promise<RawLog[]> {
  const chain = run.deps.registry.chain(run.chainId);
  const tokens = (chain?.tokens ?? []).map((t) => t.address.toLowerCase());
  if (tokens.length === 0) return [];
  const logs = (await run.client.request({
    method: 'eth_getLogs',
    params: [
      {
        address: [...tokens, ENTRY_POINT] as Address[],
        topics: [[TRANSFER_TOPIC, DEPOSIT_TOPIC, WITHDRAWAL_TOPIC, USER_OPERATION_TOPIC] as Hex[]],
        fromBlock: `0x${from.toString(16)}`,
        toBlock: `0x${to.toString(16)}`,
      },
    ],
  })) as unknown as RawLog[];
  return logs;
}

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

const topicAddress = (topic: string | undefined): string | null =>
  topic && topic.length === 66 ? `0x${topic.slice(26).toLowerCase()}` : null;

/** The sides of `logs` at watched, opened wallets, in block and log order. */
function sidesOf(
  run: Run,
  logs: RawLog[],
  watched: Map<string, WatchedWallet>,
): (Omit<TransferRow, 'blockTime'> & { blockHash: string })[] {
  const wrapped = run.deps.registry.chain(run.chainId)?.wrappedNative.toLowerCase() ?? null;
  const out: (Omit<TransferRow, 'blockTime'> & { blockHash: string })[] = [];
  for (const log of logs) {
    const token = log.address.toLowerCase();
    const base = {
      chainId: run.chainId,
      txHash: log.transactionHash.toLowerCase(),
      logIndex: Number(BigInt(log.logIndex)),
      blockNumber: BigInt(log.blockNumber),
      blockHash: log.blockHash.toLowerCase(),
      token,
    };
    const topic = log.topics[0]?.toLowerCase();
    if (token === ENTRY_POINT && topic === USER_OPERATION_TOPIC && log.topics.length === 4) {
      // Paid by the sender unless a paymaster paid: actualGasCost is the third word of the data.
      const paymaster = topicAddress(log.topics[3]);
      const cost = log.data.length >= 2 + 64 * 3 ? BigInt(`0x${log.data.slice(2 + 128, 2 + 192)}`) : 0n;
      const w = watched.get(topicAddress(log.topics[2]) ?? '');
      if (
        cost > 0n &&
        paymaster === ZERO_ADDRESS &&
        w &&
        w.openedBlock !== null &&
        base.blockNumber > w.openedBlock
      ) {
        out.push({ ...base, wallet: w.address, accountId: w.accountId, event: 'gas', amount: -cost });
      }
      continue;
    }
    const value = log.data && log.data !== '0x' ? BigInt(log.data.slice(0, 66)) : 0n;
    if (value === 0n) continue;
    const add = (address: string | null, amount: bigint, event: TransferRow['event']) => {
      const w = address ? watched.get(address) : undefined;
      if (!w || w.openedBlock === null || base.blockNumber <= w.openedBlock) return;
      out.push({ ...base, wallet: w.address, accountId: w.accountId, event, amount });
    };
    if (topic === TRANSFER_TOPIC && log.topics.length === 3) {
      const from = topicAddress(log.topics[1]);
      const to = topicAddress(log.topics[2]);
      if (from === to) continue;
      add(from, -value, 'transfer');
      add(to, value, 'transfer');
    } else if (token === wrapped && topic === DEPOSIT_TOPIC && log.topics.length === 2) {
      add(topicAddress(log.topics[1]), value, 'wrap');
    } else if (token === wrapped && topic === WITHDRAWAL_TOPIC && log.topics.length === 2) {
      add(topicAddress(log.topics[1]), -value, 'unwrap');
    }
  }
  return out;
}

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

async function postInStatements(tx: DbExecutor, groups: BatchedGroup[]) {
  const results = [];
  for (let i = 0; i < groups.length; i += STATEMENT_GROUPS) {
    results.push(...(await postGroups(tx, groups.slice(i, i + STATEMENT_GROUPS))));
  }
  return results;
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
async function bookRange(run: Run, from: bigint, to: bigint, logs: RawLog[]): Promise<void> {
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
async function bookDue(run: Run): Promise<void> {
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
