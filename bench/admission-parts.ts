// Where the database's time goes in an intent admission: Purser's admission writes in one SQL call
// (bench/reference-admission.ts) run under pgbench against the server alone, with every part and
// then each part left out, beside the yardstick's own one-call function (../shared/perfref,
// read, never written), so that no HTTP stack, load generator in Node or service shares the two
// cores with the database. Docs: bench/README.md, "Where an admission's database time goes".
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:admission-parts
//
// Needs PostgreSQL and `pgbench` (the server's client tools). Each variant runs on a fresh copy of
// one seeded template database, after a checkpoint, so no variant inherits another's rows. Results:
// bench/results/admission-parts-latest.md and admission-parts.json.

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { testConfig } from '../src/config.ts';
import { openDatabase } from '../src/core/db/database.ts';
import { migrate } from '../src/core/db/migrate.ts';
import { hashToken } from '../src/modules/auth/tokens.ts';
import { REPO_ROOT } from '../test/support/service-process.ts';
import { machineFacts, positiveInt, runLine, runMain, writeResults } from './common.ts';
import { REFERENCE_FUNCTION } from './reference-admission.ts';
import { seedAccount, seedPolicy } from './seed.ts';

const run = promisify(execFile);
const SECONDS = positiveInt('BENCH_DURATION', 6);
/** Rounds: each runs the yardstick, then every variant; the figures are each one's median. */
const ROUNDS = positiveInt('BENCH_REPEAT', 3);
const CLIENTS = positiveInt('BENCH_PG_CLIENTS', 10);
const ACCOUNTS = 200;
const YARDSTICK = process.env.PERFREF_DIR ?? join(REPO_ROOT, '..', 'shared', 'perfref');

/** The parts of the one call that a variant can leave out (the reference's part names, set in purser_bench.skip). */
const PARTS = ['reservation', 'fee', 'balance_debited', 'intent', 'intent_planned', 'audit', 'job'] as const;
type Part = (typeof PARTS)[number];

const PART_LABELS: Record<Part, string> = {
  reservation: 'the spend reservation (caps summed over the wallet’s day)',
  fee: 'the fee’s ledger booking (balance, group, two entries)',
  balance_debited: 'the `balance.debited` event',
  intent: 'the intent row',
  intent_planned: 'the `intent.planned` event',
  audit: 'the audit fact and its network context',
  job: 'the executor’s job',
};

interface Variant {
  name: string;
  skip: Part[];
  /** SQL run on the variant's copy before the load (a schema that records less). */
  schema?: string;
}

/**
 * A schema recording what the yardstick records: the ledger without its statement indexes and its
 * balanced-group trigger, intents without their list and queue indexes.
 */
const YARDSTICK_SHAPED_SCHEMA = `
  DROP INDEX ledger_groups_memo_wallet; DROP INDEX ledger_groups_account_seq;
  DROP INDEX ledger_entries_account_asset; ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_balanced;
  DROP INDEX intents_account_created; DROP INDEX intents_open_by_wallet;`;

const VARIANTS: Variant[] = [
  { name: 'every part (the admission as the service writes it)', skip: [] },
  ...PARTS.map((part) => ({ name: `without ${PART_LABELS[part]}`, skip: [part] })),
  {
    name: 'the fee’s booking alone (session, key, policy, booking, answer)',
    skip: PARTS.filter((p) => p !== 'fee'),
  },
  { name: 'the spend reservation alone', skip: PARTS.filter((p) => p !== 'reservation') },
  { name: 'no part (session, key, policy read, stored answer)', skip: [...PARTS] },
  {
    name: 'what the yardstick records: no reservation, one event, no audit fact, no job, a leaner schema',
    skip: ['reservation', 'balance_debited', 'audit', 'job'],
    schema: YARDSTICK_SHAPED_SCHEMA,
  },
];

/** pgbench's script for Purser's one call: a random seeded account, fresh ids and key each time. */
const PURSER_SCRIPT = `\\set n random(1, ${ACCOUNTS})
SELECT bench_reference_admit(b.token_hash, gen_random_uuid()::text, md5(random()::text), b.wallet,
  '{"chain_id":8453,"sell_token":"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913","buy_token":"0x4200000000000000000000000000000000000006","sell_amount":"10000000","max_slippage_bps":50,"venues":[],"value_usd":"10"}'::jsonb,
  10000000, 50000, now(), gen_random_uuid(), 'lgr_' || substr(md5(random()::text), 1, 20),
  ARRAY[md5(random()::text), 'evt_' || substr(md5(random()::text), 1, 20), 'evt_' || substr(md5(random()::text), 1, 20),
    'aud_' || substr(md5(random()::text), 1, 20), 'job_' || substr(md5(random()::text), 1, 20)])
FROM bench_parts_accounts b WHERE b.n = :n;
`;

