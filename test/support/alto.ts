// Pimlico's Alto bundler (npm @pimlico/alto, a dev dependency) against a devnet chain, for tests
// that prove the bundler port on a bundler the project did not write. Alto binds 0.0.0.0 (its
// server hard-codes the host); the test picks a free port and stops it afterwards.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ENTRY_POINT_V07 } from '../../src/devnet/devnet.ts';
import { REPO_ROOT } from './service-process.ts';

/** anvil's default accounts #6 and #7: Alto's executor and utility keys (unused elsewhere). */
export const ALTO_EXECUTOR_PRIVATE_KEY = '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e';
export const ALTO_UTILITY_PRIVATE_KEY = '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356';

export const ALTO_BIN = join(REPO_ROOT, 'node_modules', '.bin', 'alto');
export const altoInstalled = existsSync(ALTO_BIN);

export interface RunningAlto {
  url: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '0.0.0.0', () => resolve());
  });
  const addr = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!addr || typeof addr !== 'object') throw new Error('no free port');
  return addr.port;
}

/** Starts Alto on `rpcUrl` and waits until it answers eth_supportedEntryPoints (at most 60 s). */
export async function startAlto(rpcUrl: string): Promise<RunningAlto> {
  const port = await freePort();
  const child = spawn(
    ALTO_BIN,
    [
      '--entrypoints',
      ENTRY_POINT_V07,
      '--rpc-url',
      rpcUrl,
      '--executor-private-keys',
      ALTO_EXECUTOR_PRIVATE_KEY,
      '--utility-private-key',
      ALTO_UTILITY_PRIVATE_KEY,
      '--safe-mode',
      'false',
      '--port',
      String(port),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
  );
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const done = await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]);
    if (!done) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`Alto exited (${child.exitCode}):\n${output}`);
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_supportedEntryPoints', params: [] }),
        signal: AbortSignal.timeout(1_000),
      });
      if (res.ok) return { url, stop };
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  await stop();
  throw new Error(`Alto did not answer on ${url} within 60 s:\n${output}`);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
