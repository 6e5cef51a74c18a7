// Funding a smart account's UserOperation gas when the account holds no ETH.
//
// EntryPoint v0.7 takes the prefund (every gas limit at maxFeePerGas) during validation, before
// the operation runs, from the account's EntryPoint deposit and, for what is missing, from its ETH
// balance. An account holding only WETH cannot pay for the operation that unwraps it. The relayer
// (the platform's transaction signer) closes that gap with `EntryPoint.depositTo(account)`: anyone
// may deposit for any account, the deposit can only be spent on that account's gas (or withdrawn by
// the account), and what the operation does not use stays in the deposit for the next one. The
// executor books the deposited amount against the account (docs/smart-accounts.md).

import { encodeFunctionData, parseAbi, type Address, type Hex } from 'viem';
import { ENTRY_POINT_V07_ADDRESS, type UserOperationV07 } from '../../adapters/bundler/port.ts';
import type { ChainPort } from '../../adapters/chain/port.ts';

const entryPointAbi = parseAbi([
  'function balanceOf(address account) view returns (uint256)',
  'function depositTo(address account) payable',
]);

/** Gas limit of `depositTo` (about 30k when the deposit slot is new; sent with a limit, not estimated). */
const DEPOSIT_GAS = 80_000n;

/** The prefund EntryPoint v0.7 requires before validation: all gas limits at maxFeePerGas. */
export function requiredPrefundWei(
  op: Pick<
    UserOperationV07,
    | 'callGasLimit'
    | 'verificationGasLimit'
    | 'preVerificationGas'
    | 'maxFeePerGas'
    | 'paymasterVerificationGasLimit'
    | 'paymasterPostOpGasLimit'
  >,
): bigint {
  const gas =
    op.callGasLimit +
    op.verificationGasLimit +
    op.preVerificationGas +
    (op.paymasterVerificationGasLimit ?? 0n) +
    (op.paymasterPostOpGasLimit ?? 0n);
  return gas * op.maxFeePerGas;
}

export interface EnsurePrefundResult {
  requiredWei: bigint;
  /** The account's EntryPoint deposit and ETH balance before any deposit here. */
  depositWei: bigint;
  balanceWei: bigint;
  /** What the relayer deposited: the shortfall, or 0 when deposit and balance covered the prefund. */
  depositedWei: bigint;
  /** The relayer's `depositTo` transaction, or null when none was needed. */
  txHash: Hex | null;
}

/** The relayer's deposit transaction was mined but reverted. */
export class PrefundDepositFailedError extends Error {
  constructor(
    readonly chainId: number,
    readonly account: Address,
    readonly txHash: Hex,
  ) {
    super(`EntryPoint.depositTo(${account}) reverted on chain ${chainId} (${txHash})`);
    this.name = 'PrefundDepositFailedError';
  }
}

/**
 * Makes sure `account` can pay `requiredWei` of prefund: reads its EntryPoint deposit and ETH
 * balance and, when together they fall short, has the relayer deposit exactly the shortfall for it
 * and waits for that transaction. Deposit and balance count together because the EntryPoint asks
 * the account for whatever the deposit lacks. Throws the chain port's NoRelayerError without a
 * relayer key, UnknownChainError for an unconfigured chain, PrefundDepositFailedError if the
 * deposit reverts, and the port's RPC errors.
 */
export async function ensurePrefund(
  chain: ChainPort,
  chainId: number,
  account: Address,
  requiredWei: bigint,
  options: { receiptTimeoutMs?: number } = {},
): Promise<EnsurePrefundResult> {
  const [depositWei, balanceWei] = await Promise.all([
    chain.publicClient(chainId).readContract({
      address: ENTRY_POINT_V07_ADDRESS,
      abi: entryPointAbi,
      functionName: 'balanceOf',
      args: [account],
    }),
    chain.getBalance(chainId, account),
  ]);
  const shortfall = requiredWei - depositWei - balanceWei;
  if (shortfall <= 0n) return { requiredWei, depositWei, balanceWei, depositedWei: 0n, txHash: null };
  const txHash = await chain.sendTransaction(chainId, {
    to: ENTRY_POINT_V07_ADDRESS,
    data: encodeFunctionData({ abi: entryPointAbi, functionName: 'depositTo', args: [account] }),
    value: shortfall,
    gas: DEPOSIT_GAS,
  });
  const receipt = await chain.waitForReceipt(
    chainId,
    txHash,
    options.receiptTimeoutMs === undefined ? {} : { timeoutMs: options.receiptTimeoutMs },
  );
  if (receipt.status !== 'success') throw new PrefundDepositFailedError(chainId, account, txHash);
  return { requiredWei, depositWei, balanceWei, depositedWei: shortfall, txHash };
}