/** The yardstick's own one call (its load generator's v2 endpoint), under the same pgbench. */
const YARDSTICK_SCRIPT = `\\set n random(1, ${ACCOUNTS})
SELECT * FROM create_intent(:n, gen_random_uuid()::text, sha256(random()::text::bytea), 100, 1);
`;

interface Measured {
  name: string;
  tps: number;
  /** The cores' time per admission: cores / tps, in µs (the database keeps both cores busy here). */
  coreMicrosPerAdmission: number;
  walBytesPerAdmission: number;
  failed: number;
}

async function main(): Promise<number> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    console.error('bench/admission-parts.ts needs DATABASE_URL (a PostgreSQL server; PGlite has no pgbench)');
    return 2;
  }
  await run('pgbench', ['--version']).catch(() => {
    throw new Error('pgbench is not on PATH (it comes with PostgreSQL’s client tools)');
  });
  const label = randomBytes(4).toString('hex');
  const template = `purser_parts_${label}_template`;
  const copy = `purser_parts_${label}`;
  const yardstick = `purser_parts_${label}_perfref`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  const work = mkdtempSync(join(tmpdir(), 'purser-parts-'));
  const urlOf = (db: string) => {
    const url = new URL(serverUrl);
    url.pathname = `/${db}`;
    return url;
  };
  try {
    await admin.query(`CREATE DATABASE ${template}`);
    await seedTemplate(urlOf(template).toString());
    await admin.query(`CREATE DATABASE ${yardstick}`);
    await seedYardstick(urlOf(yardstick).toString());
    writeFileSync(join(work, 'purser.sql'), PURSER_SCRIPT);
    writeFileSync(join(work, 'yardstick.sql'), YARDSTICK_SCRIPT);

    const pgbench = async (name: string, db: string, script: string): Promise<Measured> => {
      await admin.query('CHECKPOINT');
      const before = await walBytes(admin);
      const url = urlOf(db);
      const { stdout } = await run(
        'pgbench',
        [
          '-n',
          '-M',
          'prepared',
          '-c',
          String(CLIENTS),
          '-j',
          '2',
          '-T',
          String(SECONDS),
          '-f',
          join(work, script),
        ],
        {
          env: {
            ...process.env,
            PGHOST: url.hostname,
            PGPORT: url.port || '5432',
            PGUSER: decodeURIComponent(url.username) || 'postgres',
            PGPASSWORD: decodeURIComponent(url.password),
            PGDATABASE: db,
          },
        },
      );
      const after = await walBytes(admin);
      const tps = Number(/tps = ([0-9.]+)/.exec(stdout)?.[1] ?? NaN);
      const processed = Number(/actually processed: (\d+)/.exec(stdout)?.[1] ?? NaN);
      const failed = Number(/number of failed transactions: (\d+)/.exec(stdout)?.[1] ?? 0);
      const measured = {
        name,
        tps: Math.round(tps),
        coreMicrosPerAdmission: Math.round((machineFacts().cpus * 1e6) / tps),
        walBytesPerAdmission: Math.round(Number(after - before) / processed),
        failed,
      };
      console.log(JSON.stringify(measured));
      return measured;
    };

    // Rounds interleave the variants, so the shared machine's drift reaches each of them alike.
    const yardstickRuns: Measured[] = [];
    const runs: Measured[][] = VARIANTS.map(() => []);
    for (let round = 0; round < ROUNDS; round += 1) {
      yardstickRuns.push(await pgbench('the yardstick', yardstick, 'yardstick.sql'));
      for (const [i, variant] of VARIANTS.entries()) {
        await admin.query(`CREATE DATABASE ${copy} TEMPLATE ${template}`);
        try {
          await admin.query(
            `ALTER DATABASE ${copy} SET purser_bench.skip = ${pg.escapeLiteral(variant.skip.join(' '))}`,
          );
          if (variant.schema) {
            const client = new pg.Client({ connectionString: urlOf(copy).toString() });
            await client.connect();
            await client.query(variant.schema).finally(() => client.end());
          }
          runs[i]!.push(await pgbench(variant.name, copy, 'purser.sql'));
        } finally {
          await admin.query(`DROP DATABASE IF EXISTS ${copy} WITH (FORCE)`);
        }
      }
    }
    yardstickRuns.push(await pgbench('the yardstick', yardstick, 'yardstick.sql'));
    const rows = runs.map(median);
    report(median(yardstickRuns), yardstickRuns, rows);
    return runs.flat().some((r) => r.failed > 0 || !Number.isFinite(r.tps)) ? 1 : 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
    for (const db of [copy, template, yardstick])
      await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

/** The run with the median rate (the lower middle of an even count). */
function median(runs: Measured[]): Measured {
  return [...runs].sort((a, b) => a.tps - b.tps)[Math.floor((runs.length - 1) / 2)]!;
}

async function walBytes(admin: pg.Client): Promise<bigint> {
  const r = await admin.query<{ wal: string }>(`SELECT pg_current_wal_lsn() - '0/0'::pg_lsn AS wal`);
  return BigInt(r.rows[0]!.wal.split('.')[0]!);
}

/** The template: Purser's schema, the reference call, 200 accounts with a session, funds and a policy. */
async function seedTemplate(url: string): Promise<void> {
  const handle = await openDatabase(testConfig({ databaseUrl: url }));
  try {
    await migrate(handle.db);
    await sql.raw(REFERENCE_FUNCTION).execute(handle.db);
    await sql`CREATE TABLE bench_parts_accounts (n integer PRIMARY KEY, token_hash text NOT NULL, wallet text NOT NULL)`.execute(
      handle.db,
    );
    for (let n = 1; n <= ACCOUNTS; n += 1) {
      const seeded = await handle.db.transaction().execute((tx) =>
        seedAccount(tx, {
          session: true,
          prepaidMicro: 1_000_000_000_000n,
          settlementPrefix: 'bench:parts',
        }),
      );
      const wallet = `0x${randomBytes(20).toString('hex')}`;
      await seedPolicy(handle.db, seeded.accountId, wallet, {
        per_tx_usd: '1000',
        daily_usd: '100000000',
        velocity_per_hour: 1_000_000,
      });
      await sql`INSERT INTO bench_parts_accounts VALUES (${n}, ${hashToken(seeded.token!)}, ${wallet})`.execute(
        handle.db,
      );
    }
    // The seeded sessions last an hour; a long run must not outlive them.
    await sql`UPDATE sessions SET expires_at = now() + interval '1 day'`.execute(handle.db);
  } finally {
    await handle.close();
  }
}

/** The yardstick's schema and function, read from its directory as its own script loads them. */
async function seedYardstick(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SET client_min_messages = warning');
    await client.query(readFileSync(join(YARDSTICK, 'schema.sql'), 'utf8'));
    await client.query(readFileSync(join(YARDSTICK, 'fn.sql'), 'utf8'));
  } finally {
    await client.end();
  }
}

