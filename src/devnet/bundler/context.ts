// What the devnet bundler's parts share: its chain's JSON-RPC (a public client, and raw requests),
// the submitting account and its wallet client, the EntryPointSimulations code, and the
// operations this process submitted until the chain shows them.

import { createRequire } from 'node:module';
import { createPublicClient, createWalletClient, http, type Abi, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { chainDefinition } from '../../adapters/chain/viem.ts';
import type { Op } from './protocol.ts';

/** EntryPointSimulations (@account-abstraction/contracts 0.7.0): deployed code and ABI. */
function simulationsArtifact(): { abi: Abi; code: Hex } {
  const require = createRequire(import.meta.url);
  const json = require('@account-abstraction/contracts/artifacts/EntryPointSimulations.json') as {
    abi: Abi;
    deployedBytecode: Hex;
  };
  return { abi: json.abi, code: json.deployedBytecode };
}

/** The clients and state of a bundler serving `chainId` at `rpcUrl`, submitting with `privateKey`. */
export function createBundlerContext(chainId: number, rpcUrl: string, privateKey: Hex) {
  const chain = chainDefinition(chainId, rpcUrl);
  const transport = http(rpcUrl, { retryCount: 0 });
  const client = createPublicClient({ chain, transport, pollingInterval: 20 });
  const account = privateKeyToAccount(privateKey);
  const wallet = createWalletClient({ account, chain, transport });
  const simulations = simulationsArtifact();
  /** Operations submitted by this process, until the chain shows them (lookups before inclusion). */
  const submitted = new Map<Hex, Op>();

  const rpc = <T>(method: string, params: unknown[]): Promise<T> =>
    client.request({ method: method as never, params: params as never }) as Promise<T>;

  return { chainId, client, account, wallet, simulations, submitted, rpc };
}

export type BundlerContext = ReturnType<typeof createBundlerContext>;
