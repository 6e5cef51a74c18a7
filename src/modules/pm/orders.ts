// Prediction-market orders (docs/prediction-markets.md, "Orders"), hosted flow: every check before
// anything leaves. The order is checked against the wallet's prediction_markets policy and its open
// exposure (under a per-wallet lock, exact under concurrency), its client_order_id claimed, its fee
// debited and the order recorded, in one transaction; only then is it signed and transmitted, the
// budget checked before the transmit and never after. A refusal by the venue releases the exposure
// and reverses the fee; an answer that never came leaves the order `transmitting` until the venue
// is asked about its hash: an order is never sent twice.
//
// Idempotency-Key: an order reaches the venue, so its key cannot live in a transaction around the
// request. It is recorded on the order (claimed by a unique index in the admission's transaction,
// so of concurrent requests with one key exactly one is admitted, transmitted and charged), and a
// retry with the key is answered from the order as it is now: placed (201, the first answer),
// refused (422, as the first), still in flight (409), or, when the first request got no answer
// from the venue, after asking the venue about the order's hash (201 once it shows, 503 while it
// does not). The same key with another request is IDEMPOTENCY_CONFLICT (422).
//
// This file holds the placing flows (hosted, and client-signed: prepare, then submit) and their
// Idempotency-Key; the steps are in orders-admit.ts (the checks and the admission's transaction),
// orders-transmit.ts (the transmit and its outcomes), orders-reconcile.ts (unanswered orders),
// orders-venue.ts (rate lanes, the credential's L2 authentication, venue failures),
// orders-resting.ts (listing and cancelling resting orders) and orders-export.ts.

import { getAddress, recoverTypedDataAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { orderTypedDataV2, signOrderV2 } from '../../adapters/pm-venue/polymarket.ts';
import type { ClobL2Auth, ClobOrderV2 } from '../../adapters/pm-venue/port.ts';
import { type DbExecutor, withTransaction } from '../../core/db/database.ts';
import { AppError, invalidRequest, notFound } from '../../core/errors/app-error.ts';
import type { Actor } from '../../core/http/actor.ts';
import { inFlight, keyReusedError } from '../../core/http/idempotency.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { formatUsd } from '../../core/money.ts';
import { noActiveCredential } from './credentials.ts';
import { admitOrder, KeyedOrderExists } from './orders-admit.ts';
import { reconcileOrder } from './orders-reconcile.ts';
import { findKeyedOrder, updateOrder, type PmOrderRow } from './orders-store.ts';
import { closeUnsent, placedView, transmit, unansweredError, venueRefusal } from './orders-transmit.ts';
import type {
  KeyedAnswer,
  OrderDeps,
  OrderKey,
  PlacedOrder,
  PlaceOrderBody,
  PreparedOrder,
} from './orders-types.ts';
import { takeOrderToken } from './orders-venue.ts';
import { clobCredsOf } from './types.ts';
import { useCredential } from './usage.ts';

export type {
  KeyedAnswer,
  OrderDeps,
  OrderKey,
  PlacedOrder,
  PlaceOrderBody,
  PreparedOrder,
} from './orders-types.ts';
export { PREPARE_TTL_MS } from './orders-admit.ts';
export { placedView } from './orders-transmit.ts';
export { RECONCILE_AFTER_MS, reconcileTransmitting, UNKNOWN_AFTER_MS } from './orders-reconcile.ts';
export { takeLane, venueAuth, venueFailure } from './orders-venue.ts';
export {
  CANCEL_BATCH,
  cancelAllOf,
  cancelOne,
  listRestingOrders,
  type RestingOrder,
} from './orders-resting.ts';
export { exportOrders } from './orders-export.ts';

/** Places a limit order with a stored hosted credential. */
export async function placeOrder(
  deps: OrderDeps,
  actor: Actor,
  body: PlaceOrderBody,
  deadline: Deadline,
  key: OrderKey | null = null,
): Promise<PlacedOrder> {
  const admitted = await admitOrder(deps, actor, body, deadline, 'hosted', key);
  const { signerKey, auth } = admitted.hosted!;
  const signed = await signOrderV2(admitted.order, privateKeyToAccount(signerKey), admitted.venueSpec);
  return transmit(deps, admitted.row, signed, auth, deadline, admitted.giveBack);
}

/** JSON-safe typed data: uint256 values as decimal strings (as eth_signTypedData_v4 takes them). */
function jsonTypedData(data: ReturnType<typeof orderTypedDataV2>): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(data, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)),
  ) as Record<string, unknown>;
}

