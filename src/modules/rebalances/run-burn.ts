// The burn of a rebalance: approve + depositForBurn signed by the executor key and recorded before
// broadcast (from `burn_pending`), sent, settled, and booked (`awaiting_attestation`) or ended
// (cancelled by a switch, aborted when the burn reverted or was dropped). Re-entrant after a crash:
// it sends the recorded bytes again.

import { getAddress, type Hex } from 'viem';
import { withTransaction } from '../../core/db/database.ts';
import { AppError } from '../../core/errors/app-error.ts';
import { assertExecutionEnabled } from '../switches/index.ts';
import { approveCall, depositForBurnCall, messageSentIn } from './cctp.ts';
import { burnEntries } from './ledger.ts';
import { end, moveOn } from './run-booking.ts';
import { replaceStale, send } from './run-broadcast.ts';
import { cctpOf, crash, GAS, legOf, reload, signer, usdcOf, type RebalanceRunDeps } from './run-deps.ts';
import {
  findRebalance,
  rebalanceTxs,
  updateRebalance,
  type RebalanceReport,
  type RebalanceRow,
} from './store.ts';
import {
  byNonce,
  gasWeiOf,
  readChainState,
  settleNonce,
  signAndRecord,
  type Settled,
} from './transactions.ts';

export type BurnStep = { state: 'done' } | { state: 'waiting' };

/**
 * One run of the burn: signs and records approve + depositForBurn (from `burn_pending`), sends
 * what is recorded, waits for the receipts and books the burn (`awaiting_attestation`). Re-entrant:
 * after a crash it sends the recorded bytes again. `waiting` when the receipts did not come in time.
 */
export async function runBurn(deps: RebalanceRunDeps, id: string): Promise<BurnStep> {
  let row = await reload(deps, id);
  if (row.status !== 'planned' && row.status !== 'executing') return { state: 'done' };
  if (row.phase === 'burn_pending') {
    try {
      await assertExecutionEnabled(
        deps.db,
        { accountId: row.account_id, wallet: row.wallet },
        { fresh: true },
      );
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'EXECUTION_DISABLED') throw err;
      await end(deps, row, 'cancelled', 'EXECUTION_DISABLED', err.message);
      return { state: 'done' };
    }
    const account = signer(deps.config);
    const from = cctpOf(deps.config, row.from_chain_id);
    const to = cctpOf(deps.config, row.to_chain_id);
    const usdc = usdcOf(deps.registry, row.from_chain_id);
    const state = await readChainState(deps.chain, row.from_chain_id, account.address);
    const burn = depositForBurnCall({
      amount: row.amount,
      destinationDomain: to.domain,
      mintRecipient: getAddress(row.wallet),
      burnToken: usdc,
      destinationCaller: account.address,
      maxFee: row.max_fee,
      finality: row.finality,
    });
    await withTransaction(deps.db, async (tx) => {
      const locked = await findRebalance(tx, id, null, { lock: true });
      if (locked?.phase !== 'burn_pending' || locked.status !== 'planned') return;
      const signed = await signAndRecord(tx, deps.clock, account, row.from_chain_id, state, id, [
        {
          purpose: 'rebalance.approve',
          to: usdc,
          data: approveCall(from.tokenMessenger, row.amount),
          gas: GAS.approve,
        },
        { purpose: 'rebalance.burn', to: from.tokenMessenger, data: burn, gas: GAS.burn },
      ]);
      await updateRebalance(
        tx,
        id,
        'burn_pending',
        { status: 'executing', phase: 'burn_submitted', burn_tx: signed[1]!.hash.toLowerCase() as Hex },
        deps.clock.now(),
      );
    });
    row = await reload(deps, id);
  }
  if (row.phase !== 'burn_submitted') return { state: 'done' };

  const groups = byNonce((await rebalanceTxs(deps.db, id)).filter((t) => t.purpose !== 'rebalance.mint'));
  for (const g of groups) if (g.at(-1)!.state === 'signed') await send(deps, g.at(-1)!);
  crash(deps, 'after_burn_broadcast');
  const settled: Settled[] = [];
  for (const g of groups) {
    const s = await settleNonce(deps.db, deps.chain, deps.clock, g, deps.config.cctp.receiptTimeoutMs);
    if (!s) {
      await replaceStale(deps, row, groups);
      return { state: 'waiting' };
    }
    settled.push(s);
  }
  await recordBurn(deps, row, settled);
  return { state: 'done' };
}

/** Books what the burn's transactions did: the burn (awaiting attestation), or an abort. */
async function recordBurn(deps: RebalanceRunDeps, row: RebalanceRow, txs: Settled[]): Promise<void> {
  const gasWei = txs.reduce((sum, t) => sum + gasWeiOf(t), 0n);
  // The burn alone decides: it may land on an allowance an earlier approve left even when its own
  // approve did not, and then the USDC is gone from the wallet whatever became of the approve.
  const burn = txs.find((t) => t.purpose === 'rebalance.burn');
  if (!burn) throw new Error(`rebalance ${row.id} is burn_submitted without a recorded burn`);
  if (burn.state !== 'mined') {
    const dropped = burn.state === 'dropped';
    const detail = dropped
      ? `the burn transaction ${burn.hash} was never mined: its nonce went to another transaction`
      : `the burn transaction ${burn.hash} reverted; nothing left the wallet`;
    await end(deps, row, 'aborted', dropped ? 'BURN_DROPPED' : 'BURN_REVERTED', detail, {
      chainId: row.from_chain_id,
      wei: gasWei,
    });
    return;
  }
  const receipt = await deps.chain.getReceipt(burn.chainId, burn.hash);
  const message = receipt
    ? messageSentIn(receipt.logs, cctpOf(deps.config, row.from_chain_id).messageTransmitter)
    : null;
  const leg = legOf(deps, row);
  const report: RebalanceReport = { ...row.report, gas_wei: { [row.from_chain_id]: gasWei.toString() } };
  await moveOn(
    deps,
    row,
    'burn_submitted',
    {
      phase: 'awaiting_attestation',
      burn_tx: burn.hash.toLowerCase() as Hex,
      report,
      ...(message ? { message } : {}),
    },
    {
      part: 'burn',
      kind: 'bridge.burn',
      entries: burnEntries(leg, row.amount, gasWei),
      memo: { tx: burn.hash },
      claim: { chainId: row.from_chain_id, txHash: burn.hash, blockNumber: receipt?.blockNumber ?? null },
    },
    { kind: 'rebalance.burned', payload: { burn_tx: burn.hash } },
  );
  deps.log.info({ rebalance: row.id, burn: burn.hash }, 'rebalance burned; awaiting attestation');
}
