// The bench-only reserving path: no route reserves spend yet, so this drives `reserveSpend` the
// way a spending route will: one transaction per reservation (BEGIN, the reservation's one
// statement, COMMIT), many in flight at once, straight against the database. See bench/README.md.

import { PGlite } from '@electric-sql/pglite';
import { systemClock } from '../src/core/clock.ts';
import { openDatabase, openPostgres, withTransaction, type DatabaseHandle } from '../src/core/db/database.ts';
import { migrate } from '../src/core/db/migrate.ts';
import { newId } from '../src/core/ids.ts';
import { testConfig } from '../src/config.ts';
import { reserveSpend } from '../src/modules/policies/reservations.ts';
import { seedPolicy } from './seed.ts';

export interface HarnessResult {
  name: string;
  /** Reservations committed per second over the measured window. */
  perSecond: number;
  committed: number;
  refused: number;
  latencyMs: { p50: number; p99: number; max: number };
  durationS: number;
}

export interface HarnessOptions {
  /** The bench database (PostgreSQL); null: a fresh in-memory PGlite in this process. */
  databaseUrl: string | null;
  concurrency: number;
  durationS: number;
  warmupS: number;
}

/**
 * Two rows: every reservation on one hot wallet (they serialize on its lock), and reservations
 * spread over `concurrency` wallets of one account.
 */
export async function runReserveHarness(options: HarnessOptions): Promise<HarnessResult[]> {
  let pglite: PGlite | null = null;
  let handle: DatabaseHandle;
  if (options.databaseUrl) {
    handle = openPostgres(options.databaseUrl, Math.min(options.concurrency, 20));
  } else {
    pglite = new PGlite();
    handle = await openDatabase(testConfig(), { pglite });
    await migrate(handle.db);
  }
  try {
    const accountId = newId('acc');
    await handle.db
      .insertInto('accounts')
      .values({
        id: accountId,
        address: `0x${'be'.repeat(20)}`,
        is_test_fixture: true,
        created_at: new Date(),
        offboarded_at: null,
      })
      .execute();
    const wallets = Array.from(
      { length: options.concurrency },
      (_, i) => `0x${i.toString(16).padStart(40, '0')}`,
    );
    for (const wallet of wallets) {
      await seedPolicy(handle.db, accountId, wallet, {
        per_tx_usd: '1',
        daily_usd: '1000000000',
        velocity_per_hour: 100_000,
      });
    }
    const hot = wallets[0] ?? '';
    return [
      await measure(handle, accountId, () => hot, 'reserveSpend, one hot wallet', options),
      await measure(
        handle,
        accountId,
        (worker) => wallets[worker] ?? hot,
        `reserveSpend, ${options.concurrency} wallets`,
        options,
      ),
    ];
  } finally {
    await handle.close();
    await pglite?.close();
  }
}

async function measure(
  handle: DatabaseHandle,
  accountId: string,
  walletOf: (worker: number) => string,
  name: string,
  options: HarnessOptions,
): Promise<HarnessResult> {
  const latencies: number[] = [];
  let committed = 0;
  let refused = 0;
  const started = performance.now();
  const measureFrom = started + options.warmupS * 1000;
  const stopAt = measureFrom + options.durationS * 1000;
  const worker = async (index: number) => {
    while (performance.now() < stopAt) {
      const t0 = performance.now();
      const result = await withTransaction(handle.db, (tx) =>
        reserveSpend(tx, systemClock, {
          accountId,
          wallet: walletOf(index),
          amountMicroUsd: 1n,
          reservationId: newId('res'),
          expiresAt: new Date(Date.now() + 600_000),
        }),
      );
      const t1 = performance.now();
      if (t0 < measureFrom) continue;
      latencies.push(t1 - t0);
      if (result.ok) committed++;
      else refused++;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, (_, i) => worker(i)));
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return {
    name,
    perSecond: committed / options.durationS,
    committed,
    refused,
    latencyMs: { p50: at(0.5), p99: at(0.99), max: latencies[latencies.length - 1] ?? NaN },
    durationS: options.durationS,
  };
}
