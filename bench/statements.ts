// `npm run bench:statements`: statement generation on a wallet with 100,000 ledger entries, and
// on one with 10,000, through generateStatement (the service function GET /v1/statements calls).
// Embedded PGlite by default; with DATABASE_URL, a fresh database on that server, dropped
// afterwards. Prints a table and writes bench/results/statements-<pglite|postgres>.json.
//
// Memory is sampled (process.memoryUsage) every 5 ms and after every batch while a statement is
// generated; the figures are the peaks above the level just before it started (after a GC: node
// runs with --expose-gc, as the npm script does). The peak heap includes garbage not yet
// collected, so a second, untimed run forces a GC after each batch and records the peak heap that
// is still live: what generation holds. Streaming means that does not grow with the number of
// entries: the 100k run's is compared with the 10k run's.

import { buildTokenRegistry } from '../src/modules/registry/index.ts';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import pg from 'pg';
import { createFilesystemObjectStore } from '../src/adapters/object-store/filesystem.ts';
import { testConfig } from '../src/config.ts';
import { ManualClock } from '../src/core/clock.ts';
import { openDatabase, openPostgres, withTransaction, type DatabaseHandle } from '../src/core/db/database.ts';
import { migrate } from '../src/core/db/migrate.ts';
import { newId } from '../src/core/ids.ts';
import { erc20Asset, externalAccount, postGroup, walletAccount } from '../src/modules/ledger/index.ts';
import { generateStatement, type GenerateStatementDeps } from '../src/modules/statements/index.ts';
import { createAccount, randomAddress } from '../test/support/identity.ts';
import { onServer } from '../test/support/pg-server.ts';
import { REPO_ROOT } from '../test/support/service-process.ts';

const ENTRIES_PER_GROUP = 1_000;
const SIZES = [10_000, 100_000] as const;
const TARGET_MS = 2_000;
const USDC = erc20Asset(8453, '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913');
const clock = new ManualClock('2026-02-01T00:00:00.000Z');

interface Measure {
  format: 'json' | 'csv';
  entries: number;
  durationMs: number;
  bytes: number;
  batches: number;
  peakRssDeltaMb: number;
  peakHeapDeltaMb: number;
  peakRssMb: number;
  peakHeapMb: number;
  /** Peak live heap above the baseline, sampled after a forced GC at each batch (untimed run). */
  peakLiveHeapDeltaMb: number | null;
}

const mb = (bytes: number) => Math.round((bytes / 1024 ** 2) * 10) / 10;
const gc = (globalThis as { gc?: () => void }).gc;

async function openBenchDatabase(): Promise<{
  handle: DatabaseHandle;
  kind: 'pglite' | 'postgres';
  drop(): Promise<void>;
}> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const pglite = new PGlite();
    const handle = await openDatabase(testConfig(), { pglite });
    await migrate(handle.db);
    return {
      handle,
      kind: 'pglite',
      drop: async () => {
        await handle.close();
        await pglite.close();
      },
    };
  }
  const name = `purser_bench_statements_${randomBytes(4).toString('hex')}`;
  await onServer(serverUrl, `CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handle = openPostgres(url.toString(), 4);
  await migrate(handle.db);
  return {
    handle,
    kind: 'postgres',
    drop: async () => {
      await handle.close();
      await onServer(serverUrl, `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    },
  };
}

/** Books `entries` deposits to the wallet in groups of ENTRIES_PER_GROUP (plus one balancing entry each). */
async function seed(
  handle: DatabaseHandle,
  accountId: string,
  wallet: string,
  entries: number,
): Promise<number> {
  const started = performance.now();
  for (let g = 0; g * ENTRIES_PER_GROUP < entries; g++) {
    const count = Math.min(ENTRIES_PER_GROUP, entries - g * ENTRIES_PER_GROUP);
    const amounts = Array.from({ length: count }, (_, i) => BigInt(1 + ((g * ENTRIES_PER_GROUP + i) % 997)));
    const total = amounts.reduce((x, y) => x + y, 0n);
    // Spread over January so the entries sit in many days of the month.
    const when = new Date(Date.UTC(2026, 0, 1) + (g % 31) * 86_400_000 + g * 1000);
    const res = await withTransaction(handle.db, (tx) =>
      postGroup(
        tx,
        { now: () => when },
        {
          settlementId: `bench:${newId('s')}`,
          accountId,
          kind: 'deposit',
          entries: [
            ...amounts.map((amount) => ({ account: walletAccount(8453, wallet), asset: USDC, amount })),
            { account: externalAccount(8453), asset: USDC, amount: -total },
          ],
        },
      ),
    );
    if (!res.ok) throw new Error(`seeding failed: ${res.reason}`);
  }
  return performance.now() - started;
}

/** The peak live heap above the baseline while generating, with a GC forced after each batch. */
async function liveHeapPeak(
  deps: GenerateStatementDeps,
  accountId: string,
  wallet: string,
  format: 'json' | 'csv',
): Promise<number | null> {
  if (!gc) return null;
  gc();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  await generateStatement(
    deps,
    { accountId, wallet, period: '2026-01', format },
    {
      onBatch: () => {
        gc();
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      },
    },
  );
  gc();
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  return mb(peak - base);
}

