// Funding a smart account's UserOperation gas when the account holds no ETH.
//
// EntryPoint v0.7 takes the prefund (every gas limit at maxFeePerGas) during validation, before
// the operation runs, from the account's EntryPoint deposit and, for what is missing, from its ETH
// balance. An account holding only WETH cannot pay for the operation that unwraps it. The relayer
// (the platform's transaction signer) closes that gap with `EntryPoint.depositTo(account)`: anyone
// may deposit for any account, the deposit can only be spent on that account's gas (or withdrawn by
// the account), and what the operation does not use stays in the deposit for the next one.
//
// Every deposit is a transaction of its own with its own books (docs/smart-accounts.md, "Prefund
// deposits"): signed and recorded before it is broadcast, booked against the account from its
// receipt (wallet +amount, `external:<chain>` −amount), whatever becomes of the operation that
// asked for it. The amount is decided under a lock per account, counting every operation of the
// account that may run now and every deposit still in flight, so operations of one account sent
// at once are all covered and none is paid for twice.

import { encodeFunctionData, getAddress, parseAbi, type Address, type Hex } from 'viem';
import { ENTRY_POINT_V07_ADDRESS, type UserOperationV07 } from '../../adapters/bundler/port.ts';
import { NoRelayerError, type ChainPort, type TxReceipt } from '../../adapters/chain/port.ts';
import type { Clock } from '../../core/clock.ts';
import { lockUntilCommit, withTransaction, type Db, type DbExecutor } from '../../core/db/database.ts';
import { newId } from '../../core/ids.ts';
import { claimChainTransaction } from '../chainwatch/index.ts';
import { externalAccount, nativeAsset, postGroup, walletAccount } from '../ledger/index.ts';
import {
  insertDeposit,
  openDeposits,
  settleDepositRow,
  staleDeposits,
  type PrefundDeposit,
} from './store.ts';

const entryPointAbi = parseAbi([
  'function balanceOf(address account) view returns (uint256)',
  'function depositTo(address account) payable',
]);

/** Gas limit of `depositTo` (about 30k when the deposit slot is new; sent with a limit, not estimated). */
const DEPOSIT_GAS = 80_000n;

/** SLIP-44 coin type of ETH: the native asset of every chain served. */
const ETH_SLIP44 = 60;

/** The ledger kind of a booked deposit. */
export const PREFUND_KIND = 'gas.prefund';

/** The prefund EntryPoint v0.7 requires before validation: all gas limits at maxFeePerGas. */
export function requiredPrefundWei(
  op: Pick<
    UserOperationV07,
    | 'callGasLimit'
    | 'verificationGasLimit'
    | 'preVerificationGas'
    | 'maxFeePerGas'
    | 'paymasterVerificationGasLimit'
    | 'paymasterPostOpGasLimit'
  >,
): bigint {
  const gas =
    op.callGasLimit +
    op.verificationGasLimit +
    op.preVerificationGas +
    (op.paymasterVerificationGasLimit ?? 0n) +
    (op.paymasterPostOpGasLimit ?? 0n);
  return gas * op.maxFeePerGas;
}

export interface SponsorDeps {
  db: Db;
  clock: Clock;
  chain: ChainPort;
}

export interface PrefundRequest {
  /** The tenant the smart account's books belong to. */
  accountId: string;
  chainId: number;
  /** The smart account. */
  account: Address;
  /** What asked for the deposit (kept with it, and reported with the operation). */
  intentId: string | null;
  sliceSeq: number | null;
  /**
   * The prefund the account's operations that may run now need together (this one included), read
   * in the transaction that holds the account's prefund lock.
   */
  requiredWei: (tx: DbExecutor) => Promise<bigint>;
}

