// Deploying the devnet's plan on a chain (or checking a chain restored from its saved state),
// moving its tokens to their real addresses, the EntryPoint and the chain's bundler.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import {
  concat,
  createPublicClient,
  createTestClient,
  createWalletClient,
  getContractAddress,
  http,
  isHex,
  parseAbi,
  parseEther,
  toHex,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type TestClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { artifact, DEVNET_DIR, type Artifacts } from '../../devnet/compile.ts';
import { chainDefinition } from '../adapters/chain/viem.ts';
import { startDevnetBundler, type DevnetBundler } from './bundler.ts';
import {
  type DevnetContracts,
  type DevnetToken,
  type DeployedKey,
  type Deployment,
  type VendorArtifact,
  deploymentPlan,
  placedAt,
  DEVNET_DEPLOYER_PRIVATE_KEY,
  DEVNET_BUNDLER_PRIVATE_KEY,
  DEVNET_BUNDLER_BALANCE,
  ENTRY_POINT_V07,
  CREATE2_DEPLOYER,
  ENTRY_POINT_V07_SALT,
} from './plan.ts';
import { type RunningAnvil } from './anvil.ts';

/**
 * Storage slots a relocated token carries from where it was deployed (its constructor writes
 * only the first few: name, symbol). Long strings (over 31 bytes) would live elsewhere: none of
 * the devnet's tokens has one.
 */
export const RELOCATED_SLOTS = 8;

/**
 * A devnet state saved by a version that kept its tokens at their deployment addresses: the
 * contracts around them (pools, bridges, ramps) and the ledger name those addresses, so the
 * state cannot be moved; the devnet and its database are reset together.
 */
export class DevnetOutdatedStateError extends Error {
  constructor(
    readonly chainId: number,
    symbol: string,
    at: Address,
    canonical: Address,
  ) {
    super(
      `Chain ${chainId}: the saved devnet state keeps ${symbol} at its deployment address ${at}; ` +
        `this version places it at the real chain's address ${canonical}, and contracts and balances ` +
        'saved with the old address cannot follow it.',
    );
    this.name = 'DevnetOutdatedStateError';
  }
}

/** Creation code and (constructor) ABI of a vendored artifact, read from devnet/vendor/. */
export function vendorCreationCode(v: VendorArtifact): { abi: Abi; bytecode: Hex } {
  const path = join(DEVNET_DIR, 'vendor', v.file);
  const json = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  const code = json[v.creationCodeField];
  const ctor = json[v.constructorField];
  if (typeof code !== 'string' || !isHex(code) || code.length <= 2 || typeof ctor !== 'string') {
    throw new Error(
      `${path}: no creation code in "${v.creationCodeField}" or constructor in "${v.constructorField}"`,
    );
  }
  return { abi: parseAbi([ctor]), bytecode: code };
}

/** Creation code and ABI of a deployment: compiled here, from an npm package's build artifact, or vendored. */
export function creationCode(artifacts: Artifacts, d: Deployment): { abi: Abi; bytecode: Hex } {
  if (d.vendorArtifact) return vendorCreationCode(d.vendorArtifact);
  if (!d.npmArtifact) return artifact(artifacts, d.contract);
  const require = createRequire(import.meta.url);
  const json = require(d.npmArtifact) as { abi: Abi; bytecode: string };
  const hex = json.bytecode.startsWith('0x') ? json.bytecode : `0x${json.bytecode}`;
  return { abi: json.abi, bytecode: hex as Hex };
}

/** What a chain's plan put where: its contracts, tokens and price feeds. */
export interface DeployedChain {
  contracts: DevnetContracts;
  tokens: DevnetToken[];
  priceFeeds: Record<string, Address>;
}

