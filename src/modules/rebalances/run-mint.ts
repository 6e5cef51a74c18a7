// The mint of a rebalance once submitted: sent again if it is not on chain, settled and booked
// (`minted`), or back to `awaiting_attestation` when it reverted or was dropped, unless the
// message's nonce is used on the destination: then it was minted (by an earlier attempt whose
// record was lost, or by someone else) and is booked so, with nothing sent. And the mint job that
// finishes a submitted mint whoever started it.

import { getAddress, parseEventLogs, type Hex } from 'viem';
import type { CctpChain } from '../../config.ts';
import { withTransaction, type DbExecutor } from '../../core/db/database.ts';
import { enqueueJob } from '../../core/jobs/index.ts';
import { decodeMessage, messageTransmitterAbi, mintIn } from './cctp.ts';
import { mintEntries } from './ledger.ts';
import { bookGas, moveOn } from './run-booking.ts';
import { replaceStale, send } from './run-broadcast.ts';
import { cctpOf, legOf, reload, type RebalanceRunDeps } from './run-deps.ts';
import { MINT_JOB } from './service.ts';
import {
  findRebalance,
  openRebalances,
  rebalanceTxs,
  updateRebalance,
  type RebalanceReport,
  type RebalanceRow,
} from './store.ts';
import { byNonce, gasWeiOf, settleNonce } from './transactions.ts';

/** How far back the destination's logs are searched for a mint someone else sent. */
const MINT_LOOKBACK_BLOCKS = 50_000n;

/** Whether the message nonce is used on the destination's transmitter: delivered already. */
export async function nonceUsed(
  deps: RebalanceRunDeps,
  to: CctpChain,
  nonce: Hex,
  chainId: number,
): Promise<boolean> {
  const used = await deps.chain.publicClient(chainId).readContract({
    address: to.messageTransmitter,
    abi: messageTransmitterAbi,
    functionName: 'usedNonces',
    args: [nonce],
  });
  return used !== 0n;
}

/**
 * From `mint_submitted`: sends the recorded mint again if it is not on chain, waits up to `waitMs`
 * for its receipt and books it (`minted`). A reverted or dropped mint goes back to
 * `awaiting_attestation` (the next completion asks again), unless the message's nonce is used:
 * then it was minted, and is recorded so.
 */
export async function settleMint(deps: RebalanceRunDeps, id: string, waitMs: number): Promise<void> {
  const row = await reload(deps, id);
  if (row.phase !== 'mint_submitted' || row.status !== 'executing') return;
  const mints = byNonce((await rebalanceTxs(deps.db, id)).filter((t) => t.purpose === 'rebalance.mint')).at(
    -1,
  );
  if (!mints) throw new Error(`rebalance ${id} is mint_submitted without a recorded mint`);
  const mint = mints.at(-1)!;
  if (mint.state === 'signed' && !(await deps.chain.getReceipt(mint.chainId, mint.hash)))
    await send(deps, mint);
  const s = await settleNonce(deps.db, deps.chain, deps.clock, mints, waitMs);
  if (!s) {
    await replaceStale(deps, row, [mints]);
    return;
  }
  if (s.state === 'mined') {
    await recordMint(deps, row, s.hash, gasWeiOf(s));
    return;
  }
  // A mint that reverted still cost gas: booked on its own, once per transaction.
  await bookGas(deps, row, row.to_chain_id, s.hash, gasWeiOf(s));
  const to = cctpOf(deps.config, row.to_chain_id);
  if (row.message_nonce && (await nonceUsed(deps, to, row.message_nonce, row.to_chain_id))) {
    await recordMintedElsewhere(deps, row, row.message!, row.message_nonce);
    return;
  }
  const report: RebalanceReport = {
    ...row.report,
    mint_failures: [...(row.report.mint_failures ?? []), { tx: s.hash, at: deps.clock.now().toISOString() }],
  };
  await updateRebalance(
    deps.db,
    id,
    'mint_submitted',
    { phase: 'awaiting_attestation', report },
    deps.clock.now(),
  );
  deps.log.warn(
    { rebalance: id, mint: s.hash, state: s.state },
    'mint did not land; the rebalance awaits attestation again',
  );
}

/** Books a mint the executor's transaction `txHash` made, read from its receipt. */
async function recordMint(
  deps: RebalanceRunDeps,
  row: RebalanceRow,
  txHash: Hex,
  gasWei: bigint,
): Promise<void> {
  const receipt = await deps.chain.getReceipt(row.to_chain_id, txHash);
  const to = cctpOf(deps.config, row.to_chain_id);
  const got = receipt ? mintIn(receipt.logs, to.tokenMessenger, getAddress(row.wallet)) : null;
  const fee = got ? got.fee : row.message ? decodeMessage(row.message).burn.feeExecuted : 0n;
  await bookMint(deps, row, txHash, fee, gasWei);
}

/**
 * The transaction that delivered the message with `nonce` on the destination, from the
 * transmitter's `MessageReceived` logs of the last MINT_LOOKBACK_BLOCKS blocks; null when it is not
 * found there, or the node refuses so wide a log query (the mint is then recorded without it).
 */
