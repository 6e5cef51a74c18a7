// The devnet bundler: a small ERC-4337 bundler for EntryPoint v0.7 on one devnet chain, speaking
// the bundler JSON-RPC that the bundler port (src/adapters/bundler/json-rpc.ts) speaks to Alto or
// Pimlico: eth_chainId, eth_supportedEntryPoints, eth_estimateUserOperationGas,
// eth_sendUserOperation, eth_getUserOperationReceipt, eth_getUserOperationByHash.
//
// No mempool: each operation is checked by simulating `handleOps` and then submitted at once, alone
// in its bundle, from the bundler's own key (also the beneficiary). Receipts and lookups are read
// back from the chain (the EntryPoint's UserOperationEvent), so they survive a devnet restart.
// Listens on 127.0.0.1 only. Development and tests only.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import {
  createPublicClient,
  createWalletClient,
  decodeAbiParameters,
  decodeErrorResult,
  decodeEventLog,
  decodeFunctionData,
  decodeFunctionResult,
  encodeAbiParameters,
  encodeEventTopics,
  encodeFunctionData,
  getAbiItem,
  http,
  isAddress,
  isAddressEqual,
  numberToHex,
  size,
  slice,
  toHex,
  zeroAddress,
  type Abi,
  type Address,
  type Hex,
} from 'viem';
import {
  entryPoint07Abi,
  formatUserOperationRequest,
  getUserOperationHash,
  toPackedUserOperation,
  type PackedUserOperation,
  type UserOperation,
} from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { operationPart } from '../adapters/bundler/operation-logs.ts';
import { chainDefinition } from '../adapters/chain/viem.ts';
import { requiredPrefundWei } from '../modules/smart-account/prefund.ts';

/** Canonical EntryPoint v0.7, the only entry point this bundler serves. */
const ENTRY_POINT: Address = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';

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

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

type Op = UserOperation<'0.7'>;

export interface DevnetBundlerOptions {
  chainId: number;
  /** The devnet chain's JSON-RPC URL (its anvil). */
  rpcUrl: string;
  /** Key that submits `handleOps` and is its beneficiary; it needs ETH on the chain. */
  privateKey: Hex;
  /** Port on 127.0.0.1 (default 0: a free one). */
  port?: number;
}

export interface DevnetBundler {
  chainId: number;
  url: string;
  port: number;
  /** The submitting key's address (the beneficiary of every bundle). */
  address: Address;
  stop(): Promise<void>;
}

// ------------------------------------------------------------------------------ gas rules

/** Limits of the first estimation run: ample, so only the operation itself can fail it. */
const PROBE_VERIFICATION_GAS = 5_000_000n;
const PROBE_CALL_GAS = 10_000_000n;
/** Gas of a whole simulation call (under anvil's 30M block gas limit). */
const SIMULATION_GAS = 25_000_000n;
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

function bundleGas(op: Op): bigint {
  return (
    op.verificationGasLimit +
    op.callGasLimit +
    op.preVerificationGas +
    (op.paymasterVerificationGasLimit ?? 0n) +
    (op.paymasterPostOpGasLimit ?? 0n) +
    BUNDLE_OVERHEAD_GAS
  );
}

