// Chainlink price references: AggregatorV3Interface feeds (`latestRoundData`, `decimals`,
// `description`) read through the chain port. The devnet's DevPriceFeed speaks the same
// interface, so development and tests drive this adapter against anvil.
//
// Freshness is judged against the clock port, not chain time: the cache that serves valuations
// has no RPC at use time, so the age it checks then must be measured on the same clock, and a
// lagging RPC node (whose head timestamp trails real time) cannot make an old round look fresh.

import {
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  HttpRequestError,
  parseAbi,
  TimeoutError,
  type Address,
} from 'viem';
import type { ChainPort } from '../chain/port.ts';
import type { Clock } from '../../core/clock.ts';
import {
  DEFAULT_SEQUENCER_GRACE_SECONDS,
  DEFAULT_STALENESS_MARGIN_SECONDS,
  freshnessFailure,
  normalizePair,
  type PriceFailure,
  type PriceFailureKind,
  type PriceFeedSpec,
  type PriceReferencePort,
  type PriceResult,
} from './port.ts';

/** The part of Chainlink's AggregatorV3Interface the adapter reads. */
export const aggregatorV3Abi = parseAbi([
  'function decimals() view returns (uint8)',
  'function description() view returns (string)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
]);

export interface ChainlinkPriceReferencesOptions {
  chain: ChainPort;
  clock: Clock;
  /** Seconds allowed beyond a feed's heartbeat (default 60). */
  marginSeconds?: number;
  /**
   * L2 sequencer uptime feed per chain id: while it says down (answer 1), and for the grace
   * period after it came back up (measured from its `startedAt`), every feed of the chain is
   * refused, since rounds cannot land while the sequencer is down.
   */
  sequencers?: Record<number, Address>;
  /** Default 3600 s. */
  sequencerGraceSeconds?: number;
}

/** A feed that passed the first-use check: its code exists, it names the pair, its decimals fit. */
interface VerifiedFeed {
  decimals: number;
}

