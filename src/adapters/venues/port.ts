// The venue port: where a token conversion is priced and how it is executed. One adapter per venue
// identifier (docs/decisions.md): the on-chain AMMs (`uniswap-v3`, `aerodrome`, `devnet-amm`) read
// their quoters and encode router calls locally; the aggregators (`0x`, `kyberswap`) speak their
// HTTP APIs. In development every adapter is the real one, pointed at the devnet's contracts and
// at the aggregator fakes on loopback, so there is no separate sandbox implementation.

import type { Address, Hex } from 'viem';

/** Venue identifiers that settle token conversions (decisions.md, "Venue identifiers"). */
export const CONVERSION_VENUES = ['0x', 'kyberswap', 'aerodrome', 'uniswap-v3', 'devnet-amm'] as const;
export type ConversionVenue = (typeof CONVERSION_VENUES)[number];

export interface QuoteRequest {
  chainId: number;
  sellToken: Address;
  buyToken: Address;
  /** Base units of the sell token; > 0. */
  sellAmount: bigint;
  /** The account that will execute; aggregators may use it to tailor the route. Optional for a preview. */
  taker?: Address;
  /** Aborted when the caller's time for this venue is up: the adapter stops and throws. */
  signal: AbortSignal;
}

/** What a venue offers for a sell amount, as it answered. */
export interface VenueQuote {
  venue: ConversionVenue;
  chainId: number;
  sellToken: Address;
  buyToken: Address;
  sellAmount: bigint;
  /** What the taker receives, in buy-token base units, after the venue's fees. */
  buyAmount: bigint;
  /** The venue's fee for this amount, in buy-token base units (already taken out of buyAmount). */
  feeAmount: bigint;
  /** After this the quote is stale: quote again before building. */
  expiresAt: Date;
  /** The address the taker approves to spend the sell token. */
  allowanceTarget: Address;
  /**
   * Venue-specific material the build step needs (a fee tier, a route summary to pass back
   * verbatim). Plain JSON: a quote can be stored and built later.
   */
  route: Record<string, unknown>;
}

export interface BuildRequest {
  quote: VenueQuote;
  /** The account that sends the calls and holds the sell token. */
  taker: Address;
  /** Who receives the buy token (default: the taker). */
  recipient?: Address;
  /** Slippage budget in basis points: the calls revert when less than quote × (1 − budget) arrives. */
  slippageBps: number;
  /** Unix seconds after which the venue refuses the swap. */
  deadline: bigint;
  signal: AbortSignal;
}

export interface Call {
  to: Address;
  data: Hex;
  /** Wei sent with the call. */
  value: bigint;
}

/** The exact calls that execute a quote, in order: approve the allowance target, then swap. */
export interface SwapPlan {
  venue: ConversionVenue;
  calls: Call[];
  allowanceTarget: Address;
  /** The swap reverts below this (buy-token base units). */
  minBuyAmount: bigint;
  /** What the venue expects to deliver when this plan was built. */
  expectedBuyAmount: bigint;
  deadline: bigint;
}

export interface VenueAdapter {
  readonly venue: ConversionVenue;
  /** Chain ids this adapter is configured for. */
  chains(): readonly number[];
  /**
   * The contracts a taker approves and calls on `chainId` to execute this venue's swaps (its
   * allowance targets and routers), as configured; empty on a chain it does not serve. Session-key
   * grants name these as the only spenders an `approve` may give.
   */
  contracts(chainId: number): readonly Address[];
  /** Prices a sell amount. Throws VenueError (never anything else) when it cannot. */
  quote(request: QuoteRequest): Promise<VenueQuote>;
  /** The calls that execute `quote` for `taker`. Throws VenueError when it cannot. */
  build(request: BuildRequest): Promise<SwapPlan>;
}

/**
 * Why a venue gave no usable answer:
 * - `no_quote`: the venue answered that it cannot price the pair or the size (no pool, no liquidity);
 * - `timeout`: it did not answer within its time;
 * - `rate_limited`: it refused for load (HTTP 429); `retryAfterMs` says when to ask again;
 * - `bad_response`: it answered something that is not its documented format, or is inconsistent;
 * - `unavailable`: it could not be reached or failed (HTTP 5xx, RPC error, refused request).
 */
export type VenueFailureKind = 'no_quote' | 'timeout' | 'rate_limited' | 'bad_response' | 'unavailable';

export class VenueError extends Error {
  constructor(
    readonly venue: ConversionVenue,
    readonly kind: VenueFailureKind,
    message: string,
    options: { cause?: unknown; retryAfterMs?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'VenueError';
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }

  retryAfterMs?: number;
}

/** The minimum a swap may deliver under a slippage budget: amount × (10 000 − bps) / 10 000, rounded down. */
export function minimumAfterSlippage(amount: bigint, slippageBps: number): bigint {
  if (!Number.isInteger(slippageBps) || slippageBps < 0 || slippageBps > 10_000) {
    throw new RangeError(
      `slippage must be an integer number of basis points in 0..10000 (got ${slippageBps})`,
    );
  }
  return (amount * BigInt(10_000 - slippageBps)) / 10_000n;
}