export interface SponsorResult {
  requiredWei: bigint;
  /** The account's EntryPoint deposit and ETH balance when the amount was decided. */
  depositWei: bigint;
  balanceWei: bigint;
  /** Deposits recorded before and not mined yet when the amount was decided. */
  inFlightWei: bigint;
  /** What the relayer deposited now: the shortfall, or 0 when all that covered the prefund. */
  depositedWei: bigint;
  /** The relayer's `depositTo` transaction, or null when none was needed. */
  txHash: Hex | null;
}

/** The relayer's deposit transaction was mined but reverted. */
export class PrefundDepositFailedError extends Error {
  constructor(
    readonly chainId: number,
    readonly account: Address,
    readonly txHash: Hex,
  ) {
    super(`EntryPoint.depositTo(${account}) reverted on chain ${chainId} (${txHash})`);
    this.name = 'PrefundDepositFailedError';
  }
}

/** How many times a deposit whose nonce went to another transaction is signed again. */
const SIGN_ATTEMPTS = 3;

/**
 * Makes sure the account's operations that may run now can pay their prefund: under the account's
 * lock, reads its EntryPoint deposit and ETH balance and the deposits still in flight and, when
 * together they fall short of `requiredWei`, has the relayer deposit exactly the shortfall:
 * signed, recorded, then broadcast. Waits for every deposit in flight for the account and books
 * each from its receipt, so the deposit is on chain when this returns. Throws NoRelayerError
 * without a relayer key (only when a deposit is needed), PrefundDepositFailedError if the deposit
 * reverts, and the port's RPC and timeout errors (a recorded deposit is then finished by
 * reconcilePrefundDeposits, or by the next call for the account).
 */
export async function sponsorPrefund(
  deps: SponsorDeps,
  request: PrefundRequest,
  options: { receiptTimeoutMs?: number } = {},
): Promise<SponsorResult> {
  for (let attempt = 1; ; attempt++) {
    const decided = await decideDeposit(deps, request);
    const waiting = [...decided.inFlight, ...(decided.deposit ? [decided.deposit] : [])];
    if (decided.deposit) {
      const fate = await broadcastDeposit(deps, decided.deposit);
      if (fate !== 'sent') {
        // Never entered the mempool: nothing was deposited, and its nonce is free or another's.
        await settleDepositRow(deps.db, decided.deposit.id, 'dropped', deps.clock.now());
        if (fate instanceof Error) throw fate;
        if (attempt < SIGN_ATTEMPTS) continue;
        throw new Error(`the relayer's deposit for ${request.account} lost its nonce ${SIGN_ATTEMPTS} times`);
      }
    }
    for (const d of waiting) {
      const receipt = await deps.chain.waitForReceipt(
        d.chainId,
        d.txHash,
        options.receiptTimeoutMs === undefined ? {} : { timeoutMs: options.receiptTimeoutMs },
      );
      await settleDeposit(deps, d, receipt);
      if (receipt.status !== 'success' && d === decided.deposit) {
        throw new PrefundDepositFailedError(d.chainId, d.wallet, d.txHash);
      }
    }
    const { deposit, ...figures } = decided;
    return {
      requiredWei: figures.requiredWei,
      depositWei: figures.depositWei,
      balanceWei: figures.balanceWei,
      inFlightWei: figures.inFlightWei,
      depositedWei: deposit?.amountWei ?? 0n,
      txHash: deposit?.txHash ?? null,
    };
  }
}

interface Decision {
  requiredWei: bigint;
  depositWei: bigint;
  balanceWei: bigint;
  inFlightWei: bigint;
  inFlight: PrefundDeposit[];
  deposit: PrefundDeposit | null;
}

