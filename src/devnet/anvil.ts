// The devnet's anvil processes: spawning one per chain on its port, with its state file, stopping
// them with this process, and taking over the ones a killed run left behind.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { isAlive } from '../core/process.ts';

export type DevnetLog = ((message: string) => void) | { info(message: string): void };

export function logger(log: DevnetLog | undefined): (message: string) => void {
  if (!log) return () => {};
  if (typeof log === 'function') return log;
  return (message) => log.info(message);
}

/** A devnet port another program holds; the message names the port and the setting to change. */
export class DevnetPortInUseError extends Error {
  constructor(
    readonly ports: { port: number; chainId: number }[],
    readonly host: string,
  ) {
    const list = ports.map((p) => `${p.port} (chain ${p.chainId})`).join(', ');
    super(
      `Devnet port${ports.length > 1 ? 's' : ''} ${list} on ${host} ${ports.length > 1 ? 'are' : 'is'} already in use. ` +
        'Set DEVNET_BASE_PORT to another port (chain i of DEVNET_CHAINS listens on DEVNET_BASE_PORT + i), ' +
        'or DEVNET_BASE_PORT=0 to pick free ports, or stop the program holding the port ' +
        '(an earlier Purser or anvil still running?).',
    );
    this.name = 'DevnetPortInUseError';
  }
}

// ------------------------------------------------------------------------------ process control

export const liveChildren = new Set<ChildProcess>();
/** Children that keep a state file: ended with SIGTERM, so they write it (SIGKILL would lose it). */
export const statefulChildren = new WeakSet<ChildProcess>();
let exitHooksInstalled = false;

export function killAllNow(): void {
  for (const child of liveChildren) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(statefulChildren.has(child) ? 'SIGTERM' : 'SIGKILL');
    }
  }
  liveChildren.clear();
}

export function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', killAllNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    // Only when nobody else decides what the signal means: then die as the default would. A
    // listener added later (the service's shutdown) owns the signal, and stops the devnet itself.
    if (process.listenerCount(signal) > 0) continue;
    const onSignal = (): void => {
      if (process.listenerCount(signal) > 0) return;
      killAllNow();
      process.kill(process.pid, signal);
    };
    process.once(signal, onSignal);
  }
}

/** Path of the anvil binary shipped by the @foundry-rs/anvil-<platform>-<arch> npm package. */
export function anvilBinaryPath(): string {
  const require = createRequire(import.meta.url);
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  let pkgJson: string;
  try {
    pkgJson = require.resolve(`${pkg}/package.json`);
  } catch (cause) {
    throw new Error(`anvil is not installed for this platform (npm package ${pkg})`, { cause });
  }
  return join(dirname(pkgJson), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
}

/** Distinct free TCP ports on `host` (held open together, so they differ from each other). */
export async function freePorts(count: number, host: string): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      ports.push(
        await new Promise<number>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, host, () => {
            const addr = server.address();
            if (addr && typeof addr === 'object') resolve(addr.port);
            else reject(new Error('no port'));
          });
        }),
      );
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

/** Where chain `chainId` keeps its state when the devnet has a state directory. */
export function devnetStateFile(stateDir: string, chainId: number): string {
  return join(resolve(stateDir), `chain-${chainId}.json`);
}

export function pidFile(stateDir: string, chainId: number): string {
  return join(resolve(stateDir), `chain-${chainId}.pid`);
}

/**
 * Anvils an earlier run left behind (its process was killed without a chance to stop them) still
 * hold the latest chain state and their ports. Each one found — by the pid file of its chain, and
 * only if that process is an anvil on this chain's state file — is stopped with SIGTERM, which
 * makes it write its state file. Returns the chain ids whose leftover anvil wrote its state so.
 * Only where /proc shows command lines (Linux); elsewhere nothing is found.
 */
