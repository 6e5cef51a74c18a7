// `npm run bench:chain-watch` (also part of `npm run bench`): the chain watcher catching up a range
// of blocks full of transfers. On an anvil of its own (chain 8453, the spray token as the
// registry's USDC) it watches 1,000 wallets (accounts and chain_watch_wallets rows written
// straight into a fresh database) and runs the watcher once to give each its opening (timed:
// "openings"). Then, the watcher idle, 10 rounds of one mint to every wallet are mined (10,000
// Transfer logs, 25 transactions of 400), and the watcher is run until it has caught up with the
// last of them (timed: the catch-up). Reported: transfers booked per second, the rows added per
// transfer (ledger_groups, ledger_entries, chain_watch_transfers, chain_watch_blocks,
// chain_tx_claims) and the bytes those tables grew by, the eth_getLogs ranges it asked for.
// Checked: 10,000 booked, 10,000 `chain.deposit` groups, and books = chain for 20 wallets (the
// ledger's balance of the token equals balanceOf on the anvil); any failure exits 1.
// Embedded PGlite by default; with DATABASE_URL, a fresh database on that server, dropped
// afterwards. Docs: bench/README.md, "Chain watcher".

import { sql } from 'kysely';
import type { Address } from 'viem';
import type { ChainClient, ChainPort } from '../src/adapters/chain/port.ts';
import { systemClock } from '../src/core/clock.ts';
import { openDatabase, type Db } from '../src/core/db/database.ts';
import { migrate } from '../src/core/db/migrate.ts';
import { newId } from '../src/core/ids.ts';
import { watchChain, type ChainWatchReport, type WatchDeps } from '../src/modules/chainwatch/index.ts';
import { erc20Asset, walletAccount } from '../src/modules/ledger/index.ts';
import { deploySpray, privateAnvil, privateWatchDeps } from '../test/support/chain-watch.ts';
import { randomAddress } from '../test/support/identity.ts';
import { machineFacts, positiveInt, runMain, summary, writeResults } from './common.ts';
import { prepareBenchDatabase } from './database.ts';

const CHAIN_ID = 8453;
const WALLETS = positiveInt('BENCH_CHAIN_WATCH_WALLETS', 1_000);
const ROUNDS = positiveInt('BENCH_CHAIN_WATCH_ROUNDS', 10);
const TRANSFERS = WALLETS * ROUNDS;
/** Holders minted to in one spray transaction. */
const PER_TX = 400;
/** What each mint gives a wallet (1.234567 of a 6-decimal token). */
const AMOUNT = 1_234_567n;
/** Wallets whose books are compared with the chain. */
const SAMPLE = 20;
/** Insert statements of at most this many rows. */
const INSERT_ROWS = 500;
/** Watcher runs allowed before the catch-up counts as stuck. */
const MAX_RUNS = 50;

const TABLES = [
  'ledger_groups',
  'ledger_entries',
  'chain_watch_transfers',
  'chain_watch_blocks',
  'chain_tx_claims',
] as const;
type Table = (typeof TABLES)[number];

interface LogRange {
  from: number;
  to: number;
  logs: number;
  ms: number;
}

interface TableFacts {
  rows: Record<Table, number>;
  bytes: Record<Table, number>;
}

const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

/** The chain port with every `eth_getLogs` the watcher asks recorded in `ranges`. */
function recordingLogRanges(chain: ChainPort, ranges: LogRange[]): ChainPort {
  const wrapped = new Map<number, ChainClient>();
  return {
    ...chain,
    publicClient: (chainId) => {
      const known = wrapped.get(chainId);
      if (known) return known;
      const client = chain.publicClient(chainId);
      const request = client.request as unknown as (args: unknown, options?: unknown) => Promise<unknown>;
      const proxy = new Proxy(client, {
        get(target, prop, receiver) {
          if (prop !== 'request') return Reflect.get(target, prop, receiver) as unknown;
          return async (args: { method: string; params?: unknown }, options?: unknown) => {
            const started = performance.now();
            const result = await request(args, options);
            if (args.method === 'eth_getLogs') {
              const [filter] = args.params as [{ fromBlock: string; toBlock: string }];
              ranges.push({
                from: Number(BigInt(filter.fromBlock)),
                to: Number(BigInt(filter.toBlock)),
                logs: (result as unknown[]).length,
                ms: round(performance.now() - started),
              });
            }
            return result;
          };
        },
      });
      wrapped.set(chainId, proxy);
      return proxy;
    },
  };
}