/** The amount, decided and (when one is needed) the deposit signed and recorded, under the lock. */
async function decideDeposit(deps: SponsorDeps, request: PrefundRequest): Promise<Decision> {
  const { chain, clock } = deps;
  const account = getAddress(request.account);
  let signedNonce = false;
  try {
    return await withTransaction(deps.db, async (tx) => {
      await lockUntilCommit(tx, `prefund:${request.chainId}:${account.toLowerCase()}`);
      const requiredWei = await request.requiredWei(tx);
      // The account's funds at one block, and every recorded deposit either in them (mined by that
      // block) or in flight: nothing counted twice, nothing missed. One the node does not have (its
      // sender died before the broadcast) is broadcast now, so what counts as in flight is on its way.
      const block = await chain.getBlockNumber(request.chainId);
      const [depositWei, balanceWei] = await Promise.all([
        entryPointDeposit(chain, request.chainId, account, block),
        chain.publicClient(request.chainId).getBalance({ address: account, blockNumber: block }),
      ]);
      const inFlight: PrefundDeposit[] = [];
      for (const d of await openDeposits(tx, request.chainId, account)) {
        const receipt = await chain.getReceipt(d.chainId, d.txHash);
        if (receipt) await settleDeposit({ db: tx, clock }, d, receipt);
        if (receipt ? receipt.blockNumber > block && receipt.status === 'success' : await onItsWay(deps, d)) {
          inFlight.push(d);
        } else if (!receipt) {
          await settleDepositRow(tx, d.id, 'dropped', clock.now());
        }
      }
      const inFlightWei = inFlight.reduce((sum, d) => sum + d.amountWei, 0n);
      const figures = { requiredWei, depositWei, balanceWei, inFlightWei, inFlight };
      const shortfall = requiredWei - depositWei - balanceWei - inFlightWei;
      if (shortfall <= 0n) return { ...figures, deposit: null };
      if (!chain.relayerAddress()) throw new NoRelayerError();
      const signed = await chain.signRelayerTransaction(request.chainId, {
        to: ENTRY_POINT_V07_ADDRESS,
        data: encodeFunctionData({ abi: entryPointAbi, functionName: 'depositTo', args: [account] }),
        value: shortfall,
        gas: DEPOSIT_GAS,
      });
      signedNonce = true;
      const deposit: PrefundDeposit = {
        id: newId('pfd'),
        accountId: request.accountId,
        chainId: request.chainId,
        wallet: account,
        intentId: request.intentId,
        sliceSeq: request.sliceSeq,
        amountWei: shortfall,
        relayer: signed.from,
        nonce: BigInt(signed.nonce),
        txHash: signed.hash,
        raw: signed.raw,
        state: 'signed',
        createdAt: clock.now(),
      };
      await insertDeposit(tx, deposit);
      return { ...figures, deposit };
    });
  } catch (err) {
    // Signed but not recorded, so never sent: its nonce must not leave a gap.
    if (signedNonce) chain.releaseRelayerNonce(request.chainId);
    throw err;
  }
}

/**
 * Broadcasts a recorded deposit: `sent` when the chain has it (a receipt, or the node knows it);
 * `lost` when the node refused it and its nonce went to another transaction (sign again); the
 * node's refusal when its nonce is still free (the relayer lacks ETH, the fee is too low).
 */
