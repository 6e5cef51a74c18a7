// What a spend reservation costs as a wallet's day fills up: the reservation as it is now
// (counted from the wallet's window, migration 0041) against the same reservation summing the
// wallet's reservations of the day (migration 0029's function, installed under another name),
// with 0, 1,000 and 10,000 reservations already made that day. One connection, each call in its
// own transaction, as admission makes it. PostgreSQL only (DATABASE_URL); docs in bench/README.md.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/spend-caps.ts

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../src/core/db/database.ts';
import { migrate } from '../src/core/db/migrate.ts';
import { newId } from '../src/core/ids.ts';
import { REPO_ROOT } from '../test/support/service-process.ts';
import { runLine, runMain, writeResults } from './common.ts';
import { prepareBenchDatabase } from './database.ts';
import { seedAccount, seedPolicy } from './seed.ts';

const CALLS = Number(process.env['BENCH_SPEND_CALLS'] ?? 300);
const DAY_SIZES = [0, 1_000, 10_000];

/** Migration 0029's purser_reserve_spend, renamed: the reservation that summed the day. */
function summingFunction(): string {
  const text = readFileSync(join(REPO_ROOT, 'src/core/db/migrations/0029_intent_admission.sql'), 'utf8');
  const start = text.indexOf('CREATE OR REPLACE FUNCTION purser_reserve_spend(');
  const end = text.indexOf('$$;', start);
  if (start < 0 || end < 0) throw new Error('migration 0029 no longer holds purser_reserve_spend');
  return text
    .slice(start, end + 3)
    .replace('FUNCTION purser_reserve_spend(', 'FUNCTION bench_reserve_spend_summing(');
}

interface Row {
  dayReservations: number;
  fn: string;
  p50: number;
  p99: number;
  perSecond: number;
}

async function main(): Promise<number> {
  if (!process.env['DATABASE_URL']) {
    console.log('bench/spend-caps.ts: skipped, it measures PostgreSQL (set DATABASE_URL).');
    return 0;
  }
  const database = await prepareBenchDatabase('spend');
  const handle = await openDatabase(database.config);
  const rows: Row[] = [];
  try {
    await migrate(handle.db);
    await sql.raw(summingFunction()).execute(handle.db);
    const { accountId } = await handle.db.transaction().execute((tx) => seedAccount(tx));
    for (const size of DAY_SIZES) {
      for (const fn of ['purser_reserve_spend', 'bench_reserve_spend_summing']) {
        // A wallet of its own per figure, with caps no call reaches.
        const wallet = `0x${randomBytes(20).toString('hex')}`;
        await seedPolicy(handle.db, accountId, wallet, {
          per_tx_usd: '1000',
          daily_usd: '100000000',
          velocity_per_hour: 100_000,
        });
        const reserve = (now: Date) =>
          sql`SELECT outcome FROM ${sql.raw(fn)}(${accountId}, ${wallet}, ${newId('res')}, 1000000::bigint,
            ${now}::timestamptz, ${new Date(now.getTime() + 1_800_000)}::timestamptz)`.execute(handle.db);
        // The day so far: `size` pending reservations made over the last hour.
        await reserve(new Date());
        await sql`INSERT INTO spend_reservations (id, account_id, wallet, amount_micro_usd, state,
            policy_version, created_at, expires_at)
          SELECT 'res_bench_' || ${wallet} || '_' || g, ${accountId}, ${wallet}, 1000000, 'pending', 1,
            now() - (g * interval '300 milliseconds'), now() + interval '30 minutes'
          FROM generate_series(1, ${size}) g`.execute(handle.db);
        await sql`ANALYZE spend_reservations`.execute(handle.db);
        const times: number[] = [];
        for (let i = 0; i < CALLS; i += 1) {
          const t0 = process.hrtime.bigint();
          const r = await reserve(new Date());
          times.push(Number(process.hrtime.bigint() - t0) / 1e6);
          if ((r.rows[0] as { outcome: string }).outcome !== 'ok') throw new Error(`${fn}: refused`);
        }
        times.sort((a, b) => a - b);
        const total = times.reduce((a, b) => a + b, 0);
        rows.push({
          dayReservations: size,
          fn: fn === 'purser_reserve_spend' ? 'window (0041)' : 'summing the day (0029)',
          p50: times[Math.floor(times.length / 2)]!,
          p99: times[Math.floor(times.length * 0.99)]!,
          perSecond: Math.round((CALLS / total) * 1000),
        });
        console.log(JSON.stringify(rows.at(-1)));
      }
    }
  } finally {
    await handle.close();
    await database.drop();
  }
  const table = [
    '# Spend reservation against the day so far (bench/spend-caps.ts)',
    '',
    runLine(),
    `- ${CALLS} sequential reservations per figure, one connection, PostgreSQL`,
    '',
    "| wallet's reservations today | counted from | p50 ms | p99 ms | calls/s |",
    '|--:|---|--:|--:|--:|',
    ...rows.map(
      (r) =>
        `| ${r.dayReservations.toLocaleString('en-US')} | ${r.fn} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.perSecond} |`,
    ),
    '',
  ].join('\n');
  writeResults({ 'spend-caps-latest.md': table });
  console.log(table);
  return 0;
}

runMain(main);
