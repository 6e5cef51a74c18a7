// The chain watcher's reading of a range of blocks: one `eth_getLogs` for every registry token of
// the chain and the EntryPoint (ERC-20 transfers, WETH9 deposits and withdrawals, the gas a
// UserOperation's sender paid), and those logs as transfer sides at the watched, opened wallets.

import type { Address, Hex } from 'viem';
import { ENTRY_POINT_V07_ADDRESS } from '../../adapters/bundler/port.ts';
import type { TransferRow, WatchedWallet } from './store.ts';
import type { RawLog, Run } from './watch-run.ts';

const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
/** WETH9's `Deposit(address indexed dst, uint256 wad)` and `Withdrawal(address indexed src, uint256 wad)`. */
const DEPOSIT_TOPIC = '0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c';
const WITHDRAWAL_TOPIC = '0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65';
/**
 * EntryPoint v0.7's `UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address
 * indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)`:
 * the gas an operation's sender paid out of its native holdings (balance and deposit).
 */
const USER_OPERATION_TOPIC = '0x49628fd1471006c1482da88028e9ce4dbb080b815c9b0344d39e5a8e6ec1419f';
const ENTRY_POINT = ENTRY_POINT_V07_ADDRESS.toLowerCase();

/** A transfer side at a watched wallet, before its block's time is known. */
export type TransferSide = Omit<TransferRow, 'blockTime'> & { blockHash: string };

/** The logs of blocks `from` to `to` the watcher books from. */
export async function transferLogs(run: Run, from: bigint, to: bigint): Promise<RawLog[]> {
  const chain = run.deps.registry.chain(run.chainId);
  const tokens = (chain?.tokens ?? []).map((t) => t.address.toLowerCase());
  if (tokens.length === 0) return [];
  const logs = (await run.client.request({
    method: 'eth_getLogs',
    params: [
      {
        address: [...tokens, ENTRY_POINT] as Address[],
        topics: [[TRANSFER_TOPIC, DEPOSIT_TOPIC, WITHDRAWAL_TOPIC, USER_OPERATION_TOPIC] as Hex[]],
        fromBlock: `0x${from.toString(16)}`,
        toBlock: `0x${to.toString(16)}`,
      },
    ],
  })) as unknown as RawLog[];
  return logs;
}

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

const topicAddress = (topic: string | undefined): string | null =>
  topic && topic.length === 66 ? `0x${topic.slice(26).toLowerCase()}` : null;

/** The sides of `logs` at watched, opened wallets, in block and log order. */
export function sidesOf(run: Run, logs: RawLog[], watched: Map<string, WatchedWallet>): TransferSide[] {
  const wrapped = run.deps.registry.chain(run.chainId)?.wrappedNative.toLowerCase() ?? null;
  const out: TransferSide[] = [];
  for (const log of logs) {
    const token = log.address.toLowerCase();
    const base = {
      chainId: run.chainId,
      txHash: log.transactionHash.toLowerCase(),
      logIndex: Number(BigInt(log.logIndex)),
      blockNumber: BigInt(log.blockNumber),
      blockHash: log.blockHash.toLowerCase(),
      token,
    };
    const topic = log.topics[0]?.toLowerCase();
    if (token === ENTRY_POINT && topic === USER_OPERATION_TOPIC && log.topics.length === 4) {
      // Paid by the sender unless a paymaster paid: actualGasCost is the third word of the data.
      const paymaster = topicAddress(log.topics[3]);
      const cost = log.data.length >= 2 + 64 * 3 ? BigInt(`0x${log.data.slice(2 + 128, 2 + 192)}`) : 0n;
      const w = watched.get(topicAddress(log.topics[2]) ?? '');
      if (
        cost > 0n &&
        paymaster === ZERO_ADDRESS &&
        w &&
        w.openedBlock !== null &&
        base.blockNumber > w.openedBlock
      ) {
        out.push({ ...base, wallet: w.address, accountId: w.accountId, event: 'gas', amount: -cost });
      }
      continue;
    }
    const value = log.data && log.data !== '0x' ? BigInt(log.data.slice(0, 66)) : 0n;
    if (value === 0n) continue;
    const add = (address: string | null, amount: bigint, event: TransferRow['event']) => {
      const w = address ? watched.get(address) : undefined;
      if (!w || w.openedBlock === null || base.blockNumber <= w.openedBlock) return;
      out.push({ ...base, wallet: w.address, accountId: w.accountId, event, amount });
    };
    if (topic === TRANSFER_TOPIC && log.topics.length === 3) {
      const from = topicAddress(log.topics[1]);
      const to = topicAddress(log.topics[2]);
      if (from === to) continue;
      add(from, -value, 'transfer');
      add(to, value, 'transfer');
    } else if (token === wrapped && topic === DEPOSIT_TOPIC && log.topics.length === 2) {
      add(topicAddress(log.topics[1]), value, 'wrap');
    } else if (token === wrapped && topic === WITHDRAWAL_TOPIC && log.topics.length === 2) {
      add(topicAddress(log.topics[1]), -value, 'unwrap');
    }
  }
  return out;
}
