// Devnet Safes: a Safe (SafeL2 1.5.0 behind a SafeProxy, from the devnet's own SafeProxyFactory
// on Polygon) made for given owners, and Safe transactions signed by owner keys and sent through
// `execTransaction` — what a Polymarket funder Safe needs on the devnet (approvals, wraps of
// USDC.e into pUSD, owner rotation). Transactions are sent from a throwaway key funded for the
// purpose unless a sender key is given, so parallel tests never race on a shared nonce.
// Development and tests only.

import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  decodeEventLog,
  http,
  parseEther,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { chainDefinition } from '../adapters/chain/viem.ts';
import {
  buildSafeTx,
  ecdsaSafeSignature,
  encodeExecTransaction,
  encodeMultiSendCallOnly,
  encodeSafeSetup,
  packSafeSignatures,
  SAFE_ABI,
  SAFE_PROXY_FACTORY_ABI,
  safeTxHash,
  safeTxTypedData,
  type SafeCall,
  type SafeOperation,
  type SafeTx,
} from '../adapters/safe/safe-tx.ts';
import type { DevnetChain } from './devnet.ts';

function clients(chain: DevnetChain) {
  const viemChain = chainDefinition(chain.chainId, chain.rpcUrl);
  const transport = http(chain.rpcUrl, { retryCount: 0 });
  return {
    viemChain,
    transport,
    publicClient: createPublicClient({ chain: viemChain, transport, pollingInterval: 20 }),
  };
}

function need(
  chain: DevnetChain,
  key:
    | 'safeL2Singleton'
    | 'safeSingleton'
    | 'safeProxyFactory'
    | 'safeFallbackHandler'
    | 'safeMultiSendCallOnly',
): Address {
  const address = chain.contracts[key];
  if (!address)
    throw new Error(`Devnet chain ${chain.chainId} has no ${key} (the Safe contracts are on Polygon, 137)`);
  return address;
}

/** A wallet for `privateKey`, or for a fresh key given 1 ETH of gas money. */
async function senderWallet(chain: DevnetChain, privateKey?: Hex) {
  const { viemChain, transport } = clients(chain);
  const account = privateKeyToAccount(privateKey ?? generatePrivateKey());
  if (!privateKey) {
    await createTestClient({ mode: 'anvil', chain: viemChain, transport }).setBalance({
      address: account.address,
      value: parseEther('1'),
    });
  }
  return createWalletClient({ account, chain: viemChain, transport });
}

async function mined(chain: DevnetChain, hash: Hex, what: string): Promise<TransactionReceipt> {
  const receipt = await clients(chain).publicClient.waitForTransactionReceipt({
    hash,
    pollingInterval: 20,
    timeout: 30_000,
  });
  if (receipt.status !== 'success') throw new Error(`Devnet ${what} (${hash}) reverted`);
  return receipt;
}

export interface CreateDevnetSafeOptions {
  owners: Address[];
  threshold: number;
  /** CREATE2 salt nonce (default random: the same owners get a new Safe each time). */
  saltNonce?: bigint;
  /** `l2` (default, SafeL2: what Polygon Safes use, with execution events) or `l1` (Safe). */
  singleton?: 'l2' | 'l1';
  /** A funded key that sends the creation (default: a fresh key funded for it). */
  senderPrivateKey?: Hex;
}

export interface DevnetSafe {
  address: Address;
  txHash: Hex;
  singleton: Address;
}

/**
 * Deploys a Safe proxy through the devnet's SafeProxyFactory (`createProxyWithNonce` with the
 * `setup` initializer: the owners, the threshold and the CompatibilityFallbackHandler, so the Safe
 * accepts ERC-1155/721 transfers and answers ERC-1271).
 */
export async function createDevnetSafe(
  chain: DevnetChain,
  options: CreateDevnetSafeOptions,
): Promise<DevnetSafe> {
  if (options.owners.length === 0) throw new Error('A Safe needs at least one owner');
  if (options.threshold < 1 || options.threshold > options.owners.length) {
    throw new Error(`Threshold ${options.threshold} is not between 1 and ${options.owners.length}`);
  }
  const singleton = need(chain, options.singleton === 'l1' ? 'safeSingleton' : 'safeL2Singleton');
  const factory = need(chain, 'safeProxyFactory');
  const initializer = encodeSafeSetup({
    owners: options.owners,
    threshold: options.threshold,
    fallbackHandler: need(chain, 'safeFallbackHandler'),
  });
  const saltNonce = options.saltNonce ?? BigInt(generatePrivateKey());
  const wallet = await senderWallet(chain, options.senderPrivateKey);
  const hash = await wallet.writeContract({
    address: factory,
    abi: SAFE_PROXY_FACTORY_ABI,
    functionName: 'createProxyWithNonce',
    args: [singleton, initializer, saltNonce],
  });
  const receipt = await mined(chain, hash, 'Safe creation');
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== factory.toLowerCase()) continue;
    try {
      const event = decodeEventLog({ abi: SAFE_PROXY_FACTORY_ABI, ...log });
      if (event.eventName === 'ProxyCreation') return { address: event.args.proxy, txHash: hash, singleton };
    } catch {
      // another event
    }
  }
  throw new Error(`Devnet Safe creation ${hash} emitted no ProxyCreation`);
}

