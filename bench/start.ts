// How fast Purser starts, compiled (dist/, as `npm start` runs it) and from its TypeScript
// sources through tsx, side by side in one run: a fresh data directory to ready (the embedded
// database, its migrations and the devnet's chains and fakes, contracts deployed), a warm restart
// on that directory, and the CLI (`purser help`, `purser ops help`, and `purser mcp` up to its
// first answer). Alternating the two ways REPEAT times; medians reported. Part of `npm run bench`;
// alone: `npx tsx bench/start.ts`. Goals (issue 39): fresh ≤ 10 s, warm ≤ 3 s, CLI ≤ 1.5 s.

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { positiveInt, runLine, runMain, writeResults } from './common.ts';
import { http, REPO_ROOT, serviceEnv } from '../test/support/service-process.ts';

const REPEAT = positiveInt('BENCH_REPEAT', 3);

interface Way {
  name: string;
  /** node's arguments before the command. */
  args: string[];
}

const WAYS: Way[] = [
  { name: 'compiled (dist/)', args: ['bin/purser.js'] },
  { name: 'sources through tsx', args: ['--import', 'tsx', 'src/main.ts'] },
];

/** Seconds from spawning `serve` on `dataDir` to GET /readyz answering 200; then stops it. */
async function startToReady(way: Way, dataDir: string): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [...way.args, 'serve'], {
    cwd: REPO_ROOT,
    env: serviceEnv({ PURSER_DATA_DIR: dataDir, DEVNET: 'true', DEVNET_BASE_PORT: '0' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${way.name} exited:\n${output}`);
      const url = /Purser is listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (url && (await http(`${url}/readyz`, { timeoutMs: 2_000 }).catch(() => null))?.status === 200) {
        return (performance.now() - started) / 1000;
      }
      if (performance.now() - started > 180_000)
        throw new Error(`${way.name} not ready in 180 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  }
}

/** Seconds a CLI command takes to finish (its exit status is not the point). */
function cli(way: Way, command: string[], env: Record<string, string> = {}): number {
  const started = performance.now();
  spawnSync(process.execPath, [...way.args, ...command], {
    cwd: REPO_ROOT,
    env: { ...serviceEnv({}), ...env },
    stdio: 'ignore',
    input: '',
  });
  return (performance.now() - started) / 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

async function main(): Promise<number> {
  const built = spawnSync(process.execPath, ['bin/build.js', '--if-stale'], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
  if (built.status !== 0) return 1;
  const root = mkdtempSync(join(tmpdir(), 'purser-bench-start-'));
  const figures = new Map<string, Record<string, number[]>>(WAYS.map((w) => [w.name, {}]));
  const add = (way: Way, what: string, seconds: number) => {
    const f = figures.get(way.name)!;
    (f[what] ??= []).push(seconds);
  };
  try {
    for (let i = 0; i < REPEAT; i++) {
      for (const way of WAYS) {
        const dataDir = join(root, `${i}-${way.args[0]!.replace(/\W/g, '')}`);
        mkdirSync(dataDir);
        add(way, 'fresh data directory to ready', await startToReady(way, dataDir));
        add(way, 'warm restart to ready', await startToReady(way, dataDir));
        add(way, 'purser help', cli(way, ['help']));
        add(way, 'purser ops help', cli(way, ['ops', 'help']));
        // Up to its first answer: no Purser listens at that URL, so it says so and exits.
        add(
          way,
          'purser mcp, to its first answer',
          cli(way, ['mcp'], { PURSER_URL: 'http://127.0.0.1:9', PURSER_API_KEY: 'psk_bench' }),
        );
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const rows = Object.keys(figures.get(WAYS[0]!.name)!);
  const s = (x: number) => x.toFixed(2);
  const md = [
    '# Start times: compiled against the sources through tsx',
    '',
    runLine(),
    `- Medians of ${REPEAT} alternating runs, in seconds; embedded PGlite and the devnet (three chains)`,
    '',
    `| | ${WAYS.map((w) => w.name).join(' | ')} | goal |`,
    `|---|${WAYS.map(() => '--:').join('|')}|--:|`,
    ...rows.map((r) => {
      const goal = r.startsWith('fresh') ? '≤ 10' : r.startsWith('warm') ? '≤ 3' : '≤ 1.5';
      return `| ${r} | ${WAYS.map((w) => s(median(figures.get(w.name)![r]!))).join(' | ')} | ${goal} |`;
    }),
    '',
  ].join('\n');
  console.log(md);
  writeResults({ 'start-latest.md': md });
  return 0;
}

runMain(main);