async function receivedIn(deps: RebalanceRunDeps, chainId: number, nonce: Hex): Promise<Hex | null> {
  const to = cctpOf(deps.config, chainId);
  const client = deps.chain.publicClient(chainId);
  try {
    // The nonce is used, so its log exists; a node's log search can lag its head by a moment
    // (eth_getLogs on real providers, and on anvil), so it is asked a few times before giving up.
    for (let attempt = 0; ; attempt++) {
      // The head as it is now: a cached block number would end the search before the mint.
      const latest = await client.getBlockNumber({ cacheTime: 0 });
      const logs = await client.getLogs({
        address: to.messageTransmitter,
        event: messageTransmitterAbi.find((x) => x.type === 'event' && x.name === 'MessageReceived')!,
        args: { nonce },
        fromBlock: latest > MINT_LOOKBACK_BLOCKS ? latest - MINT_LOOKBACK_BLOCKS : 0n,
        toBlock: latest,
      });
      const parsed = parseEventLogs({ abi: messageTransmitterAbi, eventName: 'MessageReceived', logs });
      const found = (parsed[0]?.transactionHash ?? null) as Hex | null;
      if (found || attempt >= 2) return found;
      await new Promise((r) => setTimeout(r, 300));
    }
  } catch (err) {
    deps.log.warn({ err, chainId, nonce }, 'the mint of a received message could not be looked up');
    return null;
  }
}

/**
 * A message whose nonce is used on the destination: minted by an earlier attempt of ours whose
 * record was lost, or by someone else. Found in the transmitter's `MessageReceived` logs when it
 * can be; booked as minted, with nothing sent.
 */
export async function recordMintedElsewhere(
  deps: RebalanceRunDeps,
  row: RebalanceRow,
  message: Hex,
  nonce: Hex,
): Promise<void> {
  const txHash = await receivedIn(deps, row.to_chain_id, nonce);
  const fee = decodeMessage(message).burn.feeExecuted;
  const ours = txHash
    ? (await rebalanceTxs(deps.db, row.id)).find((t) => t.hash === txHash.toLowerCase())
    : undefined;
  let gasWei = 0n;
  if (ours) {
    const s = await settleNonce(deps.db, deps.chain, deps.clock, [ours], 0);
    gasWei = s ? gasWeiOf(s) : 0n;
  }
  await withTransaction(deps.db, async (tx) => {
    await updateRebalance(
      tx,
      row.id,
      row.phase,
      {
        message,
        message_nonce: nonce.toLowerCase() as Hex,
        ...(txHash ? { mint_tx: txHash.toLowerCase() as Hex } : {}),
      },
      deps.clock.now(),
    );
  });
  const fresh = await reload(deps, row.id);
  await bookMint(deps, fresh, txHash, fee, gasWei);
}

/** Books the mint (`minted`): the amount less the fee at the wallet, the gas, the event. */
async function bookMint(
  deps: RebalanceRunDeps,
  row: RebalanceRow,
  txHash: Hex | null,
  fee: bigint,
  gasWei: bigint,
): Promise<void> {
  const leg = legOf(deps, row);
  const minted = row.amount - fee;
  const report: RebalanceReport = {
    ...row.report,
    fee: fee.toString(),
    minted: minted.toString(),
    gas_wei: { ...row.report.gas_wei, ...(gasWei > 0n ? { [row.to_chain_id]: gasWei.toString() } : {}) },
  };
  await moveOn(
    deps,
    row,
    row.phase,
    {
      status: 'filled',
      phase: 'minted',
      report,
      ...(txHash ? { mint_tx: txHash.toLowerCase() as Hex } : {}),
    },
    {
      part: 'mint',
      kind: 'bridge.mint',
      entries: mintEntries(leg, row.amount, fee, gasWei),
      memo: txHash ? { tx: txHash } : {},
      ...(txHash ? { claim: { chainId: row.to_chain_id, txHash, blockNumber: null } } : {}),
    },
    {
      kind: 'rebalance.minted',
      payload: { minted: minted.toString(), fee: fee.toString(), mint_tx: txHash },
    },
  );
  deps.log.info({ rebalance: row.id, mint: txHash, minted: minted.toString() }, 'rebalance minted');
}

/** Enqueues the mint job of a rebalance, due after `afterMs`. */
export async function enqueueMintCheck(
  db: DbExecutor,
  deps: Pick<RebalanceRunDeps, 'clock'>,
  id: string,
  afterMs: number,
): Promise<void> {
  const runAt = new Date(deps.clock.now().getTime() + afterMs);
  await enqueueJob(db, deps.clock, {
    name: MINT_JOB,
    payload: { rebalance_id: id },
    runAt,
    singletonKey: `${id}:mint:${runAt.getTime()}`,
  });
}

/**
 * One run of the mint job: settles the submitted mint (waiting up to the route's mint wait for its
 * receipt); `waiting` while it is still submitted (the job looks again), else `done`.
 */
export async function runMintCheck(deps: RebalanceRunDeps, id: string): Promise<'done' | 'waiting'> {
  await settleMint(deps, id, deps.config.cctp.mintWaitMs);
  const row = await findRebalance(deps.db, id, null);
  return row?.phase === 'mint_submitted' && row.status === 'executing' ? 'waiting' : 'done';
}

/**
 * At a start: every rebalance whose mint was submitted gets its mint job now, so a mint a killed
 * process left behind is finished at once (also one recorded before mints had jobs). Returns how
 * many it enqueued.
 */
export async function recoverSubmittedMints(deps: RebalanceRunDeps): Promise<number> {
  const rows = await openRebalances(deps.db, ['mint_submitted'], deps.clock.now(), 500);
  for (const row of rows) await enqueueMintCheck(deps.db, deps, row.id, 0);
  return rows.length;
}
