// Journaling fills (docs/prediction-markets.md, "Fills"): the venue's trades of a credential, newest
// first, each fill of the wallet booked once as one balanced ledger group: pUSD against outcome
// shares with the venue, and the venue's fee. The fill's identity (trade id and order id) is the
// settlement id, so re-running, even concurrently, never books twice. Journaled fills count in the
// exposure floor, and fill the orders Purser placed.

import { decimalToUnits } from '../../adapters/pm-venue/order-amounts.ts';
import type { ClobTrade } from '../../adapters/pm-venue/port.ts';
import { type DbExecutor, withTransaction } from '../../core/db/database.ts';
import { invalidRequest } from '../../core/errors/app-error.ts';
import { formatUsd } from '../../core/money.ts';
import type { Actor } from '../../core/http/actor.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { emitEvent } from '../events/index.ts';
import {
  erc1155Asset,
  erc20Asset,
  groupMemos,
  postGroup,
  transfer,
  venueAccount,
  walletAccount,
} from '../ledger/index.ts';
import { getActivePolicy } from '../policies/index.ts';
import { noActiveCredential } from './credentials.ts';
import { takeLane, venueAuth, venueFailure, type OrderDeps } from './orders.ts';
import { getCredentialMeta } from './store.ts';

/** Pages read per sync; more left is `complete: false` (sync again). */
export const FILL_SYNC_MAX_PAGES = 10;

export interface FillSyncResult {
  journaled: number;
  skipped: number;
  /** Journaled fills whose trade the venue reports settled on chain (a transaction hash). */
  settlements_journaled: number;
  complete: boolean;
}

interface Fill {
  tradeId: string;
  orderId: string;
  side: 'BUY' | 'SELL';
  tokenId: string;
  market: string;
  /** Shares and price, 6 decimals. */
  shares: bigint;
  priceMicro: bigint;
  feeRateBps: bigint;
  settled: boolean;
  status: string;
}

/** The wallet's fills in one trade: its taker order, or its resting orders the trade matched. */
function fillsOf(trade: ClobTrade, funder: string): Fill[] {
  if (trade.status === 'FAILED') return [];
  const base = {
    tradeId: trade.id,
    market: trade.market.toLowerCase(),
    feeRateBps: BigInt(trade.fee_rate_bps || '0'),
    settled: Boolean(trade.transaction_hash) && ['MINED', 'CONFIRMED'].includes(trade.status),
    status: trade.status,
  };
  const units = (v: string) => decimalToUnits(v, 6) ?? 0n;
  if (trade.trader_side === 'TAKER') {
    return [
      {
        ...base,
        orderId: trade.taker_order_id.toLowerCase(),
        side: trade.side,
        tokenId: trade.asset_id,
        shares: units(trade.size),
        priceMicro: units(trade.price),
      },
    ];
  }
  return trade.maker_orders
    .filter((m) => m.maker_address.toLowerCase() === funder)
    .map((m) => ({
      ...base,
      orderId: m.order_id.toLowerCase(),
      side: m.side ?? (trade.side === 'BUY' ? 'SELL' : 'BUY'),
      tokenId: m.asset_id,
      shares: units(m.matched_amount),
      priceMicro: units(m.price),
    }));
}