async function broadcastDeposit(deps: SponsorDeps, d: PrefundDeposit): Promise<'sent' | 'lost' | Error> {
  try {
    await deps.chain.sendRawTransaction(d.chainId, d.raw);
    return 'sent';
  } catch (err) {
    deps.chain.releaseRelayerNonce(d.chainId);
    if (await knownToChain(deps.chain, d)) return 'sent';
    const mined = await deps.chain.transactionCount(d.chainId, d.relayer, 'latest');
    if (BigInt(mined) > d.nonce) return 'lost';
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** Whether an unmined recorded deposit is on its way: the node has it, or takes it now. */
async function onItsWay(deps: SponsorDeps, d: PrefundDeposit): Promise<boolean> {
  return (await knownToChain(deps.chain, d)) || (await broadcastDeposit(deps, d)) === 'sent';
}

/** Whether the node has the deposit: mined, or waiting in its mempool. */
async function knownToChain(chain: ChainPort, d: PrefundDeposit): Promise<boolean> {
  if (await chain.getReceipt(d.chainId, d.txHash)) return true;
  const pending = await chain
    .publicClient(d.chainId)
    .getTransaction({ hash: d.txHash })
    .catch(() => null);
  return pending !== null;
}

/**
 * Writes a mined deposit's outcome once and, when it succeeded, books it against the account in
 * the same transaction (settlement `prefund:<chain>:<tx hash>`).
 */
async function settleDeposit(
  deps: { db: DbExecutor; clock: Clock },
  d: PrefundDeposit,
  receipt: TxReceipt,
): Promise<void> {
  const run = async (tx: DbExecutor) => {
    const state = receipt.status === 'success' ? 'booked' : 'reverted';
    const first = await settleDepositRow(tx, d.id, state, deps.clock.now());
    if (!first || state !== 'booked') return;
    const asset = nativeAsset(d.chainId, ETH_SLIP44);
    const booked = await postGroup(tx, deps.clock, {
      settlementId: `prefund:${d.chainId}:${d.txHash.toLowerCase()}`,
      accountId: d.accountId,
      kind: PREFUND_KIND,
      entries: [
        { account: walletAccount(d.chainId, d.wallet), asset, amount: d.amountWei },
        { account: externalAccount(d.chainId), asset, amount: -d.amountWei },
      ],
      memo: {
        wallet: d.wallet.toLowerCase(),
        relayer: d.relayer.toLowerCase(),
        tx_hash: d.txHash.toLowerCase(),
        ...(d.intentId ? { intent: d.intentId, slice: d.sliceSeq } : {}),
      },
    });
    if (!booked.ok) throw new Error(`deposit ${d.txHash} could not be booked: ${booked.reason}`);
    // The chain watcher's opening of the wallet counts this deposit at its block.
    await claimChainTransaction(tx, deps.clock, {
      chainId: d.chainId,
      txHash: d.txHash,
      wallet: d.wallet,
      groupId: booked.groupId,
      blockNumber: receipt.blockNumber,
    });
  };
  // In the caller's transaction when given one, else in a transaction of its own.
  if (deps.db.isTransaction) await run(deps.db);
  else await withTransaction(deps.db, run);
}

/** How long a recorded deposit may stay unmined before a sweep looks at it. */
export const DEPOSIT_SWEEP_AFTER_MS = 30_000;

/**
 * Finishes recorded deposits that a crash or a timeout left `signed` for DEPOSIT_SWEEP_AFTER_MS:
 * a mined one is booked (or marked reverted); one whose nonce another transaction took is
 * dropped; one the node does not know is broadcast again (the same signed bytes: it lands once).
 * Never signs anything. Returns how many it settled.
 */
export async function reconcilePrefundDeposits(deps: SponsorDeps): Promise<number> {
  let settled = 0;
  const before = new Date(deps.clock.now().getTime() - DEPOSIT_SWEEP_AFTER_MS);
  for (const d of await staleDeposits(deps.db, before)) {
    if (!deps.chain.supports(d.chainId)) continue;
    const receipt = await deps.chain.getReceipt(d.chainId, d.txHash);
    if (receipt) {
      await settleDeposit(deps, d, receipt);
      settled++;
      continue;
    }
    if (await knownToChain(deps.chain, d)) continue;
    const mined = await deps.chain.transactionCount(d.chainId, d.relayer, 'latest');
    if (BigInt(mined) > d.nonce) {
      if (await settleDepositRow(deps.db, d.id, 'dropped', deps.clock.now())) settled++;
      continue;
    }
    await deps.chain.sendRawTransaction(d.chainId, d.raw).catch(() => null);
  }
  return settled;
}

async function entryPointDeposit(
  chain: ChainPort,
  chainId: number,
  account: Address,
  blockNumber: bigint,
): Promise<bigint> {
  return chain.publicClient(chainId).readContract({
    address: ENTRY_POINT_V07_ADDRESS,
    abi: entryPointAbi,
    functionName: 'balanceOf',
    args: [account],
    blockNumber,
  });
}
