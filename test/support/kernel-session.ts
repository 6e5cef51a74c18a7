// A real Kernel v3.1 account on the devnet's Base with a session key holding one grant, and the
// UserOperations that key signs: enable mode (the owner's Enable signature installs the grant
// with the op) or default mode, run through EntryPoint v0.7's `handleOps` directly (no bundler)
// or simulated to read the EntryPoint's refusal (`AA22`, `AA23`, `AA24`…).

import {
  concat,
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  http,
  pad,
  parseAbi,
  parseEther,
  parseEventLogs,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import {
  entryPoint07Abi,
  getUserOperationHash,
  toPackedUserOperation,
  type UserOperation,
} from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { chainDefinition } from '../../src/adapters/chain/viem.ts';
import { BASE_CHAIN_ID, devnetChain, ENTRY_POINT_V07, type DevnetInfo } from '../../src/devnet/devnet.ts';
import { fundAddress, newFundedAccount } from '../../src/devnet/faucet.ts';
import { deployDevnetKernelAccount, devnetKernelAccount } from '../../src/devnet/kernel-accounts.ts';
import {
  buildPermission,
  kernelAbi,
  newPermissionId,
  type BuiltPermission,
  type KernelModules,
  type PermissionScope,
} from '../../src/modules/delegations/kernel.ts';

export interface Call {
  to: Address;
  value: bigint;
  data: Hex;
}

const kernelExecuteAbi = parseAbi(['function execute(bytes32 execMode, bytes executionCalldata) payable']);
const SINGLE: Hex = pad('0x00', { size: 32, dir: 'right' });
const BATCH: Hex = pad('0x01', { size: 32, dir: 'right' });

/** Kernel's `execute(mode, executionCalldata)` for one call (packed) or a batch (ABI-encoded). */
export function executeCallData(calls: Call[], batch = calls.length > 1): Hex {
  const [first] = calls;
  const executionCalldata =
    batch || !first
      ? encodeAbiParameters(
          [
            {
              type: 'tuple[]',
              components: [
                { name: 'target', type: 'address' },
                { name: 'value', type: 'uint256' },
                { name: 'callData', type: 'bytes' },
              ],
            },
          ],
          [calls.map((c) => ({ target: c.to, value: c.value, callData: c.data }))],
        )
      : concat([first.to, toHex(first.value, { size: 32 }), first.data]);
  return encodeFunctionData({
    abi: kernelExecuteAbi,
    functionName: 'execute',
    args: [batch ? BATCH : SINGLE, executionCalldata],
  });
}

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

export type OpMode = 'enable' | 'default';

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
  const enableSig = await owner.signTypedData(permission.typedData);
  const identifier = pad(permissionId, { size: 20, dir: 'right' });
  // Kernel's nonce key: mode (0x00 default, 0x01 enable) ‖ type 0x02 (permission) ‖ id ‖ 0x0000.
  const nonceKey = (mode: OpMode) =>
    BigInt(concat([mode === 'enable' ? '0x01' : '0x00', '0x02', identifier, '0x0000']));

  const op = async (calls: Call[], mode: OpMode = 'default', signer = sessionKey) => {
    const { maxFeePerGas, maxPriorityFeePerGas } = await publicClient.estimateFeesPerGas();
    const userOp: UserOperation<'0.7'> = {
      sender: kernel.address,
      nonce: await publicClient.readContract({
        address: ENTRY_POINT_V07,
        abi: entryPoint07Abi,
        functionName: 'getNonce',
        args: [kernel.address, nonceKey(mode)],
      }),
      callData: executeCallData(calls),
      callGasLimit: 600_000n,
      verificationGasLimit: 2_000_000n,
      preVerificationGas: 60_000n,
      maxFeePerGas,
      maxPriorityFeePerGas,
      signature: '0x',
    };
    const hash = getUserOperationHash({
      userOperation: userOp,
      entryPointAddress: ENTRY_POINT_V07,
      entryPointVersion: '0.7',
      chainId: BASE_CHAIN_ID,
    });
    // Permission signature: 0xff ‖ the signer's EIP-191 signature of the userOpHash.
    const userOpSig = concat(['0xff', await signer.signMessage({ message: { raw: hash } })]);
    userOp.signature =
      mode === 'default'
        ? userOpSig
        : concat([
            zeroAddress, // no hook
            encodeAbiParameters(
              [{ type: 'bytes' }, { type: 'bytes' }, { type: 'bytes' }, { type: 'bytes' }, { type: 'bytes' }],
              [permission.enableData, '0x', permission.selectorData, enableSig, userOpSig],
            ),
          ]);
    return userOp;
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
