// How an executing intent ends, in one transaction: `filled` when every part of its plan landed,
// or `aborted` with its reason. Its fills were ledgered already, slice by slice (book.ts); here the
// spend reservation settles by the USD value that filled (released when nothing did), the fee is
// reversed only for an abort with no fill, and the intent's event and audit fact are written.

import type { Clock } from '../../core/clock.ts';
import { withTransaction, type Db } from '../../core/db/database.ts';
import { formatUsd } from '../../core/money.ts';
import { recordAudit } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import { endExecutingIntent, findIntentById, type IntentRow } from '../intents/index.ts';
import { reverseGroup } from '../ledger/index.ts';
import { releaseReservation, settleReservation } from '../policies/index.ts';
import { releaseLanes } from './lanes.ts';
import { runReport, type Abort } from './report.ts';

const actor = 'executor';

export type IntentEnd = { status: 'filled' } | { status: 'aborted'; abort: Abort };

/**
 * The USD value of what filled: the intent's admitted value in proportion to what it sold,
 * rounded up (micro-USD), so the caps count a partial fill for what it was.
 */
export function filledValueMicro(row: IntentRow, sold: bigint): bigint {
  const total = BigInt(row.params.sell_amount);
  if (sold <= 0n || total <= 0n) return 0n;
  const value = BigInt(row.value_micro_usd);
  const filled = (value * sold + total - 1n) / total;
  return filled > value ? value : filled;
}

/** Ends an executing intent (see the file comment); returns the ended row. */
export async function finishIntent(
  deps: { db: Db; clock: Clock },
  id: string,
  end: IntentEnd,
): Promise<IntentRow> {
  return withTransaction(deps.db, async (tx) => {
    const row = await findIntentById(tx, id, true);
    if (!row || row.status !== 'executing') {
      throw new Error(`intent ${id} is ${row?.status ?? 'missing'}: only an executing intent is ended`);
    }
    const now = deps.clock.now();
    const report = runReport(row);
    const sold = BigInt(report.totals.sold);
    const filledMicro = filledValueMicro(row, sold);
    report.totals.filled_value_usd = formatUsd(filledMicro);
    const params =
      end.status === 'aborted'
        ? { ...row.params, abort: { reason: end.abort.reason, detail: end.abort.detail } }
        : row.params;
    const updated = await endExecutingIntent(tx, id, { status: end.status, params, report, at: now });
    if (!updated) throw new Error(`intent ${id} changed while it was ended`);
    await releaseLanes(tx, id);

    // The hold: what filled counts against the caps from now on; the rest is given back. A hold
    // that expired during a long run stopped counting at its expiry and stays as it is.
    if (row.reservation_id) {
      const reservation = { accountId: row.account_id, reservationId: row.reservation_id };
      if (filledMicro > 0n)
        await settleReservation(tx, deps.clock, { ...reservation, settledMicroUsd: filledMicro });
      else await releaseReservation(tx, deps.clock, reservation);
    }
    let feeReversed = false;
    if (end.status === 'aborted' && sold === 0n && row.fee_group_id) {
      const reversed = await reverseGroup(tx, deps.clock, {
        groupId: row.fee_group_id,
        accountId: row.account_id,
        reason: `intent ${id} aborted ${end.abort.reason} with no fill`,
      });
      if (!reversed.ok && reversed.reason !== 'conflict') {
        throw new Error(`fee of intent ${id} could not be reversed: ${reversed.reason}`);
      }
      feeReversed = true;
    }
    const kind = end.status === 'filled' ? 'intent.filled' : 'intent.aborted';
    const facts =
      end.status === 'filled'
        ? { id, wallet: row.wallet, kind: row.kind, ...report.totals, slices: report.slices.length }
        : {
            id,
            wallet: row.wallet,
            kind: row.kind,
            reason: end.abort.reason,
            detail: end.abort.detail,
            fee_reversed: feeReversed,
            ...report.totals,
          };
    await emitEvent(tx, deps.clock, { accountId: row.account_id, kind, subject: id, payload: facts });
    await recordAudit(tx, deps.clock, {
      accountId: row.account_id,
      actor,
      action: kind,
      subject: id,
      details: facts,
    });
    return {
      ...row,
      status: end.status,
      params,
      report: report as unknown as Record<string, unknown>,
      updated_at: now,
    };
  });
}

/** Aborts an executing intent (see finishIntent): its fills stay, and with none its fee is reversed. */
export function abortIntent(deps: { db: Db; clock: Clock }, id: string, abort: Abort): Promise<IntentRow> {
  return finishIntent(deps, id, { status: 'aborted', abort });
}
