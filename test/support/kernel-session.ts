// A real Kernel v3.1 account on the devnet's Base with a session key holding one grant, and the
// UserOperations that key signs: enable mode (the owner's Enable signature installs the grant
// with the op) or default mode, run through EntryPoint v0.7's `handleOps` directly (no bundler)
// or simulated to read the EntryPoint's refusal (`AA22`, `AA23`, `AA24`…).

import { createPublicClient, createWalletClient, http, parseEther, parseEventLogs, type Address } from 'viem';
import { entryPoint07Abi, toPackedUserOperation, type UserOperation } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { chainDefinition } from '../../src/adapters/chain/viem.ts';
import { BASE_CHAIN_ID, devnetChain, ENTRY_POINT_V07, type DevnetInfo } from '../../src/devnet/devnet.ts';
import { fundAddress, newFundedAccount } from '../../src/devnet/faucet.ts';
import { deployDevnetKernelAccount, devnetKernelAccount } from '../../src/devnet/kernel-accounts.ts';
import {
  delegatedOperation,
  permissionNonceKey,
  signDelegatedOperation,
  type Call,
  type EnableMaterial,
  type ValidationMode,
} from '../../src/modules/delegations/operations.ts';
import {
  buildPermission,
  kernelAbi,
  newPermissionId,
  type BuiltPermission,
  type KernelModules,
  type PermissionScope,
} from '../../src/modules/delegations/kernel.ts';

/** The devnet's own Kernel modules on a chain. */
export function devnetModules(devnet: DevnetInfo, chainId = BASE_CHAIN_ID): KernelModules {
  const { contracts } = devnetChain(devnet, chainId);
  return {
    ecdsaSigner: contracts.kernelEcdsaSigner!,
    callPolicy: contracts.kernelCallPolicy!,
    timestampPolicy: contracts.kernelTimestampPolicy!,
    rateLimitPolicy: contracts.kernelRateLimitPolicy!,
    ecdsaValidator: contracts.kernelEcdsaValidator!,
  };
}

export type OpMode = ValidationMode;
export {
  kernelExecuteCallData as executeCallData,
  type Call,
} from '../../src/modules/delegations/operations.ts';

export interface KernelSession {
  /** The deployed Kernel account (1 ETH to pay its gas). */
  account: Address;
  owner: PrivateKeyAccount;
  sessionKey: PrivateKeyAccount;
  permission: BuiltPermission;
  scope: PermissionScope;
  /** The chain's latest block time, unix seconds. */
  chainNow(): Promise<number>;
  /** A UserOperation of `calls` signed by the session key (or `signer`), in enable or default mode. */
  op(calls: Call[], mode?: OpMode, signer?: PrivateKeyAccount): Promise<UserOperation<'0.7'>>;
  /**
   * `handleOps([op])` as a transaction: 'success' when the op ran and its calls succeeded,
   * 'call reverted' when it was taken but its execution reverted (UserOperationEvent.success
   * false), 'refused' when the transaction reverted (validation failed).
   */
  run(op: UserOperation<'0.7'>): Promise<'success' | 'call reverted' | 'refused'>;
  /** `handleOps([op])` simulated: resolves when the EntryPoint would take it, rejects with its refusal. */
  simulate(op: UserOperation<'0.7'>): Promise<unknown>;
}

/**
 * A fresh owner's Kernel account on Base, deployed and funded, and a session key whose grant is
 * `scopeFor(account, chainNow)` (the account is known only once derived: rules may name it).
 */
export async function kernelSession(
  devnet: DevnetInfo,
  scopeFor: (account: Address, chainNow: number) => PermissionScope,
): Promise<KernelSession> {
  const chain = devnetChain(devnet, BASE_CHAIN_ID);
  const viemChain = chainDefinition(chain.chainId, chain.rpcUrl);
  const transport = http(chain.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain: viemChain, transport, pollingInterval: 20 });
  const owner = privateKeyToAccount(generatePrivateKey());
  const sessionKey = privateKeyToAccount(generatePrivateKey());
  const kernel = await devnetKernelAccount(devnet, BASE_CHAIN_ID, owner.address);
  await deployDevnetKernelAccount(devnet, kernel);
  await fundAddress(devnet, { chainId: BASE_CHAIN_ID, address: kernel.address, eth: parseEther('1') });
  const submitter = await newFundedAccount(devnet, { chainId: BASE_CHAIN_ID });
  const wallet = createWalletClient({
    account: privateKeyToAccount(submitter.privateKey),
    chain: viemChain,
    transport,
  });
  const beneficiary = privateKeyToAccount(generatePrivateKey()).address;
  const chainNow = async () => Number((await publicClient.getBlock()).timestamp);

  const permissionId = newPermissionId();
  const scope = scopeFor(kernel.address, await chainNow());
  const permission = buildPermission({
    account: kernel.address,
    chainId: BASE_CHAIN_ID,
    kernelVersion: '0.3.1',
    modules: devnetModules(devnet),
    permissionId,
    sessionKey: sessionKey.address,
    kernelNonce: await publicClient.readContract({
      address: kernel.address,
      abi: kernelAbi,
      functionName: 'currentNonce',
    }),
    scope,
  });
  const enable: EnableMaterial = {
    enableData: permission.enableData,
    selectorData: permission.selectorData,
    enableSig: await owner.signTypedData(permission.typedData),
  };

  const op = async (calls: Call[], mode: OpMode = 'default', signer = sessionKey) => {
    const fees = await publicClient.estimateFeesPerGas();
    const nonce = await publicClient.readContract({
      address: ENTRY_POINT_V07,
      abi: entryPoint07Abi,
      functionName: 'getNonce',
      args: [kernel.address, permissionNonceKey(permissionId, mode)],
    });
    const unsigned = delegatedOperation({
      sender: kernel.address,
      nonce,
      calls,
      gas: {
        callGasLimit: 600_000n,
        verificationGasLimit: 2_000_000n,
        preVerificationGas: 60_000n,
        maxFeePerGas: fees.maxFeePerGas,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      },
    });
    return signDelegatedOperation(unsigned, BASE_CHAIN_ID, signer, mode === 'enable' ? enable : null);
  };
  const handleOpsArgs = (userOp: UserOperation<'0.7'>) =>
    [[toPackedUserOperation(userOp)], beneficiary] as const;
  const run = async (userOp: UserOperation<'0.7'>) => {
    const hash = await wallet.writeContract({
      address: ENTRY_POINT_V07,
      abi: entryPoint07Abi,
      functionName: 'handleOps',
      args: handleOpsArgs(userOp),
      gas: 6_000_000n,
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== 'success') return 'refused' as const;
    const [event] = parseEventLogs({
      abi: entryPoint07Abi,
      eventName: 'UserOperationEvent',
      logs: receipt.logs,
    });
    return event?.args.success ? ('success' as const) : ('call reverted' as const);
  };
  const simulate = (userOp: UserOperation<'0.7'>) =>
    publicClient.simulateContract({
      address: ENTRY_POINT_V07,
      abi: entryPoint07Abi,
      functionName: 'handleOps',
      args: handleOpsArgs(userOp),
      account: wallet.account,
      gas: 6_000_000n,
    });
  return { account: kernel.address, owner, sessionKey, permission, scope, chainNow, op, run, simulate };
}
