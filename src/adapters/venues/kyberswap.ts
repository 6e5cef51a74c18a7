// The `kyberswap` venue: KyberSwap Aggregator API v1 (docs.kyberswap.com, "EVM Swaps").
// quote() is `GET /{chain}/api/v1/routes?tokenIn&tokenOut&amountIn`; its `routeSummary` is kept
// verbatim in the quote's route, because build (`POST /{chain}/api/v1/route/build`) must be
// given it unchanged. The taker approves `routerAddress` and calls it with the built `data`.
// Kyber needs no key; `x-client-id` identifies the integration (a stricter limit without it).

import type { Address } from 'viem';
import { systemClock, type Clock } from '../../core/clock.ts';
import { approveCall, quoteFor } from './common.ts';
import { requestAggregator, type AggregatorAnswer } from './aggregator-http.ts';
import { AnswerReader, refuseUnservable, slippageFloor, vendorText } from './answer-fields.ts';
import {
  VenueError,
  type BuildRequest,
  type QuoteRequest,
  type SwapPlan,
  type VenueAdapter,
  type VenueQuote,
} from './port.ts';

export const KYBERSWAP_DEFAULT_BASE_URL = 'https://aggregator-api.kyberswap.com';

/**
 * KyberSwap's MetaAggregationRouterV2 per chain (execution reference §1): the `routerAddress`
 * its answers name, which the taker approves and calls.
 */
export const KYBERSWAP_ROUTERS: Readonly<Record<number, Address>> = {
  8453: '0x6131B5fae19EA4f9D964eAc0408E4408b66337b5',
};

/** Chain id → the path slug KyberSwap names it by (docs.kyberswap.com, "Chain identifiers"). */
export const KYBERSWAP_CHAIN_SLUGS: Readonly<Record<number, string>> = {
  1: 'ethereum',
  10: 'optimism',
  56: 'bsc',
  137: 'polygon',
  8453: 'base',
  42161: 'arbitrum',
  43114: 'avalanche',
  59144: 'linea',
};

/** Largest slippageTolerance Kyber takes without `ignoreCappedSlippage` (bps). */
const KYBER_SLIPPAGE_CAP_BPS = 2_000;

/**
 * Kyber's codes meaning "no route for this pair or size" (4008 route not found, 4009 amountIn
 * above the maximum, 4010 no eligible pools, 4011 token not found) or "the route no longer
 * delivers" (4222 quoted amount smaller than estimated, 4227 gas estimation failed): quote again.
 */
const NO_QUOTE_CODES = new Set([4008, 4009, 4010, 4011, 4222, 4227]);

export interface KyberSwapAdapterOptions {
  /** Default https://aggregator-api.kyberswap.com; the devnet points it at the loopback fake. */
  baseUrl?: string;
  /** `x-client-id` (and the build's `source`); optional. */
  clientId?: string | null;
  /** Chains to serve (default: Base 8453); each needs a slug. */
  chainIds?: readonly number[];
  /** Chain id → path slug (default KYBERSWAP_CHAIN_SLUGS). */
  chainSlugs?: Readonly<Record<number, string>>;
  /** Limit of one HTTP call in milliseconds (default 4000). */
  timeoutMs?: number;
  /** How long a route stays usable (default 10 s: Kyber advises against caching routes longer). */
  quoteTtlMs?: number;
  /** The router per chain (default KYBERSWAP_ROUTERS); the devnet names its fake's. */
  routers?: Readonly<Record<number, Address>>;
  clock?: Clock;
}