export async function deployChain(
  anvil: RunningAnvil,
  artifacts: Artifacts,
  loadedState: boolean,
  log: (message: string) => void,
  planLength?: number,
): Promise<DeployedChain> {
  const chain = chainDefinition(anvil.chainId, anvil.rpcUrl);
  const transport = http(anvil.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 20 });
  const account = privateKeyToAccount(DEVNET_DEPLOYER_PRIVATE_KEY);
  const wallet = createWalletClient({ account, chain, transport });
  const testClient = createTestClient({ mode: 'anvil', chain, transport });

  const plan = deploymentPlan(anvil.chainId).slice(0, planLength);
  const startNonce = await publicClient.getTransactionCount({ address: account.address });
  if (startNonce !== 0 && !loadedState) {
    throw new Error(
      `Chain ${anvil.chainId}: deployer already has nonce ${startNonce}; devnet needs a fresh anvil`,
    );
  }
  if (startNonce > plan.length) {
    throw new Error(
      `Chain ${anvil.chainId}: the saved state has ${startNonce} deployments, more than this version's ` +
        `${plan.length}; it comes from a newer Purser. Delete the devnet state to start over.`,
    );
  }

  const contracts: Partial<Record<DeployedKey, Address>> = {};
  const tokens: DevnetToken[] = [];
  const priceFeeds: Record<string, Address> = {};
  for (const [nonce, d] of plan.entries()) {
    if (d.call !== undefined) {
      if (nonce < startNonce) {
        if (!(await d.done(publicClient, contracts))) {
          throw new Error(
            `Chain ${anvil.chainId}: the saved state lacks the deployer's call "${d.call}"; delete the devnet state to start over`,
          );
        }
        continue;
      }
      const hash = await wallet.sendTransaction({
        to: d.to(contracts),
        data: d.data,
        nonce,
        gas: 1_000_000n,
      });
      const receipt = await publicClient.waitForTransactionReceipt({
        hash,
        pollingInterval: 20,
        timeout: 30_000,
      });
      if (receipt.status !== 'success') throw new Error(`Chain ${anvil.chainId}: "${d.call}" failed`);
      continue;
    }
    const deployedAt = getContractAddress({ from: account.address, nonce: BigInt(nonce) });
    const at = placedAt(anvil.chainId, d, deployedAt);
    if (nonce < startNonce) {
      // A chain loaded from its state file: what its earlier runs deployed is there.
      const onChain = await publicClient.getCode({ address: at });
      if ((onChain?.length ?? 0) <= 2) {
        if (at !== deployedAt && ((await publicClient.getCode({ address: deployedAt }))?.length ?? 0) > 2) {
          throw new DevnetOutdatedStateError(anvil.chainId, d.token?.symbol ?? d.contract, deployedAt, at);
        }
        throw new Error(
          `Chain ${anvil.chainId}: the saved state has no ${d.contract} at ${at}; delete the devnet state to start over`,
        );
      }
      if (d.upgradeInPlace) {
        const built = artifact(artifacts, d.contract).deployedBytecode;
        if (onChain?.toLowerCase() !== built.toLowerCase()) {
          await testClient.setCode({ address: at, bytecode: built });
          log(
            `devnet chain ${anvil.chainId}: ${d.contract} at ${at} had the code of an earlier version; ` +
              'replaced it with the current build (storage kept)',
          );
        }
      }
    } else {
      // Fresh, or a saved state from before this deployment was appended to the plan.
      const code = creationCode(artifacts, d);
      const hash = await wallet.deployContract({
        abi: code.abi,
        bytecode: code.bytecode,
        args: typeof d.args === 'function' ? d.args(contracts) : d.args,
        nonce,
        gas: 15_000_000n,
      });
      const receipt = await publicClient.waitForTransactionReceipt({
        hash,
        pollingInterval: 20,
        timeout: 30_000,
      });
      if (
        receipt.status !== 'success' ||
        receipt.contractAddress?.toLowerCase() !== deployedAt.toLowerCase()
      ) {
        throw new Error(`Chain ${anvil.chainId}: deploying ${d.contract} failed (${receipt.status})`);
      }
      if (at !== deployedAt) await relocate(publicClient, testClient, deployedAt, at);
    }
    contracts[d.key] = at;
    if (d.token) tokens.push({ ...d.token, address: at });
    if (d.feed) priceFeeds[d.feed] = at;
  }
  return { contracts: contracts as DevnetContracts, tokens, priceFeeds };
}

