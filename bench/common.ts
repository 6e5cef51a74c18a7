// What the benchmark scripts share: settings read from the environment, latency summaries, the facts of the machine a result was
// measured on, writing results, and running a script's main to its exit code.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../test/support/service-process.ts';

/** A whole number of at least 1 from the environment variable `name`, or `fallback` when it is unset. */
export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1)
    throw new Error(`${name} must be a positive integer (got "${raw}")`);
  return Number(raw);
}

/** The p-th percentile of sorted values (nearest rank); NaN when there are none. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, i)]!;
}

/** p50, p99 and max of the values, to a tenth. */
export function summary(values: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.at(-1) ?? NaN),
  };
}

/** Node, CPUs, load and the commit measured. */
export function machineFacts() {
  return {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
    commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT }).toString().trim(),
  };
}

/** The `- Run:` line of a result's Markdown: when, on what CPUs, and the machine's load then. */
export function runLine(): string {
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
  return `- Run: ${new Date().toISOString()}; ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}; load average at start ${load}`;
}

/** Writes files into bench/results (name → content) and says so. */
export function writeResults(files: Record<string, string>): void {
  const dir = join(REPO_ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  console.log(
    `Written: ${Object.keys(files)
      .map((n) => `bench/results/${n}`)
      .join(', ')}`,
  );
}

/** Runs a benchmark's main and exits with its code (1 and the stack when it throws). */
export function runMain(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      process.exit(1);
    },
  );
}

/** Linux's clock ticks per second for /proc times (USER_HZ, 100 on every kernel it ships for). */
const TICKS_PER_SECOND = 100;

/** One reading of the CPU counters: the machine's busy and total ticks, a server's, PostgreSQL's. */
export interface CpuReading {
  machineBusy: number;
  machineTotal: number;
  server: number;
  database: number;
}

function processTicks(pid: number | string, withReapedChildren = false): number {
  try {
    // utime and stime are fields 14 and 15, cutime and cstime (the children it has waited for)
    // 16 and 17; the command name (field 2) may hold spaces, so count from the closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = Number(fields[11]) + Number(fields[12]);
    return withReapedChildren ? own + Number(fields[13]) + Number(fields[14]) : own;
  } catch {
    return 0;
  }
}

/**
 * The CPU counters now (Linux /proc; null elsewhere): every core's busy time, the server process
 * `serverPid`'s and PostgreSQL's. PostgreSQL's is the sum over the processes named `postgres` of
 * their own time and of their reaped children's: a backend that exits between two readings (a
 * pool closing an idle connection) leaves its time in the postmaster's children's counters, where
 * a sum over the live processes alone would lose it, and with it the time it had before the first
 * reading, and so count too little.
 */
export function readCpu(serverPid: number): CpuReading | null {
  let cpuLine: string;
  try {
    cpuLine = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  } catch {
    return null;
  }
  const ticks = cpuLine.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  let database = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres')
        database += processTicks(entry, true);
    } catch {
      // gone meanwhile
    }
  }
  return { machineBusy: total - idle, machineTotal: total, server: processTicks(serverPid), database };
}

/** What a run cost between two readings, per unit of work (`units`: requests or rows). */
export interface CpuCost {
  /** Share of every core that was busy, 0–100. */
  busyPercent: number;
  /** Core µs per unit in the server process. */
  serverMicros: number;
  /** Core µs per unit in PostgreSQL's processes. */
  databaseMicros: number;
}

export function cpuCost(before: CpuReading | null, after: CpuReading | null, units: number): CpuCost | null {
  if (!before || !after || units <= 0) return null;
  const micros = (ticks: number) => Math.round(((ticks / TICKS_PER_SECOND) * 1e6) / units);
  return {
    busyPercent: Math.round(
      (100 * (after.machineBusy - before.machineBusy)) / (after.machineTotal - before.machineTotal),
    ),
    serverMicros: micros(after.server - before.server),
    databaseMicros: micros(after.database - before.database),
  };
}

/**
 * Node's flags for `purser serve` as `npm start` passes them (package.json's `start` script, the
 * one place they are written), so a bench runs the service as production does.
 */
export function startNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const match = /\bnode((?: --[^\s]+)*) bin\/purser\.js serve\b/.exec(pkg.scripts['start'] ?? '');
  if (!match) throw new Error('package.json\'s "start" script no longer runs `node … bin/purser.js serve`');
  return match[1]!.split(' ').filter(Boolean);
}

/** The peak resident memory of process `pid` in MiB (VmHWM, Linux), or null. */
export function peakResidentMiB(pid: number): number | null {
  try {
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Math.round(Number(kb) / 1024) : null;
  } catch {
    return null;
  }
}
