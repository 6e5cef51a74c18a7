// A venue that quotes by reading one or more candidate routes on-chain (one eth_call each, the
// best answer kept) and swaps through one router that the taker approves: the shape of every
// on-chain venue (Uniswap v3's QuoterV2 and SwapRouter02, Uniswap v2's and Aerodrome's routers).

import type { Address, Hex } from 'viem';
import type { ChainClient, ChainPort } from '../chain/port.ts';
import { approveCall, checkQuoteRequest, poolFeeInBuyToken, quoteFor, withinTime } from './common.ts';
import {
  minimumAfterSlippage,
  VenueError,
  type BuildRequest,
  type ConversionVenue,
  type QuoteRequest,
  type SwapPlan,
  type VenueAdapter,
  type VenueQuote,
} from './port.ts';

export interface RouterVenueOptions<D> {
  chain: ChainPort;
  /** Per chain id. */
  deployments: Record<number, D>;
  timeoutMs: number;
  quoteTtlMs: number;
  now?: () => Date;
}

export interface Candidate {
  amountOut: bigint;
  /** Pool fee in millionths. */
  feePpm: number;
  route: Record<string, unknown>;
}

export interface RouterSpec<D> {
  venue: ConversionVenue;
  router(d: D): Address;
  /** The routes worth quoting, each quoted with one eth_call. */
  candidates(client: ChainClient, d: D, request: QuoteRequest): Promise<Candidate>[];
  swapData(d: D, quote: VenueQuote, minOut: bigint, to: Address, deadline: bigint): Hex;
}

export function routerVenue<D>(spec: RouterSpec<D>, options: RouterVenueOptions<D>): VenueAdapter {
  const { venue } = spec;
  const now = options.now ?? (() => new Date());
  const deployment = (chainId: number): D => {
    const found = options.deployments[chainId];
    if (!found) throw new VenueError(venue, 'no_quote', `${venue} is not configured on chain ${chainId}`);
    return found;
  };
  return {
    venue,
    chains: () => Object.keys(options.deployments).map(Number),
    contracts: (chainId) => {
      const d = options.deployments[chainId];
      return d ? [spec.router(d)] : [];
    },

    async quote(request: QuoteRequest): Promise<VenueQuote> {
      checkQuoteRequest(venue, request);
      const d = deployment(request.chainId);
      const client = options.chain.publicClient(request.chainId);
      const best = await withinTime(venue, request.signal, options.timeoutMs, async () => {
        const answers = await Promise.allSettled(spec.candidates(client, d, request));
        let top: Candidate | null = null;
        for (const a of answers) {
          if (
            a.status === 'fulfilled' &&
            a.value.amountOut > 0n &&
            (!top || a.value.amountOut > top.amountOut)
          ) {
            top = a.value;
          }
        }
        if (top) return top;
        const failure = answers.find((a) => a.status === 'rejected');
        if (failure && failure.status === 'rejected') throw failure.reason;
        throw new VenueError(venue, 'no_quote', `${venue} has no pool for this pair`);
      });
      const router = spec.router(d);
      return quoteFor(request, {
        venue,
        buyAmount: best.amountOut,
        feeAmount: poolFeeInBuyToken(best.amountOut, best.feePpm),
        expiresAt: new Date(now().getTime() + options.quoteTtlMs),
        allowanceTarget: router,
        route: best.route,
      });
    },

    async build(request: BuildRequest): Promise<SwapPlan> {
      const { quote } = request;
      const d = deployment(quote.chainId);
      const router = spec.router(d);
      const minBuyAmount = minimumAfterSlippage(quote.buyAmount, request.slippageBps);
      const to = request.recipient ?? request.taker;
      return {
        venue,
        calls: [
          approveCall(quote.sellToken, router, quote.sellAmount),
          { to: router, data: spec.swapData(d, quote, minBuyAmount, to, request.deadline), value: 0n },
        ],
        allowanceTarget: router,
        minBuyAmount,
        expectedBuyAmount: quote.buyAmount,
        deadline: request.deadline,
      };
    },
  };
}