// ------------------------------------------------------------------------------ parsing

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
function parseOperation(raw: unknown, gasRequired: boolean): Op {
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

function checkEntryPoint(value: unknown): void {
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

function userOpHashParam(value: unknown): Hex {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(value)) {
    throw new RpcError(BUNDLER_ERROR.invalidParams, 'the userOpHash must be 32 bytes of hex');
  }
  return value.toLowerCase() as Hex;
}

/** The unpacked form of an operation as handleOps carried it. */
function unpack(packed: PackedUserOperation): Op {
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

// ------------------------------------------------------------------------------ simulation

/** EntryPointSimulations (@account-abstraction/contracts 0.7.0): deployed code and ABI. */
function simulationsArtifact(): { abi: Abi; code: Hex } {
  const require = createRequire(import.meta.url);
  const json = require('@account-abstraction/contracts/artifacts/EntryPointSimulations.json') as {
    abi: Abi;
    deployedBytecode: Hex;
  };
  return { abi: json.abi, code: json.deployedBytecode };
}

interface SimulatedCall {
  success: boolean;
  returnData: Hex;
  logs: RawLog[];
}

interface RawLog {
  address: Address;
  topics: [Hex, ...Hex[]];
  data: Hex;
  [key: string]: unknown;
}

const topic = (eventName: 'UserOperationEvent' | 'UserOperationRevertReason') =>
  encodeEventTopics({ abi: entryPoint07Abi, eventName })[0]!;
const USER_OPERATION_EVENT = topic('UserOperationEvent');
const REVERT_REASON_EVENT = topic('UserOperationRevertReason');

const isEntryPointLog = (log: RawLog, eventTopic: Hex) =>
  isAddressEqual(log.address, ENTRY_POINT) && log.topics[0]?.toLowerCase() === eventTopic;

/** The message of a reverted EntryPoint call: FailedOp's reason (AAxx …), with the inner revert if any. */
function revertMessage(data: Hex): { message: string; paymaster: boolean } {
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

// ------------------------------------------------------------------------------ the server

export async function startDevnetBundler(options: DevnetBundlerOptions): Promise<DevnetBundler> {
  const { chainId, rpcUrl } = options;
  const chain = chainDefinition(chainId, rpcUrl);
  const transport = http(rpcUrl, { retryCount: 0 });
  const client = createPublicClient({ chain, transport, pollingInterval: 20 });
  const account = privateKeyToAccount(options.privateKey);
  const wallet = createWalletClient({ account, chain, transport });
  const simulations = simulationsArtifact();
  /** Operations submitted by this process, until the chain shows them (lookups before inclusion). */
  const submitted = new Map<Hex, Op>();
  let queue: Promise<unknown> = Promise.resolve();

  const rpc = <T>(method: string, params: unknown[]): Promise<T> =>
    client.request({ method: method as never, params: params as never }) as Promise<T>;

  async function simulate(
    call: { data: Hex; gas: bigint },
    overrides: Record<string, unknown>,
  ): Promise<SimulatedCall> {
    // The operation runs in a later block than the latest, so it is simulated in the next one, one
    // second on: anvil mines the blocks of one second at one time and simulates at it too, where a
    // chain's next block is always later. A pool last written in the latest block then charges its
    // time-weighted price's stores in the estimate, as it will when the operation runs.
    const latest = await client.getBlock({ blockTag: 'latest' });
    const [block] = await rpc<{ calls: { status: Hex; returnData: Hex; logs?: RawLog[] }[] }[]>(
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
                { from: account.address, to: ENTRY_POINT, data: call.data, gas: numberToHex(call.gas) },
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

  function refusal(returnData: Hex): RpcError {
    const { message, paymaster } = revertMessage(returnData);
    return new RpcError(paymaster ? BUNDLER_ERROR.paymasterValidation : BUNDLER_ERROR.validation, message, {
      revertData: returnData,
    });
  }

  interface HandleOpRun {
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
  async function simulateHandleOp(op: Op): Promise<HandleOpRun> {
    const probe: Op = { ...op, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n };
    const balance = await client.getBalance({ address: op.sender });
    const run = await simulate(
      {
        data: encodeFunctionData({
          abi: simulations.abi,
          functionName: 'simulateHandleOp',
          args: [toPackedUserOperation(probe), zeroAddress, '0x'],
        }),
        gas: SIMULATION_GAS,
      },
      {
        [ENTRY_POINT]: { code: simulations.code },
        [op.sender]: { balance: numberToHex(balance + requiredPrefundWei(probe)) },
      },
    );
    if (!run.success) throw refusal(run.returnData);
    const result = decodeFunctionResult({
      abi: simulations.abi,
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

  async function estimate(op: Op) {
    if (op.paymaster) {
      throw new RpcError(
        BUNDLER_ERROR.invalidParams,
        'the devnet bundler does not estimate operations with a paymaster',
      );
    }
    const probe = await simulateHandleOp({
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
        run = await simulateHandleOp(candidate);
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

  async function send(op: Op): Promise<Hex> {
    const block = await client.getBlock({ blockTag: 'latest' });
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
      chainId,
    }).toLowerCase() as Hex;
    const data = encodeFunctionData({
      abi: entryPoint07Abi,
      functionName: 'handleOps',
      args: [[toPackedUserOperation(op)], account.address],
    });
    const gas = bundleGas(op);
    // Validation as the chain will run it (real EntryPoint, real balances, real signature).
    const check = await simulate({ data, gas }, {});
    if (!check.success) throw refusal(check.returnData);
    // The bundle pays what the operation pays per gas (at least the base fee, checked above).
    await wallet.sendTransaction({
      to: ENTRY_POINT,
      data,
      gas,
      maxFeePerGas: op.maxFeePerGas,
      maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    });
    submitted.set(hash, op);
    return hash;
  }

  /** The transaction that carried the operation, from this process's record or the EntryPoint's logs. */
  async function includingTransaction(hash: Hex): Promise<Hex | null> {
    const logs = await rpc<RawLog[]>('eth_getLogs', [
      { address: ENTRY_POINT, topics: [USER_OPERATION_EVENT, hash], fromBlock: '0x0', toBlock: 'latest' },
    ]);
    const log = logs.find((l) => !l.removed);
    return (log?.transactionHash as Hex | undefined) ?? null;
  }

  async function receipt(hash: Hex) {
    const txHash = await includingTransaction(hash);
    if (!txHash) return null;
    const txReceipt = await rpc<{ logs: RawLog[] } & Record<string, unknown>>('eth_getTransactionReceipt', [
      txHash,
    ]);
    if (!txReceipt) return null;
    const part = operationPart(txReceipt.logs, hash);
    if (!part) return null;
    return {
      userOpHash: hash,
      entryPoint: ENTRY_POINT,
      sender: part.sender,
      nonce: toHex(part.nonce),
      paymaster: part.paymaster,
      actualGasCost: toHex(part.actualGasCost),
      actualGasUsed: toHex(part.actualGasUsed),
      success: part.success,
      ...(part.revertReason === undefined ? {} : { reason: part.revertReason }),
      logs: part.logs,
      receipt: txReceipt,
    };
  }

  async function lookup(hash: Hex) {
    const txHash = await includingTransaction(hash);
    if (!txHash) {
      const pending = submitted.get(hash);
      if (!pending) return null;
      return {
        userOperation: formatUserOperationRequest(pending),
        entryPoint: ENTRY_POINT,
        transactionHash: null,
        blockHash: null,
        blockNumber: null,
      };
    }
    const tx = await client.getTransaction({ hash: txHash });
    const { functionName, args } = decodeFunctionData({ abi: entryPoint07Abi, data: tx.input });
    if (functionName !== 'handleOps') return null;
    for (const packed of args[0]) {
      const op = unpack(packed);
      const opHash = getUserOperationHash({
        userOperation: op,
        entryPointAddress: ENTRY_POINT,
        entryPointVersion: '0.7',
        chainId,
      });
      if (opHash.toLowerCase() !== hash) continue;
      return {
        userOperation: formatUserOperationRequest(op),
        entryPoint: ENTRY_POINT,
        transactionHash: txHash,
        blockHash: tx.blockHash,
        blockNumber: tx.blockNumber === null ? null : toHex(tx.blockNumber),
      };
    }
    return null;
  }

  async function dispatch(method: unknown, params: unknown[]): Promise<unknown> {
    switch (method) {
      case 'eth_chainId':
        return toHex(chainId);
      case 'eth_supportedEntryPoints':
        return [ENTRY_POINT];
      case 'eth_estimateUserOperationGas': {
        checkEntryPoint(params[1]);
        return estimate(parseOperation(params[0], false));
      }
      case 'eth_sendUserOperation': {
        checkEntryPoint(params[1]);
        const op = parseOperation(params[0], true);
        // One submission at a time: each is validated against the chain its predecessor left.
        const result = queue.then(() => send(op));
        queue = result.catch(() => undefined);
        return result;
      }
      case 'eth_getUserOperationReceipt':
        return receipt(userOpHashParam(params[0]));
      case 'eth_getUserOperationByHash':
        return lookup(userOpHashParam(params[0]));
      default:
        throw new RpcError(
          BUNDLER_ERROR.methodNotFound,
          `the method ${String(method)} does not exist / is not available`,
        );
    }
  }

  async function answer(request: unknown): Promise<object> {
    const r = (typeof request === 'object' && request !== null ? request : {}) as Record<string, unknown>;
    const id = r.id ?? null;
    try {
      if (r.jsonrpc !== '2.0' || typeof r.method !== 'string') {
        throw new RpcError(-32600, 'not a JSON-RPC 2.0 request');
      }
      const params = r.params === undefined ? [] : r.params;
      if (!Array.isArray(params)) throw new RpcError(BUNDLER_ERROR.invalidParams, 'params must be an array');
      return { jsonrpc: '2.0', id, result: await dispatch(r.method, params) };
    } catch (err) {
      const error =
        err instanceof RpcError
          ? { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) }
          : {
              code: BUNDLER_ERROR.internal,
              message: (err as Error).message.split('\n')[0] ?? 'internal error',
            };
      return { jsonrpc: '2.0', id, error };
    }
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST') {
      reply(405, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'POST a JSON-RPC request' } });
      return;
    }
    const chunks: Buffer[] = [];
    let length = 0;
    req.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > 1_000_000) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        reply(200, {
          jsonrpc: '2.0',
          id: null,
          error: { code: BUNDLER_ERROR.parseError, message: 'parse error' },
        });
        return;
      }
      const work = Array.isArray(body) ? Promise.all(body.map(answer)) : answer(body);
      void work.then((out) => reply(200, out));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  let stopped: Promise<void> | null = null;
  return {
    chainId,
    url: `http://127.0.0.1:${port}`,
    port,
    address: account.address,
    stop: () => {
      stopped ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}
