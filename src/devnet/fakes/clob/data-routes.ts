// The CLOB fake's reading routes (L2): the caller's open orders and one order by id, its trades
// (as taker or maker, newest first), and the balance and allowances of its funder.

import type { FakeAnswer, FakeRequest } from '../loopback.ts';
import { answer, CLOB_ERRORS, page, refusal } from './answers.ts';
import { balanceOf, funderFor } from './balances.ts';
import { owns } from './order-routes.ts';
import type { Caller, ClobState, TradeRecord } from './state.ts';
import type { ClobFakeKnobs } from './types.ts';
import { DECIMAL, lower, ORDER_ID } from './units.ts';
import { openOrderView, tradeView } from './views.ts';

/** The answer of a reading route; null when the request is for none of them. */
export async function dataRoute(
  state: ClobState,
  req: FakeRequest,
  knobs: ClobFakeKnobs,
  caller: Caller,
): Promise<FakeAnswer | null> {
  const { method, path, query } = req;
  const address = caller.key.address;
  if (method === 'GET' && path === '/data/orders') {
    const { id, market, asset_id: assetId } = query;
    const list = [...state.orders.values()].filter(
      (o) =>
        o.status === 'LIVE' &&
        owns(o, caller) &&
        (id === undefined || lower(id) === o.id) &&
        (market === undefined || lower(market) === lower(o.market.conditionId)) &&
        (assetId === undefined || assetId === o.tokenId),
    );
    list.sort((a, b) => a.seq - b.seq);
    return page(list.map(openOrderView), query.next_cursor, CLOB_ERRORS.invalidOrderParams, knobs.pageSize);
  }
  const one = /^\/data\/order\/([^/]+)$/.exec(path);
  if (method === 'GET' && one) {
    const id = one[1] ?? '';
    if (!ORDER_ID.test(id)) return refusal(400, CLOB_ERRORS.invalidOrderId);
    const o = state.orders.get(lower(id));
    const shown = o && owns(o, caller) && !(knobs.forgetMatchedOrders && o.status === 'MATCHED');
    return answer(200, shown ? openOrderView(o) : 'null');
  }
  if (method === 'GET' && path === '/data/trades') {
    const { id, maker_address: makerAddress, market, asset_id: assetId, before, after } = query;
    if ((before !== undefined && !DECIMAL.test(before)) || (after !== undefined && !DECIMAL.test(after))) {
      return refusal(400, CLOB_ERRORS.invalidTradeParams);
    }
    const mine = (t: TradeRecord) =>
      (t.takerOwnerAddress !== null && lower(t.takerOwnerAddress) === lower(address)) ||
      t.makers.some((f) => lower(f.order.ownerAddress) === lower(address));
    const list = state.tradeList
      .filter(
        (t) =>
          mine(t) &&
          (id === undefined || id === t.id) &&
          (makerAddress === undefined ||
            lower(makerAddress) === lower(t.takerMaker) ||
            t.makers.some((f) => lower(f.order.maker) === lower(makerAddress))) &&
          (market === undefined || lower(market) === lower(t.market.conditionId)) &&
          (assetId === undefined || assetId === t.tokenId) &&
          (before === undefined || t.matchTime < Number(before)) &&
          (after === undefined || t.matchTime > Number(after)),
      )
      .reverse(); // newest first
    return page(
      list.map((t) => tradeView(t, address)),
      query.next_cursor,
      CLOB_ERRORS.invalidTradeParams,
      knobs.pageSize,
    );
  }

  if (method === 'GET' && (path === '/balance-allowance' || path === '/balance-allowance/update')) {
    const assetType = query.asset_type;
    if (assetType !== 'COLLATERAL' && assetType !== 'CONDITIONAL')
      return refusal(400, CLOB_ERRORS.invalidAssetType);
    const names: Record<string, number> = {
      EOA: 0,
      POLY_PROXY: 1,
      POLY_GNOSIS_SAFE: 2,
      GNOSIS_SAFE: 2,
      POLY_1271: 3,
    };
    const rawType = query.signature_type ?? '0';
    const signatureType = /^[0-3]$/.test(rawType) ? Number(rawType) : names[rawType];
    if (signatureType === undefined) return refusal(400, CLOB_ERRORS.invalidSignatureType);
    if (assetType === 'CONDITIONAL' && (query.token_id === undefined || !DECIMAL.test(query.token_id))) {
      return refusal(400, CLOB_ERRORS.invalidTokenId);
    }
    const funder = funderFor(state, address, signatureType);
    const asset = assetType === 'COLLATERAL' ? ('COLLATERAL' as const) : { tokenId: query.token_id! };
    const held = funder
      ? await balanceOf(state, funder, asset)
      : { balance: 0n, allowances: Object.fromEntries(state.spenders.map((s) => [s, 0n])) };
    if (path === '/balance-allowance/update') return answer(200, '');
    return answer(200, {
      balance: held.balance.toString(),
      allowances: Object.fromEntries(Object.entries(held.allowances).map(([s, v]) => [s, v.toString()])),
    });
  }

  return null;
}
