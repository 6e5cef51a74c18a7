// The CLOB fake's matching engine: an order checked against its market (signature, duplicate,
// expiration, tick grid, minimum size, and balances when the knob says so), matched against the
// resting orders by price-time priority, the rest left resting (GTC, GTD) or killed (FOK, FAK),
// one trade recorded per taking order; and a fill of a resting order against the house.

import { randomUUID } from 'node:crypto';
import { getAddress, keccak256, toHex, type Address, type Hex } from 'viem';
import { orderHashV2 } from '../../../adapters/pm-venue/polymarket.ts';
import type { ClobSide, ClobTrade } from '../../../adapters/pm-venue/port.ts';
import { clobDuplicatedError, CLOB_ERRORS, clobMinSizeError, clobTickSizeError, Refusal } from './answers.ts';
import { balanceOf, reserved } from './balances.ts';
import { expireDue, GTD_THRESHOLD_SECONDS, marketOf, minSize, outcomeOf, resting } from './order-book.ts';
import { signatureAccepted, type ParsedOrder } from './order-payload.ts';
import type { BookOrder, Caller, ClobState, MakerFill, TradeRecord } from './state.ts';
import type { ClobFakeKnobs, ClobFakeMarket } from './types.ts';
import { decimal, lower, ONE, TICKS, toUnits } from './units.ts';
import { tradeView } from './views.ts';

/** The counterparty of `fill()`. */
const HOUSE_OWNER = '00000000-0000-4000-8000-000000000000';
const HOUSE_ADDRESS: Address = '0x000000000000000000000000000000000000dEaD';

export interface Placed {
  body: Record<string, unknown>;
}

/** Validates, matches and (for GTC/GTD) rests one order; a Refusal carries the venue's answer. */
export async function place(
  state: ClobState,
  knobs: ClobFakeKnobs,
  parsed: ParsedOrder,
  caller: Caller,
): Promise<Placed> {
  const { order } = parsed;
  const market = marketOf(state, order.tokenId);
  const negRisk = market.negRisk ?? false;
  const id = orderHashV2(order, {
    chainId: state.chainId,
    negRisk,
    verifyingContract: negRisk ? state.negRiskExchange : state.exchange,
  }).toLowerCase() as Hex;
  if (!(await signatureAccepted(state, order, parsed.signature, market))) {
    throw new Refusal(400, CLOB_ERRORS.invalidSignature);
  }
  if (state.orders.has(id)) throw new Refusal(400, clobDuplicatedError(id));

  const now = state.nowSeconds();
  const expiration = Number(order.expiration);
  if (parsed.orderType === 'GTD') {
    if (!Number.isSafeInteger(expiration) || expiration <= now + GTD_THRESHOLD_SECONDS) {
      throw new Refusal(400, CLOB_ERRORS.invalidExpiration);
    }
  } else if (order.expiration !== '0') {
    throw new Refusal(400, CLOB_ERRORS.invalidExpiration);
  }

  // Price on the tick grid, amounts consistent with it (within the client's rounding).
  const tick = TICKS[market.tickSize];
  const collateral = BigInt(order.side === 'BUY' ? order.makerAmount : order.takerAmount);
  const tokens = BigInt(order.side === 'BUY' ? order.takerAmount : order.makerAmount);
  const ratioMicro = (collateral * ONE * 2n + tokens) / (tokens * 2n); // rounded
  const price = ((ratioMicro * 2n + tick.micro) / (tick.micro * 2n)) * tick.micro;
  const tolerance = 10n ** BigInt(6 - tick.amountDecimals) * ONE;
  const gap = collateral * ONE - tokens * price;
  const shownPrice = decimal((collateral * ONE) / tokens);
  if (price < tick.micro || price > ONE - tick.micro || gap > tolerance || -gap > tolerance) {
    throw new Refusal(400, clobTickSizeError(id, shownPrice, market.tickSize));
  }
  if (tokens < minSize(market)) {
    throw new Refusal(400, clobMinSizeError(id, decimal(tokens), String(market.minOrderSize ?? 5)));
  }

  if (knobs.enforceBalances) {
    const need = order.side === 'BUY' ? collateral : tokens;
    const asset = order.side === 'BUY' ? ('COLLATERAL' as const) : { tokenId: order.tokenId };
    const held = await balanceOf(state, order.maker, asset);
    const spender = negRisk ? state.negRiskExchange : state.exchange;
    const allowance = held.allowances[getAddress(spender)] ?? 0n;
    const already = reserved(state, order.maker, order.side, order.tokenId);
    if (held.balance < already + need || allowance < already + need) {
      throw new Refusal(400, CLOB_ERRORS.notEnoughBalance);
    }
  }

  // What it crosses.
  const opposite: ClobSide = order.side === 'BUY' ? 'SELL' : 'BUY';
  const crossing = resting(state, order.tokenId, opposite).filter((o) =>
    order.side === 'BUY' ? o.price <= price : o.price >= price,
  );
  const available = crossing.reduce((sum, o) => sum + o.size - o.matched, 0n);
  if (parsed.postOnly && crossing.length > 0) throw new Refusal(400, CLOB_ERRORS.postOnlyCrosses);
  if (parsed.orderType === 'FOK' && available < tokens) throw new Refusal(400, CLOB_ERRORS.fokNotFilled);
  if (parsed.orderType === 'FAK' && crossing.length === 0) throw new Refusal(400, CLOB_ERRORS.fakNoMatch);

  const taker: BookOrder = {
    id,
    seq: ++state.seq,
    owner: caller.key.apiKey,
    ownerAddress: caller.key.address,
    maker: order.maker,
    market,
    tokenId: order.tokenId,
    outcome: outcomeOf(market, order.tokenId),
    side: order.side,
    price,
    size: tokens,
    matched: 0n,
    status: 'LIVE',
    orderType: parsed.orderType,
    expiration: parsed.orderType === 'GTD' ? expiration : 0,
    createdAt: now,
    trades: [],
  };
  const fills: MakerFill[] = [];
  for (const maker of crossing) {
    const left = taker.size - taker.matched;
    if (left === 0n) break;
    const amount = left < maker.size - maker.matched ? left : maker.size - maker.matched;
    maker.matched += amount;
    taker.matched += amount;
    if (maker.matched === maker.size) maker.status = 'MATCHED';
    fills.push({ order: maker, amount, price: maker.price });
  }
  state.orders.set(id, taker);
  if (taker.matched === taker.size || parsed.orderType === 'FOK' || parsed.orderType === 'FAK') {
    taker.status = 'MATCHED';
  }

  const body: Record<string, unknown> = {
    success: true,
    errorMsg: '',
    orderID: id,
    status: fills.length > 0 ? 'matched' : 'live',
    takingAmount: '',
    makingAmount: '',
  };
  if (fills.length > 0) {
    const trade = recordTrade(state, knobs, {
      takerOrderId: id,
      market,
      tokenId: order.tokenId,
      side: order.side,
      takerOwner: caller.key.apiKey,
      takerOwnerAddress: caller.key.address,
      takerMaker: order.maker,
      fills,
    });
    taker.trades.push(trade.id);
    const paid = fills.reduce((sum, f) => sum + (f.amount * f.price) / ONE, 0n);
    body.makingAmount = decimal(order.side === 'BUY' ? paid : taker.matched);
    body.takingAmount = decimal(order.side === 'BUY' ? taker.matched : paid);
    body.tradeIDs = [trade.id];
    body.transactionsHashes = trade.transactionHash ? [trade.transactionHash] : [];
  }
  return { body };
}

