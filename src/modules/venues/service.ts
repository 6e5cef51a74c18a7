// Asking the venues: every venue that serves the chain, survives the caller's allowlist and is not
// switched off by the operator is asked at once, each within its own time limit and the caller's
// remaining budget. A venue that errs, times out or answers garbage is reported beside the others'
// quotes; it never fails the whole request. The planner (quotes and intents) reads the result.

import {
  minimumAfterSlippage,
  VenueError,
  type ConversionVenue,
  type SwapPlan,
  type VenueAdapter,
  type VenueFailureKind,
  type VenueQuote,
} from '../../adapters/venues/index.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { venuesSwitchedOff } from '../switches/index.ts';
import type { Address } from 'viem';

export interface VenueDeps {
  db: DbExecutor;
  venues: readonly VenueAdapter[];
  /** The longest one venue may take (each adapter also has its own limit). */
  venueTimeoutMs: number;
}

export interface QuoteAllInput {
  chainId: number;
  sellToken: Address;
  buyToken: Address;
  sellAmount: bigint;
  taker?: Address;
  /** A policy's `execution.venues`: only these may be asked (absent: every venue). */
  allow?: readonly string[];
  deadline: Deadline;
}

/** A venue that was not asked, and why. */
export interface VenueSkipped {
  venue: ConversionVenue;
  why: 'switched_off' | 'not_allowed';
  /** The operator's reason, for a switched-off venue. */
  detail?: string;
}

/** A venue that was asked and gave no usable quote. */
export interface VenueFailure {
  venue: ConversionVenue;
  kind: VenueFailureKind;
  message: string;
  retryAfterMs?: number;
  /** How long the venue took to fail. */
  ms: number;
}

export interface QuoteAllResult {
  /** Usable quotes, best (largest buy amount) first. */
  quotes: (VenueQuote & { ms: number })[];
  failures: VenueFailure[];
  skipped: VenueSkipped[];
  /** The venues asked: empty when none serves the chain, survives the allowlist or is switched on. */
  asked: ConversionVenue[];
}

/** Fires at the venue timeout or when the request's budget runs out, whichever is first. */
function venueSignal(deps: VenueDeps, deadline: Deadline): AbortSignal {
  return AbortSignal.timeout(Math.max(1, Math.floor(Math.min(deps.venueTimeoutMs, deadline.remainingMs()))));
}

/** The venues that serve `chainId`, whatever the switches say. */
export function venuesOnChain(venues: readonly VenueAdapter[], chainId: number): VenueAdapter[] {
  return venues.filter((v) => v.chains().includes(chainId));
}

/** Asks every eligible venue for the sale at once; see the file comment. */
export async function quoteAllVenues(deps: VenueDeps, input: QuoteAllInput): Promise<QuoteAllResult> {
  const onChain = venuesOnChain(deps.venues, input.chainId);
  const skipped: VenueSkipped[] = [];
  let eligible = onChain;
  if (input.allow) {
    const allow = new Set(input.allow);
    for (const v of eligible) if (!allow.has(v.venue)) skipped.push({ venue: v.venue, why: 'not_allowed' });
    eligible = eligible.filter((v) => allow.has(v.venue));
  }
  if (eligible.length > 0) {
    const off = await venuesSwitchedOff(deps.db);
    for (const v of eligible) {
      const s = off.get(v.venue);
      if (s) skipped.push({ venue: v.venue, why: 'switched_off', detail: s.reason });
    }
    eligible = eligible.filter((v) => !off.has(v.venue));
  }
  if (eligible.length === 0) return { quotes: [], failures: [], skipped, asked: [] };

  input.deadline.check('asking the venues for quotes');
  const signal = venueSignal(deps, input.deadline);
  const answers = await Promise.all(
    eligible.map(async (v) => {
      const started = performance.now();
      try {
        const quote = await v.quote({
          chainId: input.chainId,
          sellToken: input.sellToken,
          buyToken: input.buyToken,
          sellAmount: input.sellAmount,
          ...(input.taker ? { taker: input.taker } : {}),
          signal,
        });
        checkQuote(v.venue, quote, input);
        return { ok: true as const, quote: { ...quote, ms: Math.round(performance.now() - started) } };
      } catch (err) {
        const e =
          err instanceof VenueError
            ? err
            : new VenueError(v.venue, 'unavailable', `${v.venue} failed unexpectedly`, { cause: err });
        return {
          ok: false as const,
          failure: {
            venue: v.venue,
            kind: e.kind,
            message: e.message,
            ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}),
            ms: Math.round(performance.now() - started),
          },
        };
      }
    }),
  );
  const quotes = answers.flatMap((a) => (a.ok ? [a.quote] : []));
  quotes.sort((a, b) => (a.buyAmount === b.buyAmount ? 0 : a.buyAmount > b.buyAmount ? -1 : 1));
  return {
    quotes,
    failures: answers.flatMap((a) => (a.ok ? [] : [a.failure])),
    skipped,
    asked: eligible.map((v) => v.venue),
  };
}

