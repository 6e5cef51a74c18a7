// UserOperations a session key sends under a delegation (ZeroDev Kernel v3 permission), pure:
// Kernel's ERC-7579 `execute` calldata for one call or a batch, the permission's nonce key, the
// first operation's deployment, and the signature in default mode (`0xff ‖ ECDSA`) or in enable
// mode (the owner's Enable signature and the permission's install data ahead of the session
// key's own). Layouts from the execution reference §3.2–3.5.

import {
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  pad,
  parseAbi,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { entryPoint07Address, getUserOperationHash, type UserOperation } from 'viem/account-abstraction';
import type { LocalAccount } from 'viem/accounts';

export interface Call {
  to: Address;
  value: bigint;
  data: Hex;
}

const executeAbi = parseAbi(['function execute(bytes32 execMode, bytes executionCalldata) payable']);
/** ERC-7579 modes: callType (single 0x00, batch 0x01), execType 0x00 (revert on failure), zeros. */
const MODE_SINGLE: Hex = pad('0x00', { size: 32, dir: 'right' });
const MODE_BATCH: Hex = pad('0x01', { size: 32, dir: 'right' });

/**
 * Kernel's `execute(mode, executionCalldata)`: one call packed as `target ‖ value ‖ data`, or (by
 * default for any other count) a batch `abi.encode((address,uint256,bytes)[])`, all or nothing: a
 * failed swap also undoes its approval.
 */
export function kernelExecuteCallData(calls: readonly Call[], batch = calls.length !== 1): Hex {
  if (!batch) {
    const [only] = calls;
    if (!only || calls.length > 1) throw new RangeError('a single-call execute carries exactly one call');
    return encodeFunctionData({
      abi: executeAbi,
      functionName: 'execute',
      args: [MODE_SINGLE, concat([only.to, toHex(only.value, { size: 32 }), only.data])],
    });
  }
  const executions = encodeAbiParameters(
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
  );
  return encodeFunctionData({ abi: executeAbi, functionName: 'execute', args: [MODE_BATCH, executions] });
}

export type ValidationMode = 'default' | 'enable';

/**
 * The EntryPoint nonce key (192 bits) of a permission: `mode(1) ‖ type 0x02 (permission) ‖
 * permissionId right-padded to 20 bytes ‖ customKey(2)`. Distinct custom keys are independent
 * sequences: deriving one per (intent, slice) lets a restarted executor ask
 * `EntryPoint.getNonce(sender, key)` whether that slice already landed.
 */
export function permissionNonceKey(permissionId: Hex, mode: ValidationMode, customKey = 0): bigint {
  if (!Number.isInteger(customKey) || customKey < 0 || customKey > 0xffff) {
    throw new RangeError('customKey must be a 16-bit unsigned integer');
  }
  return BigInt(
    concat([
      mode === 'enable' ? '0x01' : '0x00',
      '0x02',
      pad(permissionId, { size: 20, dir: 'right' }),
      toHex(customKey, { size: 2 }),
    ]),
  );
}

/** What enable mode carries besides the session key's signature: the grant the owner signed. */
export interface EnableMaterial {
  enableData: Hex;
  selectorData: Hex;
  /** The owner's signature over the delegation's digest. */
  enableSig: Hex;
}

/** A 65-byte ECDSA signature nobody made, for gas estimation (the SDK's dummy). */
export const STUB_ECDSA_SIGNATURE: Hex =
  '0xfffffffffffffffffffffffffffffff0000000000000000000000000000000007aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1c';

/**
 * The operation's signature: default mode `0xff ‖ sig`; enable mode `hook (0) ‖
 * abi.encode(validatorData, hookData, selectorData, enableSig, 0xff ‖ sig)`.
 */
export function permissionSignature(sessionSig: Hex, enable: EnableMaterial | null): Hex {
  const userOpSig = concat(['0xff', sessionSig]);
  if (!enable) return userOpSig;
  return concat([
    zeroAddress,
    encodeAbiParameters(
      [
        { name: 'validatorData', type: 'bytes' },
        { name: 'hookData', type: 'bytes' },
        { name: 'selectorData', type: 'bytes' },
        { name: 'enableSig', type: 'bytes' },
        { name: 'userOpSig', type: 'bytes' },
      ],
      [enable.enableData, '0x', enable.selectorData, enable.enableSig, userOpSig],
    ),
  ]);
}

/** An unsigned v0.7 operation from `sender`; gas and fees are the caller's (estimate, then set). */
export function delegatedOperation(input: {
  sender: Address;
  nonce: bigint;
  calls: readonly Call[];
  /** The factory call of an account without code yet (its first operation deploys it). */
  deployment?: { factory: Address; factoryData: Hex } | null;
  gas?: Partial<
    Pick<
      UserOperation<'0.7'>,
      'callGasLimit' | 'verificationGasLimit' | 'preVerificationGas' | 'maxFeePerGas' | 'maxPriorityFeePerGas'
    >
  >;
}): UserOperation<'0.7'> {
  if (input.calls.length === 0) throw new RangeError('an operation carries at least one call');
  return {
    sender: input.sender,
    nonce: input.nonce,
    ...(input.deployment
      ? { factory: input.deployment.factory, factoryData: input.deployment.factoryData }
      : {}),
    callData: kernelExecuteCallData(input.calls),
    callGasLimit: input.gas?.callGasLimit ?? 0n,
    verificationGasLimit: input.gas?.verificationGasLimit ?? 0n,
    preVerificationGas: input.gas?.preVerificationGas ?? 0n,
    maxFeePerGas: input.gas?.maxFeePerGas ?? 0n,
    maxPriorityFeePerGas: input.gas?.maxPriorityFeePerGas ?? 0n,
    signature: '0x',
  };
}

/** The operation with a stub signature of the right shape, for the bundler's gas estimate. */
export function withStubSignature(
  op: UserOperation<'0.7'>,
  enable: EnableMaterial | null,
): UserOperation<'0.7'> {
  return { ...op, signature: permissionSignature(STUB_ECDSA_SIGNATURE, enable) };
}

/** The userOpHash of `op` on `chainId` (EntryPoint v0.7). */
export function userOperationHash(op: UserOperation<'0.7'>, chainId: number): Hex {
  return getUserOperationHash({
    userOperation: { ...op, signature: '0x' },
    entryPointAddress: entryPoint07Address,
    entryPointVersion: '0.7',
    chainId,
  });
}

/** Signs `op` with the session key (EIP-191 over the userOpHash), in default or enable mode. */
export async function signDelegatedOperation(
  op: UserOperation<'0.7'>,
  chainId: number,
  sessionKey: LocalAccount,
  enable: EnableMaterial | null,
): Promise<UserOperation<'0.7'>> {
  const sessionSig = await sessionKey.signMessage({ message: { raw: userOperationHash(op, chainId) } });
  return { ...op, signature: permissionSignature(sessionSig, enable) };
}