/**
 * Moves a just-deployed contract to `to`: its runtime code (immutables included) and the first
 * storage slots its constructor wrote, then empties `from`, so one copy exists. Only for
 * contracts whose code does not depend on its own address (the devnet's tokens compute their
 * EIP-712 domain from `address(this)` at each call).
 */
export async function relocate(
  publicClient: PublicClient,
  testClient: TestClient,
  from: Address,
  to: Address,
): Promise<void> {
  const code = await publicClient.getCode({ address: from });
  if (!code || code.length <= 2) throw new Error(`devnet: nothing to relocate at ${from}`);
  await testClient.setCode({ address: to, bytecode: code });
  for (let slot = 0; slot < RELOCATED_SLOTS; slot++) {
    const index = toHex(slot, { size: 32 });
    const value = await publicClient.getStorageAt({ address: from, slot: index });
    if (value && BigInt(value) !== 0n) {
      await testClient.setStorageAt({ address: to, index, value });
      await testClient.setStorageAt({ address: from, index, value: toHex(0, { size: 32 }) });
    }
  }
  await testClient.setCode({ address: from, bytecode: '0x' });
}

/** Creation code of EntryPoint v0.7, or null when @account-abstraction/contracts is not installed. */
export function entryPointBytecode(): Hex | null {
  try {
    const require = createRequire(import.meta.url);
    const json = require('@account-abstraction/contracts/artifacts/EntryPoint.json') as { bytecode: Hex };
    return json.bytecode;
  } catch {
    return null;
  }
}

/** Deploys EntryPoint v0.7 through the CREATE2 deployer (from a throwaway key: the deployer's nonces stay untouched). */
export async function deployEntryPoint(anvil: RunningAnvil, bytecode: Hex): Promise<Address> {
  const chain = chainDefinition(anvil.chainId, anvil.rpcUrl);
  const transport = http(anvil.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 20 });
  const hasCode = async (address: Address) => ((await publicClient.getCode({ address }))?.length ?? 0) > 2;
  if (await hasCode(ENTRY_POINT_V07)) return ENTRY_POINT_V07;
  if (!(await hasCode(CREATE2_DEPLOYER))) {
    throw new Error(`Chain ${anvil.chainId}: no CREATE2 deployer at ${CREATE2_DEPLOYER}`);
  }
  const sender = privateKeyToAccount(generatePrivateKey());
  await createTestClient({ mode: 'anvil', chain, transport }).setBalance({
    address: sender.address,
    value: parseEther('10'),
  });
  const wallet = createWalletClient({ account: sender, chain, transport });
  const hash = await wallet.sendTransaction({
    to: CREATE2_DEPLOYER,
    data: concat([ENTRY_POINT_V07_SALT, bytecode]),
    gas: 10_000_000n,
  });
  const receipt = await publicClient.waitForTransactionReceipt({
    hash,
    pollingInterval: 20,
    timeout: 30_000,
  });
  if (receipt.status !== 'success' || !(await hasCode(ENTRY_POINT_V07))) {
    throw new Error(`Chain ${anvil.chainId}: EntryPoint v0.7 did not land at ${ENTRY_POINT_V07}`);
  }
  return ENTRY_POINT_V07;
}

/** The chain's devnet bundler, its submitting key topped up first (a chain loaded from state spent some). */
export async function startChainBundler(anvil: RunningAnvil): Promise<DevnetBundler> {
  const chain = chainDefinition(anvil.chainId, anvil.rpcUrl);
  const transport = http(anvil.rpcUrl, { retryCount: 0 });
  const address = privateKeyToAccount(DEVNET_BUNDLER_PRIVATE_KEY).address;
  const balance = await createPublicClient({ chain, transport }).getBalance({ address });
  if (balance < DEVNET_BUNDLER_BALANCE / 2n) {
    await createTestClient({ mode: 'anvil', chain, transport }).setBalance({
      address,
      value: DEVNET_BUNDLER_BALANCE,
    });
  }
  return startDevnetBundler({
    chainId: anvil.chainId,
    rpcUrl: anvil.rpcUrl,
    privateKey: DEVNET_BUNDLER_PRIVATE_KEY,
  });
}
