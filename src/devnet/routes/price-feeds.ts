// Moving a devnet price feed (development only): post a round to the feed the price references read,
// then refresh that reading so the next valuation sees it.

import type { Address, Hex } from 'viem';
import { normalizePair } from '../../adapters/prices/port.ts';
import { AppError, invalidRequest, unavailable } from '../../core/errors/app-error.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { devnetFeedDecimals, postDevnetPrice } from '../price-feeds.ts';
import type { PriceRefusal, PriceReferences } from '../../modules/prices/index.ts';

export interface MoveDevnetPriceParameters {
  chainId: number;
  pair: string;
  /** USD as a decimal string (may be zero or negative). */
  answer: string;
  /** Unix seconds; absent: the block's time. */
  updatedAt?: number;
}

export interface MovedDevnetPrice {
  chainId: number;
  pair: string;
  address: Address;
  decimals: number;
  answerRaw: bigint;
  roundId: bigint;
  updatedAt: bigint;
  txHash: Hex;
  /** What the price references make of the feed now; null when the service has none. */
  reference: { usable: true } | { usable: false; refusal: Pick<PriceRefusal, 'kind' | 'message'> } | null;
}

/** The part of a devnet a price move needs: each chain's RPC URL and feeds by pair (`ETH/USD`). */
type DevnetWithFeeds = {
  chains: Record<number, { chainId: number; rpcUrl: string; priceFeeds?: Record<string, Address> }>;
};

/**
 * Posts a new round to a devnet price feed and refreshes the cached reading.
 * Errors: UNAVAILABLE without a devnet or when the chain refuses the round; INVALID_REQUEST for a
 * chain or pair the devnet lacks, or an answer finer than the feed's decimals.
 */
export async function moveDevnetPrice(
  devnet: DevnetWithFeeds | undefined,
  prices: PriceReferences | undefined,
  deadline: Deadline,
  params: MoveDevnetPriceParameters,
): Promise<MovedDevnetPrice> {
  if (!devnet) {
    throw unavailable('The devnet is not running, so there is no price feed to move.', {
      remediation: 'Start the service in development with DEVNET=true (the default).',
    });
  }
  const chain = devnet.chains[params.chainId];
  if (!chain) {
    throw invalidRequest(
      `chain_id ${params.chainId} is not a devnet chain; use one of ${Object.keys(devnet.chains).join(', ')}.`,
    );
  }
  const feeds = chain.priceFeeds ?? {};
  const pair = Object.keys(feeds).find((p) => normalizePair(p) === normalizePair(params.pair));
  const address = pair === undefined ? undefined : feeds[pair];
  if (pair === undefined || address === undefined) {
    const known = Object.keys(feeds);
    throw invalidRequest(
      `pair: the devnet has no ${params.pair} feed on chain ${params.chainId}` +
        (known.length > 0 ? `; use one of ${known.join(', ')}.` : '.'),
    );
  }
  deadline.check('moving a devnet price');
  let decimals: number;
  try {
    decimals = await devnetFeedDecimals(chain.rpcUrl, params.chainId, address);
  } catch (err) {
    throw new AppError('UNAVAILABLE', 'The devnet chain did not answer.', { cause: err });
  }
  const answerRaw = scaleDecimal(params.answer, decimals);
  if (answerRaw === null) {
    throw invalidRequest(
      `answer: ${params.pair} has ${decimals} decimals; ${params.answer} is finer than that.`,
    );
  }
  let posted;
  try {
    posted = await postDevnetPrice({
      rpcUrl: chain.rpcUrl,
      chainId: params.chainId,
      feed: address,
      answer: answerRaw,
      ...(params.updatedAt === undefined ? {} : { updatedAt: BigInt(params.updatedAt) }),
    });
  } catch (err) {
    throw new AppError('UNAVAILABLE', 'The devnet chain did not accept the price round.', { cause: err });
  }
  let reference: MovedDevnetPrice['reference'] = null;
  if (prices) {
    await prices.refreshFeed(params.chainId, pair);
    const now = prices.reading(params.chainId, pair);
    reference = now.ok
      ? { usable: true }
      : { usable: false, refusal: { kind: now.refusal.kind, message: now.refusal.message } };
  }
  return {
    chainId: params.chainId,
    pair,
    address,
    decimals,
    answerRaw: posted.answer,
    roundId: posted.roundId,
    updatedAt: posted.updatedAt,
    txHash: posted.txHash,
    reference,
  };
}

/** `"-12.5"` at 8 decimals → -1250000000n; null when it has more fraction digits than `decimals`. */
export function scaleDecimal(value: string, decimals: number): bigint | null {
  const negative = value.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? value.slice(1) : value).split('.');
  if (fraction.length > decimals) return null;
  const scaled = BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
  return negative ? -scaled : scaled;
}

/** A feed answer (USD × 10^decimals) as a decimal string. */
export function formatScaled(raw: bigint, decimals: number): string {
  const negative = raw < 0n;
  const abs = negative ? -raw : raw;
  const unit = 10n ** BigInt(decimals);
  const fraction = decimals === 0 ? '' : (abs % unit).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${abs / unit}${fraction ? `.${fraction}` : ''}`;
}
