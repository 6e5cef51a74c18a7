// What the chain watcher's steps share: its dependencies and the report of a run, one run's
// context (the chain, the lease it holds, its client), the lease renewed (LeaseLost when another
// process took it over), the blocks' hashes and times, and groups booked in statements.

import type { ChainClient, ChainPort } from '../../adapters/chain/port.ts';
import type { Clock } from '../../core/clock.ts';
import { withTransaction, type Db, type DbExecutor } from '../../core/db/database.ts';
import type { ChainWatchConfig } from '../../config.ts';
import { postGroups, type BatchedGroup } from '../ledger/index.ts';
import type { TokenRegistry } from '../registry/index.ts';
import { holdLease } from './store.ts';

/** Groups in one booking statement. */
const STATEMENT_GROUPS = 100;

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

/** The chain's lease went to another process: the run stops, having done nothing more. */
export class LeaseLost extends Error {
  constructor(chainId: number) {
    super(`the chain ${chainId} watcher lease was taken over`);
  }
}

/** One run over one chain: its dependencies, the lease it holds, the chain's client, its report. */
export interface Run {
  deps: WatchDeps;
  chainId: number;
  owner: string;
  leaseUntil: () => Date;
  client: ChainClient;
  report: ChainWatchReport;
}

/** A log as `eth_getLogs` answers it. */
export interface RawLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  logIndex: string;
}

/** The cursor, read as the lease is renewed. */
export async function currentCursor(run: Run): Promise<bigint> {
  return withTransaction(run.deps.db, async (tx) => {
    const cursor = await holdLease(tx, run.chainId, run.owner, run.leaseUntil());
    if (cursor === null) throw new LeaseLost(run.chainId);
    return cursor;
  });
}

/** Renews the lease in `tx`, checking the cursor is still `expected`. */
export async function holdAt(run: Run, tx: DbExecutor, expected: bigint): Promise<void> {
  const cursor = await holdLease(tx, run.chainId, run.owner, run.leaseUntil());
  if (cursor === null || cursor !== expected) throw new LeaseLost(run.chainId);
}

/** The booking time of something that happened in a block: its time, never after now. */
export function bookedAt(run: Run, blockTime: Date): Date {
  const now = run.deps.clock.now();
  return blockTime.getTime() < now.getTime() ? blockTime : now;
}

/** A block's hash and time. */
export async function blockFacts(run: Run, number: bigint): Promise<{ hash: string; time: Date }> {
  const block = await run.client.getBlock({ blockNumber: number });
  return { hash: block.hash!.toLowerCase(), time: new Date(Number(block.timestamp) * 1000) };
}

/** Facts of several blocks, fetched a few at a time. */
export async function blocksFacts(
  run: Run,
  numbers: bigint[],
): Promise<Map<bigint, { hash: string; time: Date }>> {
  const out = new Map<bigint, { hash: string; time: Date }>();
  const queue = [...numbers];
  const worker = async () => {
    for (let n = queue.shift(); n !== undefined; n = queue.shift()) out.set(n, await blockFacts(run, n));
  };
  await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker));
  return out;
}

/** Books `groups` in `tx`, STATEMENT_GROUPS per statement; the results in their order. */
export async function postInStatements(tx: DbExecutor, groups: BatchedGroup[]) {
  const results = [];
  for (let i = 0; i < groups.length; i += STATEMENT_GROUPS) {
    results.push(...(await postGroups(tx, groups.slice(i, i + STATEMENT_GROUPS))));
  }
  return results;
}