/** A quote that does not answer the question asked is the venue's garbage, not a quote. */
function checkQuote(venue: ConversionVenue, quote: VenueQuote, input: QuoteAllInput): void {
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  if (
    quote.venue !== venue ||
    quote.chainId !== input.chainId ||
    !same(quote.sellToken, input.sellToken) ||
    !same(quote.buyToken, input.buyToken) ||
    quote.sellAmount !== input.sellAmount ||
    quote.buyAmount <= 0n ||
    quote.feeAmount < 0n
  ) {
    throw new VenueError(venue, 'bad_response', `${venue} answered a quote for something else`);
  }
}

export interface BuildSwapInput {
  quote: VenueQuote;
  taker: Address;
  recipient?: Address;
  slippageBps: number;
  /** Unix seconds after which the venue must refuse the swap. */
  swapDeadline: bigint;
  deadline: Deadline;
}

/**
 * The calls that execute a quote. Refuses (VenueError `unavailable`) a venue switched off since
 * it quoted, and a quote past its expiry (`no_quote`: quote again).
 */
export async function buildSwap(deps: VenueDeps, input: BuildSwapInput, now: Date): Promise<SwapPlan> {
  const { quote } = input;
  const adapter = deps.venues.find((v) => v.venue === quote.venue);
  if (!adapter) throw new VenueError(quote.venue, 'unavailable', `${quote.venue} is not configured`);
  const off = await venuesSwitchedOff(deps.db);
  const s = off.get(quote.venue);
  if (s)
    throw new VenueError(
      quote.venue,
      'unavailable',
      `${quote.venue} is switched off by the operator: ${s.reason}`,
    );
  if (quote.expiresAt.getTime() <= now.getTime()) {
    throw new VenueError(
      quote.venue,
      'no_quote',
      `the ${quote.venue} quote expired at ${quote.expiresAt.toISOString()}`,
    );
  }
  input.deadline.check(`building the ${quote.venue} swap`);
  const signal = venueSignal(deps, input.deadline);
  const plan = await adapter.build({
    quote,
    taker: input.taker,
    ...(input.recipient ? { recipient: input.recipient } : {}),
    slippageBps: input.slippageBps,
    deadline: input.swapDeadline,
    signal,
  });
  if (plan.calls.length === 0 || plan.minBuyAmount <= 0n) {
    throw new VenueError(quote.venue, 'bad_response', `${quote.venue} built no swap`);
  }
  // The caller accepted the quote with this budget: calls that would settle for less break that.
  const floor = minimumAfterSlippage(quote.buyAmount, input.slippageBps);
  if (plan.minBuyAmount < floor) {
    throw new VenueError(
      quote.venue,
      'no_quote',
      `${quote.venue} would now guarantee only ${plan.minBuyAmount} where the quote's budget needs ${floor}: quote again`,
    );
  }
  return plan;
}
