// What every venue adapter shares: the approve call, the time limit of one venue call, and the
// translation of whatever went wrong into a VenueError.

import { BaseError, ContractFunctionRevertedError, encodeFunctionData, erc20Abi, type Address } from 'viem';
import { VenueError, type Call, type ConversionVenue, type QuoteRequest, type VenueQuote } from './port.ts';

/** `approve(spender, amount)` on the sell token: exactly the amount, never an unlimited allowance. */
export function approveCall(token: Address, spender: Address, amount: bigint): Call {
  return {
    to: token,
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, amount] }),
    value: 0n,
  };
}

/**
 * Runs `work` with a signal that fires when the caller's signal does or after `timeoutMs`,
 * whichever is first; an abort becomes VenueError `timeout` at once, even if the work itself (an
 * RPC call that cannot be cancelled) is still running. Any other failure is mapped by `classify`.
 */
export async function withinTime<T>(
  venue: ConversionVenue,
  callerSignal: AbortSignal,
  timeoutMs: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const signal = AbortSignal.any([callerSignal, AbortSignal.timeout(timeoutMs)]);
  if (signal.aborted) throw new VenueError(venue, 'timeout', `${venue} was not asked: no time was left`);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new VenueError(venue, 'timeout', `${venue} did not answer in time`));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work(signal), aborted]);
  } catch (err) {
    throw classifyVenueFailure(venue, err);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** A VenueError for anything an adapter call threw: a contract revert is `no_quote`, the rest `unavailable`. */
export function classifyVenueFailure(venue: ConversionVenue, err: unknown): VenueError {
  if (err instanceof VenueError) return err;
  if (err instanceof BaseError) {
    if (err.walk((e) => e instanceof ContractFunctionRevertedError)) {
      return new VenueError(
        venue,
        'no_quote',
        `${venue} cannot price this pair or size (the quote reverted)`,
        {
          cause: err,
        },
      );
    }
    if (err.walk((e) => e instanceof Error && e.name === 'AbortError')) {
      return new VenueError(venue, 'timeout', `${venue} did not answer in time`, { cause: err });
    }
    return new VenueError(venue, 'unavailable', `${venue} could not be reached: ${err.shortMessage}`, {
      cause: err,
    });
  }
  if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError')) {
    return new VenueError(venue, 'timeout', `${venue} did not answer in time`, { cause: err });
  }
  return new VenueError(
    venue,
    'unavailable',
    `${venue} failed: ${err instanceof Error ? err.message : String(err)}`,
    {
      cause: err,
    },
  );
}

/** Throws `bad_response` unless the request is a sale of a positive amount between two different tokens. */
export function checkQuoteRequest(venue: ConversionVenue, request: QuoteRequest): void {
  if (request.sellAmount <= 0n) throw new VenueError(venue, 'no_quote', 'the sell amount must be positive');
  if (request.sellToken.toLowerCase() === request.buyToken.toLowerCase()) {
    throw new VenueError(venue, 'no_quote', 'the sell and buy tokens are the same');
  }
}

/**
 * The fee of an AMM pool in buy-token units, from what the taker receives: with a fee share f
 * taken from the input, the output without it would be buyAmount / (1 − f), so the fee is about
 * buyAmount · f / (1 − f) (exact at small sizes). `feePpm` is the fee in millionths.
 */
export function poolFeeInBuyToken(buyAmount: bigint, feePpm: number): bigint {
  return (buyAmount * BigInt(feePpm)) / BigInt(1_000_000 - feePpm);
}

/** The venue's answer as a quote of `request`: the pair, chain and amount are the request's own. */
export function quoteFor(
  request: QuoteRequest,
  answer: Pick<VenueQuote, 'venue' | 'buyAmount' | 'feeAmount' | 'expiresAt' | 'allowanceTarget' | 'route'>,
): VenueQuote {
  return {
    venue: answer.venue,
    chainId: request.chainId,
    sellToken: request.sellToken,
    buyToken: request.buyToken,
    sellAmount: request.sellAmount,
    buyAmount: answer.buyAmount,
    feeAmount: answer.feeAmount,
    expiresAt: answer.expiresAt,
    allowanceTarget: answer.allowanceTarget,
    route: answer.route,
  };
}
