// Execution on the devnet, on PostgreSQL: conversion intents of agents with real Kernel accounts
// and delegations, executed by two worker processes through one bundler (the devnet's), each slice
// a session-key UserOperation on a real AMM. Measures intents filled per minute, each slice's
// latency from the moment its step started (planned) to its fill ledgered (p50, p99), and where
// the time goes (the phases each slice's report records). Docs: bench/README.md, "Execution".
// Part of `npm run bench`; alone: `DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/execution.ts`.

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { BASE_CHAIN_ID, startDevnet } from '../src/devnet/devnet.ts';
import type { RunReport } from '../src/modules/executor/index.ts';
import type { Intent } from '../src/modules/intents/index.ts';
import { conversionAgent, eurcMarket, sellUsdc } from '../test/support/executor.ts';
import { REPO_ROOT } from '../test/support/service-process.ts';
import { machineFacts, runMain, summary, writeResults } from './common.ts';

const positiveInt = (name: string, fallback: number) => {
  const n = Number(process.env[name] ?? fallback);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};
const INTENTS = positiveInt('BENCH_EXECUTION_INTENTS', 40);
const WORKERS = positiveInt('BENCH_EXECUTION_WORKERS', 2);
const USD = 1_000_000n;
const CHILD = join(REPO_ROOT, 'test', 'support', 'executor-worker-child.ts');

async function main(): Promise<number> {
  if (!process.env['DATABASE_URL']) {
    console.log('bench/execution.ts: skipped, its worker processes share a PostgreSQL (set DATABASE_URL).');
    return 0;
  }
  const devnet = await startDevnet({ chainIds: [BASE_CHAIN_ID], basePort: 0 });
  const info = devnet.info();
  // A pool deep enough that every sale stays within the budget of the reference.
  const m = await eurcMarket(info, [{ venue: 'devnet-amm', usdcDepth: 10_800_000 }]);
  const children: ChildProcess[] = [];
  try {
    // Agents and their intents, admitted through the API while no worker runs.
    const agents = [];
    for (let i = 0; i < INTENTS; i++) {
      agents.push(await conversionAgent(info, m, 200n * USD, { policy: { spend: { per_tx_usd: '1000' } } }));
    }
    // The workers first (ready and polling), then every intent at once: the clock starts with them.
    for (let w = 0; w < WORKERS; w++) {
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD, m.t.database.url!, `bench-${w}`], {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: {
          ...process.env,
          EXECUTOR_CHILD: JSON.stringify({
            devnet: info,
            relocate: { USDC: m.usdc.address, EURC: m.eurc.address },
            config: { planner: { ...m.t.deps.config.planner, sliceIntervalMs: 0 } },
          }),
        },
      });
      children.push(child);
    }
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve, reject) => {
            let out = '';
            child.stdout!.setEncoding('utf8').on('data', (c: string) => {
              out += c;
              if (out.includes('ready')) resolve();
            });
            child.once('exit', (code) => reject(new Error(`a worker exited before it was ready (${code})`)));
          }),
      ),
    );
    const started = performance.now();
    await Promise.all(
      agents.map((a) => a.api<Intent>('POST', '/v1/intents', sellUsdc(m, a.wallet, 50n * USD))),
    );
    const until = Date.now() + 10 * 60_000;
    for (;;) {
      const open = await m.t.db.db
        .selectFrom('intents')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('status', 'in', ['planned', 'executing'])
        .executeTakeFirstOrThrow();
      if (Number(open.n) === 0) break;
      if (Date.now() > until) throw new Error(`${open.n} intents still open after 10 minutes`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const elapsedMs = performance.now() - started;
    const rows = await m.t.db.db.selectFrom('intents').select(['status', 'params', 'report']).execute();
    const filled = rows.filter((r) => r.status === 'filled');
    const aborted = rows.flatMap((r) => {
      const abort = (r.params as { abort?: { reason: string } }).abort;
      return r.status === 'aborted' && abort ? [abort.reason] : [];
    });
    const slices = rows.flatMap((r) => (r.report as RunReport).slices ?? []);
    const phases: Record<string, number[]> = {};
    for (const s of slices)
      for (const [k, v] of Object.entries(s.timings_ms ?? {})) (phases[k] ??= []).push(v);
    const report = {
      at: new Date().toISOString(),
      database: 'postgres',
      intents: INTENTS,
      workers: WORKERS,
      bundler: 'the devnet bundler (one)',
      filled: filled.length,
      aborted,
      slices: slices.length,
      elapsedSeconds: Math.round(elapsedMs) / 1000,
      filledPerMinute: Math.round((filled.length / (elapsedMs / 60_000)) * 10) / 10,
      sliceLatencyMs: summary(phases['total'] ?? []),
      phasesMs: Object.fromEntries(Object.entries(phases).map(([k, xs]) => [k, summary(xs)])),
      machine: machineFacts(),
    };
    const order = ['reconcile', 'checks', 'plan', 'quote_build', 'sign', 'sponsor', 'land', 'total'];
    const md = [
      '# Purser benchmark: execution on the devnet',
      '',
      `${INTENTS} conversion intents (50 USDC → EURC each, one slice on devnet-amm), ${WORKERS} worker processes, ` +
        `one bundler; PostgreSQL; ${report.machine.cpus}× ${report.machine.cpuModel}, Node ${report.machine.node}, ` +
        `commit ${report.machine.commit}.`,
      '',
      `Filled ${filled.length} of ${INTENTS} in ${report.elapsedSeconds} s: **${report.filledPerMinute} intents per minute**` +
        (aborted.length > 0 ? `; aborted: ${aborted.join(', ')}` : '') +
        '.',
      '',
      '| Phase of a slice | p50 ms | p99 ms | max ms |',
      '|---|--:|--:|--:|',
      ...order
        .filter((k) => report.phasesMs[k])
        .map((k) => {
          const s = report.phasesMs[k]!;
          return `| ${k === 'total' ? '**planned to ledgered**' : k} | ${s.p50} | ${s.p99} | ${s.max} |`;
        }),
      '',
    ].join('\n');
    console.log(md);
    writeResults({
      'execution-latest.md': md,
      'execution-postgres.json': `${JSON.stringify(report, null, 2)}\n`,
    });
    return filled.length === INTENTS ? 0 : 1;
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await m.t.close();
    await devnet.stop();
  }
}

runMain(main);