export function createChainlinkPriceReferences(options: ChainlinkPriceReferencesOptions): PriceReferencePort {
  const { chain, clock } = options;
  const marginSeconds = options.marginSeconds ?? DEFAULT_STALENESS_MARGIN_SECONDS;
  const graceSeconds = BigInt(options.sequencerGraceSeconds ?? DEFAULT_SEQUENCER_GRACE_SECONDS);
  // Keyed by chain, address, and what was expected of it: a reconfigured feed is checked again.
  const verified = new Map<string, VerifiedFeed>();

  const failure = (feed: PriceFeedSpec, kind: PriceFailureKind, message: string): PriceResult => ({
    ok: false,
    failure: { kind, chainId: feed.chainId, pair: feed.pair, message } satisfies PriceFailure,
  });

  async function verify(feed: PriceFeedSpec): Promise<VerifiedFeed | PriceResult> {
    const client = chain.publicClient(feed.chainId);
    const code = await client.getCode({ address: feed.address });
    if (code === undefined || code === '0x') {
      return failure(
        feed,
        'no_code',
        `${feed.pair} on chain ${feed.chainId}: no contract at ${feed.address}`,
      );
    }
    const [description, decimals] = await Promise.all([
      client.readContract({ address: feed.address, abi: aggregatorV3Abi, functionName: 'description' }),
      client.readContract({ address: feed.address, abi: aggregatorV3Abi, functionName: 'decimals' }),
    ]);
    const expected = normalizePair(feed.description ?? feed.pair);
    if (normalizePair(description) !== expected) {
      return failure(
        feed,
        'description_mismatch',
        `${feed.pair} on chain ${feed.chainId}: the feed at ${feed.address} describes itself as ${JSON.stringify(description)}`,
      );
    }
    if (feed.decimals !== undefined && decimals !== feed.decimals) {
      return failure(
        feed,
        'description_mismatch',
        `${feed.pair} on chain ${feed.chainId}: the feed at ${feed.address} has ${decimals} decimals, configured ${feed.decimals}`,
      );
    }
    return { decimals };
  }

  async function read(feed: PriceFeedSpec): Promise<PriceResult> {
    if (!chain.supports(feed.chainId)) {
      return failure(
        feed,
        'missing_feed',
        `chain ${feed.chainId} has no RPC endpoint, so ${feed.pair} cannot be read`,
      );
    }
    try {
      const key = `${feed.chainId}:${feed.address.toLowerCase()}:${normalizePair(feed.description ?? feed.pair)}:${feed.decimals ?? ''}`;
      let checked = verified.get(key);
      if (!checked) {
        const outcome = await verify(feed);
        if ('ok' in outcome) return outcome;
        checked = outcome;
        verified.set(key, checked);
      }
      const sequencer = await sequencerFailure(feed);
      if (sequencer) return sequencer;
      const [roundId, answer, , updatedAt] = await chain.publicClient(feed.chainId).readContract({
        address: feed.address,
        abi: aggregatorV3Abi,
        functionName: 'latestRoundData',
      });
      const takenAt = clock.now();
      if (answer <= 0n) {
        return failure(
          feed,
          'bad_answer',
          `${feed.pair} on chain ${feed.chainId} answers ${answer}, not a price`,
        );
      }
      const reading = {
        chainId: feed.chainId,
        pair: feed.pair,
        address: feed.address,
        answer,
        decimals: checked.decimals,
        updatedAt,
        roundId,
        takenAt,
      };
      const stale = freshnessFailure(reading, feed.heartbeatSeconds, marginSeconds, takenAt);
      if (stale) return { ok: false, failure: stale };
      return { ok: true, reading };
    } catch (err) {
      return classify(feed, err);
    }
  }

  /** Why the chain's sequencer makes every feed unusable now, or null when it is up past the grace period. */
  async function sequencerFailure(feed: PriceFeedSpec): Promise<PriceResult | null> {
    const address = options.sequencers?.[feed.chainId];
    if (!address) return null;
    let answer: bigint;
    let startedAt: bigint;
    try {
      [, answer, startedAt] = await chain.publicClient(feed.chainId).readContract({
        address,
        abi: aggregatorV3Abi,
        functionName: 'latestRoundData',
      });
    } catch (err) {
      if (
        err instanceof BaseError &&
        err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError)
      ) {
        return failure(
          feed,
          'unreachable',
          `${feed.pair} on chain ${feed.chainId}: the chain's RPC endpoint did not answer`,
        );
      }
      return failure(
        feed,
        'sequencer_down',
        `chain ${feed.chainId}: the sequencer uptime feed at ${address} cannot be read, so no price is trusted`,
      );
    }
    if (answer !== 0n) {
      return failure(
        feed,
        'sequencer_down',
        `chain ${feed.chainId}: the sequencer is down, so no price is trusted`,
      );
    }
    const upFor = BigInt(Math.floor(clock.now().getTime() / 1000)) - startedAt;
    if (startedAt === 0n || upFor < graceSeconds) {
      return failure(
        feed,
        'sequencer_down',
        `chain ${feed.chainId}: the sequencer came back up ${upFor} s ago; prices are trusted again after ${graceSeconds} s`,
      );
    }
    return null;
  }

  function classify(feed: PriceFeedSpec, err: unknown): PriceResult {
    const where = `${feed.pair} on chain ${feed.chainId}`;
    if (err instanceof BaseError) {
      // Code exists (checked at first use) but answers nothing: not a feed.
      if (err.walk((e) => e instanceof ContractFunctionZeroDataError) !== null) {
        return failure(
          feed,
          'reverted',
          `${where}: the contract at ${feed.address} does not answer the feed interface`,
        );
      }
      if (err.walk((e) => e instanceof ContractFunctionRevertedError) !== null) {
        return failure(feed, 'reverted', `${where}: a call to the feed at ${feed.address} reverted`);
      }
      if (err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError) !== null) {
        return failure(feed, 'unreachable', `${where}: the chain's RPC endpoint did not answer`);
      }
    }
    // Anything else (an undecodable answer, an RPC error) is a feed we cannot trust this time.
    return failure(feed, 'reverted', `${where}: reading the feed at ${feed.address} failed`);
  }

  return { read };
}
