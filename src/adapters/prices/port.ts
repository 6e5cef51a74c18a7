// The price-reference port: the USD price of a feed (`ETH/USD`) on a chain, read from an oracle
// independent of the venues that quote conversions. The real implementation (chainlink.ts) reads
// Chainlink AggregatorV3 feeds over the chain port; in development it is pointed at the devnet's
// DevPriceFeed contracts, which speak the same interface, so there is no separate sandbox.
//
// Fail closed: a read answers either a usable reading or a typed failure, never a number that
// might be wrong. Callers value nothing with a failure.

import type { Address } from 'viem';

/** One configured feed: where it lives and how often it must update. */
export interface PriceFeedSpec {
  chainId: number;
  /** `BASE/QUOTE` as configured (`ETH/USD`); the feed's `description()` must match it. */
  pair: string;
  address: Address;
  /** The feed updates at least this often; a reading older than heartbeat + margin is stale. */
  heartbeatSeconds: number;
  /** Expected `decimals()`; a feed reporting other decimals is refused. Absent: any. */
  decimals?: number;
  /** Expected `description()` when it differs from the pair's spelling (compared the same way). */
  description?: string;
}

/** A usable reading of one feed. */
export interface PriceReading {
  chainId: number;
  pair: string;
  address: Address;
  /** The feed's answer: USD per unit of the base asset, scaled by 10^decimals. Always > 0. */
  answer: bigint;
  decimals: number;
  /** Unix seconds of the round's last update (the feed's `updatedAt`). */
  updatedAt: bigint;
  roundId: bigint;
  /** When this process took the reading (clock port). */
  takenAt: Date;
}

export type PriceFailureKind =
  /** `updatedAt` is 0, older than heartbeat + margin, or too far in the future for the clock. */
  | 'stale'
  /** No feed is configured for the pair on the chain (or the chain has no RPC endpoint). */
  | 'missing_feed'
  /** The answer is zero or negative. */
  | 'bad_answer'
  /** The configured address holds no contract. */
  | 'no_code'
  /** A call to the feed reverted or returned something that is not the interface's answer. */
  | 'reverted'
  /** `description()` does not name the configured pair, or `decimals()` differs from the configured decimals. */
  | 'description_mismatch'
  /** The chain's RPC endpoint did not answer. */
  | 'unreachable'
  /** The L2 sequencer uptime feed says down, came back less than the grace period ago, or cannot be read. */
  | 'sequencer_down';

export interface PriceFailure {
  kind: PriceFailureKind;
  chainId: number;
  pair: string;
  /** Safe to show: names the feed, never an RPC URL. */
  message: string;
}

export type PriceResult = { ok: true; reading: PriceReading } | { ok: false; failure: PriceFailure };

export interface PriceReferencePort {
  /**
   * Reads the feed's latest round. The first read of a feed checks its code, `description()` and
   * `decimals()`; a feed failing that check is refused on every read until it passes.
   * Never throws for a feed problem or an RPC failure: those are typed failures.
   */
  read(feed: PriceFeedSpec): Promise<PriceResult>;
}

/** After the sequencer comes back up, prices are refused this long (Chainlink's example: one hour). */
export const DEFAULT_SEQUENCER_GRACE_SECONDS = 3600;

/** Default allowance beyond the heartbeat: a heartbeat round can take ~40 s to land. */
export const DEFAULT_STALENESS_MARGIN_SECONDS = 60;

/** The pair spelling used for comparisons: `eth / usd` → `ETH/USD`. */
export function normalizePair(pair: string): string {
  return pair.replace(/\s+/g, '').toUpperCase();
}

/**
 * Why a reading is not fresh at `now`, or null when it is: `updatedAt` is 0, older than
 * heartbeat + margin, or more than the margin ahead of the clock (a clock that far behind the
 * chain cannot judge age at all).
 */
export function freshnessFailure(
  reading: Pick<PriceReading, 'chainId' | 'pair' | 'updatedAt'>,
  heartbeatSeconds: number,
  marginSeconds: number,
  now: Date,
): PriceFailure | null {
  const nowSeconds = BigInt(Math.floor(now.getTime() / 1000));
  const fail = (message: string): PriceFailure => ({
    kind: 'stale',
    chainId: reading.chainId,
    pair: reading.pair,
    message,
  });
  if (reading.updatedAt === 0n)
    return fail(`${reading.pair} on chain ${reading.chainId} has no complete round`);
  const age = nowSeconds - reading.updatedAt;
  const limit = BigInt(heartbeatSeconds + marginSeconds);
  if (age > limit) {
    return fail(
      `${reading.pair} on chain ${reading.chainId} was last updated ${age} s ago (limit ${limit} s: heartbeat ${heartbeatSeconds} s + margin ${marginSeconds} s)`,
    );
  }
  if (-age > BigInt(marginSeconds)) {
    return fail(
      `${reading.pair} on chain ${reading.chainId} is stamped ${-age} s ahead of this server's clock; check the clock`,
    );
  }
  return null;
}
