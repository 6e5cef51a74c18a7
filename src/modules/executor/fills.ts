// What a fill moved, read from its receipt's logs, never from a quote: the ERC-20 transfers from
// and to the account, and the wrapped native token's deposits and withdrawals (WETH9 emits no
// Transfer for them), as signed amounts per asset. And the ledger entries of one fill: the
// wallet's side and the venue's opposite side, balanced per asset by construction.

import { decodeEventLog, getAddress, parseAbi, type Address, type Hex } from 'viem';
import { erc20Asset, nativeAsset, venueAccount, walletAccount } from '../ledger/chart.ts';
import type { LedgerEntryInput } from '../ledger/index.ts';

/** A log as receipts carry it. */
export interface ReceiptLog {
  address: Address;
  topics: readonly Hex[];
  data: Hex;
}

const eventsAbi = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
  'event Deposit(address indexed dst, uint256 wad)',
  'event Withdrawal(address indexed src, uint256 wad)',
]);

/** The native coin's key in a movement map. */
export const NATIVE = 'native';
/** SLIP-44 coin type of ETH, the native coin of every chain Purser serves. */
export const ETH_SLIP44 = 60;

/**
 * The account's signed movement per token (lowercase address, or NATIVE) over `logs`: incoming
 * positive, outgoing negative, tokens that net to zero left out. Only ERC-20 `Transfer` logs
 * (three topics; an ERC-721 transfer has four) count, and `Deposit`/`Withdrawal` only when the
 * wrapped native token emitted them. Native value sent with calls or paid as gas is not in logs:
 * the caller accounts for it.
 */
export function accountMovements(
  logs: readonly ReceiptLog[],
  account: Address,
  wrappedNative: Address | null,
): Map<string, bigint> {
  const me = getAddress(account);
  const wrapped = wrappedNative ? getAddress(wrappedNative) : null;
  const moves = new Map<string, bigint>();
  const add = (key: string, amount: bigint) => moves.set(key, (moves.get(key) ?? 0n) + amount);
  for (const log of logs) {
    let decoded;
    try {
      decoded = decodeEventLog({ abi: eventsAbi, topics: log.topics as [Hex, ...Hex[]], data: log.data });
    } catch {
      continue; // another event, or a Transfer with a fourth topic (ERC-721)
    }
    const token = getAddress(log.address);
    const key = token.toLowerCase();
    if (decoded.eventName === 'Transfer') {
      const { from, to, value } = decoded.args;
      if (getAddress(from) === me) add(key, -value);
      if (getAddress(to) === me) add(key, value);
    } else if (token === wrapped && decoded.eventName === 'Deposit' && getAddress(decoded.args.dst) === me) {
      add(key, decoded.args.wad);
      add(NATIVE, -decoded.args.wad);
    } else if (
      token === wrapped &&
      decoded.eventName === 'Withdrawal' &&
      getAddress(decoded.args.src) === me
    ) {
      add(key, -decoded.args.wad);
      add(NATIVE, decoded.args.wad);
    }
  }
  for (const [key, amount] of moves) if (amount === 0n) moves.delete(key);
  return moves;
}

/**
 * The entries of one fill: each movement on the wallet's ledger account (debit positive: what
 * came in) and its opposite on the venue's account, so the group balances per asset.
 */
export function fillEntries(
  chainId: number,
  wallet: string,
  venue: string,
  movements: ReadonlyMap<string, bigint>,
): LedgerEntryInput[] {
  const mine = walletAccount(chainId, wallet);
  const theirs = venueAccount(venue, chainId);
  const keys = [...movements.keys()].sort();
  return keys.flatMap((key) => {
    const amount = movements.get(key)!;
    const asset = key === NATIVE ? nativeAsset(chainId, ETH_SLIP44) : erc20Asset(chainId, key);
    return [
      { account: mine, asset, amount },
      { account: theirs, asset, amount: -amount },
    ];
  });
}

/**
 * The logs of a slice split between venues (split.ts), cut into each part's: a part's calls start
 * with its approve of the sell token, so the second part's logs start at the first `Approval` by
 * the account to the second part's allowance target (a swap's own allowance updates name its own
 * venue's spender). Null when that approval is not in the logs: then they cannot be told apart.
 */
export function splitLogs(
  logs: readonly ReceiptLog[],
  account: Address,
  sellToken: string,
  parts: readonly { allowance_target: string }[],
): ReceiptLog[][] | null {
  const me = getAddress(account);
  const token = getAddress(sellToken);
  const starts = [0];
  for (const part of parts.slice(1)) {
    const spender = getAddress(part.allowance_target);
    const from = starts.at(-1)!;
    const at = logs.findIndex((log, i) => {
      if (i <= from || getAddress(log.address) !== token) return false;
      try {
        const d = decodeEventLog({ abi: eventsAbi, topics: log.topics as [Hex, ...Hex[]], data: log.data });
        return (
          d.eventName === 'Approval' &&
          getAddress(d.args.owner) === me &&
          getAddress(d.args.spender) === spender
        );
      } catch {
        return false;
      }
    });
    if (at < 0) return null;
    starts.push(at);
  }
  return starts.map((start, i) => logs.slice(start, starts[i + 1] ?? logs.length));
}
