// The slicing planner: a pure function from the venues' full-size quotes, one small probe quote on
// the best venue and the independent reference price to either a plan (how many equal slices, on
// which venue, how far apart, what they should fetch) or the spec's abort reason with its detail.
// The quote endpoint runs it in preview; the executor of conversion intents runs the same code.
// Worked example and the reasoning behind each threshold: docs/execution.md.
//
// Model (execution reference §5.2–5.4). With S the sell amount, B(x) the buy amount quoted for x,
// p the probe size: the marginal price is P_probe = B(p)/p, the full-size price P_full = B(S)/S,
// the impact at full size I = 1 − P_full/P_probe (fees cancel in the ratio). A constant-product
// pool of depth R has I(x) = x/(R + x), so R = S(1 − I)/I. Slices are sized so each one's impact is
// at most half the slippage budget s (the spec's rule: the other half absorbs drift between quote
// and inclusion): x* = (s/2)·R/(1 − s/2), n = ⌈S/x*⌉. DEPTH_COLLAPSE is the spec's "venue depth
// cannot support even two slices at the size": half the order alone would move the price by more
// than the whole budget, I(S/2) > s (or the slices needed exceed the most a plan may have).

/** The spec's abort reasons the planner gives (section 7). */
export type PlannerAbortReason =
  | 'VENUE_UNAVAILABLE'
  | 'VENUE_NO_QUOTE'
  | 'UNSUPPORTED_TOKEN'
  | 'NO_PRICE_REFERENCE'
  | 'VENUE_DISAGREEMENT'
  | 'PRICE_GAP'
  | 'DEPTH_COLLAPSE';

export interface PlannerAbort {
  reason: PlannerAbortReason;
  /** Plain JSON saying what was measured against what. */
  detail: Record<string, unknown>;
}

export interface PlannerQuote {
  venue: string;
  /** Buy-token base units for the full sell amount. */
  buyAmount: bigint;
}

/** A price as an exact fraction: buy-token base units per sell-token base unit = num/den. */
export interface Price {
  num: bigint;
  den: bigint;
}

export interface PlannerInput {
  /** S, sell-token base units; > 0. */
  sellAmount: bigint;
  /** s, in basis points (1..10 000). */
  slippageBps: number;
  /** Both tokens are in the chain's registry. */
  tokensSupported: boolean;
  /** How many venues could be asked (0: none serves the chain, survives the allowlist or is on). */
  venuesAsked: number;
  /** The full-size quotes of the venues that answered. */
  quotes: readonly PlannerQuote[];
  /** The independent reference (both legs covered), or null. */
  reference: Price | null;
  /** The probe on the best venue, or null when it gave no answer. */
  probe: { sellAmount: bigint; buyAmount: bigint } | null;
  /** Most slices a plan may have. */
  maxSlices: number;
  /** Time between slices (at least two blocks). */
  intervalMs: number;
}

export interface SlicedPlan {
  venue: string;
  sliceCount: number;
  /** Every slice but the last; the last takes the remainder (slices sum to the order). */
  sliceSellAmount: bigint;
  /** The slices in order. */
  slices: bigint[];
  probeSellAmount: bigint;
  probeBuyAmount: bigint;
  impactBpsAtFullSize: number;
  intervalMs: number;
  /** What the slices should fetch if the price recovers between them. */
  estimatedBuyTotal: bigint;
  /** The impact each slice has under the estimate, in bps (the largest slice's). */
  sliceImpactBps: number;
}

export interface ExpectedSavings {
  /** estimatedBuyTotal − the best full-size quote, in buy-token base units (≥ 0 when sliced). */
  buyAmount: bigint;
  /** The same relative to the best full-size quote, in basis points. */
  bps: number;
}

export type PlannerResult =
  | { ok: true; plan: SlicedPlan; savings: ExpectedSavings | null; best: PlannerQuote }
  | { ok: false; abort: PlannerAbort; best: PlannerQuote | null };

/** The probe size for an order: 1/50 of it (at least one base unit). */
export function probeSellAmount(sellAmount: bigint): bigint {
  const p = sellAmount / 50n;
  return p > 0n ? p : 1n;
}

/** The quote with the largest buy amount; ties go to the venue named first alphabetically. */
export function bestQuote(quotes: readonly PlannerQuote[]): PlannerQuote | null {
  let best: PlannerQuote | null = null;
  for (const q of quotes) {
    if (!best || q.buyAmount > best.buyAmount || (q.buyAmount === best.buyAmount && q.venue < best.venue)) {
      best = q;
    }
  }
  return best;
}

/** a/b as a number, exact enough for ratios of amounts (both converted once, never summed). */
const ratio = (a: bigint, b: bigint): number => Number(a) / Number(b);
const bps = (fraction: number): number => Math.round(fraction * 10_000 * 100) / 100;

