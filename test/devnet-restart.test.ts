// `npm start` on its embedded default across restarts and port clashes, as a user meets it: the
// real service as a child process with its devnet (one chain, to keep it light) and PGlite in a
// data directory of its own.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createPublicClient,
  createTestClient,
  erc20Abi,
  getContractAddress,
  http as viemHttp,
  toHex,
  type Address,
} from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { DEVNET_DEPLOYER, startDevnet } from '../src/devnet/devnet.ts';
import { http, startServiceProcess, waitUntilReady, type ServiceProcess } from './support/service-process.ts';
import { spawn } from 'node:child_process';
import { REPO_ROOT, serviceEnv } from './support/service-process.ts';

const CHAIN = 84532;

async function holdPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      if (addr && typeof addr === 'object') resolve(addr.port);
    });
  });
  return { server, port };
}

/** Moves a contract's code and first storage slots to another address over anvil's RPC. */
async function moveContract(rpcUrl: string, from: Address, to: Address): Promise<void> {
  const transport = viemHttp(rpcUrl, { retryCount: 0 });
  const client = createPublicClient({ transport });
  const test = createTestClient({ mode: 'anvil', transport });
  const code = await client.getCode({ address: from });
  if (!code) throw new Error(`no code at ${from}`);
  await test.setCode({ address: to, bytecode: code });
  for (let slot = 0; slot < 8; slot++) {
    const index = toHex(slot, { size: 32 });
    const value = await client.getStorageAt({ address: from, slot: index });
    if (value) await test.setStorageAt({ address: to, index, value });
  }
  await test.setCode({ address: from, bytecode: '0x' });
}

