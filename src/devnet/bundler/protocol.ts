// The devnet bundler's JSON-RPC surface: the one EntryPoint it serves, the ERC-4337 error codes
// (ERC-7769) and the error its methods throw, and its params read and checked: an unpacked v0.7
// UserOperation (the v0.6 format refused), the entry point, a userOpHash; and an operation
// unpacked again from the handleOps calldata that carried it.

import { isAddress, isAddressEqual, size, slice, type Address, type Hex } from 'viem';
import type { PackedUserOperation, UserOperation } from 'viem/account-abstraction';

/** Canonical EntryPoint v0.7, the only entry point this bundler serves. */
export const ENTRY_POINT: Address = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';

/** ERC-4337 bundler error codes (ERC-7769). */
export const BUNDLER_ERROR = {
  invalidParams: -32602,
  methodNotFound: -32601,
  parseError: -32700,
  internal: -32603,
  /** Refused during validation by the EntryPoint or the account (the message carries AAxx). */
  validation: -32500,
  /** Refused during validation by the paymaster. */
  paymasterValidation: -32501,
  /** The operation's execution reverted (estimation). */
  executionReverted: -32521,
} as const;

/** A JSON-RPC error answer: its code, message and data. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** A v0.7 UserOperation, unpacked. */
export type Op = UserOperation<'0.7'>;

const QUANTITY = /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/;
const HEX_DATA = /^0x([0-9a-fA-F]{2})*$/;

function quantity(value: unknown, field: string, required: boolean): bigint | undefined {
  if (value === undefined || value === null) {
    if (required) throw new RpcError(BUNDLER_ERROR.invalidParams, `userOperation.${field} is missing`);
    return undefined;
  }
  if (typeof value !== 'string' || !QUANTITY.test(value)) {
    throw new RpcError(BUNDLER_ERROR.invalidParams, `userOperation.${field} must be a hex quantity`);
  }
  return BigInt(value);
}

function hexData(value: unknown, field: string): Hex {
  if (typeof value !== 'string' || !HEX_DATA.test(value)) {
    throw new RpcError(BUNDLER_ERROR.invalidParams, `userOperation.${field} must be hex data`);
  }
  return value as Hex;
}

function address(value: unknown, field: string): Address {
  if (typeof value !== 'string' || !isAddress(value, { strict: false })) {
    throw new RpcError(BUNDLER_ERROR.invalidParams, `userOperation.${field} must be an address`);
  }
  return value;
}

/** An unpacked v0.7 operation from RPC params; gas fields are optional when estimating. */
export function parseOperation(raw: unknown, gasRequired: boolean): Op {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new RpcError(BUNDLER_ERROR.invalidParams, 'userOperation must be an object');
  }
  const o = raw as Record<string, unknown>;
  if ('initCode' in o || 'paymasterAndData' in o) {
    throw new RpcError(
      BUNDLER_ERROR.invalidParams,
      'userOperation is in the v0.6 format (initCode, paymasterAndData); EntryPoint v0.7 takes factory/factoryData and paymaster fields',
    );
  }
  const hasFactory = o.factory !== undefined && o.factory !== null;
  if (hasFactory !== (o.factoryData !== undefined && o.factoryData !== null)) {
    throw new RpcError(BUNDLER_ERROR.invalidParams, 'userOperation.factory and factoryData come together');
  }
  const gas = (field: string) => quantity(o[field], field, gasRequired) ?? 0n;
  const op: Op = {
    sender: address(o.sender, 'sender'),
    nonce: quantity(o.nonce, 'nonce', true)!,
    callData: hexData(o.callData, 'callData'),
    callGasLimit: gas('callGasLimit'),
    verificationGasLimit: gas('verificationGasLimit'),
    preVerificationGas: gas('preVerificationGas'),
    maxFeePerGas: quantity(o.maxFeePerGas, 'maxFeePerGas', gasRequired) ?? 0n,
    maxPriorityFeePerGas: quantity(o.maxPriorityFeePerGas, 'maxPriorityFeePerGas', gasRequired) ?? 0n,
    signature: hexData(o.signature, 'signature'),
  };
  if (hasFactory) {
    op.factory = address(o.factory, 'factory');
    op.factoryData = hexData(o.factoryData, 'factoryData');
  }
  if (o.paymaster !== undefined && o.paymaster !== null) {
    op.paymaster = address(o.paymaster, 'paymaster');
    op.paymasterData = o.paymasterData === undefined ? '0x' : hexData(o.paymasterData, 'paymasterData');
    op.paymasterVerificationGasLimit = gas('paymasterVerificationGasLimit');
    op.paymasterPostOpGasLimit = gas('paymasterPostOpGasLimit');
  }
  return op;
}

/** The entry point param: EntryPoint v0.7's address, or invalid params. */
export function checkEntryPoint(value: unknown): void {
  if (
    typeof value !== 'string' ||
    !isAddress(value, { strict: false }) ||
    !isAddressEqual(value, ENTRY_POINT)
  ) {
    throw new RpcError(
      BUNDLER_ERROR.invalidParams,
      `entryPoint must be ${ENTRY_POINT} (EntryPoint v0.7, the only one this bundler serves)`,
    );
  }
}

/** A userOpHash param, lowercased. */
export function userOpHashParam(value: unknown): Hex {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(value)) {
    throw new RpcError(BUNDLER_ERROR.invalidParams, 'the userOpHash must be 32 bytes of hex');
  }
  return value.toLowerCase() as Hex;
}

/** The unpacked form of an operation as handleOps carried it. */
export function unpack(packed: PackedUserOperation): Op {
  const high = (word: Hex) => BigInt(slice(word, 0, 16));
  const low = (word: Hex) => BigInt(slice(word, 16, 32));
  const op: Op = {
    sender: packed.sender,
    nonce: packed.nonce,
    callData: packed.callData,
    verificationGasLimit: high(packed.accountGasLimits),
    callGasLimit: low(packed.accountGasLimits),
    preVerificationGas: packed.preVerificationGas,
    maxPriorityFeePerGas: high(packed.gasFees),
    maxFeePerGas: low(packed.gasFees),
    signature: packed.signature,
  };
  if (size(packed.initCode) >= 20) {
    op.factory = slice(packed.initCode, 0, 20);
    op.factoryData = size(packed.initCode) > 20 ? slice(packed.initCode, 20) : '0x';
  }
  if (size(packed.paymasterAndData) >= 52) {
    op.paymaster = slice(packed.paymasterAndData, 0, 20);
    op.paymasterVerificationGasLimit = BigInt(slice(packed.paymasterAndData, 20, 36));
    op.paymasterPostOpGasLimit = BigInt(slice(packed.paymasterAndData, 36, 52));
    op.paymasterData = size(packed.paymasterAndData) > 52 ? slice(packed.paymasterAndData, 52) : '0x';
  }
  return op;
}
