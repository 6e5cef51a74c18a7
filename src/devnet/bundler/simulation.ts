// Simulating the EntryPoint for the devnet bundler (eth_simulateV1, in the next block): a call as
// the chain would run it, `handleOps` simulated through EntryPointSimulations.simulateHandleOp
// with its code at the EntryPoint's address, and an EntryPoint revert read as the AAxx refusal
// it is.

import {
  decodeAbiParameters,
  decodeErrorResult,
  decodeEventLog,
  decodeFunctionResult,
  encodeEventTopics,
  encodeFunctionData,
  isAddressEqual,
  numberToHex,
  slice,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { entryPoint07Abi, toPackedUserOperation } from 'viem/account-abstraction';
import { requiredPrefundWei } from '../../modules/smart-account/prefund.ts';
import type { BundlerContext } from './context.ts';
import { BUNDLER_ERROR, ENTRY_POINT, RpcError, type Op } from './protocol.ts';

/** Gas of a whole simulation call (under anvil's 30M block gas limit). */
const SIMULATION_GAS = 25_000_000n;

interface SimulatedCall {
  success: boolean;
  returnData: Hex;
  logs: RawLog[];
}

export interface RawLog {
  address: Address;
  topics: [Hex, ...Hex[]];
  data: Hex;
  [key: string]: unknown;
}

const topic = (eventName: 'UserOperationEvent' | 'UserOperationRevertReason') =>
  encodeEventTopics({ abi: entryPoint07Abi, eventName })[0]!;
export const USER_OPERATION_EVENT = topic('UserOperationEvent');
const REVERT_REASON_EVENT = topic('UserOperationRevertReason');

const isEntryPointLog = (log: RawLog, eventTopic: Hex) =>
  isAddressEqual(log.address, ENTRY_POINT) && log.topics[0]?.toLowerCase() === eventTopic;

/** The message of a reverted EntryPoint call: FailedOp's reason (AAxx …), with the inner revert if any. */
export function revertMessage(data: Hex): { message: string; paymaster: boolean } {
  try {
    const error = decodeErrorResult({ abi: entryPoint07Abi, data });
    if (error.errorName === 'FailedOp') {
      const reason = error.args[1];
      return { message: reason, paymaster: reason.startsWith('AA3') };
    }
    if (error.errorName === 'FailedOpWithRevert') {
      const [, reason, inner] = error.args;
      return { message: `${reason} ${inner}`, paymaster: reason.startsWith('AA3') };
    }
    return { message: `${error.errorName}(${(error.args ?? []).join(', ')})`, paymaster: false };
  } catch {
    try {
      const [reason] = decodeAbiParameters([{ type: 'string' }], slice(data, 4));
      if (slice(data, 0, 4) === '0x08c379a0') return { message: reason, paymaster: false };
    } catch {
      // not Error(string) either
    }
    return { message: `reverted with ${data}`, paymaster: false };
  }
}

/** Runs one call from the bundler's account to the EntryPoint, with `overrides`, in the next block. */
export async function simulate(
  ctx: BundlerContext,
  call: { data: Hex; gas: bigint },
  overrides: Record<string, unknown>,
): Promise<SimulatedCall> {
  // The operation runs in a later block than the latest, so it is simulated in the next one, one
  // second on: anvil mines the blocks of one second at one time and simulates at it too, where a
  // chain's next block is always later. A pool last written in the latest block then charges its
  // time-weighted price's stores in the estimate, as it will when the operation runs.
  const latest = await ctx.client.getBlock({ blockTag: 'latest' });
  const [block] = await ctx.rpc<{ calls: { status: Hex; returnData: Hex; logs?: RawLog[] }[] }[]>(
    'eth_simulateV1',
    [
      {
        blockStateCalls: [
          {
            blockOverrides: {
              number: numberToHex(latest.number + 1n),
              time: numberToHex(latest.timestamp + 1n),
            },
            stateOverrides: overrides,
            calls: [
              { from: ctx.account.address, to: ENTRY_POINT, data: call.data, gas: numberToHex(call.gas) },
            ],
          },
        ],
        validation: false,
      },
      numberToHex(latest.number),
    ],
  );
  const result = block?.calls[0];
  if (!result) throw new RpcError(BUNDLER_ERROR.internal, 'the node returned no simulation result');
  return { success: result.status === '0x1', returnData: result.returnData, logs: result.logs ?? [] };
}

/** An EntryPoint revert as the bundler's refusal: AA3x is the paymaster's, the rest validation. */
export function refusal(returnData: Hex): RpcError {
  const { message, paymaster } = revertMessage(returnData);
  return new RpcError(paymaster ? BUNDLER_ERROR.paymasterValidation : BUNDLER_ERROR.validation, message, {
    revertData: returnData,
  });
}

export interface HandleOpRun {
  preOpGas: bigint;
  actualGasUsed: bigint;
  success: boolean;
  revertReason: Hex | null;
}

/**
 * EntryPointSimulations.simulateHandleOp, its code put at the EntryPoint's address for this call
 * only (so deposits and nonces are the EntryPoint's own), at 1 wei per gas with the sender's
 * balance raised by the prefund: validation and execution run as in handleOps, signature
 * failures do not stop it, and `actualGasUsed` comes back in the UserOperationEvent.
 */
export async function simulateHandleOp(ctx: BundlerContext, op: Op): Promise<HandleOpRun> {
  const probe: Op = { ...op, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n };
  const balance = await ctx.client.getBalance({ address: op.sender });
  const run = await simulate(
    ctx,
    {
      data: encodeFunctionData({
        abi: ctx.simulations.abi,
        functionName: 'simulateHandleOp',
        args: [toPackedUserOperation(probe), zeroAddress, '0x'],
      }),
      gas: SIMULATION_GAS,
    },
    {
      [ENTRY_POINT]: { code: ctx.simulations.code },
      [op.sender]: { balance: numberToHex(balance + requiredPrefundWei(probe)) },
    },
  );
  if (!run.success) throw refusal(run.returnData);
  const result = decodeFunctionResult({
    abi: ctx.simulations.abi,
    functionName: 'simulateHandleOp',
    data: run.returnData,
  }) as { preOpGas: bigint };
  const event = run.logs.find((l) => isEntryPointLog(l, USER_OPERATION_EVENT));
  if (!event) throw new RpcError(BUNDLER_ERROR.internal, 'the simulation emitted no UserOperationEvent');
  const { args } = decodeEventLog({ abi: entryPoint07Abi, eventName: 'UserOperationEvent', ...event });
  const reason = run.logs.find((l) => isEntryPointLog(l, REVERT_REASON_EVENT));
  return {
    preOpGas: result.preOpGas,
    actualGasUsed: args.actualGasUsed,
    success: args.success,
    revertReason: reason
      ? decodeEventLog({ abi: entryPoint07Abi, eventName: 'UserOperationRevertReason', ...reason }).args
          .revertReason
      : null,
  };
}