function recordTrade(
  state: ClobState,
  knobs: ClobFakeKnobs,
  args: {
    takerOrderId: Hex;
    market: ClobFakeMarket;
    tokenId: string;
    side: ClobSide;
    takerOwner: string;
    takerOwnerAddress: Address | null;
    takerMaker: Address;
    fills: MakerFill[];
  },
): TradeRecord {
  const id = randomUUID();
  const now = state.nowSeconds();
  const settled = knobs.settlement;
  const trade: TradeRecord = {
    id,
    takerOrderId: args.takerOrderId,
    market: args.market,
    tokenId: args.tokenId,
    outcome: outcomeOf(args.market, args.tokenId),
    side: args.side,
    size: args.fills.reduce((sum, f) => sum + f.amount, 0n),
    price: args.fills[0]?.price ?? 0n,
    status: settled === 'confirmed' ? 'CONFIRMED' : settled === 'failed' ? 'FAILED' : 'MATCHED',
    matchTime: now,
    lastUpdate: now,
    takerOwner: args.takerOwner,
    takerOwnerAddress: args.takerOwnerAddress,
    takerMaker: args.takerMaker,
    makers: args.fills,
    transactionHash: settled === 'confirmed' ? keccak256(toHex(`purser clob fake trade ${id}`)) : '',
    errMsg: settled === 'failed' ? 'the trade failed on chain (fake)' : null,
  };
  for (const f of args.fills) f.order.trades.push(id);
  state.tradeList.push(trade);
  state.tradesById.set(id, trade);
  return trade;
}

/**
 * Fills a resting order against the house: `size` in shares (default: all that remains).
 * Returns the trade as the order's owner sees it.
 */
export function fillAgainstHouse(
  state: ClobState,
  knobs: ClobFakeKnobs,
  orderId: Hex,
  size: string | number | undefined,
): ClobTrade {
  expireDue(state);
  const o = state.orders.get(lower(orderId));
  if (!o || o.status !== 'LIVE') throw new Error(`fill: ${orderId} is not a live order`);
  const left = o.size - o.matched;
  const amount = size === undefined ? left : toUnits(size);
  if (amount === null || amount <= 0n || amount > left) {
    throw new Error(`fill: size must be more than 0 and at most ${decimal(left)} shares`);
  }
  o.matched += amount;
  if (o.matched === o.size) o.status = 'MATCHED';
  const trade = recordTrade(state, knobs, {
    takerOrderId: keccak256(toHex(`purser clob fake house order ${++state.houseSeq}`)),
    market: o.market,
    tokenId: o.tokenId,
    side: o.side === 'BUY' ? 'SELL' : 'BUY',
    takerOwner: HOUSE_OWNER,
    takerOwnerAddress: null,
    takerMaker: HOUSE_ADDRESS,
    fills: [{ order: o, amount, price: o.price }],
  });
  return tradeView(trade, o.ownerAddress);
}

/** Moves a trade on (e.g. MATCHED → MINED → CONFIRMED with a hash, or FAILED). */
export function settleTrade(
  state: ClobState,
  tradeId: string,
  update: { status: string; transactionHash?: Hex; errMsg?: string },
): void {
  const t = state.tradesById.get(tradeId);
  if (!t) throw new Error(`settleTrade: no trade ${tradeId}`);
  t.status = update.status;
  if (update.transactionHash !== undefined) t.transactionHash = update.transactionHash;
  if (update.errMsg !== undefined) t.errMsg = update.errMsg;
  t.lastUpdate = state.nowSeconds();
}
