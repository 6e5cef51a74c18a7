// CCTP V2 facts the rebalances use (protocols.md 5): the calls the executor signs, the events it
// reads back, and the message layout. Pure functions: no I/O.

import {
  decodeEventLog,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  hexToBigInt,
  hexToNumber,
  pad,
  parseAbi,
  size,
  sliceHex,
  type Address,
  type Hex,
} from 'viem';

export const tokenMessengerAbi = parseAbi([
  'function depositForBurn(uint256 amount, uint32 destinationDomain, bytes32 mintRecipient, address burnToken, bytes32 destinationCaller, uint256 maxFee, uint32 minFinalityThreshold)',
  'event DepositForBurn(address indexed burnToken, uint256 amount, address indexed depositor, bytes32 mintRecipient, uint32 destinationDomain, bytes32 destinationTokenMessenger, bytes32 destinationCaller, uint256 maxFee, uint32 indexed minFinalityThreshold, bytes hookData)',
  'event MintAndWithdraw(address indexed mintRecipient, uint256 amount, address indexed mintToken, uint256 feeCollected)',
]);

export const messageTransmitterAbi = parseAbi([
  'function receiveMessage(bytes message, bytes attestation) returns (bool success)',
  'function usedNonces(bytes32 nonce) view returns (uint256)',
  'event MessageSent(bytes message)',
  'event MessageReceived(address indexed caller, uint32 sourceDomain, bytes32 indexed nonce, bytes32 sender, uint32 indexed finalityThresholdExecuted, bytes messageBody)',
]);

/** `minFinalityThreshold`: Fast Transfer (confirmed) and Standard (finalized). */
export const FINALITY_THRESHOLD = { fast: 1000, standard: 2000 } as const;
export type Finality = keyof typeof FINALITY_THRESHOLD;

/** An EVM address as CCTP's bytes32 (12 zero bytes, then the address). */
export const addressToBytes32 = (address: Address): Hex => pad(address.toLowerCase() as Hex, { size: 32 });

export const approveCall = (spender: Address, amount: bigint): Hex =>
  encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, amount] });

export interface BurnCall {
  amount: bigint;
  destinationDomain: number;
  mintRecipient: Address;
  burnToken: Address;
  /** Who may call `receiveMessage` on the destination; the executor, so only it mints. */
  destinationCaller: Address;
  maxFee: bigint;
  finality: Finality;
}

export const depositForBurnCall = (b: BurnCall): Hex =>
  encodeFunctionData({
    abi: tokenMessengerAbi,
    functionName: 'depositForBurn',
    args: [
      b.amount,
      b.destinationDomain,
      addressToBytes32(b.mintRecipient),
      b.burnToken,
      addressToBytes32(b.destinationCaller),
      b.maxFee,
      FINALITY_THRESHOLD[b.finality],
    ],
  });

export const receiveMessageCall = (message: Hex, attestation: Hex): Hex =>
  encodeFunctionData({
    abi: messageTransmitterAbi,
    functionName: 'receiveMessage',
    args: [message, attestation],
  });

/** The fields of a MessageV2 and its BurnMessageV2 body that the rebalances read. */
export interface DecodedMessage {
  version: number;
  sourceDomain: number;
  destinationDomain: number;
  nonce: Hex;
  recipient: Hex;
  destinationCaller: Hex;
  minFinalityThreshold: number;
  finalityThresholdExecuted: number;
  burn: {
    burnToken: Hex;
    mintRecipient: Address;
    amount: bigint;
    maxFee: bigint;
    feeExecuted: bigint;
    expirationBlock: bigint;
  };
}

const BODY = 148;

/** Decodes a MessageV2 carrying a BurnMessageV2 (offsets of MessageV2.sol and BurnMessageV2.sol). */
export function decodeMessage(message: Hex): DecodedMessage {
  if (size(message) < BODY + 228) throw new Error('not a CCTP V2 burn message (too short)');
  const u32 = (at: number) => hexToNumber(sliceHex(message, at, at + 4));
  const b32 = (at: number) => sliceHex(message, at, at + 32);
  const body = (at: number) => BODY + at;
  return {
    version: u32(0),
    sourceDomain: u32(4),
    destinationDomain: u32(8),
    nonce: b32(12),
    recipient: b32(76),
    destinationCaller: b32(108),
    minFinalityThreshold: u32(140),
    finalityThresholdExecuted: u32(144),
    burn: {
      burnToken: b32(body(4)),
      mintRecipient: getAddress(sliceHex(message, body(36) + 12, body(36) + 32)),
      amount: hexToBigInt(b32(body(68))),
      maxFee: hexToBigInt(b32(body(132))),
      feeExecuted: hexToBigInt(b32(body(164))),
      expirationBlock: hexToBigInt(b32(body(196))),
    },
  };
}

interface Log {
  address: Address;
  topics: readonly Hex[];
  data: Hex;
}

/** The bytes of the `MessageSent` the transmitter `transmitter` emitted in these logs, if any. */
export function messageSentIn(logs: readonly Log[], transmitter: Address): Hex | null {
  for (const log of logs) {
    if (getAddress(log.address) !== getAddress(transmitter)) continue;
    try {
      const e = decodeEventLog({
        abi: messageTransmitterAbi,
        eventName: 'MessageSent',
        topics: log.topics as [Hex, ...Hex[]],
        data: log.data,
      });
      return e.args.message;
    } catch {
      continue;
    }
  }
  return null;
}

/** What a `MintAndWithdraw` of the messenger `messenger` says went to `recipient`, if it is in these logs. */
export function mintIn(
  logs: readonly Log[],
  messenger: Address,
  recipient: Address,
): { amount: bigint; fee: bigint; token: Address } | null {
  for (const log of logs) {
    if (getAddress(log.address) !== getAddress(messenger)) continue;
    try {
      const e = decodeEventLog({
        abi: tokenMessengerAbi,
        eventName: 'MintAndWithdraw',
        topics: log.topics as [Hex, ...Hex[]],
        data: log.data,
      });
      if (getAddress(e.args.mintRecipient) !== getAddress(recipient)) continue;
      return { amount: e.args.amount, fee: e.args.feeCollected, token: getAddress(e.args.mintToken) };
    } catch {
      continue;
    }
  }
  return null;
}