/** First half of the client-signed flow: every check, exposure reserved and fee debited on a prepared order. */
export async function prepareOrder(
  deps: OrderDeps,
  actor: Actor,
  body: PlaceOrderBody,
  deadline: Deadline,
  key: OrderKey | null = null,
): Promise<PreparedOrder> {
  const admitted = await admitOrder(deps, actor, body, deadline, 'client_signed', key);
  // The order token is spent at the transmit: give it back now, the submit takes its own.
  await admitted.giveBack();
  return preparedView(admitted.row, deps.config.pm.chainId);
}

/** A prepared order as POST /v1/pm/orders/prepare answers it (rebuilt alike from its record). */
function preparedView(row: PmOrderRow, chainId: number): PreparedOrder {
  const { order, neg_risk: negRisk } = row.order_struct as { order: ClobOrderV2; neg_risk: boolean };
  return {
    venue: 'polymarket',
    prepare_id: row.id,
    client_order_id: row.client_order_id,
    typed_data: jsonTypedData(orderTypedDataV2(order, { chainId, negRisk })),
    order,
    cost_usd: formatUsd(BigInt(row.notional_micro)),
    fee_usd: formatUsd(BigInt(row.fee_micro)),
    policy_version: row.policy_version,
    expires_at: new Date(row.expires_at!).toISOString(),
  };
}

/** POST /v1/pm/orders under its Idempotency-Key (see the file comment). */
export async function placeOrderOnce(
  deps: OrderDeps,
  actor: Actor,
  body: PlaceOrderBody,
  deadline: Deadline,
  key: OrderKey | null,
): Promise<KeyedAnswer<PlacedOrder>> {
  return underKey(
    deps,
    actor,
    key,
    () => placeOrder(deps, actor, body, deadline, key),
    (row) => replayPlacement(deps, row, key!.fingerprint, row.request_fingerprint),
  );
}

/** POST /v1/pm/orders/prepare under its Idempotency-Key: a replay answers the prepared order again. */
export async function prepareOrderOnce(
  deps: OrderDeps,
  actor: Actor,
  body: PlaceOrderBody,
  deadline: Deadline,
  key: OrderKey | null,
): Promise<KeyedAnswer<PreparedOrder>> {
  return underKey(
    deps,
    actor,
    key,
    () => prepareOrder(deps, actor, body, deadline, key),
    async (row) => {
      if (row.request_fingerprint !== key!.fingerprint) throw keyReusedError();
      return preparedView(row, deps.config.pm.chainId);
    },
  );
}

/** Runs `first` unless an order holds the key already (before, or by a concurrent request): `replay` it. */
async function underKey<T>(
  deps: OrderDeps,
  actor: Actor,
  key: OrderKey | null,
  first: () => Promise<T>,
  replay: (row: PmOrderRow) => Promise<T>,
): Promise<KeyedAnswer<T>> {
  const prior = key ? await findKeyedOrder(deps.db, actor.principal.accountId, key.key) : null;
  if (prior) return { body: await replay(prior), replayed: true };
  try {
    return { body: await first(), replayed: false };
  } catch (err) {
    if (!(err instanceof KeyedOrderExists)) throw err;
    return { body: await replay(err.row), replayed: true };
  }
}

/**
 * A transmitted order, answered again for a retry with its key: as it is now. The first request
 * still running is 409; one whose transmit got no answer is looked up at the venue by its hash
 * first (placed once it shows there; 503 as the first answer while it does not).
 */
async function replayPlacement(
  deps: OrderDeps,
  row: PmOrderRow,
  fingerprint: string,
  recorded: string | null,
): Promise<PlacedOrder> {
  if (recorded !== fingerprint) throw keyReusedError();
  let now = row;
  if (now.status === 'transmitting') {
    if (now.unanswered_at === null) throw inFlight();
    await reconcileOrder(deps, now).catch(() => 'pending');
    now = (await orderById(deps.db, row.id)) ?? now;
  }
  switch (now.status) {
    case 'placed':
    case 'cancelled':
    case 'filled':
      return placedView(now);
    case 'transmitting':
      throw unansweredError(now.order_hash!);
    case 'rejected':
      throw venueRefusal(now.venue_error ?? 'refused');
    default:
      throw notFound(`Order ${now.id} was never transmitted (${now.status}).`);
  }
}

