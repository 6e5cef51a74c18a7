// The CLOB fake's orders and trades as the venue shows them (the adapter's wire shapes,
// src/adapters/pm-venue/port.ts): an open order as its owner reads it, a trade as its taker or a
// maker reads it.

import type { Address } from 'viem';
import type { ClobOpenOrder, ClobTrade } from '../../../adapters/pm-venue/port.ts';
import type { BookOrder, TradeRecord } from './state.ts';
import { decimal, lower } from './units.ts';

export function openOrderView(o: BookOrder): ClobOpenOrder {
  return {
    id: o.id,
    status: o.status,
    owner: o.owner,
    maker_address: o.maker,
    market: o.market.conditionId,
    asset_id: o.tokenId,
    side: o.side,
    original_size: decimal(o.size),
    size_matched: decimal(o.matched),
    price: decimal(o.price),
    associate_trades: [...o.trades],
    outcome: o.outcome,
    created_at: o.createdAt,
    expiration: String(o.expiration),
    order_type: o.orderType,
  };
}

/** A trade as `viewer` reads it (its `trader_side`); null: as its taker. */
export function tradeView(t: TradeRecord, viewer: Address | null): ClobTrade {
  const taker =
    viewer === null || (t.takerOwnerAddress !== null && lower(t.takerOwnerAddress) === lower(viewer));
  return {
    id: t.id,
    taker_order_id: t.takerOrderId,
    market: t.market.conditionId,
    asset_id: t.tokenId,
    side: t.side,
    size: decimal(t.size),
    fee_rate_bps: '0',
    price: decimal(t.price),
    status: t.status,
    match_time: String(t.matchTime),
    last_update: String(t.lastUpdate),
    outcome: t.outcome,
    bucket_index: 0,
    owner: t.takerOwner,
    maker_address: t.takerMaker,
    maker_orders: t.makers.map((f) => ({
      order_id: f.order.id,
      owner: f.order.owner,
      maker_address: f.order.maker,
      matched_amount: decimal(f.amount),
      price: decimal(f.price),
      fee_rate_bps: '0',
      asset_id: f.order.tokenId,
      outcome: f.order.outcome,
      side: f.order.side,
    })),
    transaction_hash: t.transactionHash,
    err_msg: t.errMsg,
    trader_side: taker ? 'TAKER' : 'MAKER',
  };
}
