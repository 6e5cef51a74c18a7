// One UserOperation from an agent's Kernel account, signed by the executor's session key under
// the owner's delegation: built and signed first (so the executor can record it before anything
// is sent), then submitted and awaited. Enable mode until the permission is installed (the first
// operation installs it), with the deployment while the account has no code.

import { getAddress, parseAbi, type Address, type Hex, type LocalAccount } from 'viem';
import { entryPoint07Abi, entryPoint07Address, type UserOperation } from 'viem/account-abstraction';
import type { BundlerPort, UserOperationReceiptV07 } from '../../adapters/bundler/port.ts';
import type { ChainPort } from '../../adapters/chain/port.ts';
import {
  delegatedOperation,
  permissionNonceKey,
  signDelegatedOperation,
  userOperationHash,
  withStubSignature,
  type Call,
  type EnableMaterial,
} from '../delegations/index.ts';

/** What of a delegation its operations need (the columns of its row). */
export interface SessionGrant {
  /** The Kernel account (lowercase or checksummed). */
  wallet: string;
  permission_id: string;
  validation_id: string;
  enable_data: string;
  selector_data: string;
  enable_sig: string | null;
  factory: string | null;
  factory_data: string | null;
}

export interface SignedOperation {
  op: UserOperation<'0.7'>;
  hash: Hex;
  mode: 'enable' | 'default';
  /** Whether this operation also deploys the account. */
  deploys: boolean;
}

/** Two storage writes from zero to non-zero (EIP-2929/3529: 22,100 gas each). */
const FIRST_WRITES = 2n * 22_100n;

// Kernel v3.1: a validation's config; its hook is set (non-zero) once the permission is installed.
const validationConfigAbi = parseAbi([
  'function validationConfig(bytes21 vId) view returns ((uint32 nonce, address hook))',
]);

/** Whether the account has code, and whether the grant's permission is installed on it. */
export async function grantState(
  chain: ChainPort,
  chainId: number,
  grant: SessionGrant,
): Promise<{ deployed: boolean; installed: boolean }> {
  const deployed = await chain.isContract(chainId, getAddress(grant.wallet));
  return { deployed, installed: deployed && (await permissionInstalled(chain, chainId, grant)) };
}

/** Whether the grant's permission is installed on the account (false while it has no code). */
export async function permissionInstalled(
  chain: ChainPort,
  chainId: number,
  grant: SessionGrant,
): Promise<boolean> {
  const account = getAddress(grant.wallet);
  if (!(await chain.isContract(chainId, account))) return false;
  const config = await chain.publicClient(chainId).readContract({
    address: account,
    abi: validationConfigAbi,
    functionName: 'validationConfig',
    args: [grant.validation_id as Hex],
  });
  return BigInt(config.hook) !== 0n;
}

/**
 * Builds, prices (the bundler's estimate with a stub signature) and signs the operation running
 * `calls` from the grant's account, on the nonce key of `lane` (Kernel's 2-byte custom key; the
 * caller holds the lane: lanes.ts). Nothing is sent.
 */
export async function signSessionOperation(
  deps: { chain: ChainPort; bundler: BundlerPort; sessionKey: LocalAccount },
  chainId: number,
  grant: SessionGrant,
  calls: readonly Call[],
  lane = 0,
): Promise<SignedOperation> {
  const sender: Address = getAddress(grant.wallet);
  const { deployed, installed } = await grantState(deps.chain, chainId, grant);
  const mode = installed ? 'default' : 'enable';
  const enable: EnableMaterial | null = installed
    ? null
    : {
        enableData: grant.enable_data as Hex,
        selectorData: grant.selector_data as Hex,
        enableSig: requireEnableSig(grant),
      };
  const deployment =
    deployed || !grant.factory || !grant.factory_data
      ? null
      : { factory: getAddress(grant.factory), factoryData: grant.factory_data as Hex };
  const client = deps.chain.publicClient(chainId);
  const nonce = await client.readContract({
    address: entryPoint07Address,
    abi: entryPoint07Abi,
    functionName: 'getNonce',
    args: [sender, permissionNonceKey(grant.permission_id as Hex, mode, lane)],
  });
  const fees = await client.estimateFeesPerGas();
  const draft = delegatedOperation({
    sender,
    nonce,
    calls,
    deployment,
    gas: { maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas },
  });
  const gas = await deps.bundler.estimateUserOperationGas(chainId, withStubSignature(draft, enable));
  // More call gas than estimated: the estimate ran against the last block, the operation runs in a
  // later one, where a pool's first swap of the block writes its time-weighted price (two stores,
  // from zero on a new pool: FIRST_WRITES) and other operations may have changed what it touches
  // (a quarter more). Unused call gas is returned but for the EntryPoint's 10% penalty on it.
  const callGasLimit = gas.callGasLimit + gas.callGasLimit / 4n + FIRST_WRITES;
  const op = await signDelegatedOperation(
    { ...draft, ...gas, callGasLimit },
    chainId,
    deps.sessionKey,
    enable,
  );
  return { op, hash: userOperationHash(op, chainId), mode, deploys: deployment !== null };
}

/** Sends a signed operation to the bundler and waits for its receipt. */
export async function submitSessionOperation(
  bundler: BundlerPort,
  chainId: number,
  signed: SignedOperation,
  wait: { timeoutMs: number; pollIntervalMs?: number },
): Promise<UserOperationReceiptV07> {
  const hash = await bundler.sendUserOperation(chainId, signed.op);
  if (hash.toLowerCase() !== signed.hash.toLowerCase()) {
    throw new Error(`the bundler answered UserOperation hash ${hash}, not ${signed.hash}`);
  }
  return bundler.waitForUserOperationReceipt(chainId, hash, wait);
}

function requireEnableSig(grant: SessionGrant): Hex {
  if (!grant.enable_sig) throw new Error('the delegation has no enable signature: it was never confirmed');
  return grant.enable_sig as Hex;
}
