// Transmitting an admitted, signed prediction-market order, and what follows: placed (recorded,
// `pm.order.placed` emitted), refused by the venue or out of time budget (closed unsent: exposure
// released, fee reversed), or unanswered (marked, left `transmitting` until the venue is asked
// about its hash; it is never sent twice). With the errors those outcomes answer.

import type { ClobL2Auth, ClobSignedOrderV2 } from '../../adapters/pm-venue/port.ts';
import { VenueRejected, VenueUnavailable } from '../../adapters/pm-venue/port.ts';
import { withTransaction } from '../../core/db/database.ts';
import { AppError, notFound, unavailable } from '../../core/errors/app-error.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { formatUsd } from '../../core/money.ts';
import { emitEvent } from '../events/index.ts';
import { reverseGroup } from '../ledger/index.ts';
import { updateOrder, type PmOrderRow } from './orders-store.ts';
import type { OrderDeps, PlacedOrder } from './orders-types.ts';

/** Transmits an admitted, signed order: the budget checked before, never after. */
export async function transmit(
  deps: OrderDeps,
  row: PmOrderRow,
  signed: ClobSignedOrderV2,
  auth: ClobL2Auth,
  deadline: Deadline,
  giveBack: () => Promise<void>,
): Promise<PlacedOrder> {
  const orderHash = row.order_hash!;
  if (deadline.expired()) {
    await giveBack();
    await closeUnsent(deps, row, 'rejected', 'the time budget ran out before the transmit');
    throw deadline.exceeded('before transmitting the order');
  }
  let answer;
  try {
    deadline.markTransmitted(`order ${orderHash}`);
    answer = await deps.clob.postOrder(
      auth,
      signed,
      { orderType: 'GTC' },
      { timeoutMs: deadline.remainingMs() },
    );
  } catch (err) {
    if (err instanceof VenueRejected) {
      await closeUnsent(deps, row, 'rejected', err.message);
      throw venueRefusal(err.message);
    }
    if (err instanceof VenueUnavailable) {
      // Marked, so a retry with the key knows the first request ended and asks the venue.
      await deps.db
        .updateTable('pm_orders')
        .set({ unanswered_at: deps.clock.now() })
        .where('id', '=', row.id)
        .where('status', '=', 'transmitting')
        .execute();
      throw unansweredError(orderHash);
    }
    throw err;
  }
  // Crash tests: the venue has the order, Purser has not recorded it (the reconciler finds it).
  if (deps.config.pm.faultCrash === 'after_transmit') process.kill(process.pid, 'SIGKILL');
  const placed = await recordPlaced(deps, row, answer.status);
  return placedView(placed);
}

/** An order that never left (refused by the venue, or out of budget): exposure released, fee reversed. */
export async function closeUnsent(
  deps: OrderDeps,
  row: PmOrderRow,
  status: 'rejected' | 'swept',
  why: string,
): Promise<void> {
  await withTransaction(deps.db, async (tx) => {
    const closed = await updateOrder(
      tx,
      row.id,
      ['transmitting', 'prepared'],
      { status, venue_error: why.slice(0, 500) },
      deps.clock.now(),
    );
    if (!closed || !closed.fee_group_id) return;
    const reversed = await reverseGroup(tx, deps.clock, {
      groupId: closed.fee_group_id,
      accountId: row.account_id,
      reason: `pm order ${row.id} not placed`,
    });
    if (!reversed.ok) throw new Error(`the fee of ${row.id} could not be reversed: ${reversed.reason}`);
  });
}

/** The order is at the venue: recorded placed with the venue's status, `pm.order.placed` emitted. */
export async function recordPlaced(
  deps: OrderDeps,
  row: PmOrderRow,
  venueStatus: string,
): Promise<PmOrderRow> {
  return withTransaction(deps.db, async (tx) => {
    const placed = await updateOrder(
      tx,
      row.id,
      ['transmitting'],
      { status: 'placed', venue_status: venueStatus },
      deps.clock.now(),
    );
    if (!placed) throw notFound(`Order ${row.id} changed while it was transmitted.`);
    await emitEvent(tx, deps.clock, {
      accountId: row.account_id,
      kind: 'pm.order.placed',
      subject: row.id,
      payload: {
        id: row.id,
        venue: 'polymarket',
        order_id: row.order_hash,
        wallet: row.wallet,
        condition_id: row.condition_id,
        token_id: row.token_id,
        side: row.side,
        price_usd: formatUsd(BigInt(row.price_micro)),
        size_shares: formatUsd(BigInt(row.size_micro)),
        cost_usd: formatUsd(BigInt(row.notional_micro)),
        fee_usd: formatUsd(BigInt(row.fee_micro)),
        venue_status: venueStatus,
        client_order_id: row.client_order_id,
      },
    });
    return placed;
  });
}

/** A placed order as POST /v1/pm/orders answers it. */
export function placedView(row: PmOrderRow): PlacedOrder {
  return {
    venue: 'polymarket',
    order_id: row.order_hash!,
    status: row.venue_status ?? row.status,
    cost_usd: formatUsd(BigInt(row.notional_micro)),
    fee_usd: formatUsd(BigInt(row.fee_micro)),
    policy_version: row.policy_version,
  };
}

/** 422 VENUE_REJECTED: the venue refused the order; nothing was placed and its fee was reversed. */
export function venueRefusal(reason: string): AppError {
  return new AppError('VENUE_REJECTED', `polymarket refused the order: ${reason}`, {
    remediation: 'Nothing was placed; its fee was reversed. Adjust the order and retry.',
  });
}

/** 503: the venue did not answer the transmit; the order is decided by its hash, never sent again. */
export function unansweredError(orderHash: string): AppError {
  return unavailable(
    `polymarket did not answer the order ${orderHash}: it is placed once or not at all, and Purser asks ` +
      'the venue about its hash before anything else happens to it.',
    {
      remediation:
        'Retry with the same Idempotency-Key, or read GET /v1/pm/orders in a minute; do not place it again under a new client_order_id.',
      next: [],
    },
  );
}
