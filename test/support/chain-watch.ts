// What the chain watcher's tests and benchmark share: an anvil of their own (a reorganization
// must not touch the shared devnet), a spray token on it (one transaction mints to many holders),
// and the watcher's dependencies over a database.

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, http, type Abi, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createViemChainPort } from '../../src/adapters/chain/viem.ts';
import { chainDefinition } from '../../src/adapters/chain/viem.ts';
import type { ChainWatchConfig } from '../../src/config.ts';
import type { Clock } from '../../src/core/clock.ts';
import type { Db } from '../../src/core/db/database.ts';
import { anvilBinaryPath } from '../../src/devnet/devnet.ts';
import type { WatchDeps } from '../../src/modules/chainwatch/index.ts';
import { buildTokenRegistry } from '../../src/modules/registry/index.ts';
import { freePort } from './throwaway-postgres.ts';
import { artifact, loadArtifacts } from '../../devnet/compile.ts';

/** Anvil's default account #0 (the public "test … junk" mnemonic): the deployer on a private anvil. */
const DEPLOYER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const;

/** A watcher configuration for tests: no confirmations, no grace period, one minute per run. */
export function watchConfig(overrides: Partial<ChainWatchConfig> = {}): ChainWatchConfig {
  return {
    enabled: true,
    confirmations: { 8453: 0, 84532: 0, 137: 0 },
    graceMs: 0,
    maxRange: 2_000,
    everySeconds: 2,
    runBudgetMs: 60_000,
    reconcileEverySeconds: 10,
    faultCrash: false,
    ...overrides,
  };
}

export interface PrivateAnvil {
  rpcUrl: string;
  chainId: number;
  rpc(method: string, params?: unknown[]): Promise<unknown>;
  stop(): Promise<void>;
}

/** An anvil of the caller's own, as chain `chainId` (automine). */
export async function privateAnvil(chainId = 8453): Promise<PrivateAnvil> {
  const port = await freePort();
  const child = spawn(
    anvilBinaryPath(),
    ['--port', String(port), '--chain-id', String(chainId), '--silent'],
    { stdio: 'ignore' },
  );
  const rpcUrl = `http://127.0.0.1:${port}`;
  const rpc = async (method: string, params: unknown[] = []) => {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await res.json()) as { result?: unknown; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  };
  for (let i = 0; ; i += 1) {
    try {
      await rpc('eth_chainId');
      break;
    } catch (err) {
      if (i > 200) {
        child.kill('SIGKILL');
        throw err;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    rpcUrl,
    chainId,
    rpc,
    stop: async () => {
      child.kill('SIGKILL');
    },
  };
}

export interface SprayToken {
  address: Address;
  abi: Abi;
  /** Mints `amount` to each of `holders`, in transactions of at most `perTx` holders. */
  spray(holders: Address[], amount: bigint, perTx?: number): Promise<Hex[]>;
}

/** Deploys the spray token (test/contracts/SprayToken.sol) on `anvil`. */
export async function deploySpray(anvil: PrivateAnvil): Promise<SprayToken> {
  const built = artifact(
    await loadArtifacts({
      sourceDir: join(import.meta.dirname, '..', 'contracts'),
      buildDir: join(import.meta.dirname, '..', 'contracts', 'build'),
    }),
    'SprayToken',
  );
  const chain = chainDefinition(anvil.chainId, anvil.rpcUrl);
  const transport = http(anvil.rpcUrl, { retryCount: 0 });
  const wallet = createWalletClient({ chain, transport, account: privateKeyToAccount(DEPLOYER_KEY) });
  const client = createPublicClient({ chain, transport, pollingInterval: 20 });
  const deployed = await client.waitForTransactionReceipt({
    hash: await wallet.deployContract({ abi: built.abi, bytecode: built.bytecode }),
  });
  const address = deployed.contractAddress!;
  return {
    address,
    abi: built.abi,
    spray: async (holders, amount, perTx = 400) => {
      const hashes: Hex[] = [];
      for (let i = 0; i < holders.length; i += perTx) {
        const hash = await wallet.writeContract({
          address,
          abi: built.abi,
          functionName: 'spray',
          args: [holders.slice(i, i + perTx), amount],
          gas: 30_000_000n,
        });
        hashes.push(hash);
      }
      for (const hash of hashes) {
        const r = await client.waitForTransactionReceipt({ hash });
        if (r.status !== 'success') throw new Error(`spray ${hash} reverted`);
      }
      return hashes;
    },
  };
}

/** The watcher's dependencies over a private anvil whose USDC (chain 8453) is `usdc`. */
export function privateWatchDeps(
  anvil: PrivateAnvil,
  usdc: Address,
  db: Db,
  clock: Clock,
  config: Partial<ChainWatchConfig> = {},
): WatchDeps {
  return {
    db,
    clock,
    chain: createViemChainPort({ rpcUrls: { [anvil.chainId]: anvil.rpcUrl } }),
    registry: buildTokenRegistry('development', { [anvil.chainId]: { USDC: usdc } }),
    config: { chainWatch: watchConfig(config), executorAddress: null, pm: { chainId: 137 } },
  };
}
