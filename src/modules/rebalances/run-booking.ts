// Moving a rebalance on: its phase or status changed, in one transaction with its ledger booking
// (settlement `rebalance:<id>:<part>`, claiming the chain transaction it explains) and its event;
// ending one that moved nothing; and booking gas paid for a transaction that moved nothing else.

import type { Hex } from 'viem';
import { withTransaction } from '../../core/db/database.ts';
import { claimChainTransaction } from '../chainwatch/index.ts';
import { emitEvent } from '../events/index.ts';
import { postGroup, type LedgerEntryInput } from '../ledger/index.ts';
import { gasOnlyEntries } from './ledger.ts';
import type { RebalanceRunDeps } from './run-deps.ts';
import {
  updateRebalance,
  type RebalanceChange,
  type RebalancePhase,
  type RebalanceReport,
  type RebalanceRow,
} from './store.ts';

/** A ledger booking of a rebalance: settlement `rebalance:<id>:<part>`. */
export interface Booking {
  part: 'burn' | 'mint' | 'gas';
  kind: string;
  entries: LedgerEntryInput[];
  memo?: Record<string, unknown>;
  /** The transaction whose transfers at the wallet this booking explains (the chain watcher's match). */
  claim?: { chainId: number; txHash: Hex; blockNumber: bigint | null };
}

/**
 * Moves a rebalance on from `fromPhase` and, in the same transaction and only if it moved, books
 * `booking` and emits `event` (its payload after the rebalance's id, chains and amount). False
 * when another run had moved it already.
 */
export async function moveOn(
  deps: RebalanceRunDeps,
  row: RebalanceRow,
  fromPhase: RebalancePhase,
  change: RebalanceChange,
  booking: Booking | null,
  event: { kind: string; payload: Record<string, unknown> },
): Promise<boolean> {
  return withTransaction(deps.db, async (tx) => {
    if (!(await updateRebalance(tx, row.id, fromPhase, change, deps.clock.now()))) return false;
    if (booking) {
      const booked = await postGroup(tx, deps.clock, {
        settlementId: `rebalance:${row.id}:${booking.part}`,
        accountId: row.account_id,
        kind: booking.kind,
        policyHash: `sha256:${row.policy_hash}`,
        entries: booking.entries,
        memo: { rebalance: row.id, ...booking.memo },
      });
      // A booking under this rebalance's settlement id with other entries is a bug: stop here.
      if (!booked.ok)
        throw new Error(`rebalance ${row.id}: booking ${booking.part} refused (${booked.reason})`);
      if (booking.claim) {
        await claimChainTransaction(tx, deps.clock, {
          ...booking.claim,
          wallet: row.wallet,
          groupId: booked.groupId,
        });
      }
    }
    await emitEvent(tx, deps.clock, {
      accountId: row.account_id,
      kind: event.kind,
      subject: row.id,
      payload: {
        id: row.id,
        from_chain_id: row.from_chain_id,
        to_chain_id: row.to_chain_id,
        amount: row.amount.toString(),
        ...event.payload,
      },
    });
    return true;
  });
}

/** Ends a rebalance that moved nothing (`aborted` with a reason, or `cancelled`), with its event. */
export async function end(
  deps: RebalanceRunDeps,
  row: RebalanceRow,
  how: 'aborted' | 'cancelled',
  reason: string,
  detail: string,
  gas?: { chainId: number; wei: bigint },
): Promise<void> {
  const report: RebalanceReport = {
    ...row.report,
    ...(how === 'aborted' ? { abort: { reason, detail } } : { cancel: { reason, detail } }),
    ...(gas && gas.wei > 0n ? { gas_wei: { ...row.report.gas_wei, [gas.chainId]: gas.wei.toString() } } : {}),
  };
  const paid = gas && gas.wei > 0n;
  await moveOn(
    deps,
    row,
    row.phase,
    { status: how, report },
    paid ? { part: 'gas', kind: 'gas', entries: gasOnlyEntries(gas.chainId, row.wallet, gas.wei) } : null,
    // rebalance.aborted or rebalance.cancelled
    { kind: `rebalance.${how}`, payload: { reason, detail } },
  );
  deps.log.info({ rebalance: row.id, how, reason }, 'rebalance ended without moving value');
}

/** Books gas the executor paid for a transaction that moved nothing else (once per transaction). */
export async function bookGas(
  deps: RebalanceRunDeps,
  row: RebalanceRow,
  chainId: number,
  hash: Hex,
  wei: bigint,
) {
  if (wei <= 0n) return;
  const booked = await postGroup(deps.db, deps.clock, {
    settlementId: `rebalance:${row.id}:gas:${hash.toLowerCase()}`,
    accountId: row.account_id,
    kind: 'gas',
    policyHash: `sha256:${row.policy_hash}`,
    entries: gasOnlyEntries(chainId, row.wallet, wei),
    memo: { rebalance: row.id, tx: hash },
  });
  if (!booked.ok) throw new Error(`gas of ${hash} could not be booked: ${booked.reason}`);
}
