// eth_sendUserOperation on the devnet bundler: the fees and preVerificationGas checked, the
// operation's `handleOps` simulated against the real EntryPoint, then sent at once, alone in its
// bundle, from the bundler's key (also the beneficiary). No mempool.

import { encodeFunctionData, type Hex } from 'viem';
import { entryPoint07Abi, getUserOperationHash, toPackedUserOperation } from 'viem/account-abstraction';
import type { BundlerContext } from './context.ts';
import { bundleGas, minimumPreVerificationGas } from './gas.ts';
import { BUNDLER_ERROR, ENTRY_POINT, RpcError, type Op } from './protocol.ts';
import { refusal, simulate } from './simulation.ts';

/** Checks and submits one operation; its userOpHash. */
export async function send(ctx: BundlerContext, op: Op): Promise<Hex> {
  const block = await ctx.client.getBlock({ blockTag: 'latest' });
  const baseFee = block.baseFeePerGas ?? 0n;
  if (op.maxFeePerGas < baseFee) {
    throw new RpcError(
      BUNDLER_ERROR.invalidParams,
      `maxFeePerGas ${op.maxFeePerGas} is below the base fee ${baseFee}`,
    );
  }
  if (op.maxPriorityFeePerGas > op.maxFeePerGas) {
    throw new RpcError(BUNDLER_ERROR.invalidParams, 'maxPriorityFeePerGas is above maxFeePerGas');
  }
  const minimumPvg = minimumPreVerificationGas(op);
  if (op.preVerificationGas < minimumPvg) {
    throw new RpcError(
      BUNDLER_ERROR.invalidParams,
      `preVerificationGas ${op.preVerificationGas} is below ${minimumPvg}`,
    );
  }
  const hash = getUserOperationHash({
    userOperation: op,
    entryPointAddress: ENTRY_POINT,
    entryPointVersion: '0.7',
    chainId: ctx.chainId,
  }).toLowerCase() as Hex;
  const data = encodeFunctionData({
    abi: entryPoint07Abi,
    functionName: 'handleOps',
    args: [[toPackedUserOperation(op)], ctx.account.address],
  });
  const gas = bundleGas(op);
  // Validation as the chain will run it (real EntryPoint, real balances, real signature).
  const check = await simulate(ctx, { data, gas }, {});
  if (!check.success) throw refusal(check.returnData);
  // The bundle pays what the operation pays per gas (at least the base fee, checked above).
  await ctx.wallet.sendTransaction({
    to: ENTRY_POINT,
    data,
    gas,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
  });
  ctx.submitted.set(hash, op);
  return hash;
}