/** Row counts and total sizes (heap, indexes, TOAST) of the tables a booking writes. */
async function tableFacts(db: Db): Promise<TableFacts> {
  const rows = {} as Record<Table, number>;
  const bytes = {} as Record<Table, number>;
  for (const table of TABLES) {
    const r = await sql<{ n: string; bytes: string }>`
      SELECT (SELECT count(*) FROM ${sql.table(table)})::text AS n,
             pg_total_relation_size(${table}::regclass)::text AS bytes`.execute(db);
    rows[table] = Number(r.rows[0]!.n);
    bytes[table] = Number(r.rows[0]!.bytes);
  }
  return { rows, bytes };
}

/** `count` accounts, each watching one random wallet on the chain (role 'policy', not yet opened). */
async function watchWallets(db: Db, count: number): Promise<string[]> {
  const now = new Date();
  const wallets = Array.from({ length: count }, () => ({ accountId: newId('acc'), wallet: randomAddress() }));
  for (let i = 0; i < wallets.length; i += INSERT_ROWS) {
    const chunk = wallets.slice(i, i + INSERT_ROWS);
    await db
      .insertInto('accounts')
      .values(
        chunk.map((w) => ({
          id: w.accountId,
          address: randomAddress(),
          is_test_fixture: false,
          created_at: now,
        })),
      )
      .execute();
    await db
      .insertInto('chain_watch_wallets')
      .values(
        chunk.map((w) => ({
          chain_id: CHAIN_ID,
          address: w.wallet,
          account_id: w.accountId,
          role: 'policy' as const,
          created_at: now,
        })),
      )
      .execute();
  }
  return wallets.map((w) => w.wallet);
}

/** Runs the watcher until it has read past `lastBlock`; the runs' reports. */
async function watchUntil(deps: WatchDeps, lastBlock: bigint): Promise<ChainWatchReport[]> {
  const reports: ChainWatchReport[] = [];
  for (;;) {
    const report = await watchChain(deps, CHAIN_ID);
    reports.push(report);
    if (report.leased) throw new Error('the watcher lease was held by another owner');
    if (report.caughtUp && report.nextBlock !== null && BigInt(report.nextBlock) > lastBlock) return reports;
    if (reports.length >= MAX_RUNS)
      throw new Error(
        `not caught up with block ${lastBlock} after ${MAX_RUNS} runs (${JSON.stringify(report)})`,
      );
  }
}

const total = (reports: ChainWatchReport[], key: 'booked' | 'opened' | 'held' | 'matched') =>
  reports.reduce((n, r) => n + r[key], 0);