/** Runs `purser serve` expecting it to stop at start; resolves with its exit code and output. */
function failedStart(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      cwd: REPO_ROOT,
      env: serviceEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('a busy devnet port', () => {
  it('startDevnet refuses with a message naming the port and DEVNET_BASE_PORT', async () => {
    const { server, port } = await holdPort();
    try {
      const started = startDevnet({ chainIds: [CHAIN], basePort: port, entryPoint: false });
      await expect(started).rejects.toThrow(
        new RegExp(
          `Devnet port ${port} \\(chain ${CHAIN}\\) on 127\\.0\\.0\\.1 is already in use.*DEVNET_BASE_PORT`,
        ),
      );
    } finally {
      server.close();
    }
  });

  it('`purser serve` exits with that message, no stack trace, and leaves nothing running', async () => {
    const { server, port } = await holdPort();
    const dataDir = mkdtempSync(join(tmpdir(), 'purser-port-'));
    try {
      const { code, output } = await failedStart({
        DEVNET: 'true',
        DEVNET_CHAINS: String(CHAIN),
        DEVNET_BASE_PORT: String(port),
        PURSER_DATA_DIR: dataDir,
      });
      expect(code, output).not.toBe(0);
      expect(output).toContain(`Devnet port ${port} (chain ${CHAIN}) on 127.0.0.1 is already in use`);
      expect(output).toContain('Set DEVNET_BASE_PORT to another port');
      expect(output).not.toMatch(/^\s+at /m); // no stack frames
      expect(output).not.toMatch(/viem|Details:|Version: viem/);
    } finally {
      server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('a busy API port', () => {
  it('`purser serve` says so before it migrates or starts a devnet, and exits', async () => {
    const { server, port } = await holdPort();
    const dataDir = mkdtempSync(join(tmpdir(), 'purser-api-port-'));
    try {
      const { code, output } = await failedStart({
        PORT: String(port),
        DEVNET: 'true',
        DEVNET_CHAINS: String(CHAIN),
        DEVNET_BASE_PORT: '0',
        PURSER_DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
      });
      expect(code, output).not.toBe(0);
      expect(output).toContain(`Port ${port} on 127.0.0.1 is already in use`);
      expect(output).toContain('Set PORT to another port, or PORT=0 to pick a free one');
      expect(output).not.toMatch(/^\s+at /m); // no stack frames
      // Nothing was started first: no migration, no devnet chain.
      expect(output).not.toMatch(/migrations applied|devnet chain/);
    } finally {
      server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('restarts keep the ledger and the devnet together', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'purser-restart-'));
  const running: ServiceProcess[] = [];
  afterAll(async () => {
    for (const s of running) await s.stop('SIGKILL');
    killLeftoverAnvil();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function killLeftoverAnvil(): number | null {
    try {
      const pid = Number(readFileSync(join(dataDir, 'devnet', `chain-${CHAIN}.pid`), 'utf8'));
      process.kill(pid, 'SIGKILL');
      return pid;
    } catch {
      return null;
    }
  }

  const env = {
    DEVNET: 'true',
    DEVNET_CHAINS: String(CHAIN),
    DEVNET_BASE_PORT: '0',
    PURSER_DATA_DIR: dataDir,
    RUN_WORKERS: 'false',
  };

  async function start(): Promise<{ service: ServiceProcess; rpcUrl: string }> {
    const service = await startServiceProcess({ env: { ...env, LOG_LEVEL: 'info' }, startTimeoutMs: 90_000 });
    running.push(service);
    await waitUntilReady(service);
    const line = await service.waitForLine((l) => l.includes('Devnet chains:'), 5_000);
    const rpcUrl = new RegExp(`${CHAIN} (http://\\S+)`).exec(line)?.[1];
    if (!rpcUrl) throw new Error(`no devnet URL in: ${line}`);
    return { service, rpcUrl };
  }

  const address: Address = '0x00000000000000000000000000000000000a11ce';

  async function registryUsdc(service: ServiceProcess): Promise<Address> {
    const tokens = JSON.parse((await http(`${service.url}/v1/tokens?chain_id=${CHAIN}`)).text) as {
      chains: { tokens: { symbol: string; address: Address }[] }[];
    };
    const usdc = tokens.chains[0]?.tokens.find((t) => t.symbol === 'USDC')?.address;
    if (!usdc) throw new Error('no USDC in the registry');
    return usdc;
  }

  async function usdcOf(service: ServiceProcess, rpcUrl: string, holder: Address): Promise<bigint> {
    const client = createPublicClient({ transport: viemHttp(rpcUrl, { retryCount: 0 }) });
    const usdc = await registryUsdc(service);
    return client.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [holder] });
  }

  it('a faucet payment survives a clean stop (SIGTERM) and a start on the same data directory', async () => {
    const first = await start();
    const funded = await http(`${first.service.url}/v1/dev/faucet`, {
      method: 'POST',
      body: { chain_id: CHAIN, address, tokens: [{ symbol: 'USDC', amount: '5000000' }] },
    });
    expect(funded.status, funded.text).toBe(200);
    expect(await usdcOf(first.service, first.rpcUrl, address)).toBe(5_000_000n);
    expect((await first.service.stop('SIGTERM')).code).toBe(0);

    const second = await start();
    expect(await usdcOf(second.service, second.rpcUrl, address)).toBe(5_000_000n);
    // The chain goes on from where it was: a second payment adds to the first.
    await http(`${second.service.url}/v1/dev/faucet`, {
      method: 'POST',
      body: { chain_id: CHAIN, address, tokens: [{ symbol: 'USDC', amount: '1000000' }] },
    });
    expect(await usdcOf(second.service, second.rpcUrl, address)).toBe(6_000_000n);
  }, 300_000);

  it('after kill -9 of the service alone, its still-running anvil hands over the latest chain state', async () => {
    const second = running.at(-1)!;
    expect((await second.stop('SIGKILL')).signal).toBe('SIGKILL');
    const third = await start();
    expect(third.service.output.join('\n')).toContain('left running');
    expect(await usdcOf(third.service, third.rpcUrl, address), third.service.tail(50)).toBe(6_000_000n);
  }, 300_000);

  it('after kill -9 of the service and its chain, the start refuses and says how to reset both', async () => {
    const third = running.at(-1)!;
    expect((await third.stop('SIGKILL')).signal).toBe('SIGKILL');
    expect(killLeftoverAnvil()).not.toBeNull();
    const refused = await failedStart(env);
    expect(refused.code, refused.output).not.toBe(0);
    expect(refused.output).toContain("The devnet's saved chain state does not match the database");
    expect(refused.output).toContain(`chain ${CHAIN} was not stopped cleanly last time`);
    expect(refused.output).toContain(`rm -rf ${dataDir}`);
    expect(refused.output).not.toMatch(/^\s+at /m);

    // Following the advice starts over with both empty.
    rmSync(dataDir, { recursive: true, force: true });
    const fresh = await start();
    expect(await usdcOf(fresh.service, fresh.rpcUrl, address)).toBe(0n);
    expect((await fresh.service.stop('SIGTERM')).code).toBe(0);
  }, 300_000);

  it('a data directory saved while the devnet kept USDC at its deployment address: the start says how to reset', async () => {
    const { service, rpcUrl } = await start();
    const canonical: Address = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
    expect(await registryUsdc(service)).toBe(canonical);
    // Put the chain back as an earlier version saved it: USDC where the deployer's first
    // transaction created it, nothing at Base Sepolia's USDC address.
    await moveContract(rpcUrl, canonical, getContractAddress({ from: DEVNET_DEPLOYER, nonce: 0n }));
    expect((await service.stop('SIGTERM')).code).toBe(0);

    const refused = await failedStart(env);
    expect(refused.code, refused.output).not.toBe(0);
    expect(refused.output).toContain(
      `Chain ${CHAIN}: the saved devnet state keeps USDC at its deployment address`,
    );
    expect(refused.output).toContain(`rm -rf ${dataDir}`);
    expect(refused.output).not.toMatch(/^\s+at /m);
  }, 300_000);
});
