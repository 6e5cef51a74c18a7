// Reconciling prediction-market orders whose transmit got no answer (a venue timeout, a crash
// between transmit and record): the venue is asked about the order's hash (its order, else its
// trades); placed once it shows there, closed with its fee reversed when it never did. Nothing is
// ever sent again.

import { getAddress } from 'viem';
import type { ClobL2Auth, ClobTrade } from '../../adapters/pm-venue/port.ts';
import { withTransaction } from '../../core/db/database.ts';
import { transmittingBefore, type PmOrderRow } from './orders-store.ts';
import { closeUnsent, recordPlaced } from './orders-transmit.ts';
import type { OrderDeps } from './orders-types.ts';
import { clobCredsOf } from './types.ts';
import { useCredential } from './usage.ts';

/** How long an unanswered order waits before the venue is asked about it. */
export const RECONCILE_AFTER_MS = 30_000;
/** An order the venue still does not know after this long never arrived: closed, fee reversed. */
export const UNKNOWN_AFTER_MS = 10 * 60_000;

/** The reconciler (a job): transmitting orders unanswered for RECONCILE_AFTER_MS, up to 100 a run. */
export async function reconcileTransmitting(
  deps: OrderDeps,
  log: { warn(obj: object, msg: string): void },
): Promise<{ placed: number; closed: number; pending: number }> {
  const now = deps.clock.now().getTime();
  const rows = await transmittingBefore(deps.db, new Date(now - RECONCILE_AFTER_MS), 100);
  const out = { placed: 0, closed: 0, pending: 0 };
  for (const row of rows) {
    try {
      out[await reconcileOrder(deps, row)] += 1;
    } catch (err) {
      log.warn(
        { err: (err as Error).message, order: row.id },
        'a transmitting order could not be reconciled yet',
      );
      out.pending += 1;
    }
  }
  return out;
}

/**
 * Asks the venue about one transmitting order's hash (its order, else its trades): `placed` once it
 * shows there; `closed` (fee reversed) when it never did for UNKNOWN_AFTER_MS; else `pending`. A
 * revoked credential cannot ask: `pending`. Never sends anything.
 */
export async function reconcileOrder(
  deps: OrderDeps,
  row: PmOrderRow,
): Promise<'placed' | 'closed' | 'pending'> {
  const used = await withTransaction(deps.db, (tx) =>
    useCredential(tx, deps, {
      accountId: row.account_id,
      credentialId: row.credential_id,
      operation: 'orders.read',
      actor: null,
    }),
  );
  if (!used || used.material.venue !== 'polymarket' || !used.row.signer_address) return 'pending';
  const auth: ClobL2Auth = {
    address: getAddress(used.row.signer_address),
    creds: clobCredsOf(used.material),
  };
  const found = await deps.clob.getOrder(auth, row.order_hash!);
  const status = found ? found.status.toLowerCase() : await statusFromTrades(deps, auth, row);
  if (status) {
    await recordPlaced(deps, row, status);
    return 'placed';
  }
  if (deps.clock.now().getTime() - new Date(row.updated_at).getTime() > UNKNOWN_AFTER_MS) {
    await closeUnsent(deps, row, 'rejected', 'the venue never showed the order');
    return 'closed';
  }
  return 'pending';
}

/** Pages of trades the reconciler reads at most when looking for an order. */
const TRADE_PAGES = 5;

/**
 * `matched` when one of the venue's trades of the order's market and outcome, since shortly before
 * the order was recorded, names it as taker or maker. The live `GET /data/order` was reported to
 * answer nothing for an order that matched in full at once: its trades still show it.
 */
async function statusFromTrades(deps: OrderDeps, auth: ClobL2Auth, row: PmOrderRow): Promise<string | null> {
  const hash = row.order_hash!.toLowerCase();
  const after = Math.floor(new Date(row.created_at).getTime() / 1000) - 60;
  let cursor: string | undefined;
  for (let page = 0; page < TRADE_PAGES; page += 1) {
    const answer = await deps.clob.trades(auth, {
      market: row.condition_id,
      assetId: row.token_id,
      after,
      ...(cursor ? { cursor } : {}),
    });
    const names = (t: ClobTrade) =>
      t.taker_order_id.toLowerCase() === hash ||
      t.maker_orders.some((m) => m.order_id.toLowerCase() === hash);
    if (answer.trades.some(names)) return 'matched';
    if (!answer.nextCursor) return null;
    cursor = answer.nextCursor;
  }
  return null;
}