function report(yardstick: Measured, yardstickRuns: Measured[], rows: Measured[]): void {
  const all = rows[0]!;
  const fmt = (n: number) => n.toLocaleString('en-US');
  const line = (r: Measured, delta: boolean) =>
    `| ${r.name} | ${fmt(r.tps)} | ${(r.tps / yardstick.tps).toFixed(2)} | ${r.coreMicrosPerAdmission} | ${
      delta ? `${all.coreMicrosPerAdmission - r.coreMicrosPerAdmission}` : ''
    } | ${fmt(r.walBytesPerAdmission)} |`;
  const md = [
    '# Where an admission’s database time goes (bench/admission-parts.ts)',
    '',
    runLine(),
    `- pgbench, ${CLIENTS} clients, ${SECONDS} s per run, prepared statements, each run on a fresh copy of one seeded database (${ACCOUNTS} accounts), after a checkpoint; ${ROUNDS} rounds, each the yardstick and then every variant, and the yardstick once more at the end. No HTTP: the database alone.`,
    '- Each row is the variant’s median run. Core µs per admission: the cores’ time over the rate (the database keeps both cores busy here). “Saves”: every part’s µs less the variant’s, what leaving that part out gives back; differences under about 100 µs are within the runs’ spread.',
    '',
    '| Variant | per s | / yardstick | core µs per admission | saves µs | WAL bytes per admission |',
    '|---|--:|--:|--:|--:|--:|',
    `| the yardstick, median run | ${fmt(yardstick.tps)} | 1.00 | ${yardstick.coreMicrosPerAdmission} | | ${fmt(yardstick.walBytesPerAdmission)} |`,
    ...rows.map((r, i) => line(r, i > 0)),
    '',
    `The yardstick's runs: ${yardstickRuns.map((r) => fmt(r.tps)).join(', ')} per s.`,
    '',
  ].join('\n');
  writeResults({
    'admission-parts-latest.md': md,
    'admission-parts.json': `${JSON.stringify({ machine: machineFacts(), seconds: SECONDS, clients: CLIENTS, rounds: ROUNDS, yardstick: { median: yardstick, runs: yardstickRuns }, variants: rows }, null, 2)}\n`,
  });
  console.log(md);
}

runMain(main);
