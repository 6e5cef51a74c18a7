// The next slice of a run: what it may spend (the sale valued now), the plan it belongs to (made
// once, by the same planner as the quote preview), and its calls (a fresh quote on the plan's
// venue built as approve and swap, or the wrapped native token's `withdraw`). Each refusal ends
// the step with its abort reason (StepAbort).

import { encodeFunctionData, getAddress, parseAbi, type Address } from 'viem';
import { VenueError } from '../../adapters/venues/index.ts';
import { Deadline } from '../../core/http/deadline.ts';
import type { Call } from '../delegations/index.ts';
import { saveIntentReport, type IntentRow } from '../intents/index.ts';
import { formatUsd, usdToMicro, type PolicyDocument } from '../policies/index.ts';
import { planSale } from '../quotes/index.ts';
import { buildSwap, quoteAllVenues } from '../venues/index.ts';
import { uncoveredCall } from './grant.ts';
import { runReport, StepAbort, type Abort, type PlanReport } from './report.ts';
import type { RunDeps } from './start.ts';
import { splitSlice } from './split.ts';
import type { SliceFacts, SlicePart } from './store.ts';
import type { StoredScope } from '../delegations/store.ts';

/** The venue name a gas top-up's unwrap is ledgered against: the chain's wrapped native token. */
export const UNWRAP_VENUE = 'wrapped-native';

const wethAbi = parseAbi(['function withdraw(uint256 wad)']);

/**
 * SPEND_CAP_EXCEEDED when the sale, valued now, is over the cap it was admitted under
 * (`spend.per_tx_usd`, or `gas.max_top_up_usd` for a gas top-up): a sell leg that is not a USD
 * stable is valued at the current price reference, as admission valued it; when no reference can
 * value it now and neither leg is a USD stable, nothing can say what it spends.
 */
export function spendCapNow(deps: RunDeps, row: IntentRow, doc: PolicyDocument): Abort | null {
  const sell = deps.registry.findToken(row.chain_id, row.params.sell_token);
  if (!sell || sell.stable) return null;
  const [rule, limitUsd] =
    row.kind === 'gas_topup'
      ? (['gas.max_top_up_usd', doc.gas.max_top_up_usd] as const)
      : (['spend.per_tx_usd', doc.spend.per_tx_usd] as const);
  const valued = deps.prices?.valueUsdMicro(row.chain_id, sell.address, BigInt(row.params.sell_amount));
  if (!valued?.ok) {
    if (deps.registry.findToken(row.chain_id, row.params.buy_token)?.stable) return null;
    return {
      reason: 'SPEND_CAP_EXCEEDED',
      detail: {
        rule,
        why: `neither leg is a USD stable and no price reference values ${sell.symbol} now`,
        ...(valued ? { reference: valued.refusal.kind } : {}),
      },
    };
  }
  if (valued.usdMicro <= usdToMicro(limitUsd)) return null;
  return {
    reason: 'SPEND_CAP_EXCEEDED',
    detail: {
      rule,
      limit_usd: limitUsd,
      value_usd: formatUsd(valued.usdMicro),
      admitted_value_usd: row.params.value_usd,
    },
  };
}

/**
 * Plans the intent on `venues` (those of its venues every policy in force allows) and keeps the
 * plan in its report; the planner's refusals end the run.
 */