export async function syncFills(
  deps: OrderDeps,
  actor: Actor,
  body: { wallet: string; credential_id: string },
  deadline: Deadline,
): Promise<FillSyncResult> {
  const accountId = actor.principal.accountId;
  const wallet = body.wallet.toLowerCase();
  const meta = await getCredentialMeta(deps.db, accountId, body.credential_id);
  if (!meta || meta.revoked_at !== null) throw noActiveCredential(body.credential_id);
  if (meta.venue !== 'polymarket' || !meta.funder) {
    throw invalidRequest(`credential_id: a ${meta.venue} credential has no polymarket fills.`);
  }
  if (meta.funder !== wallet) {
    throw invalidRequest(`wallet: the fills of this credential are its funder's (${meta.funder}).`);
  }
  await takeLane(deps, 'reads');
  const auth = await venueAuth(deps, actor, body.credential_id, 'fills.sync');
  const policy = await getActivePolicy(deps.db, deps.registry, accountId, wallet);
  const chainId = deps.config.pm.chainId;
  const { collateral, conditionalTokens } = deps.config.pm.contracts;
  const out: FillSyncResult = { journaled: 0, skipped: 0, settlements_journaled: 0, complete: true };
  let cursor: string | undefined;
  for (let page = 0; ; page += 1) {
    if (page >= FILL_SYNC_MAX_PAGES || deadline.remainingMs() < 500) {
      out.complete = false;
      break;
    }
    let answer;
    try {
      answer = await deps.clob.trades(auth, cursor ? { cursor } : {}, { timeoutMs: deadline.remainingMs() });
    } catch (err) {
      throw venueFailure(err, 'the trades read');
    }
    for (const trade of answer.trades) {
      for (const fill of fillsOf(trade, wallet)) {
        if (fill.shares <= 0n) continue;
        const cost = (fill.shares * fill.priceMicro) / 1_000_000n;
        const fee = (cost * fill.feeRateBps + 9_999n) / 10_000n;
        const mine = walletAccount(chainId, wallet);
        const venue = venueAccount('polymarket', chainId);
        const pusd = erc20Asset(chainId, collateral);
        const shares = erc1155Asset(chainId, conditionalTokens, BigInt(fill.tokenId));
        const entries =
          fill.side === 'BUY'
            ? [...transfer(venue, mine, pusd, cost), ...transfer(mine, venue, shares, fill.shares)]
            : [...transfer(venue, mine, shares, fill.shares), ...transfer(mine, venue, pusd, cost)];
        if (fee > 0n) entries.push(...transfer(venue, mine, pusd, fee));
        const facts = {
          wallet,
          venue: 'polymarket',
          trade_id: fill.tradeId,
          order_id: fill.orderId,
          condition_id: fill.market,
          token_id: fill.tokenId,
          side: fill.side.toLowerCase(),
          shares_micro: fill.shares.toString(),
          cost_micro: cost.toString(),
          fee_micro: fee.toString(),
        };
        const booked = await withTransaction(deps.db, async (tx) => {
          const res = await postGroup(tx, deps.clock, {
            settlementId: `pm:fill:${fill.tradeId}:${fill.orderId}`,
            accountId,
            kind: 'pm.fill',
            ...(policy ? { policyHash: `sha256:${policy.hash}` } : {}),
            entries,
            memo: { ...facts, price_micro: fill.priceMicro.toString(), venue_status: fill.status },
          });
          if (!res.ok) throw new Error(`fill ${fill.tradeId} could not be journaled: ${res.reason}`);
          if (res.replayed) return false;
          // An order Purser placed: its filled part no longer counts as an open order.
          const order = await tx
            .updateTable('pm_orders')
            .set((eb) => ({
              filled_micro: eb('filled_micro', '+', fill.shares.toString()),
              updated_at: deps.clock.now(),
            }))
            .where('account_id', '=', accountId)
            .where('order_hash', '=', fill.orderId)
            .returning(['id', 'size_micro', 'filled_micro', 'status'])
            .executeTakeFirst();
          if (order && BigInt(order.filled_micro) >= BigInt(order.size_micro) && order.status === 'placed') {
            await tx.updateTable('pm_orders').set({ status: 'filled' }).where('id', '=', order.id).execute();
          }
          await emitEvent(tx, deps.clock, {
            accountId,
            kind: 'pm.fill.journaled',
            subject: res.groupId,
            payload: { group_id: res.groupId, ...facts },
          });
          return true;
        });
        if (booked) {
          out.journaled += 1;
          if (fill.settled) out.settlements_journaled += 1;
        } else {
          out.skipped += 1;
        }
      }
    }
    if (!answer.nextCursor) break;
    cursor = answer.nextCursor;
  }
  return out;
}

/**
 * The account's prediction-market positions for the export: outcome shares held per wallet and
 * token, from its journaled fills (shares bought less sold, and the pUSD they cost net).
 */
export async function exportPositions(
  db: DbExecutor,
  accountId: string,
  limit: number,
): Promise<Record<string, unknown>[]> {
  const positions = new Map<
    string,
    { wallet: string; condition: string; token: string; shares: bigint; cost: bigint; fills: number }
  >();
  for (const memo of await groupMemos(db, accountId, 'pm.fill')) {
    const wallet = String(memo['wallet']);
    const condition = String(memo['condition_id']);
    const token = String(memo['token_id']);
    const key = `${wallet}\n${condition}\n${token}`;
    const sign = memo['side'] === 'buy' ? 1n : -1n;
    const p = positions.get(key) ?? { wallet, condition, token, shares: 0n, cost: 0n, fills: 0 };
    p.shares += sign * BigInt(String(memo['shares_micro']));
    p.cost += sign * BigInt(String(memo['cost_micro']));
    p.fills += 1;
    positions.set(key, p);
  }
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...positions.values()]
    .sort((a, b) => order(a.wallet, b.wallet) || order(a.condition, b.condition) || order(a.token, b.token))
    .slice(0, limit)
    .map((p) => ({
      venue: 'polymarket',
      wallet: p.wallet,
      condition_id: p.condition,
      token_id: p.token,
      shares: formatUsd(p.shares),
      net_cost_usd: formatUsd(p.cost),
      fills: p.fills,
    }));
}
