// One UserOperation's part of a bundle transaction's receipt. A bundle runs several operations in
// one transaction, so its receipt holds the logs of all of them: the EntryPoint v0.7 emits
// `BeforeExecution` once before the first operation runs and a `UserOperationEvent` after each, so
// an operation's own logs are those after the previous operation's event (or `BeforeExecution`)
// up to its own event. The devnet bundler answers receipts with them and the executor reads them
// when only the EntryPoint's event is left to find an operation by.

import { decodeEventLog, encodeEventTopics, isAddressEqual, type Address, type Hex } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { ENTRY_POINT_V07_ADDRESS } from './port.ts';

export interface BundleLog {
  address: Address;
  topics: readonly Hex[];
  data: Hex;
}

const eventTopic = (eventName: 'UserOperationEvent' | 'BeforeExecution' | 'UserOperationRevertReason') =>
  encodeEventTopics({ abi: entryPoint07Abi, eventName })[0]!.toLowerCase();

const USER_OPERATION_EVENT = eventTopic('UserOperationEvent');
const BEFORE_EXECUTION = eventTopic('BeforeExecution');
const REVERT_REASON = eventTopic('UserOperationRevertReason');

const isEntryPointLog = (log: BundleLog, topic: string): boolean =>
  isAddressEqual(log.address, ENTRY_POINT_V07_ADDRESS) && log.topics[0]?.toLowerCase() === topic;

export interface OperationPart<L extends BundleLog> {
  /** The operation's `UserOperationEvent` fields. */
  success: boolean;
  actualGasCost: bigint;
  actualGasUsed: bigint;
  nonce: bigint;
  sender: Address;
  paymaster: Address;
  /** The logs the operation's execution emitted (its event excluded). */
  logs: L[];
  /** The revert data of a failed execution (`UserOperationRevertReason`), when there is one. */
  revertReason: Hex | undefined;
}

/** The operation's event and own logs within a bundle's logs, or null when it is not there. */
export function operationPart<L extends BundleLog>(
  logs: readonly L[],
  userOpHash: Hex,
): OperationPart<L> | null {
  const hash = userOpHash.toLowerCase();
  const index = logs.findIndex(
    (l) => isEntryPointLog(l, USER_OPERATION_EVENT) && l.topics[1]?.toLowerCase() === hash,
  );
  const event = logs[index];
  if (!event) return null;
  let start = index - 1;
  while (
    start >= 0 &&
    !isEntryPointLog(logs[start]!, USER_OPERATION_EVENT) &&
    !isEntryPointLog(logs[start]!, BEFORE_EXECUTION)
  ) {
    start--;
  }
  const own = logs.slice(start + 1, index);
  const { args } = decodeEventLog({
    abi: entryPoint07Abi,
    eventName: 'UserOperationEvent',
    topics: event.topics as [Hex, ...Hex[]],
    data: event.data,
  });
  const reasonLog = own.find((l) => isEntryPointLog(l, REVERT_REASON) && l.topics[1]?.toLowerCase() === hash);
  const revertReason = reasonLog
    ? decodeEventLog({
        abi: entryPoint07Abi,
        eventName: 'UserOperationRevertReason',
        topics: reasonLog.topics as [Hex, ...Hex[]],
        data: reasonLog.data,
      }).args.revertReason
    : undefined;
  return {
    success: args.success,
    actualGasCost: args.actualGasCost,
    actualGasUsed: args.actualGasUsed,
    nonce: args.nonce,
    sender: args.sender,
    paymaster: args.paymaster,
    logs: own,
    revertReason,
  };
}