export interface ExecSafeTransactionOptions {
  safe: Address;
  to: Address;
  data?: Hex;
  value?: bigint;
  /** 0 CALL (default) or 1 DELEGATECALL. */
  operation?: SafeOperation;
  /** Owner keys that sign the SafeTx (at least the threshold; sorted by address when packed). */
  ownerPrivateKeys: Hex[];
  /** A funded key that sends execTransaction (default: a fresh key funded for it). */
  senderPrivateKey?: Hex;
}

export interface ExecutedSafeTransaction {
  txHash: Hex;
  safeTxHash: Hex;
  safeTx: SafeTx;
  receipt: TransactionReceipt;
}

/**
 * Signs the SafeTx (at the Safe's current nonce) with each owner key (EIP-712, v 27/28) and sends
 * `execTransaction` with the signatures sorted by owner address. Throws when the transaction
 * reverts: bad signatures (GS020 too few, GS026 not owners or not in order), or an inner call that
 * failed (with no gas refund set, Safe 1.5.0 reverts with the inner call's revert data).
 */
export async function execSafeTransaction(
  chain: DevnetChain,
  options: ExecSafeTransactionOptions,
): Promise<ExecutedSafeTransaction> {
  const { publicClient } = clients(chain);
  const nonce = await publicClient.readContract({
    address: options.safe,
    abi: SAFE_ABI,
    functionName: 'nonce',
  });
  const safeTx = buildSafeTx({
    to: options.to,
    nonce,
    ...(options.data === undefined ? {} : { data: options.data }),
    ...(options.value === undefined ? {} : { value: options.value }),
    ...(options.operation === undefined ? {} : { operation: options.operation }),
  });
  const typed = safeTxTypedData(chain.chainId, options.safe, safeTx);
  const signatures = await Promise.all(
    options.ownerPrivateKeys.map(async (key) => {
      const owner = privateKeyToAccount(key);
      return ecdsaSafeSignature(owner.address, await owner.signTypedData(typed));
    }),
  );
  const wallet = await senderWallet(chain, options.senderPrivateKey);
  const txHash = await wallet.sendTransaction({
    to: options.safe,
    data: encodeExecTransaction(safeTx, packSafeSignatures(signatures)),
  });
  const receipt = await mined(chain, txHash, 'Safe transaction');
  return { txHash, safeTxHash: safeTxHash(chain.chainId, options.safe, safeTx), safeTx, receipt };
}

/**
 * Several calls from the Safe in one SafeTx, all or nothing: a DELEGATECALL to the devnet's
 * MultiSendCallOnly (e.g. approve the onramp, wrap, and the six Polymarket grants at once).
 */
export async function execSafeBatch(
  chain: DevnetChain,
  options: Omit<ExecSafeTransactionOptions, 'to' | 'data' | 'value' | 'operation'> & { calls: SafeCall[] },
): Promise<ExecutedSafeTransaction> {
  const { calls, ...rest } = options;
  return execSafeTransaction(chain, {
    ...rest,
    to: need(chain, 'safeMultiSendCallOnly'),
    data: encodeMultiSendCallOnly(calls),
    operation: 1,
  });
}

/** The Safe's owners (in list order), threshold and nonce. */
export async function readDevnetSafe(
  chain: DevnetChain,
  safe: Address,
): Promise<{ owners: Address[]; threshold: number; nonce: bigint }> {
  const { publicClient } = clients(chain);
  const [owners, threshold, nonce] = await Promise.all([
    publicClient.readContract({ address: safe, abi: SAFE_ABI, functionName: 'getOwners' }),
    publicClient.readContract({ address: safe, abi: SAFE_ABI, functionName: 'getThreshold' }),
    publicClient.readContract({ address: safe, abi: SAFE_ABI, functionName: 'nonce' }),
  ]);
  return { owners: [...owners], threshold: Number(threshold), nonce };
}
