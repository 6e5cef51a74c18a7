// What an intent's `report` says while and after it runs (docs/executor.md): the plan, each
// settled slice (venue, amounts from the logs, the price achieved against the reference, the
// UserOperation and transaction hashes, gas), the totals, and how many continuations it took. The
// abort reasons of spec section 7 the executor sets are here too. Amounts are decimal strings of
// base units; prices are buy tokens per sell token in whole tokens.

import type { IntentRow } from '../intents/index.ts';

/** The abort reasons of spec section 7 that the executor sets. */
export type AbortReason =
  | 'UNSUPPORTED_KIND'
  | 'EXECUTOR_UNCONFIGURED'
  | 'NO_DELEGATION'
  | 'UNSUPPORTED_CHAIN'
  | 'POLICY_VIOLATION'
  | 'INSUFFICIENT_BALANCE'
  | 'DEPTH_COLLAPSE'
  | 'PRICE_GAP'
  | 'VENUE_DISAGREEMENT'
  | 'VENUE_NO_QUOTE'
  | 'UNSUPPORTED_TOKEN'
  | 'VENUE_UNAVAILABLE'
  | 'NO_PRICE_REFERENCE'
  | 'SPEND_CAP_EXCEEDED'
  | 'EXECUTION_FAILED'
  | 'EXECUTION_ERROR'
  | 'EXECUTION_INTERRUPTED';

export interface Abort {
  reason: AbortReason;
  detail: Record<string, unknown>;
}

/** A step's end by an abort reason: thrown inside a step, turned into the intent's abort (run.ts). */
export class StepAbort extends Error {
  constructor(readonly abort: Abort) {
    super(`${abort.reason}: ${JSON.stringify(abort.detail)}`);
  }
}

/** Ends the step with `abort`, when there is one. */
export const refuse = (abort: Abort | null): void => {
  if (abort) throw new StepAbort(abort);
};

export interface PlanReport {
  venue: string;
  slice_count: number;
  /** Sell-token base units of each part, in order (they sum to the intent's sell amount). */
  slices: string[];
  interval_ms: number;
  impact_bps_at_full_size: number;
  estimated_buy_total: string;
  /** The best full-size quote when the plan was made. */
  best_full_size_buy_amount: string;
  planned_at: string;
}

/** One venue's part of a split slice, as ledgered. */
export interface SlicePartReport {
  venue: string;
  sell_amount: string;
  sold: string;
  bought: string;
  quoted_buy_amount: string;
  min_buy_amount: string;
}

export interface SliceReport {
  seq: number;
  part: number;
  venue: string;
  state: 'landed' | 'reverted' | 'dropped';
  /** What the slice was to sell, and what its logs say it sold and bought. */
  sell_amount: string;
  sold: string;
  bought: string;
  quoted_buy_amount: string;
  min_buy_amount: string;
  /** The venue's fee the quote counted (buy-token base units); absent for an unwrap, which has none. */
  venue_fee_amount?: string;
  /**
   * The fresh quotes of every venue the slice could be routed to, best first (the slice went to
   * the first its grant covers); absent when one venue was asked.
   */
  routing?: { venue: string; buy_amount: string }[];
  /**
   * A slice split between two venues in one operation: each venue's part, what it was to sell,
   * what its logs say it sold and bought, its quote and its minimum. `venue` is the larger part's.
   */
  split?: SlicePartReport[];
  /** Buy tokens per sell token, whole tokens; null when nothing was sold. */
  price: string | null;
  reference_price: string | null;
  /** (price / reference − 1) in basis points: negative is worse than the reference. */
  vs_reference_bps: number | null;
  user_op_hash: string;
  tx_hash: string | null;
  gas_wei: string;
  /** Wei the relayer deposited at the EntryPoint for the account before the slice (its prefund). */
  sponsored_wei: string;
  revert_reason?: string;
  settled_at: string;
  /**
   * Where the time went, in milliseconds: each phase of the step before the operation was recorded
   * (reconcile, checks, plan, quote_build, sign, sponsor), `land` (from the recording to the
   * outcome ledgered: the bundler and the chain), and `total` (from the step's start to the fill
   * ledgered).
   */
  timings_ms?: Record<string, number>;
}