/** Plans the order, or says why not; see the file comment. Deterministic: same input, same answer. */
export function planOrder(input: PlannerInput): PlannerResult {
  const s = input.slippageBps / 10_000;
  const best = bestQuote(input.quotes);
  const abort = (reason: PlannerAbortReason, detail: Record<string, unknown>): PlannerResult => ({
    ok: false,
    abort: { reason, detail },
    best,
  });

  if (input.venuesAsked === 0) {
    return abort('VENUE_UNAVAILABLE', {
      why: 'no venue serves the chain, survives the allowlist or is switched on',
    });
  }
  if (!best) return abort('VENUE_NO_QUOTE', { venues_asked: input.venuesAsked });
  if (!input.tokensSupported) {
    return abort('UNSUPPORTED_TOKEN', { why: 'a token is not in the chain’s registry' });
  }
  if (input.quotes.length === 1 && !input.reference) {
    return abort('NO_PRICE_REFERENCE', {
      venue: best.venue,
      why: 'one venue can fill and no oracle covers the pair',
    });
  }
  if (input.quotes.length > 1) {
    const worst = input.quotes.reduce((w, q) => (q.buyAmount < w.buyAmount ? q : w));
    const spread = ratio(best.buyAmount - worst.buyAmount, best.buyAmount);
    if (spread > 10 * s) {
      return abort('VENUE_DISAGREEMENT', {
        spread_bps: bps(spread),
        limit_bps: 10 * input.slippageBps,
        quotes: input.quotes.map((q) => ({ venue: q.venue, buy_amount: q.buyAmount.toString() })),
      });
    }
  }
  const probe = input.probe;
  if (!probe || probe.buyAmount <= 0n) {
    return abort('VENUE_NO_QUOTE', { venue: best.venue, why: 'the probe quote got no answer' });
  }
  if (input.reference) {
    // Both prices in buy units per sell unit: (probe.buy / probe.sell) / (ref.num / ref.den).
    const gap = ratio(probe.buyAmount * input.reference.den, probe.sellAmount * input.reference.num) - 1;
    if (Math.abs(gap) > 2 * s) {
      return abort('PRICE_GAP', {
        venue: best.venue,
        gap_bps: bps(gap),
        limit_bps: 2 * input.slippageBps,
      });
    }
  }

  const S = input.sellAmount;
  // P_full / P_probe = (B(S)/S) / (B(p)/p).
  const fullOverProbe = ratio(best.buyAmount * probe.sellAmount, S * probe.buyAmount);
  const impact = Math.max(0, 1 - fullOverProbe);
  const target = s / 2;
  let n = 1;
  let depth = Infinity; // R, in sell-token base units, as a number
  if (impact > target) {
    depth = (Number(S) * (1 - impact)) / impact;
    const sliceMax = (target * depth) / (1 - target);
    n = Math.ceil(Number(S) / sliceMax);
    // The depth cannot carry even two slices: half the order alone costs more than the budget;
    // or it needs more slices than a plan may have.
    const half = Number(S) / 2;
    const halfImpact = half / (depth + half);
    if (halfImpact > s || n > input.maxSlices || BigInt(n) > S) {
      return abort('DEPTH_COLLAPSE', {
        venue: best.venue,
        impact_bps_at_full_size: bps(impact),
        impact_bps_at_half_size: bps(halfImpact),
        slippage_bps: input.slippageBps,
        slices_needed: n,
        max_slices: input.maxSlices,
      });
    }
  }

  const slice = S / BigInt(n);
  const slices = Array.from({ length: n }, (_, i) => (i === n - 1 ? S - slice * BigInt(n - 1) : slice));
  // Each slice at the marginal price less its own impact, the price recovering in between.
  const estimate = (x: bigint): bigint => {
    const atMarginal = (x * probe.buyAmount) / probe.sellAmount;
    const keep = depth / (depth + Number(x));
    return (atMarginal * BigInt(Math.round(keep * 1e12))) / 1_000_000_000_000n;
  };
  const estimatedBuyTotal = n === 1 ? best.buyAmount : slices.reduce((sum, x) => sum + estimate(x), 0n);
  const largest = slices.reduce((a, b) => (a > b ? a : b));
  const sliceImpact = Number.isFinite(depth) ? Number(largest) / (depth + Number(largest)) : impact;
  const plan: SlicedPlan = {
    venue: best.venue,
    sliceCount: n,
    sliceSellAmount: slice,
    slices,
    probeSellAmount: probe.sellAmount,
    probeBuyAmount: probe.buyAmount,
    impactBpsAtFullSize: bps(impact),
    intervalMs: n === 1 ? 0 : input.intervalMs,
    estimatedBuyTotal,
    sliceImpactBps: bps(sliceImpact),
  };
  const savings =
    n === 1
      ? null
      : {
          buyAmount: estimatedBuyTotal - best.buyAmount,
          bps: bps(ratio(estimatedBuyTotal - best.buyAmount, best.buyAmount)),
        };
  return { ok: true, plan, savings, best };
}
