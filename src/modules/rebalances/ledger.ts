// The ledger groups of a rebalance (docs/ledger.md, "bridge burn, then mint"): the burn moves the
// source chain's USDC from the executor's wallet to in-transit (`bridge:cctp:<from>:<to>`); the
// mint takes it out of transit (the burned tokens are gone from the source chain) and puts the
// destination's USDC in the wallet, with Circle's fee as an entry of its own. Gas the executor paid
// is booked with the transaction that used it.

import {
  bridgeAccount,
  erc20Asset,
  externalAccount,
  chainNativeAsset,
  transfer,
  walletAccount,
  type LedgerEntryInput,
} from '../ledger/index.ts';

export const nativeOf = chainNativeAsset;

const gasEntries = (chainId: number, wallet: string, gasWei: bigint): LedgerEntryInput[] =>
  gasWei > 0n
    ? transfer(externalAccount(chainId), walletAccount(chainId, wallet), nativeOf(chainId), gasWei)
    : [];

export interface BridgeLeg {
  fromChainId: number;
  toChainId: number;
  wallet: string;
  /** USDC of the source and of the destination chain. */
  fromUsdc: string;
  toUsdc: string;
}

/** The burn: `amount` of the source USDC from the wallet to in-transit, and the gas of approve and burn. */
export function burnEntries(leg: BridgeLeg, amount: bigint, gasWei: bigint): LedgerEntryInput[] {
  return [
    ...transfer(
      bridgeAccount('cctp', leg.fromChainId, leg.toChainId),
      walletAccount(leg.fromChainId, leg.wallet),
      erc20Asset(leg.fromChainId, leg.fromUsdc),
      amount,
    ),
    ...gasEntries(leg.fromChainId, leg.wallet, gasWei),
  ];
}

/**
 * The mint: the burned `amount` leaves transit for good; `amount` of the destination USDC is minted
 * to the wallet, of which `fee` goes to Circle's fee recipient (its own entry); and the mint's gas
 * when the executor sent it.
 */
export function mintEntries(leg: BridgeLeg, amount: bigint, fee: bigint, gasWei: bigint): LedgerEntryInput[] {
  const wallet = walletAccount(leg.toChainId, leg.wallet);
  const usdc = erc20Asset(leg.toChainId, leg.toUsdc);
  return [
    ...transfer(
      externalAccount(leg.fromChainId),
      bridgeAccount('cctp', leg.fromChainId, leg.toChainId),
      erc20Asset(leg.fromChainId, leg.fromUsdc),
      amount,
    ),
    ...transfer(wallet, externalAccount(leg.toChainId), usdc, amount),
    ...(fee > 0n ? transfer(externalAccount(leg.toChainId), wallet, usdc, fee) : []),
    ...gasEntries(leg.toChainId, leg.wallet, gasWei),
  ];
}

/** Gas of transactions that moved nothing else (a burn that reverted). */
export function gasOnlyEntries(chainId: number, wallet: string, gasWei: bigint): LedgerEntryInput[] {
  return gasEntries(chainId, wallet, gasWei);
}