async function orderById(db: DbExecutor, id: string): Promise<PmOrderRow | undefined> {
  return db.selectFrom('pm_orders').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Second half: the signature must recover to the declared signer before expires_at; then transmitted. */
export async function submitOrder(
  deps: OrderDeps,
  actor: Actor,
  body: { prepare_id: string; signature: string },
  deadline: Deadline,
  key: OrderKey | null = null,
): Promise<KeyedAnswer<PlacedOrder>> {
  const accountId = actor.principal.accountId;
  const row = await deps.db
    .selectFrom('pm_orders')
    .selectAll()
    .where('id', '=', body.prepare_id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  // A retry of the submit that claimed it: the order as it is now.
  if (key && row && row.submit_key === key.key) {
    return {
      body: await replayPlacement(deps, row, key.fingerprint, row.submit_fingerprint),
      replayed: true,
    };
  }
  const gone = () =>
    notFound(`No prepared order ${body.prepare_id} awaits a signature (expired, submitted or unknown).`, {
      remediation: 'Prepare the order again with POST /v1/pm/orders/prepare.',
      next: [{ method: 'POST', path: '/v1/pm/orders/prepare', why: 'prepare it again' }],
    });
  if (!row || row.flow !== 'client_signed') throw gone();
  if (row.status === 'transmitting') {
    throw new AppError('CONFLICT', `Prepared order ${row.id} is being submitted already.`, {
      remediation: 'Read GET /v1/pm/orders in a moment.',
    });
  }
  if (row.status !== 'prepared' || new Date(row.expires_at!).getTime() <= deps.clock.now().getTime())
    throw gone();
  const { order, neg_risk: negRisk } = row.order_struct as { order: ClobOrderV2; neg_risk: boolean };
  const venueSpec = { chainId: deps.config.pm.chainId, negRisk };
  let recovered: string;
  try {
    recovered = await recoverTypedDataAddress({
      ...orderTypedDataV2(order, venueSpec),
      signature: body.signature as Hex,
    });
  } catch {
    throw invalidRequest('signature: not a 65-byte ECDSA signature of the prepared order.');
  }
  if (getAddress(recovered) !== getAddress(order.signer)) {
    throw invalidRequest(
      `signature: it recovers to ${getAddress(recovered)}, not to the declared signer ${getAddress(order.signer)}.`,
    );
  }
  const giveBack = await takeOrderToken(deps);
  let auth: ClobL2Auth;
  try {
    auth = await withTransaction(deps.db, async (tx) => {
      // Claimed once: a second submit finds it transmitting (409).
      const claimed = await updateOrder(
        tx,
        row.id,
        ['prepared'],
        {
          status: 'transmitting',
          ...(key ? { submit_key: key.key, submit_fingerprint: key.fingerprint } : {}),
        },
        deps.clock.now(),
      );
      if (!claimed) {
        throw new AppError('CONFLICT', `Prepared order ${row.id} is no longer awaiting a signature.`, {
          remediation: 'Read GET /v1/pm/orders.',
        });
      }
      const used = await useCredential(tx, deps, {
        accountId,
        credentialId: row.credential_id,
        operation: 'order.place',
        actor,
      });
      if (!used || used.material.venue !== 'polymarket') throw noActiveCredential(row.credential_id);
      return {
        address: getAddress(order.signer),
        creds: clobCredsOf(used.material),
      };
    });
  } catch (err) {
    await giveBack();
    throw err;
  }
  const claimedRow = { ...row, status: 'transmitting' as const };
  const signed = { ...order, signature: body.signature as Hex };
  return { body: await transmit(deps, claimedRow, signed, auth, deadline, giveBack), replayed: false };
}

/** Prepared orders past their expiry: swept, exposure released, fee reversed (a job). */
export async function sweepPrepared(deps: OrderDeps): Promise<number> {
  const expired = await deps.db
    .selectFrom('pm_orders')
    .selectAll()
    .where('status', '=', 'prepared')
    .where('expires_at', '<', deps.clock.now())
    .limit(500)
    .execute();
  for (const row of expired) await closeUnsent(deps, row, 'swept', 'expired without a signature');
  return expired.length;
}
