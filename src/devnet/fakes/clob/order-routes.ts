// The CLOB fake's order routes (L2): posting one order or a batch of up to 15, and cancelling by
// id, in bulk, all of the caller's, or those of a market or token.

import type { FakeAnswer, FakeRequest } from '../loopback.ts';
import { answer, CLOB_ERRORS, parseJson, refusal, Refusal } from './answers.ts';
import { place } from './matching.ts';
import { checkOwnership, parseOrder } from './order-payload.ts';
import type { BookOrder, Caller, ClobState } from './state.ts';
import type { ClobFakeKnobs } from './types.ts';
import { lower, ORDER_ID } from './units.ts';

const MAX_BATCH_ORDERS = 15;
const MAX_CANCEL_IDS = 3000;

export const owns = (o: BookOrder, caller: Caller) => lower(o.ownerAddress) === lower(caller.key.address);

function cancel(state: ClobState, ids: string[], caller: Caller): FakeAnswer {
  const canceled: string[] = [];
  const notCanceled: Record<string, string> = {};
  for (const raw of new Set(ids)) {
    const o = state.orders.get(lower(raw));
    if (!o || !owns(o, caller) || o.status === 'CANCELED')
      notCanceled[raw] = 'Order not found or already canceled';
    else if (o.status === 'MATCHED') notCanceled[raw] = 'order already matched';
    else if (o.status === 'EXPIRED') notCanceled[raw] = 'order expired';
    else {
      o.status = 'CANCELED';
      canceled.push(o.id);
    }
  }
  return answer(200, { canceled, not_canceled: notCanceled });
}

/** The answer of an order route; null when the request is for none of them. */
export async function orderRoute(
  state: ClobState,
  req: FakeRequest,
  knobs: ClobFakeKnobs,
  caller: Caller,
): Promise<FakeAnswer | null> {
  const { method, path } = req;
  if (method === 'POST' && path === '/order') {
    const parsed = parseOrder(parseJson(req.body));
    if (!parsed) return refusal(400, CLOB_ERRORS.invalidOrderPayload);
    checkOwnership(parsed, caller);
    return answer(200, (await place(state, knobs, parsed, caller)).body);
  }
  if (method === 'POST' && path === '/orders') {
    const items = parseJson(req.body);
    if (!Array.isArray(items) || items.length === 0) return refusal(400, CLOB_ERRORS.invalidOrderPayload);
    if (items.length > MAX_BATCH_ORDERS) {
      return refusal(400, `Too many orders in payload: ${items.length}, max allowed: ${MAX_BATCH_ORDERS}`);
    }
    const parsed = items.map(parseOrder);
    if (parsed.some((p) => p === null)) return refusal(400, CLOB_ERRORS.invalidOrderPayload);
    for (const p of parsed) checkOwnership(p!, caller);
    const results: Record<string, unknown>[] = [];
    for (const p of parsed) {
      try {
        results.push((await place(state, knobs, p!, caller)).body);
      } catch (err) {
        if (!(err instanceof Refusal)) throw err;
        results.push({
          success: false,
          errorMsg: err.message,
          orderID: '',
          status: '',
          takingAmount: '',
          makingAmount: '',
        });
      }
    }
    return answer(200, results);
  }

  if (method === 'DELETE' && path === '/order') {
    const body = parseJson(req.body) as { orderID?: unknown } | undefined;
    if (typeof body !== 'object' || body === null || typeof body.orderID !== 'string')
      return refusal(400, CLOB_ERRORS.invalidOrderPayload);
    if (!ORDER_ID.test(body.orderID)) return refusal(400, CLOB_ERRORS.invalidOrderId);
    return cancel(state, [body.orderID], caller);
  }
  if (method === 'DELETE' && path === '/orders') {
    const ids = parseJson(req.body);
    if (!Array.isArray(ids) || !ids.every((i) => typeof i === 'string')) {
      return refusal(400, CLOB_ERRORS.invalidOrderPayload);
    }
    if (ids.length > MAX_CANCEL_IDS) {
      return refusal(400, `Too many orders in payload, max allowed: ${MAX_CANCEL_IDS}`);
    }
    if (!ids.every((i) => ORDER_ID.test(i as string))) return refusal(400, CLOB_ERRORS.invalidOrderId);
    return cancel(state, ids as string[], caller);
  }
  if (method === 'DELETE' && path === '/cancel-all') {
    const ids = [...state.orders.values()]
      .filter((o) => o.status === 'LIVE' && owns(o, caller))
      .map((o) => o.id);
    return cancel(state, ids, caller);
  }
  if (method === 'DELETE' && path === '/cancel-market-orders') {
    const body = parseJson(req.body) as { market?: unknown; asset_id?: unknown } | undefined;
    const filter = body ?? {};
    if (typeof filter !== 'object' || filter === null) return refusal(400, CLOB_ERRORS.invalidOrderPayload);
    const { market, asset_id: assetId } = filter;
    if (
      (market !== undefined && typeof market !== 'string') ||
      (assetId !== undefined && typeof assetId !== 'string')
    )
      return refusal(400, CLOB_ERRORS.invalidOrderPayload);
    const ids = [...state.orders.values()]
      .filter(
        (o) =>
          o.status === 'LIVE' &&
          owns(o, caller) &&
          (market === undefined || market === '' || lower(market) === lower(o.market.conditionId)) &&
          (assetId === undefined || assetId === '' || assetId === o.tokenId),
      )
      .map((o) => o.id);
    return cancel(state, ids, caller);
  }
  return null;
}
