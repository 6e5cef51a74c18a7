// Cutting a sale between two venues: the best venue A takes a quarter, a half or three quarters
// and another venue B the rest, each quoted for its share (all at once); B is each of the next two
// venues by their quotes (two venues can share a pool: an aggregator may route through the very
// pool another venue is). The best cut is the answer when it buys more than A alone by more than
// `gasCost` (what the second swap's gas is worth in the buy token, the caller's valuation). The executor splits a slice with it
// (executor/split.ts) and the quote preview shows the same cut for a plan's first slice.

import type { Address } from 'viem';
import type { VenueQuote } from '../../adapters/venues/index.ts';
import { Deadline } from '../../core/http/deadline.ts';
import { quoteAllVenues, type VenueDeps } from './service.ts';

/** The shares of the sale offered to the best venue, in quarters. */
const CUTS = [1n, 2n, 3n];

export interface CutInput {
  chainId: number;
  sellToken: Address;
  buyToken: Address;
  amount: bigint;
  taker?: Address;
  /** The best venue, and what it buys for the whole amount (asked when not given). */
  best: { venue: string; buyAmount?: bigint };
  /** The other venues, best first: the first two are tried. */
  others: readonly string[];
  /** What the second swap's gas costs, in buy-token base units. */
  gasCost: bigint;
}

/** The best cut of a sale between two venues, worth its gas. */
export interface Cut {
  a: VenueQuote;
  b: VenueQuote;
  /** What the best venue alone buys for the whole amount. */
  alone: bigint;
  /** What the cut buys more than that, and the gas it had to beat, in buy-token units. */
  gain: bigint;
  gasCost: bigint;
}

/** The best cut of `input.amount` between the two venues, or null when none is worth its gas. */
export async function bestCut(deps: VenueDeps, input: CutInput): Promise<Cut | null> {
  const { amount } = input;
  const others = input.others.filter((v) => v !== input.best.venue).slice(0, 2);
  if (amount < 4n || others.length === 0) return null;
  const deadline = new Deadline(deps.venueTimeoutMs * 2);
  const ask = async (venue: string, sellAmount: bigint): Promise<VenueQuote | null> => {
    const answer = await quoteAllVenues(deps, {
      chainId: input.chainId,
      sellToken: input.sellToken,
      buyToken: input.buyToken,
      sellAmount,
      ...(input.taker ? { taker: input.taker } : {}),
      allow: [venue],
      deadline,
    });
    return answer.quotes[0] ?? null;
  };
  const [alone, ...cuts] = await Promise.all([
    input.best.buyAmount ?? ask(input.best.venue, amount).then((q) => q?.buyAmount ?? null),
    ...others.flatMap((other) =>
      CUTS.map(async (quarters) => {
        const first = (amount * quarters) / 4n;
        const [a, b] = await Promise.all([ask(input.best.venue, first), ask(other, amount - first)]);
        // One approval per part tells the parts' logs apart: two parts must not share a spender.
        if (!a || !b || a.allowanceTarget.toLowerCase() === b.allowanceTarget.toLowerCase()) return null;
        return { a, b, total: a.buyAmount + b.buyAmount };
      }),
    ),
  ]);
  if (alone === null) return null;
  let chosen: { a: VenueQuote; b: VenueQuote; total: bigint } | null = null;
  for (const c of cuts) if (c && (!chosen || c.total > chosen.total)) chosen = c;
  if (!chosen) return null;
  const gain = chosen.total - alone;
  if (gain <= input.gasCost) return null;
  return { a: chosen.a, b: chosen.b, alone, gain, gasCost: input.gasCost };
}
