// Kernel v3.1 accounts on the devnet, as the ZeroDev SDK makes them (the address derivation is
// src/modules/delegations/kernel-account.ts; src/modules/dev/kernel-accounts.test.ts checks it
// against the SDK): reading whether one is deployed, and deploying it. Development and tests.

import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  parseEther,
  type Address,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { chainDefinition } from '../adapters/chain/viem.ts';
import {
  counterfactualKernelAccount,
  type CounterfactualAccount,
  type KernelDeployment,
} from '../modules/delegations/kernel-account.ts';
import { devnetChain, type DevnetInfo } from './devnet.ts';

export interface KernelAccount extends CounterfactualAccount {
  chainId: number;
  deployed: boolean;
  implementation: Address;
  /** The root validator: the devnet's ECDSA validator module, with `owner` as its signer. */
  ecdsaValidator: Address;
}

/** The Kernel v3.1 deployment of a devnet chain (Base and Base Sepolia have one). */
export function devnetKernelDeployment(devnet: DevnetInfo, chainId: number): KernelDeployment {
  const {
    kernelFactory: factory,
    kernelImplementation: implementation,
    kernelEcdsaValidator: ecdsaValidator,
  } = devnetChain(devnet, chainId).contracts;
  if (!factory || !implementation || !ecdsaValidator) {
    throw new Error(`Devnet chain ${chainId} has no Kernel v3.1 (only Base and Base Sepolia do)`);
  }
  return { factory, implementation, ecdsaValidator };
}

/** The Kernel account of `owner` at `index` on a devnet chain: its address, and whether it has code. */
export async function devnetKernelAccount(
  devnet: DevnetInfo,
  chainId: number,
  owner: Address,
  index = 0n,
): Promise<KernelAccount> {
  const deployment = devnetKernelDeployment(devnet, chainId);
  const account = counterfactualKernelAccount(deployment, owner, index);
  const client = createPublicClient({
    transport: http(devnetChain(devnet, chainId).rpcUrl, { retryCount: 0 }),
  });
  const code = await client.getCode({ address: account.address });
  return {
    ...account,
    chainId,
    deployed: (code?.length ?? 0) > 2,
    implementation: deployment.implementation,
    ecdsaValidator: deployment.ecdsaValidator,
  };
}

/** Deploys the account through the factory (from a throwaway funded key) unless it has code already. */
export async function deployDevnetKernelAccount(
  devnet: DevnetInfo,
  account: KernelAccount,
): Promise<Hex | null> {
  if (account.deployed) return null;
  const chain = devnetChain(devnet, account.chainId);
  const viemChain = chainDefinition(chain.chainId, chain.rpcUrl);
  const transport = http(chain.rpcUrl, { retryCount: 0 });
  const sender = privateKeyToAccount(generatePrivateKey());
  await createTestClient({ mode: 'anvil', chain: viemChain, transport }).setBalance({
    address: sender.address,
    value: parseEther('1'),
  });
  const hash = await createWalletClient({ account: sender, chain: viemChain, transport }).sendTransaction({
    to: account.factory,
    data: account.factoryData,
    gas: 2_000_000n,
  });
  const client = createPublicClient({ chain: viemChain, transport, pollingInterval: 20 });
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20, timeout: 30_000 });
  if (
    receipt.status !== 'success' ||
    ((await client.getCode({ address: account.address }))?.length ?? 0) <= 2
  ) {
    throw new Error(`Deploying the Kernel account ${account.address} on chain ${account.chainId} failed`);
  }
  return hash;
}

/** The devnet's Kernel deployment and modules on a chain, named as the delegations config names them. */
export interface DevnetKernelModules {
  factory: Address;
  implementation: Address;
  ecdsaSigner: Address;
  callPolicy: Address;
  timestampPolicy: Address;
  rateLimitPolicy: Address;
  ecdsaValidator: Address;
}

/**
 * The module addresses delegations use, with the devnet's own Kernel and modules on every devnet
 * chain that has them all, except chains whose addresses the operator set (`KERNEL_MODULES_<chainId>`).
 */
export function withDevnetKernelModules<M extends object>(
  modules: Record<number, M>,
  configuredChains: readonly number[],
  devnet: DevnetInfo,
): Record<number, M | (M & DevnetKernelModules)> {
  const out: Record<number, M | (M & DevnetKernelModules)> = { ...modules };
  for (const chain of Object.values(devnet.chains)) {
    const c = chain.contracts;
    if (configuredChains.includes(chain.chainId)) continue;
    if (
      !c.kernelFactory ||
      !c.kernelImplementation ||
      !c.kernelEcdsaSigner ||
      !c.kernelCallPolicy ||
      !c.kernelTimestampPolicy ||
      !c.kernelRateLimitPolicy ||
      !c.kernelEcdsaValidator
    ) {
      continue;
    }
    out[chain.chainId] = {
      ...(modules[chain.chainId] ?? ({} as M)),
      factory: c.kernelFactory,
      implementation: c.kernelImplementation,
      ecdsaSigner: c.kernelEcdsaSigner,
      callPolicy: c.kernelCallPolicy,
      timestampPolicy: c.kernelTimestampPolicy,
      rateLimitPolicy: c.kernelRateLimitPolicy,
      ecdsaValidator: c.kernelEcdsaValidator,
    };
  }
  return out;
}
