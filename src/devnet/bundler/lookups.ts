// The devnet bundler's reads of submitted operations: eth_getUserOperationReceipt and
// eth_getUserOperationByHash, read back from the chain (the EntryPoint's UserOperationEvent and
// the handleOps transaction that carried the operation), so they survive a devnet restart; an
// operation this process sent that the chain does not show yet is answered as pending.

import { decodeFunctionData, toHex, type Hex } from 'viem';
import { entryPoint07Abi, formatUserOperationRequest, getUserOperationHash } from 'viem/account-abstraction';
import { operationPart } from '../../adapters/bundler/operation-logs.ts';
import type { BundlerContext } from './context.ts';
import { ENTRY_POINT, unpack } from './protocol.ts';
import { USER_OPERATION_EVENT, type RawLog } from './simulation.ts';

/** The transaction that carried the operation, from this process's record or the EntryPoint's logs. */
async function includingTransaction(ctx: BundlerContext, hash: Hex): Promise<Hex | null> {
  const logs = await ctx.rpc<RawLog[]>('eth_getLogs', [
    { address: ENTRY_POINT, topics: [USER_OPERATION_EVENT, hash], fromBlock: '0x0', toBlock: 'latest' },
  ]);
  const log = logs.find((l) => !l.removed);
  return (log?.transactionHash as Hex | undefined) ?? null;
}

/** eth_getUserOperationReceipt: the operation's part of its transaction's receipt; null before. */
export async function receipt(ctx: BundlerContext, hash: Hex) {
  const txHash = await includingTransaction(ctx, hash);
  if (!txHash) return null;
  const txReceipt = await ctx.rpc<{ logs: RawLog[] } & Record<string, unknown>>('eth_getTransactionReceipt', [
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

/** eth_getUserOperationByHash: the operation and where it landed (nulls while pending). */
export async function lookup(ctx: BundlerContext, hash: Hex) {
  const txHash = await includingTransaction(ctx, hash);
  if (!txHash) {
    const pending = ctx.submitted.get(hash);
    if (!pending) return null;
    return {
      userOperation: formatUserOperationRequest(pending),
      entryPoint: ENTRY_POINT,
      transactionHash: null,
      blockHash: null,
      blockNumber: null,
    };
  }
  const tx = await ctx.client.getTransaction({ hash: txHash });
  const { functionName, args } = decodeFunctionData({ abi: entryPoint07Abi, data: tx.input });
  if (functionName !== 'handleOps') return null;
  for (const packed of args[0]) {
    const op = unpack(packed);
    const opHash = getUserOperationHash({
      userOperation: op,
      entryPointAddress: ENTRY_POINT,
      entryPointVersion: '0.7',
      chainId: ctx.chainId,
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
