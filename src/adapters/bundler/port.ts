// The bundler port: ERC-4337 UserOperations for EntryPoint v0.7, one bundler endpoint per chain
// id. The real implementation (json-rpc.ts) speaks the bundler JSON-RPC of ERC-4337 (Alto, Pimlico,
// Alchemy's Rundler, …); in development it is pointed at the devnet's own bundler
// (src/devnet/bundler.ts), which speaks the same protocol, so there is no separate sandbox.

import type { Address, Hex } from 'viem';
import type { UserOperation, UserOperationReceipt } from 'viem/account-abstraction';

/** The only entry point the port speaks to: ERC-4337 EntryPoint v0.7 (same address on every chain). */
export const ENTRY_POINT_V07_ADDRESS: Address = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';

/** A signed v0.7 UserOperation (unpacked, as the bundler RPC carries it). */
export type UserOperationV07 = UserOperation<'0.7'>;

type GasField =
  | 'callGasLimit'
  | 'verificationGasLimit'
  | 'preVerificationGas'
  | 'paymasterVerificationGasLimit'
  | 'paymasterPostOpGasLimit';

/**
 * What estimation takes: the operation without (or with provisional) gas limits, and a stub
 * signature of the real one's length (a well-formed signature nobody made).
 */
export type UserOperationToEstimate = Omit<UserOperationV07, GasField> &
  Partial<Pick<UserOperationV07, GasField>>;

/** What `eth_estimateUserOperationGas` answers (paymaster limits only when a paymaster is named). */
export interface UserOperationGasEstimate {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  paymasterVerificationGasLimit?: bigint;
  paymasterPostOpGasLimit?: bigint;
}

/**
 * `eth_getUserOperationReceipt`: the UserOperationEvent's fields (`success`, `actualGasCost`,
 * `actualGasUsed`, …), the operation's own logs, its revert `reason` when it failed, and the
 * receipt of the bundle transaction.
 */
export type UserOperationReceiptV07 = UserOperationReceipt<'0.7'>;

/** `eth_getUserOperationByHash`: the operation, and where it landed (null while pending). */
export interface UserOperationLookup {
  userOperation: UserOperationV07;
  entryPoint: Address;
  blockNumber: bigint | null;
  blockHash: Hex | null;
  transactionHash: Hex | null;
}

/** Why a bundler call failed: the bundler refused it (`rpc`), or no usable answer came back. */
export type BundlerErrorKind = 'rpc' | 'timeout' | 'network' | 'http' | 'malformed';

/**
 * What an EntryPoint refusal (`AAxx`) says about the operation, for the caller to act on:
 * - `nonce` (AA25): its nonce is not the account's next one (used meanwhile, or in a bundle);
 * - `deployment` (AA10): it deploys an account that already has code;
 * - `validation` (AA22 expired or not due, AA23 reverted, AA24 signature error): the account's
 *   validation refused it (for a session key: the grant on chain does not cover it);
 * - `prefund` (AA21): the account cannot pay its prefund;
 * - `other`: any other AA code.
 */
export type BundlerRefusal = 'nonce' | 'deployment' | 'validation' | 'prefund' | 'other';

const REFUSALS: Record<string, BundlerRefusal> = {
  AA10: 'deployment',
  AA21: 'prefund',
  AA22: 'validation',
  AA23: 'validation',
  AA24: 'validation',
  AA25: 'nonce',
};

/**
 * A bundler call that failed. `code` is the JSON-RPC error code when the bundler answered with
 * an error (ERC-4337: -32500 refused by the EntryPoint or the account during validation, -32501 by
 * the paymaster, -32521 execution reverted, -32602 invalid params); `aaCode` is the EntryPoint's
 * `AAxx` code when the message carries one (AA21: the prefund is not paid, AA24/AA23: signature
 * refused or validation reverted, AA25: nonce). Other kinds mean the bundler never answered in
 * time or in its format: then nothing says whether a sent operation reached it.
 */