async function main(): Promise<number> {
  const machine = machineFacts();
  const database = await prepareBenchDatabase('chainwatch');
  console.log(`Database: ${database.description}`);
  const handle = await openDatabase(database.config);
  const anvil = await privateAnvil(CHAIN_ID).catch(async (err: unknown) => {
    await handle.close();
    await database.drop();
    throw err;
  });
  const problems: string[] = [];
  try {
    await migrate(handle.db);
    const token = await deploySpray(anvil);
    const ranges: LogRange[] = [];
    const base = privateWatchDeps(anvil, token.address, handle.db, systemClock);
    const deps: WatchDeps = { ...base, chain: recordingLogRanges(base.chain, ranges) };
    const client = base.chain.publicClient(CHAIN_ID);

    // Openings: every watched wallet gets its opening at the block before the cursor.
    const wallets = await watchWallets(handle.db, WALLETS);
    const openStarted = performance.now();
    const openingRuns = await watchUntil(deps, await client.getBlockNumber({ cacheTime: 0 }));
    const openingsMs = performance.now() - openStarted;
    const opened = total(openingRuns, 'opened');
    const unopened = await sql<{ n: string }>`
      SELECT count(*)::text AS n FROM chain_watch_wallets
      WHERE chain_id = ${CHAIN_ID} AND opened_block IS NULL`.execute(handle.db);
    if (opened !== WALLETS) problems.push(`openings: ${opened} wallets opened, expected ${WALLETS}`);
    if (unopened.rows[0]!.n !== '0') problems.push(`openings: ${unopened.rows[0]!.n} wallets left unopened`);
    console.log(`Openings: ${opened} wallets in ${(openingsMs / 1000).toFixed(2)} s.`);

    // The transfers, all mined before the watcher runs again.
    const holders = Array.from({ length: ROUNDS }, () => wallets).flat() as Address[];
    const firstBlock = (await client.getBlockNumber({ cacheTime: 0 })) + 1n;
    const sprayStarted = performance.now();
    const hashes = await token.spray(holders, AMOUNT, PER_TX);
    const sprayMs = performance.now() - sprayStarted;
    const lastBlock = await client.getBlockNumber({ cacheTime: 0 });
    console.log(
      `Mined ${TRANSFERS} transfers in ${hashes.length} transactions, blocks ${firstBlock}..${lastBlock} ` +
        `(${(sprayMs / 1000).toFixed(1)} s).`,
    );

    // The measured catch-up.
    const before = await tableFacts(handle.db);
    ranges.length = 0;
    const catchUpStarted = performance.now();
    const catchUpRuns = await watchUntil(deps, lastBlock);
    const catchUpMs = performance.now() - catchUpStarted;
    const after = await tableFacts(handle.db);

    const booked = total(catchUpRuns, 'booked');
    const held = total(catchUpRuns, 'held');
    const matched = total(catchUpRuns, 'matched');
    const deposits = Number(
      (
        await sql<{ n: string }>`
          SELECT count(*)::text AS n FROM ledger_groups WHERE kind = 'chain.deposit'`.execute(handle.db)
      ).rows[0]!.n,
    );
    if (booked !== TRANSFERS) problems.push(`catch-up: booked ${booked}, expected ${TRANSFERS}`);
    if (deposits !== TRANSFERS)
      problems.push(`catch-up: ${deposits} chain.deposit groups, expected ${TRANSFERS}`);
    if (held !== 0 || matched !== 0)
      problems.push(`catch-up: ${held} held and ${matched} matched, expected 0`);

    // Books = chain for a sample of wallets.
    const asset = erc20Asset(CHAIN_ID, token.address);
    const step = Math.max(1, Math.floor(WALLETS / SAMPLE));
    const sample = Array.from({ length: Math.min(SAMPLE, WALLETS) }, (_, i) => wallets[i * step]!);
    let agreeing = 0;
    for (const wallet of sample) {
      const ledger = await sql<{ total: string | null }>`
        SELECT sum(amount)::text AS total FROM ledger_entries
        WHERE ledger_account = ${walletAccount(CHAIN_ID, wallet)} AND asset = ${asset}`.execute(handle.db);
      const books = BigInt(ledger.rows[0]?.total ?? '0');
      const chain = (await client.readContract({
        address: token.address,
        abi: token.abi,
        functionName: 'balanceOf',
        args: [wallet as Address],
      })) as bigint;
      if (books === chain && chain === AMOUNT * BigInt(ROUNDS)) agreeing += 1;
      else problems.push(`books ≠ chain: ${wallet} books ${books}, chain ${chain}`);
    }

    const perTransfer = (t: Table) => round((after.rows[t] - before.rows[t]) / TRANSFERS, 3);
    const rowsAdded = TABLES.reduce((n, t) => n + after.rows[t] - before.rows[t], 0);
    const bytesAdded = TABLES.reduce((n, t) => n + after.bytes[t] - before.bytes[t], 0);
    const getLogs = {
      calls: ranges.length,
      blocks: ranges.reduce((n, r) => n + r.to - r.from + 1, 0),
      logs: ranges.reduce((n, r) => n + r.logs, 0),
      ms: summary(ranges.map((r) => r.ms)),
      ranges,
    };
    const report = {
      at: new Date().toISOString(),
      database: database.kind,
      databaseDescription: database.description,
      wallets: WALLETS,
      rounds: ROUNDS,
      transfers: TRANSFERS,
      sprayTransactions: hashes.length,
      blocks: { first: firstBlock.toString(), last: lastBlock.toString() },
      openings: {
        wallets: opened,
        runs: openingRuns.length,
        seconds: round(openingsMs / 1000, 2),
        msPerWallet: round(openingsMs / WALLETS, 2),
      },
      catchUp: {
        runs: catchUpRuns.length,
        seconds: round(catchUpMs / 1000, 2),
        booked,
        held,
        matched,
        chainDepositGroups: deposits,
        transfersPerSecond: round(booked / (catchUpMs / 1000)),
        getLogs,
      },
      rowsPerTransfer: {
        ...Object.fromEntries(TABLES.map((t) => [t, perTransfer(t)])),
        total: round(rowsAdded / TRANSFERS, 3),
      },
      rowsAdded: Object.fromEntries(TABLES.map((t) => [t, after.rows[t] - before.rows[t]])),
      bytesPerTransfer: round(bytesAdded / TRANSFERS, 0),
      booksEqualChain: { sampled: sample.length, agreeing },
      problems,
      machine,
    };

    const md = [
      `# Purser benchmark: the chain watcher catching up${problems.length > 0 ? ' (**BROKEN**)' : ''}`,
      '',
      `${WALLETS} watched wallets, ${TRANSFERS} Transfer logs (${ROUNDS} mints to each) in ${hashes.length} ` +
        `transactions, all mined before the catch-up; a private anvil; ${database.description}; ` +
        `${machine.cpus}× ${machine.cpuModel}, Node ${machine.node}, commit ${machine.commit}.`,
      '',
      `- **Openings:** ${opened} wallets in ${report.openings.seconds} s (${report.openings.msPerWallet} ms a wallet).`,
      `- **Catch-up:** ${booked} transfers booked in ${report.catchUp.seconds} s over ${catchUpRuns.length} run(s): ` +
        `**${report.catchUp.transfersPerSecond} transfers per second**.`,
      `- **eth_getLogs:** ${getLogs.calls} call(s) over ${getLogs.blocks} blocks, ${getLogs.logs} logs, ` +
        `p50 ${getLogs.ms.p50} ms, max ${getLogs.ms.max} ms.`,
      `- **Books = chain:** ${agreeing} of ${sample.length} sampled wallets agree with balanceOf.`,
      '',
      '| Table | Rows added | Per transfer |',
      '|---|--:|--:|',
      ...TABLES.map((t) => `| ${t} | ${after.rows[t] - before.rows[t]} | ${perTransfer(t)} |`),
      `| **total** | ${rowsAdded} | ${report.rowsPerTransfer.total} |`,
      '',
      `Those tables grew by ${round(bytesAdded / 1024 ** 2)} MiB (heap, indexes, TOAST): ${report.bytesPerTransfer} bytes a transfer.`,
      '',
      ...(problems.length > 0 ? ['**Problems:**', '', ...problems.map((p) => `- ${p}`), ''] : []),
    ].join('\n');
    console.log(md);
    writeResults({
      [`chain-watch-latest-${database.kind}.md`]: md,
      [`chain-watch-${database.kind}.json`]: `${JSON.stringify(report, null, 2)}\n`,
    });
    return problems.length === 0 ? 0 : 1;
  } finally {
    await anvil.stop();
    await handle.close();
    await database.drop();
  }
}

runMain(main);
