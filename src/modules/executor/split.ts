// Splitting one slice between two venues: when a slice has been routed to its best venue A and
// other venues quoted too, the best cut of the slice between them (venues/cut.ts: a quarter, a
// half or three quarters to A) is taken when it buys more than A alone by more than a second
// swap's gas costs (quotes' `splitGasCost`). The slice is then one operation of two swaps, each
// with its own minimum out from the slippage budget: [approve A, swap A, approve B, swap B].
// Anything that fails here (a quote, a build, a grant that does not cover the calls, no price for
// the gas) leaves the slice on A alone. How a split slice is ledgered per venue: fills.ts,
// `splitLogs`.

import type { Address } from 'viem';
import type { VenueQuote } from '../../adapters/venues/index.ts';
import { VenueError } from '../../adapters/venues/index.ts';
import { Deadline } from '../../core/http/deadline.ts';
import type { Call } from '../delegations/index.ts';
import type { StoredScope } from '../delegations/store.ts';
import type { IntentRow } from '../intents/index.ts';
import { splitGasCost } from '../quotes/index.ts';
import { bestCut, buildSwap } from '../venues/index.ts';
import { uncoveredCall } from './grant.ts';
import type { RunDeps } from './start.ts';
import type { SlicePart } from './store.ts';

export interface SplitInput {
  row: IntentRow;
  scope: StoredScope;
  wallet: Address;
  amount: bigint;
  /** The best venue's quote for the whole slice, and the other venues that quoted it, best first. */
  best: VenueQuote;
  others: readonly string[];
  swapDeadline: bigint;
}

export interface SplitSlice {
  calls: Call[];
  parts: SlicePart[];
  /** What the cut buys more than the best venue alone, and the extra gas valued, in buy-token units. */
  gain: bigint;
  gasCost: bigint;
}

/** The slice split between the two venues, or null when no cut is worth its gas (see the file comment). */
export async function splitSlice(deps: RunDeps, input: SplitInput): Promise<SplitSlice | null> {
  const { row, best } = input;
  const gasCost = await splitGasCost(deps, row.chain_id, best.buyToken).catch(() => null);
  if (gasCost === null) return null;
  const venueDeps = { db: deps.db, venues: deps.venues, venueTimeoutMs: deps.config.venues.timeoutMs };
  const cut = await bestCut(venueDeps, {
    chainId: row.chain_id,
    sellToken: best.sellToken,
    buyToken: best.buyToken,
    amount: input.amount,
    taker: input.wallet,
    best: { venue: best.venue, buyAmount: best.buyAmount },
    others: input.others,
    gasCost,
  });
  if (!cut) return null;
  const deadline = new Deadline(deps.config.venues.timeoutMs * 2);
  try {
    const now = deps.clock.now();
    const build = (quote: VenueQuote) =>
      buildSwap(
        venueDeps,
        {
          quote,
          taker: input.wallet,
          slippageBps: row.params.max_slippage_bps,
          swapDeadline: input.swapDeadline,
          deadline,
        },
        now,
      );
    const [swapA, swapB] = await Promise.all([build(cut.a), build(cut.b)]);
    const calls = [...swapA.calls, ...swapB.calls];
    if (uncoveredCall(input.scope, calls)) return null;
    const part = (quote: VenueQuote, minBuy: bigint): SlicePart => ({
      venue: quote.venue,
      sell_amount: quote.sellAmount.toString(),
      quoted_buy_amount: quote.buyAmount.toString(),
      venue_fee_amount: quote.feeAmount.toString(),
      min_buy_amount: minBuy.toString(),
      allowance_target: quote.allowanceTarget.toLowerCase(),
    });
    return {
      calls,
      parts: [part(cut.a, swapA.minBuyAmount), part(cut.b, swapB.minBuyAmount)],
      gain: cut.gain,
      gasCost: cut.gasCost,
    };
  } catch (err) {
    if (err instanceof VenueError) return null;
    throw err;
  }
}