export class BundlerError extends Error {
  readonly kind: BundlerErrorKind;
  readonly chainId: number;
  readonly method: string;
  readonly code: number | null;
  readonly aaCode: string | null;
  /** The refusal `aaCode` names; null when the message carries no AA code. */
  readonly refusal: BundlerRefusal | null;
  readonly data: unknown;

  constructor(args: {
    kind: BundlerErrorKind;
    chainId: number;
    method: string;
    message: string;
    code?: number | null;
    data?: unknown;
    cause?: unknown;
  }) {
    super(`Bundler of chain ${args.chainId}, ${args.method}: ${args.message}`, { cause: args.cause });
    this.name = 'BundlerError';
    this.kind = args.kind;
    this.chainId = args.chainId;
    this.method = args.method;
    this.code = args.code ?? null;
    this.data = args.data;
    this.aaCode = /\b(AA\d\d)\b/.exec(args.message)?.[1] ?? null;
    this.refusal = this.aaCode === null ? null : (REFUSALS[this.aaCode] ?? 'other');
  }
}

/** Raised for a chain id without a configured bundler URL. */
export class UnknownBundlerChainError extends Error {
  constructor(
    readonly chainId: number,
    known: readonly number[],
  ) {
    super(`No bundler is configured for chain ${chainId} (configured: ${known.join(', ') || 'none'})`);
    this.name = 'UnknownBundlerChainError';
  }
}

/** No receipt before the deadline: the operation may still land (check the nonce before resending). */
export class UserOperationReceiptTimeoutError extends Error {
  constructor(
    readonly chainId: number,
    readonly userOpHash: Hex,
    readonly timeoutMs: number,
  ) {
    super(`No receipt for UserOperation ${userOpHash} on chain ${chainId} within ${timeoutMs} ms`);
    this.name = 'UserOperationReceiptTimeoutError';
  }
}

export interface WaitForUserOperationOptions {
  /** Default 60 s. */
  timeoutMs?: number;
  /** Default 500 ms. */
  pollIntervalMs?: number;
}

export interface BundlerPort {
  /** Chain ids with a bundler, ascending. */
  chainIds(): number[];
  supports(chainId: number): boolean;

  /** The entry points the bundler serves (a start-up check: it must list EntryPoint v0.7). */
  supportedEntryPoints(chainId: number): Promise<Address[]>;
  /**
   * Gas limits for the operation, simulated by the bundler. Throws BundlerError: a refusal in
   * validation (-32500 with `aaCode`, e.g. AA21 when neither deposit nor balance covers the prefund
   * at the operation's fees), an execution revert (-32521), or no answer.
   */
  estimateUserOperationGas(
    chainId: number,
    userOperation: UserOperationToEstimate,
  ): Promise<UserOperationGasEstimate>;
  /**
   * Hands a signed operation to the bundler; answers its userOpHash. Throws BundlerError on a
   * refusal (-32500 with `aaCode`: AA24 a bad signature, AA21 no prefund, AA25 a used nonce) or
   * when no answer came (then it may or may not have been accepted).
   */
  sendUserOperation(chainId: number, userOperation: UserOperationV07): Promise<Hex>;
  /** The receipt once the operation is included on chain; null before. Throws BundlerError. */
  getUserOperationReceipt(chainId: number, userOpHash: Hex): Promise<UserOperationReceiptV07 | null>;
  /** The operation as the bundler knows it (block fields null while pending); null if unknown. */
  getUserOperationByHash(chainId: number, userOpHash: Hex): Promise<UserOperationLookup | null>;
  /** Polls for the receipt; throws UserOperationReceiptTimeoutError past the deadline. */
  waitForUserOperationReceipt(
    chainId: number,
    userOpHash: Hex,
    options?: WaitForUserOperationOptions,
  ): Promise<UserOperationReceiptV07>;
}