export interface RunTotals {
  sold: string;
  bought: string;
  gas_wei: string;
  sponsored_wei: string;
  /** Buy tokens per sell token over every landed slice, or null. */
  average_price: string | null;
  /** The USD value that filled (the admitted value in proportion to what sold), set at the end. */
  filled_value_usd?: string;
}

export interface RunReport {
  plan?: PlanReport;
  slices: SliceReport[];
  totals: RunTotals;
  /** Times the run was rescheduled (between slices, or to wait for a receipt). */
  continuations: number;
}

/** The intent's report as the executor keeps it (an admitted intent's is empty). */
export function runReport(row: IntentRow): RunReport {
  const r = row.report as Partial<RunReport>;
  return {
    ...(r.plan ? { plan: r.plan } : {}),
    slices: r.slices ?? [],
    totals: r.totals ?? { sold: '0', bought: '0', gas_wei: '0', sponsored_wei: '0', average_price: null },
    continuations: r.continuations ?? 0,
  };
}

/** `amount` base units with `decimals` as a plain decimal string, at most `digits` decimals. */
function decimalString(num: bigint, den: bigint, digits = 8): string {
  const scale = 10n ** BigInt(digits);
  const scaled = (num * scale + den / 2n) / den;
  const whole = scaled / scale;
  const frac = (scaled % scale).toString().padStart(digits, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole.toString();
}

/** Buy tokens per sell token, whole tokens, from base units; null when nothing was sold. */
export function priceOf(
  sold: bigint,
  bought: bigint,
  sellDecimals: number,
  buyDecimals: number,
): string | null {
  if (sold <= 0n) return null;
  return decimalString(bought * 10n ** BigInt(sellDecimals), sold * 10n ** BigInt(buyDecimals));
}

/** A reference (buy base units per sell base unit = num/den) in whole tokens. */
export function referencePrice(
  reference: { num: string; den: string } | null,
  sellDecimals: number,
  buyDecimals: number,
): string | null {
  if (!reference) return null;
  return decimalString(
    BigInt(reference.num) * 10n ** BigInt(sellDecimals),
    BigInt(reference.den) * 10n ** BigInt(buyDecimals),
  );
}

/** (achieved / reference − 1) in basis points, two decimals; null without both. */
export function versusReferenceBps(
  sold: bigint,
  bought: bigint,
  reference: { num: string; den: string } | null,
): number | null {
  if (!reference || sold <= 0n) return null;
  const ratio =
    Number((bought * BigInt(reference.den) * 1_000_000n) / (sold * BigInt(reference.num))) / 1_000_000;
  return Math.round((ratio - 1) * 10_000 * 100) / 100;
}

/** The totals after one more settled slice. */
export function addToTotals(
  totals: RunTotals,
  slice: { sold: bigint; bought: bigint; gasWei: bigint; sponsoredWei: bigint },
  decimals: { sell: number; buy: number },
): RunTotals {
  const sold = BigInt(totals.sold) + slice.sold;
  const bought = BigInt(totals.bought) + slice.bought;
  return {
    sold: sold.toString(),
    bought: bought.toString(),
    gas_wei: (BigInt(totals.gas_wei) + slice.gasWei).toString(),
    sponsored_wei: (BigInt(totals.sponsored_wei) + slice.sponsoredWei).toString(),
    average_price: priceOf(sold, bought, decimals.sell, decimals.buy),
  };
}

/**
 * Real elapsed time in unix milliseconds, for measurements only (never a business time: those come
 * from the clock port): a slice may be recorded in one process and ledgered in another.
 */
export const wallClockMs = (): number => Math.round(performance.timeOrigin + performance.now());
