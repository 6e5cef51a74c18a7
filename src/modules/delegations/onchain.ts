// What a delegation needs to know about the smart account on-chain: whether it is deployed, its
// Kernel nonce and EIP-712 domain version, and its ECDSA owner. Read before any transaction.

import {
  getAddress,
  isAddressEqual,
  parseAbi,
  recoverAddress,
  recoverMessageAddress,
  type Address,
  type Hex,
} from 'viem';
import type { ChainPort } from '../../adapters/chain/port.ts';
import { unavailable, type AppError } from '../../core/errors/app-error.ts';
import { kernelAbi } from './kernel.ts';

const ecdsaValidatorAbi = parseAbi(['function ecdsaValidatorStorage(address) view returns (address)']);

export interface AccountState {
  deployed: boolean;
  /** `currentNonce()`; 1 for an undeployed account (Kernel's initialize sets 1) or when unreadable. */
  kernelNonce: number;
  /** The account's own EIP-712 domain version when it reports one as "Kernel"; else null. */
  domainVersion: string | null;
}

function portOf(chain: ChainPort | undefined, chainId: number): ChainPort {
  if (!chain || !chain.supports(chainId)) {
    throw unavailable(`No RPC endpoint is configured for chain ${chainId}; delegations need one.`);
  }
  return chain;
}

async function tryRead<T>(fn: () => Promise<T>): Promise<T | null> {
  try {
    return await fn();
  } catch {
    return null;
  }
}

function rpcFailure(err: unknown): AppError {
  return unavailable('The chain endpoint did not answer; try again.', { cause: err });
}

/**
 * Reads the account's state. The nonce follows the SDK (`getKernelV3Nonce`): 1 when the account
 * is undeployed, the call fails or returns 0.
 */
export async function readAccountState(
  chain: ChainPort | undefined,
  chainId: number,
  account: Address,
): Promise<AccountState> {
  const port = portOf(chain, chainId);
  let deployed: boolean;
  try {
    deployed = await port.isContract(chainId, account);
  } catch (err) {
    throw rpcFailure(err);
  }
  if (!deployed) return { deployed, kernelNonce: 1, domainVersion: null };
  const client = port.publicClient(chainId);
  const nonce = await tryRead(() =>
    client.readContract({ address: account, abi: kernelAbi, functionName: 'currentNonce' }),
  );
  const kernelNonce = nonce !== null && nonce > 0 ? nonce : 1;
  const domain = await tryRead(() =>
    client.readContract({ address: account, abi: kernelAbi, functionName: 'eip712Domain' }),
  );
  const domainVersion = domain && domain[1] === 'Kernel' ? domain[2] : null;
  return { deployed, kernelNonce, domainVersion };
}

/**
 * The deployed account's ECDSA owner: the owner its root validator stores for it
 * (`ecdsaValidatorStorage(account)`) when that root validator is `ecdsaValidator`. Else null.
 */
export async function readAccountOwner(
  chain: ChainPort | undefined,
  chainId: number,
  account: Address,
  ecdsaValidator: Address,
): Promise<Address | null> {
  const client = portOf(chain, chainId).publicClient(chainId);
  const root = await tryRead(() =>
    client.readContract({ address: account, abi: kernelAbi, functionName: 'rootValidator' }),
  );
  if (!root || !root.toLowerCase().startsWith('0x01')) return null;
  const validator = getAddress(`0x${root.slice(4, 44)}`);
  if (!isAddressEqual(validator, ecdsaValidator)) return null;
  const stored = await tryRead(() =>
    client.readContract({
      address: validator,
      abi: ecdsaValidatorAbi,
      functionName: 'ecdsaValidatorStorage',
      args: [account],
    }),
  );
  return stored && !isAddressEqual(stored, '0x0000000000000000000000000000000000000000')
    ? getAddress(stored)
    : null;
}

/** Whether `signature` is `owner`'s over `digest`: raw ECDSA or EIP-191, as Kernel's ECDSA validator accepts. */
export async function signedBy(digest: Hex, signature: Hex, owner: Address): Promise<boolean> {
  for (const recover of [
    () => recoverAddress({ hash: digest, signature }),
    () => recoverMessageAddress({ message: { raw: digest }, signature }),
  ]) {
    const signer = await tryRead(recover);
    if (signer && isAddressEqual(signer, owner)) return true;
  }
  return false;
}