export async function reclaimLeftoverAnvils(
  stateDir: string,
  chainIds: number[],
  log?: DevnetLog,
): Promise<number[]> {
  const say = logger(log);
  const reclaimed: number[] = [];
  for (const chainId of chainIds) {
    const path = pidFile(stateDir, chainId);
    if (!existsSync(path)) continue;
    const pid = Number(readFileSync(path, 'utf8').trim());
    rmSync(path, { force: true });
    if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    } catch {
      continue;
    }
    if (!cmdline.includes('anvil') || !cmdline.includes(devnetStateFile(stateDir, chainId))) continue;
    process.kill(pid, 'SIGTERM');
    const deadline = performance.now() + 15_000;
    while (isAlive(pid) && performance.now() < deadline) await sleep(50);
    if (isAlive(pid)) {
      process.kill(pid, 'SIGKILL');
      continue;
    }
    say(
      `devnet chain ${chainId}: stopped the anvil an earlier run left running (pid ${pid}); it saved its state`,
    );
    reclaimed.push(chainId);
  }
  return reclaimed;
}

export interface RunningAnvil {
  chainId: number;
  port: number;
  rpcUrl: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function rpcChainId(rpcUrl: string): Promise<number | null> {
  try {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1_000),
    });
    if (!res.ok) return null;
    const body = (await res.json()) as { result?: string };
    return typeof body.result === 'string' ? Number(BigInt(body.result)) : null;
  } catch {
    return null;
  }
}

export async function spawnAnvil(
  chainId: number,
  port: number,
  host: string,
  binary: string,
  extraArgs: string[],
  timeoutMs: number,
  stateDir?: string,
): Promise<RunningAnvil> {
  const stateArgs = stateDir ? ['--state', devnetStateFile(stateDir, chainId)] : [];
  const args = [
    '--chain-id',
    String(chainId),
    '--port',
    String(port),
    '--host',
    host,
    '--silent',
    '--disable-code-size-limit',
    ...stateArgs,
    ...extraArgs,
  ];
  const child = spawn(binary, args, { detached: false, stdio: ['ignore', 'ignore', 'pipe'] });
  liveChildren.add(child);
  if (stateDir) statefulChildren.add(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4_000);
  });
  let spawnError: Error | null = null;
  child.once('error', (err) => {
    spawnError = err;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => liveChildren.delete(child));
  if (stateDir && child.pid !== undefined) {
    // Lets the next start find this anvil if this process dies without stopping it.
    writeFileSync(pidFile(stateDir, chainId), String(child.pid));
    void exited.then(() => rmSync(pidFile(stateDir, chainId), { force: true }));
  }

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    // With a state file, anvil writes the chain's state before it exits: give it the time.
    const graceMs = stateDir ? 15_000 : 3_000;
    const done = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
    if (!done) {
      child.kill('SIGKILL');
      await exited;
    }
  };

  const rpcUrl = `http://${host}:${port}`;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (spawnError) throw new Error(`Could not start anvil (${binary}): ${(spawnError as Error).message}`);
    if (child.exitCode !== null || child.signalCode !== null) {
      // Lost a race for the port with another program after the check in startDevnet.
      if (/address already in use/i.test(stderr)) throw new DevnetPortInUseError([{ port, chainId }], host);
      throw new Error(
        `anvil for chain ${chainId} on port ${port} exited (${child.exitCode ?? child.signalCode}): ${stderr.trim()}`,
      );
    }
    const answered = await rpcChainId(rpcUrl);
    if (answered !== null) {
      if (answered !== chainId) {
        await stop();
        throw new Error(
          `Port ${port} answers as chain ${answered}, expected ${chainId} (another node there?)`,
        );
      }
      return { chainId, port, rpcUrl, child, stop };
    }
    if (performance.now() > deadline) {
      await stop();
      throw new Error(
        `anvil for chain ${chainId} did not answer on ${rpcUrl} within ${timeoutMs} ms: ${stderr.trim()}`,
      );
    }
    await sleep(25);
  }
}