async function measure(
  deps: GenerateStatementDeps,
  accountId: string,
  wallet: string,
  format: 'json' | 'csv',
): Promise<Measure> {
  gc?.();
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed;
  const sample = () => {
    const m = process.memoryUsage();
    if (m.rss > peakRss) peakRss = m.rss;
    if (m.heapUsed > peakHeap) peakHeap = m.heapUsed;
  };
  const timer = setInterval(sample, 5);
  let batches = 0;
  const started = performance.now();
  try {
    const result = await generateStatement(
      deps,
      { accountId, wallet, period: '2026-01', format },
      {
        onBatch: () => {
          batches++;
          sample();
        },
      },
    );
    const durationMs = performance.now() - started;
    sample();
    return {
      format,
      entries: result.statement.entry_count,
      durationMs: Math.round(durationMs),
      bytes: result.export.bytes,
      batches,
      peakRssDeltaMb: mb(peakRss - base.rss),
      peakHeapDeltaMb: mb(peakHeap - base.heapUsed),
      peakRssMb: mb(peakRss),
      peakHeapMb: mb(peakHeap),
      peakLiveHeapDeltaMb: await liveHeapPeak(deps, accountId, wallet, format),
    };
  } finally {
    clearInterval(timer);
  }
}

function commitOf(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    return `${commit.trim()}${dirty ? ' (with uncommitted changes)' : ''}`;
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  const db = await openBenchDatabase();
  const storeDir = mkdtempSync(join(tmpdir(), 'purser-bench-statements-'));
  try {
    const { accountId } = await createAccount(db.handle.db);
    const deps: GenerateStatementDeps = {
      db: db.handle.db,
      clock,
      objectStore: createFilesystemObjectStore({ root: storeDir }),
      tokenRegistry: buildTokenRegistry('production'),
    };
    const wallets = new Map<number, string>();
    const seeding: Record<string, number> = {};
    for (const size of SIZES) {
      const wallet = randomAddress();
      wallets.set(size, wallet);
      seeding[String(size)] = Math.round(await seed(db.handle, accountId, wallet, size));
      console.log(`seeded ${size} entries in ${seeding[String(size)]} ms`);
    }
    // Fresh statistics, as autovacuum keeps them on a running server (PGlite has no autovacuum).
    await sql`ANALYZE ledger_entries`.execute(db.handle.db);
    await sql`ANALYZE ledger_groups`.execute(db.handle.db);
    // Warm-up (JIT, plans, caches), not measured.
    await measure(deps, accountId, wallets.get(SIZES[0])!, 'json');

    const runs: Measure[] = [];
    for (const size of SIZES) {
      for (const format of ['json', 'csv'] as const) {
        runs.push(await measure(deps, accountId, wallets.get(size)!, format));
      }
    }
    const json10k = runs.find((r) => r.format === 'json' && r.entries === SIZES[0])!;
    const json100k = runs.find((r) => r.format === 'json' && r.entries === SIZES[1])!;
    const verdict = {
      targetMs: TARGET_MS,
      json100kWithinTarget: json100k.durationMs < TARGET_MS,
      // Streaming: ten times the entries, about the same live heap (a few MB of slack for noise).
      liveHeap10kMb: json10k.peakLiveHeapDeltaMb,
      liveHeap100kMb: json100k.peakLiveHeapDeltaMb,
      liveHeapGrowthMb:
        json100k.peakLiveHeapDeltaMb === null || json10k.peakLiveHeapDeltaMb === null
          ? null
          : Math.round((json100k.peakLiveHeapDeltaMb - json10k.peakLiveHeapDeltaMb) * 10) / 10,
    };

    console.log(
      `\nStatement generation (${db.kind}), ${ENTRIES_PER_GROUP} entries per group, batches of 5,000`,
    );
    console.log(
      '| entries | format | ms | bytes | batches | peak RSS +MB | peak heap +MB | peak live heap +MB |',
    );
    console.log('|---:|---|---:|---:|---:|---:|---:|---:|');
    for (const r of runs) {
      console.log(
        `| ${r.entries} | ${r.format} | ${r.durationMs} | ${r.bytes} | ${r.batches} | ${r.peakRssDeltaMb} | ` +
          `${r.peakHeapDeltaMb} | ${r.peakLiveHeapDeltaMb ?? 'n/a (no --expose-gc)'} |`,
      );
    }
    console.log(
      `\n100k json: ${json100k.durationMs} ms (target < ${TARGET_MS} ms: ` +
        `${verdict.json100kWithinTarget ? 'met' : 'MISSED'}); live heap ${verdict.liveHeap100kMb} MB ` +
        `vs ${verdict.liveHeap10kMb} MB at 10k`,
    );

    const report = {
      benchmark: 'statements',
      dbKind: db.kind,
      startedAt: new Date().toISOString(),
      machine: {
        node: process.version,
        platform: `${process.platform} ${release()} ${process.arch}`,
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
        memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
        commit: commitOf(),
        gcExposed: gc !== undefined,
      },
      entriesPerGroup: ENTRIES_PER_GROUP,
      seedingMs: seeding,
      runs,
      verdict,
    };
    const dir = join(REPO_ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `statements-${db.kind}.json`);
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`\nwritten ${file}`);
    if (!verdict.json100kWithinTarget) process.exitCode = 1;
  } finally {
    await db.drop();
    rmSync(storeDir, { recursive: true, force: true });
  }
}

await main();