export async function makePlan(
  deps: RunDeps,
  row: IntentRow,
  venues: readonly string[],
): Promise<PlanReport> {
  const now = deps.clock.now().toISOString();
  let plan: PlanReport;
  if (row.kind === 'gas_topup') {
    plan = {
      venue: UNWRAP_VENUE,
      slice_count: 1,
      slices: [row.params.sell_amount],
      interval_ms: 0,
      impact_bps_at_full_size: 0,
      estimated_buy_total: row.params.sell_amount,
      best_full_size_buy_amount: row.params.sell_amount,
      planned_at: now,
    };
  } else {
    const planned = await planSale(
      deps,
      {
        chainId: row.chain_id,
        sellToken: getAddress(row.params.sell_token),
        buyToken: getAddress(row.params.buy_token),
        sellAmount: BigInt(row.params.sell_amount),
        taker: getAddress(row.wallet),
        allow: venues,
        // Admission checked both; a registry changed since (a restart) may have dropped one.
        tokensSupported:
          deps.registry.findToken(row.chain_id, row.params.sell_token) !== null &&
          deps.registry.findToken(row.chain_id, row.params.buy_token) !== null,
        slippageBps: row.params.max_slippage_bps,
      },
      new Deadline(deps.config.venues.timeoutMs * 3),
    );
    if (!planned.result.ok) {
      // Which venues were left out and which failed, beside the planner's own words.
      const { reason, detail } = planned.result.abort;
      const asked = planned.full;
      throw new StepAbort({
        reason,
        detail: {
          ...detail,
          ...(asked.skipped.length > 0 ? { skipped: asked.skipped } : {}),
          ...(asked.failures.length > 0
            ? { failures: asked.failures.map((f) => ({ venue: f.venue, kind: f.kind, message: f.message })) }
            : {}),
        },
      });
    }
    const p = planned.result.plan;
    plan = {
      venue: p.venue,
      slice_count: p.sliceCount,
      slices: p.slices.map(String),
      interval_ms: p.intervalMs,
      impact_bps_at_full_size: p.impactBpsAtFullSize,
      estimated_buy_total: p.estimatedBuyTotal.toString(),
      best_full_size_buy_amount: planned.result.best.buyAmount.toString(),
      planned_at: now,
    };
  }
  const report = runReport(row);
  report.plan = plan;
  await saveIntentReport(deps.db, row.id, report, deps.clock.now(), 'executing');
  return plan;
}

/** A gas top-up's one call: the wrapped native token's `withdraw`. */
export function unwrapCalls(
  deps: RunDeps,
  row: IntentRow,
  amount: bigint,
  part: number,
): { calls: Call[]; facts: SliceFacts } {
  const wrapped = deps.registry.chain(row.chain_id)!.wrappedNative;
  return {
    calls: [
      {
        to: wrapped,
        data: encodeFunctionData({ abi: wethAbi, functionName: 'withdraw', args: [amount] }),
        value: 0n,
      },
    ],
    facts: {
      part,
      sell_amount: amount.toString(),
      quoted_buy_amount: amount.toString(),
      min_buy_amount: amount.toString(),
      reference: { num: '1', den: '1' },
    },
  };
}

/**
 * The venues a conversion may be routed to: `venues` (those every policy in force allows) whose
 * contracts on the chain the delegation's grant names as a call target. A venue whose router the
 * grant does not cover is never asked. When the grant covers none, `venues` as they are: the
 * grant check then refuses the slice naming the call it lacks (POLICY_VIOLATION `delegation`).
 */
export function routableVenues(
  deps: RunDeps,
  chainId: number,
  venues: readonly string[],
  scope: StoredScope,
): string[] {
  const targets = new Set(scope.calls.map((c) => c.target.toLowerCase()));
  const covered = venues.filter((name) => {
    const adapter = deps.venues.find((a) => a.venue === name);
    return adapter?.contracts(chainId).some((c) => targets.has(c.toLowerCase())) ?? false;
  });
  return covered.length > 0 ? covered : [...venues];
}

/** A slice's calls, what it expects, and the venue it is routed to. */
export interface RoutedSlice {
  venue: string;
  calls: Call[];
  facts: SliceFacts;
}

/**
 * A conversion slice, routed: fresh quotes for the part from every routable venue at once (the
 * whole bounded by the slowest, not the sum), the best net of the venues' fees first. The best is
 * checked against the reference (PRICE_GAP beyond twice the budget) and built as approve and swap
 * with the minimum out from the slippage budget; a quote the grant turns out not to cover, or one
 * the venue will not build, gives way to the next best. The facts keep every quote asked.
 */