export function createKyberSwapAdapter(options: KyberSwapAdapterOptions = {}): VenueAdapter {
  const venue = 'kyberswap' as const;
  const baseUrl = (options.baseUrl ?? KYBERSWAP_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const slugs = options.chainSlugs ?? KYBERSWAP_CHAIN_SLUGS;
  const chains = [...(options.chainIds ?? [8453])];
  for (const chainId of chains) {
    if (!slugs[chainId]) throw new Error(`kyberswap: no chain slug for chain ${chainId}`);
  }
  const timeoutMs = options.timeoutMs ?? 4_000;
  const quoteTtlMs = options.quoteTtlMs ?? 10_000;
  const routers = options.routers ?? KYBERSWAP_ROUTERS;
  const clock = options.clock ?? systemClock;
  const clientId = options.clientId ?? null;
  const headers: Record<string, string> = clientId ? { 'x-client-id': clientId } : {};

  function refusal(what: string, status: number, json: unknown): VenueError {
    const body = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
    const code = typeof body.code === 'number' ? body.code : undefined;
    const text = vendorText(body.message);
    const said = `${code === undefined ? `HTTP ${status}` : `code ${code}`}${text ? `: ${text}` : ''}`;
    if (code !== undefined && NO_QUOTE_CODES.has(code)) {
      return new VenueError(venue, 'no_quote', `kyberswap ${what}: ${said}`);
    }
    return new VenueError(venue, 'unavailable', `kyberswap ${what}: refused (${said})`);
  }

  /** The `data` of a successful envelope `{code: 0, message, data, requestId}`. */
  function dataOf(what: string, answer: AggregatorAnswer): Record<string, unknown> {
    const read = new AnswerReader(venue, `kyberswap ${what}`);
    if (answer.status !== 200) throw refusal(what, answer.status, answer.json);
    const body = read.object(answer.json, 'the answer');
    if (typeof body.code !== 'number') read.fail('code is not a number');
    if (body.code !== 0) throw refusal(what, answer.status, body);
    return read.object(body.data, 'data');
  }

  return {
    venue,
    chains: () => chains,
    contracts: (chainId) => {
      const router = chains.includes(chainId) ? routers[chainId] : undefined;
      return router ? [router] : [];
    },

    async quote(request: QuoteRequest): Promise<VenueQuote> {
      refuseUnservable(venue, chains, request);
      const url = new URL(`${baseUrl}/${slugs[request.chainId]}/api/v1/routes`);
      url.searchParams.set('tokenIn', request.sellToken);
      url.searchParams.set('tokenOut', request.buyToken);
      url.searchParams.set('amountIn', request.sellAmount.toString());
      if (request.taker) url.searchParams.set('origin', request.taker);
      const answer = await requestAggregator({
        venue,
        what: 'routes',
        url,
        method: 'GET',
        headers,
        timeoutMs,
        signal: request.signal,
        clock,
      });
      const data = dataOf('routes', answer);
      const read = new AnswerReader(venue, 'kyberswap routes');
      const summary = read.object(data.routeSummary, 'data.routeSummary');
      read.sameAddress(
        read.address(summary.tokenIn, 'routeSummary.tokenIn'),
        request.sellToken,
        'routeSummary.tokenIn',
      );
      read.sameAddress(
        read.address(summary.tokenOut, 'routeSummary.tokenOut'),
        request.buyToken,
        'routeSummary.tokenOut',
      );
      read.sameAmount(
        read.uint(summary.amountIn, 'routeSummary.amountIn'),
        request.sellAmount,
        'routeSummary.amountIn',
      );
      const amountOut = read.uint(summary.amountOut, 'routeSummary.amountOut');
      if (amountOut === 0n) read.fail('routeSummary.amountOut is 0');
      if (!Array.isArray(summary.route) || summary.route.length === 0)
        read.fail('routeSummary.route is empty');
      const routerAddress = read.address(data.routerAddress, 'data.routerAddress');
      const feeAmount = extraFeeInBuyUnits(read, summary.extraFee, amountOut, request.sellAmount);

      const route: Record<string, unknown> = { routeSummary: summary, routerAddress };
      if (typeof (answer.json as { requestId?: unknown }).requestId === 'string') {
        route.requestId = (answer.json as { requestId: string }).requestId;
      }
      return quoteFor(request, {
        venue,
        buyAmount: amountOut,
        feeAmount,
        expiresAt: new Date(clock.now().getTime() + quoteTtlMs),
        allowanceTarget: routerAddress,
        route,
      });
    },

    async build(request: BuildRequest): Promise<SwapPlan> {
      const quote = request.quote;
      if (quote.venue !== venue) {
        throw new VenueError(venue, 'no_quote', `kyberswap cannot build a quote of ${quote.venue}`);
      }
      refuseUnservable(venue, chains, quote);
      const minBuyAmount = slippageFloor(venue, quote.buyAmount, request.slippageBps);
      const kept = new AnswerReader(venue, 'kyberswap quote');
      const routeSummary = kept.object(quote.route.routeSummary, 'route.routeSummary');
      const routerAddress = kept.address(quote.route.routerAddress, 'route.routerAddress');

      const body: Record<string, unknown> = {
        routeSummary,
        sender: request.taker,
        recipient: request.recipient ?? request.taker,
        slippageTolerance: request.slippageBps,
        deadline: Number(request.deadline),
      };
      if (request.slippageBps > KYBER_SLIPPAGE_CAP_BPS) body.ignoreCappedSlippage = true;
      if (clientId) body.source = clientId;
      const answer = await requestAggregator({
        venue,
        what: 'route build',
        url: new URL(`${baseUrl}/${slugs[quote.chainId]}/api/v1/route/build`),
        method: 'POST',
        headers,
        body,
        timeoutMs,
        signal: request.signal,
        clock,
      });
      const data = dataOf('route build', answer);
      const read = new AnswerReader(venue, 'kyberswap route build');
      read.sameAmount(read.uint(data.amountIn, 'data.amountIn'), quote.sellAmount, 'data.amountIn');
      const amountOut = read.uint(data.amountOut, 'data.amountOut');
      if (amountOut < minBuyAmount) {
        read.fail(
          `amountOut ${amountOut} is below the slippage budget ${minBuyAmount} of the quote (amountOut ` +
            `${quote.buyAmount}, ${request.slippageBps} bps): quote again`,
        );
      }
      const router = read.address(data.routerAddress, 'data.routerAddress');
      read.sameAddress(router, routerAddress, 'data.routerAddress');
      const calldata = read.calldata(data.data, 'data.data');
      if (data.transactionValue !== undefined && data.transactionValue !== null) {
        const value = read.uint(data.transactionValue, 'data.transactionValue');
        if (value !== 0n) read.fail(`transactionValue is ${value}: selling an ERC-20 sends no ether`);
      }

      return {
        venue,
        calls: [
          approveCall(quote.sellToken, router, quote.sellAmount),
          { to: router, data: calldata, value: 0n },
        ],
        allowanceTarget: router,
        // Kyber's router reverts below routeSummary.amountOut × (1 − slippageTolerance): the same floor.
        minBuyAmount,
        expectedBuyAmount: amountOut,
        deadline: request.deadline,
      };
    },
  };
}

/**
 * `routeSummary.extraFee` in buy-token units. Purser asks Kyber for no fee, so this is 0; a fee
 * someone configured is counted as Kyber describes it: `feeAmount` (comma-separated per receiver)
 * in bps of the charged side when `isInBps`, else in that token's base units.
 */
function extraFeeInBuyUnits(
  read: AnswerReader,
  extraFee: unknown,
  amountOut: bigint,
  amountIn: bigint,
): bigint {
  if (extraFee === undefined || extraFee === null) return 0n;
  const fee = read.object(extraFee, 'routeSummary.extraFee');
  const raw = fee.feeAmount;
  if (raw === undefined || raw === null || raw === '' || raw === '0') return 0n;
  if (typeof raw !== 'string') read.fail('routeSummary.extraFee.feeAmount is not a string');
  const parts = raw.split(',').map((p, i) => read.uint(p.trim(), `routeSummary.extraFee.feeAmount[${i}]`));
  const total = parts.reduce((sum, p) => sum + p, 0n);
  if (total === 0n) return 0n;
  const inBps = fee.isInBps === true;
  if (inBps && total >= 10_000n) read.fail('routeSummary.extraFee is 100% or more');
  if (fee.chargeFeeBy === 'currency_out') {
    // amountOut is what the taker receives after the fee: the fee is counted on the gross.
    return inBps ? (amountOut * total) / (10_000n - total) : total;
  }
  if (fee.chargeFeeBy === 'currency_in') {
    const feeIn = inBps ? (amountIn * total) / 10_000n : total;
    const netIn = amountIn - feeIn;
    return netIn > 0n ? (feeIn * amountOut) / netIn : read.fail('routeSummary.extraFee exceeds amountIn');
  }
  return read.fail('routeSummary.extraFee.chargeFeeBy is neither currency_in nor currency_out');
}
