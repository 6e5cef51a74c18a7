// The credential's resting orders at the venue (venue-authoritative): listed, cancelled one by one,
// or all of them (one market's) in batches. Authenticated with the stored credential (a use),
// through the venue's read and cancel lanes, never blocked by a switch; what the venue cancelled
// is marked so its exposure is released.

import { VenueRejected, VenueUnavailable } from '../../adapters/pm-venue/port.ts';
import { withTransaction } from '../../core/db/database.ts';
import { AppError } from '../../core/errors/app-error.ts';
import type { Actor } from '../../core/http/actor.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { emitEvent } from '../events/index.ts';
import type { OrderDeps } from './orders-types.ts';
import { takeLane, takeLaneToken, venueAuth, venueFailure } from './orders-venue.ts';

export interface RestingOrder {
  order_id: string;
  status: string;
  market: string;
  token_id: string;
  side: 'buy' | 'sell';
  price_usd: string;
  original_size_shares: string;
  matched_size_shares: string;
  outcome: string;
  created_at: string;
}

/** The venue's resting orders of the credential (venue-authoritative). */
export async function listRestingOrders(
  deps: OrderDeps,
  actor: Actor,
  query: { credential_id: string; market?: string | undefined },
  deadline: Deadline,
): Promise<{ orders: RestingOrder[] }> {
  await takeLane(deps, 'reads');
  const auth = await venueAuth(deps, actor, query.credential_id, 'orders.read');
  deadline.check('reading the venue');
  let open;
  try {
    open = await deps.clob.openOrders(auth, query.market ? { market: query.market } : {}, {
      timeoutMs: deadline.remainingMs(),
    });
  } catch (err) {
    throw venueFailure(err, 'the open-orders read');
  }
  return {
    orders: open.map((o) => ({
      order_id: o.id.toLowerCase(),
      status: o.status,
      market: o.market,
      token_id: o.asset_id,
      side: o.side === 'BUY' ? ('buy' as const) : ('sell' as const),
      price_usd: o.price,
      original_size_shares: o.original_size,
      matched_size_shares: o.size_matched,
      outcome: o.outcome,
      created_at: new Date(o.created_at * 1000).toISOString(),
    })),
  };
}

/** Marks the account's orders the venue cancelled: their exposure is released (events per order). */
async function recordCancelled(deps: OrderDeps, accountId: string, orderIds: string[]): Promise<void> {
  if (orderIds.length === 0) return;
  await withTransaction(deps.db, async (tx) => {
    const rows = await tx
      .updateTable('pm_orders')
      .set({ status: 'cancelled', venue_status: 'CANCELED', updated_at: deps.clock.now() })
      .where('account_id', '=', accountId)
      .where(
        'order_hash',
        'in',
        orderIds.map((i) => i.toLowerCase()),
      )
      .where('status', 'in', ['placed', 'transmitting'])
      .returning(['id', 'order_hash', 'wallet'])
      .execute();
    for (const r of rows) {
      await emitEvent(tx, deps.clock, {
        accountId,
        kind: 'pm.order.cancelled',
        subject: r.id,
        payload: { id: r.id, venue: 'polymarket', order_id: r.order_hash, wallet: r.wallet },
      });
    }
  });
}

/** Cancels one resting order at the venue; a refusal names the venue's reason. */
export async function cancelOne(
  deps: OrderDeps,
  actor: Actor,
  orderId: string,
  credentialId: string,
  deadline: Deadline,
): Promise<{ venue: 'polymarket'; order_id: string; status: string }> {
  await takeLane(deps, 'cancels');
  const auth = await venueAuth(deps, actor, credentialId, 'order.cancel');
  deadline.check('transmitting the cancel');
  let result;
  try {
    result = await deps.clob.cancelOrder(auth, orderId, { timeoutMs: deadline.remainingMs() });
  } catch (err) {
    throw venueFailure(err, 'the cancel');
  }
  const done = result.canceled.some((c) => c.toLowerCase() === orderId.toLowerCase());
  if (!done) {
    const why = Object.entries(result.notCanceled).find(
      ([k]) => k.toLowerCase() === orderId.toLowerCase(),
    )?.[1];
    throw new AppError(
      'VENUE_REJECTED',
      `polymarket did not cancel ${orderId}: ${why ?? 'no reason given'}.`,
      {
        remediation: 'It may be filled or cancelled already: read GET /v1/pm/orders.',
      },
    );
  }
  await recordCancelled(deps, actor.principal.accountId, [orderId]);
  return { venue: 'polymarket', order_id: orderId.toLowerCase(), status: 'cancelled' };
}

/** Order ids per `DELETE /orders` call of a cancel-all run; the budget is checked before each. */
export const CANCEL_BATCH = 100;

/**
 * Cancels the credential's resting orders (one market's with `market`): lists them, then cancels
 * them in batches, checking the time budget and taking a cancel-lane token before each batch after
 * the first. A run that started and then ran out of budget or lane, or lost the venue, answers what
 * it cancelled with `complete: false` and the ids it could not cancel; they are still listed at the
 * venue for the next run. Orders placed while a run runs are not in it.
 */
export async function cancelAllOf(
  deps: OrderDeps,
  actor: Actor,
  query: { credential_id: string; market?: string | undefined },
  deadline: Deadline,
  batchSize = CANCEL_BATCH,
): Promise<{
  venue: 'polymarket';
  cancelled: number;
  order_ids: string[];
  failed_order_ids?: string[];
  complete: boolean;
}> {
  await takeLane(deps, 'cancels');
  const auth = await venueAuth(deps, actor, query.credential_id, 'order.cancel');
  deadline.check('reading the open orders to cancel');
  let ids: string[];
  try {
    const open = await deps.clob.openOrders(auth, query.market ? { market: query.market } : {}, {
      timeoutMs: deadline.remainingMs(),
    });
    ids = open.map((o) => o.id.toLowerCase());
  } catch (err) {
    throw venueFailure(err, 'the open orders read');
  }
  const cancelled: string[] = [];
  const failed: string[] = [];
  let stopped = false;
  for (let at = 0; at < ids.length; at += batchSize) {
    const batch = ids.slice(at, at + batchSize);
    if (!stopped && at > 0) stopped = !(await takeLaneToken(deps, 'cancels')).ok;
    if (!stopped && deadline.expired()) stopped = true;
    if (stopped) {
      failed.push(...batch);
      continue;
    }
    try {
      const result = await deps.clob.cancelOrders(auth, batch, { timeoutMs: deadline.remainingMs() });
      const done = result.canceled.map((i) => i.toLowerCase());
      cancelled.push(...done);
      await recordCancelled(deps, actor.principal.accountId, done);
      const kept = new Set(Object.keys(result.notCanceled).map((i) => i.toLowerCase()));
      failed.push(...batch.filter((i) => kept.has(i) || !done.includes(i)));
    } catch (err) {
      if (!(err instanceof VenueRejected) && !(err instanceof VenueUnavailable)) throw err;
      // A refusal or no answer: this batch may or may not be cancelled; the rest is not tried.
      failed.push(...batch);
      stopped = true;
    }
  }
  return {
    venue: 'polymarket',
    cancelled: cancelled.length,
    order_ids: cancelled,
    ...(failed.length > 0 ? { failed_order_ids: failed } : {}),
    complete: failed.length === 0,
  };
}