export async function swapCalls(
  deps: RunDeps,
  row: IntentRow,
  route: { venues: readonly string[]; scope: StoredScope },
  amount: bigint,
  part: number,
): Promise<RoutedSlice> {
  const venueDeps = { db: deps.db, venues: deps.venues, venueTimeoutMs: deps.config.venues.timeoutMs };
  const deadline = new Deadline(deps.config.venues.timeoutMs * 2);
  const wallet: Address = getAddress(row.wallet);
  const sellToken = getAddress(row.params.sell_token);
  const buyToken = getAddress(row.params.buy_token);
  const fresh = await quoteAllVenues(venueDeps, {
    chainId: row.chain_id,
    sellToken,
    buyToken,
    sellAmount: amount,
    taker: wallet,
    allow: route.venues,
    deadline,
  });
  const best = fresh.quotes[0];
  if (!best) {
    const off = fresh.skipped.find((s) => s.why === 'switched_off');
    const failure = fresh.failures[0];
    const venue = route.venues.length === 1 ? route.venues[0] : route.venues;
    throw new StepAbort(
      off || failure?.kind !== 'no_quote'
        ? {
            reason: 'VENUE_UNAVAILABLE',
            detail: {
              venue,
              part,
              why: off ? `switched off: ${off.detail ?? ''}` : (failure?.message ?? 'not asked'),
            },
          }
        : { reason: 'VENUE_NO_QUOTE', detail: { venue, part, why: failure.message } },
    );
  }
  const cross = deps.prices?.crossPrice(row.chain_id, sellToken, buyToken);
  const reference = cross?.ok ? { num: cross.price.num, den: cross.price.den } : null;
  if (reference) {
    const gap =
      Number((best.buyAmount * reference.den * 1_000_000n) / (amount * reference.num)) / 1_000_000 - 1;
    const limit = 2 * row.params.max_slippage_bps;
    if (Math.abs(gap) * 10_000 > limit) {
      throw new StepAbort({
        reason: 'PRICE_GAP',
        detail: { venue: best.venue, part, gap_bps: Math.round(gap * 10_000 * 100) / 100, limit_bps: limit },
      });
    }
  }
  const routing = fresh.quotes.map((q) => ({ venue: q.venue, buy_amount: q.buyAmount.toString() }));
  let firstRefusal: Abort | null = null;
  const swapDeadline = BigInt(
    Math.floor(deps.clock.now().getTime() / 1000) + deps.config.executor.swapTtlSeconds,
  );
  for (const quote of fresh.quotes) {
    let swap;
    try {
      swap = await buildSwap(
        venueDeps,
        {
          quote,
          taker: wallet,
          slippageBps: row.params.max_slippage_bps,
          swapDeadline,
          deadline,
        },
        deps.clock.now(),
      );
    } catch (err) {
      if (!(err instanceof VenueError)) throw err;
      firstRefusal ??= {
        reason: err.kind === 'no_quote' ? 'VENUE_NO_QUOTE' : 'VENUE_UNAVAILABLE',
        detail: { venue: quote.venue, part, step: 'build', why: err.message },
      };
      continue;
    }
    // Another venue may take the slice when the grant does not cover this one's calls; with none
    // left, the grant check of the run refuses them by name.
    const last = quote === fresh.quotes.at(-1);
    if (!last && uncoveredCall(route.scope, swap.calls)) continue;
    const others = fresh.quotes.map((q) => q.venue).filter((v) => v !== quote.venue);
    const split =
      others.length > 0 && !uncoveredCall(route.scope, swap.calls)
        ? await splitSlice(deps, {
            row,
            scope: route.scope,
            wallet,
            amount,
            best: quote,
            others,
            swapDeadline,
          })
        : null;
    if (split) {
      const [a, b] = split.parts as [SlicePart, SlicePart];
      const sum = (f: (p: SlicePart) => string) => (BigInt(f(a)) + BigInt(f(b))).toString();
      return {
        // The venue with the larger share names the slice; `split` has both.
        venue: BigInt(a.sell_amount) >= BigInt(b.sell_amount) ? a.venue : b.venue,
        calls: split.calls,
        facts: {
          part,
          sell_amount: amount.toString(),
          quoted_buy_amount: sum((p) => p.quoted_buy_amount),
          venue_fee_amount: sum((p) => p.venue_fee_amount),
          min_buy_amount: sum((p) => p.min_buy_amount),
          reference: reference ? { num: reference.num.toString(), den: reference.den.toString() } : null,
          routing,
          split: split.parts,
          split_gain: split.gain.toString(),
          split_gas_cost: split.gasCost.toString(),
        },
      };
    }
    return {
      venue: quote.venue,
      calls: swap.calls,
      facts: {
        part,
        sell_amount: amount.toString(),
        quoted_buy_amount: quote.buyAmount.toString(),
        venue_fee_amount: quote.feeAmount.toString(),
        min_buy_amount: swap.minBuyAmount.toString(),
        reference: reference ? { num: reference.num.toString(), den: reference.den.toString() } : null,
        ...(routing.length > 1 ? { routing } : {}),
      },
    };
  }
  throw new StepAbort(firstRefusal!);
}
