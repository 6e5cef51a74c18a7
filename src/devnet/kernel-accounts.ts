// Kernel v3.1 accounts on the devnet, as the ZeroDev SDK makes them: the factory's
// `createAccount(initData, salt)` with `initData = initialize(0x01‖ECDSA validator, no hook,
// owner, 0x, [])` and `salt = index` as 32 bytes, so the counterfactual address here is the one
// `createKernelAccount({index, useMetaFactory: false, factoryAddress, accountImplementationAddress})`
// computes (src/devnet/kernel-accounts.test.ts checks it against the SDK). Development and tests.

import {
  concat,
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  http,
  parseAbi,
  parseEther,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { chainDefinition } from '../adapters/chain/viem.ts';
import { devnetChain, type DevnetInfo } from './devnet.ts';

const kernelInitAbi = parseAbi([
  'function initialize(bytes21 _rootValidator, address hook, bytes validatorData, bytes hookData, bytes[] initConfig)',
]);
const kernelFactoryAbi = parseAbi([
  'function createAccount(bytes data, bytes32 salt) payable returns (address)',
  'function getAddress(bytes data, bytes32 salt) view returns (address)',
]);

export interface KernelAccount {
  chainId: number;
  address: Address;
  owner: Address;
  index: bigint;
  deployed: boolean;
  factory: Address;
  implementation: Address;
  /** The root validator: the devnet's ECDSA validator module, with `owner` as its signer. */
  ecdsaValidator: Address;
  /** `createAccount` calldata for the factory: what a first UserOperation's initCode carries. */
  factoryData: Hex;
}

/** Kernel's `initialize` data for an account whose root validator is `validator` with `owner`. */
export function kernelInitData(validator: Address, owner: Address): Hex {
  return encodeFunctionData({
    abi: kernelInitAbi,
    functionName: 'initialize',
    // Validation id: type 0x01 (a validator module) followed by its address.
    args: [concat(['0x01', validator]), zeroAddress, owner, '0x', []],
  });
}

/** The Kernel account of `owner` at `index` on a devnet chain: its address, and whether it has code. */
export async function devnetKernelAccount(
  devnet: DevnetInfo,
  chainId: number,
  owner: Address,
  index = 0n,
): Promise<KernelAccount> {
  const chain = devnetChain(devnet, chainId);
  const {
    kernelFactory: factory,
    kernelImplementation: implementation,
    kernelEcdsaValidator: validator,
  } = chain.contracts;
  if (!factory || !implementation || !validator) {
    throw new Error(`Devnet chain ${chainId} has no Kernel v3.1 (only Base and Base Sepolia do)`);
  }
  if (index < 0n || index >= 2n ** 256n) throw new RangeError('index must be a uint256');
  const client = createPublicClient({ transport: http(chain.rpcUrl, { retryCount: 0 }) });
  const initData = kernelInitData(validator, owner);
  const salt = toHex(index, { size: 32 });
  const address = await client.readContract({
    address: factory,
    abi: kernelFactoryAbi,
    functionName: 'getAddress',
    args: [initData, salt],
  });
  const code = await client.getCode({ address });
  return {
    chainId,
    address,
    owner,
    index,
    deployed: (code?.length ?? 0) > 2,
    factory,
    implementation,
    ecdsaValidator: validator,
    factoryData: encodeFunctionData({
      abi: kernelFactoryAbi,
      functionName: 'createAccount',
      args: [initData, salt],
    }),
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

/** The five Kernel modules the devnet deployed on a chain, named as the delegations config names them. */
export interface DevnetKernelModules {
  ecdsaSigner: Address;
  callPolicy: Address;
  timestampPolicy: Address;
  rateLimitPolicy: Address;
  ecdsaValidator: Address;
}

/**
 * The module addresses delegations use, with the devnet's own modules on every devnet chain that
 * has all five, except chains whose addresses the operator set (`KERNEL_MODULES_<chainId>`).
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
      ecdsaSigner: c.kernelEcdsaSigner,
      callPolicy: c.kernelCallPolicy,
      timestampPolicy: c.kernelTimestampPolicy,
      rateLimitPolicy: c.kernelRateLimitPolicy,
      ecdsaValidator: c.kernelEcdsaValidator,
    };
  }
  return out;
}
