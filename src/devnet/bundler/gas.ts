// The devnet bundler's gas: the rules (limits of the estimation probe, the EntryPoint's penalty
// on unused execution gas, the bundle's overhead, preVerificationGas priced as the reference
// bundler prices it) and eth_estimateUserOperationGas, which probes with ample limits, solves for
// the gas used and tightens the limits until a simulation passes.

import { encodeAbiParameters, getAbiItem, size, toHex } from 'viem';
import { entryPoint07Abi, toPackedUserOperation } from 'viem/account-abstraction';
import type { BundlerContext } from './context.ts';
import { BUNDLER_ERROR, RpcError, type Op } from './protocol.ts';
import { revertMessage, simulateHandleOp, type HandleOpRun } from './simulation.ts';

/** Limits of the first estimation run: ample, so only the operation itself can fail it. */
const PROBE_VERIFICATION_GAS = 5_000_000n;
const PROBE_CALL_GAS = 10_000_000n;
/** EntryPoint v0.7 charges 10% of the execution gas limit left unused. */
const PENALTY_PERCENT = 10n;
/** The bundle transaction's gas beyond the operation's limits: the EntryPoint's own loop and refunds. */
const BUNDLE_OVERHEAD_GAS = 100_000n;
/**
 * preVerificationGas pays for what no limit measures: the bundle transaction's intrinsic gas (one
 * operation per bundle here) and its calldata, priced as the ERC-4337 reference bundler prices it.
 */
const PVG_FIXED = 21_000n;
const PVG_PER_OP = 18_300n;
const PVG_PER_WORD = 4n;
const PVG_MARGIN = 5_000n;

const packedOpParameter = getAbiItem({ abi: entryPoint07Abi, name: 'handleOps' }).inputs[0].components;

/** The gas the bundle's calldata and intrinsic cost take for this operation (no margin). */
export function minimumPreVerificationGas(op: Op): bigint {
  const encoded = encodeAbiParameters(
    [{ type: 'tuple', components: packedOpParameter }],
    [toPackedUserOperation(op)],
  );
  let calldata = 0n;
  for (let i = 2; i < encoded.length; i += 2) calldata += encoded.slice(i, i + 2) === '00' ? 4n : 16n;
  const words = BigInt(Math.ceil(size(encoded) / 32));
  return calldata + PVG_FIXED + PVG_PER_OP + PVG_PER_WORD * words;
}

/** The gas limit of the bundle transaction that carries the operation alone. */
export function bundleGas(op: Op): bigint {
  return (
    op.verificationGasLimit +
    op.callGasLimit +
    op.preVerificationGas +
    (op.paymasterVerificationGasLimit ?? 0n) +
    (op.paymasterPostOpGasLimit ?? 0n) +
    BUNDLE_OVERHEAD_GAS
  );
}

/** eth_estimateUserOperationGas: limits that pass a simulation, and the preVerificationGas to pay. */
export async function estimate(ctx: BundlerContext, op: Op) {
  if (op.paymaster) {
    throw new RpcError(
      BUNDLER_ERROR.invalidParams,
      'the devnet bundler does not estimate operations with a paymaster',
    );
  }
  const probe = await simulateHandleOp(ctx, {
    ...op,
    verificationGasLimit: PROBE_VERIFICATION_GAS,
    callGasLimit: PROBE_CALL_GAS,
    preVerificationGas: 0n,
  });
  if (!probe.success) {
    const reason = probe.revertReason ? revertMessage(probe.revertReason).message : 'no reason given';
    throw new RpcError(
      BUNDLER_ERROR.executionReverted,
      `UserOperation reverted during execution: ${reason}`,
      {
        revertData: probe.revertReason,
      },
    );
  }
  // actualGasUsed = preOpGas + used + (PROBE_CALL_GAS - used) * 10% (rounded down): solve for used.
  const charged = probe.actualGasUsed - probe.preOpGas;
  const used = (100n * charged - PENALTY_PERCENT * PROBE_CALL_GAS) / (100n - PENALTY_PERCENT) + 1n;
  // `used` includes the EntryPoint's own work around the call; 10% more covers the 63/64 rule of
  // nested calls, at a penalty of about 1% of it.
  let callGasLimit = used + used / 10n;
  let verificationGasLimit = probe.preOpGas + probe.preOpGas / 2n;
  for (let attempt = 1; ; attempt++) {
    const candidate: Op = { ...op, callGasLimit, verificationGasLimit, preVerificationGas: 0n };
    candidate.preVerificationGas = minimumPreVerificationGas(candidate) + PVG_MARGIN;
    let run: HandleOpRun | null = null;
    try {
      run = await simulateHandleOp(ctx, candidate);
    } catch (err) {
      // Out of verification gas (AA13/AA26/AA40/AA41 style refusals) at the tighter limit: give more.
      if (!(err instanceof RpcError) || !/AA(13|26|40|41)/.test(err.message) || attempt >= 4) throw err;
      verificationGasLimit += verificationGasLimit / 2n;
      continue;
    }
    if (run.success) {
      return {
        preVerificationGas: toHex(candidate.preVerificationGas),
        verificationGasLimit: toHex(verificationGasLimit),
        callGasLimit: toHex(callGasLimit),
        paymasterVerificationGasLimit: '0x0',
        paymasterPostOpGasLimit: '0x0',
      };
    }
    if (attempt >= 4) {
      throw new RpcError(
        BUNDLER_ERROR.executionReverted,
        'UserOperation runs out of gas at every call gas limit tried',
      );
    }
    callGasLimit += callGasLimit / 2n;
  }
}
