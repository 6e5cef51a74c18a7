// The `0x` venue: 0x Swap API v2, AllowanceHolder flow (docs.0x.org, "getPrice / getQuote
// (Allowance Holder)"). quote() asks the indicative price (`GET /swap/allowance-holder/price`);
// build() asks the firm quote with the taker (`GET /swap/allowance-holder/quote`) and returns
// approve(allowance target) + the transaction 0x built. Every call carries `0x-api-key` and
// `0x-version: v2`; the key is never logged and never part of an error.

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

export const ZEROX_DEFAULT_BASE_URL = 'https://api.0x.org';

/**
 * 0x's AllowanceHolder per chain (0x docs, "0x Cheat Sheet"; Base: execution reference §1.2): the
 * spender when an indicative price names none (a price asked without a taker may carry
 * `issues.allowance: null`).
 */
export const ZEROX_ALLOWANCE_HOLDERS: Readonly<Record<number, Address>> = {
  8453: '0x0000000000001fF3684f28c67538d4D072C22734',
};

export interface ZeroExAdapterOptions {
  /** `0x-api-key`. Never logged, never in an error. */
  apiKey: string;
  /** Default https://api.0x.org; the devnet points it at the loopback fake. */
  baseUrl?: string;
  /** Chains to serve (default: Base 8453). */
  chainIds?: readonly number[];
  /** Limit of one HTTP call in milliseconds (default 4000). */
  timeoutMs?: number;
  /** How long a price stays usable (default 30 s): 0x's answer carries no expiry of its own. */
  quoteTtlMs?: number;
  /** Spender per chain when an answer names none (default ZEROX_ALLOWANCE_HOLDERS). */
  allowanceHolders?: Readonly<Record<number, Address>>;
  clock?: Clock;
}

/** 0x error names meaning "cannot price or fill this pair or size" rather than "request refused". */
const NO_QUOTE_NAMES = new Set([
  'TOKEN_NOT_SUPPORTED',
  'SWAP_VALIDATION_FAILED',
  'BUY_TOKEN_NOT_AUTHORIZED_FOR_TRADE',
  'SELL_TOKEN_NOT_AUTHORIZED_FOR_TRADE',
  'INSUFFICIENT_LIQUIDITY',
]);

export function createZeroExAdapter(options: ZeroExAdapterOptions): VenueAdapter {
  const venue = '0x' as const;
  const baseUrl = (options.baseUrl ?? ZEROX_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const chains = [...(options.chainIds ?? [8453])];
  const timeoutMs = options.timeoutMs ?? 4_000;
  const quoteTtlMs = options.quoteTtlMs ?? 30_000;
  const allowanceHolders = options.allowanceHolders ?? ZEROX_ALLOWANCE_HOLDERS;
  const clock = options.clock ?? systemClock;
  const apiKey = options.apiKey;

  async function get(
    what: string,
    path: string,
    params: Record<string, string>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const url = new URL(`${baseUrl}${path}`);
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    const answer = await requestAggregator({
      venue,
      what,
      url,
      method: 'GET',
      headers: { '0x-api-key': apiKey, '0x-version': 'v2' },
      timeoutMs,
      signal,
      clock,
    });
    if (answer.status !== 200) throw refusal(what, answer);
    return new AnswerReader(venue, `0x ${what}`).object(answer.json, 'the answer');
  }

  function refusal(what: string, answer: AggregatorAnswer): VenueError {
    const body = (typeof answer.json === 'object' && answer.json !== null ? answer.json : {}) as Record<
      string,
      unknown
    >;
    const name = typeof body.name === 'string' ? body.name : undefined;
    const text = vendorText(body.message, [apiKey]);
    const details = detailsText(body.data, apiKey);
    const said = [name, text, details].filter(Boolean).join(': ');
    if (answer.status === 401) {
      return new VenueError(
        venue,
        'unavailable',
        `0x ${what}: the API key was refused (HTTP 401${text ? `: ${text}` : ''}); check ZEROX_API_KEY`,
      );
    }
    if (name !== undefined && NO_QUOTE_NAMES.has(name)) {
      return new VenueError(venue, 'no_quote', `0x ${what}: ${said} (HTTP ${answer.status})`);
    }
    return new VenueError(
      venue,
      'unavailable',
      `0x ${what}: refused with HTTP ${answer.status}${said ? ` (${said})` : ''}`,
    );
  }

  return {
    venue,
    chains: () => chains,
    // AllowanceHolder is both the spender and the contract the swap calls (`exec`).
    contracts: (chainId) => {
      const holder = chains.includes(chainId) ? allowanceHolders[chainId] : undefined;
      return holder ? [holder] : [];
    },

    async quote(request: QuoteRequest): Promise<VenueQuote> {
      refuseUnservable(venue, chains, request);
      const params: Record<string, string> = {
        chainId: String(request.chainId),
        sellToken: request.sellToken,
        buyToken: request.buyToken,
        sellAmount: request.sellAmount.toString(),
      };
      if (request.taker) params.taker = request.taker;
      const body = await get('price', '/swap/allowance-holder/price', params, request.signal);
      const read = new AnswerReader(venue, '0x price');
      const priced = readPriced(read, body, request);

      const issues =
        body.issues === undefined || body.issues === null ? {} : read.object(body.issues, 'issues');
      const named = spenderNamed(read, body, issues);
      const allowanceTarget =
        named ??
        allowanceHolders[request.chainId] ??
        read.fail('names no allowance target (allowanceTarget or issues.allowance.spender)');

      const route: Record<string, unknown> = { api: 'allowance-holder' };
      if (typeof body.zid === 'string') route.zid = body.zid;
      if (typeof body.blockNumber === 'string')
        route.blockNumber = read.uint(body.blockNumber, 'blockNumber').toString();
      return quoteFor(request, {
        venue,
        buyAmount: priced.buyAmount,
        feeAmount: priced.feeAmount,
        expiresAt: new Date(clock.now().getTime() + quoteTtlMs),
        allowanceTarget,
        route,
      });
    },

    async build(request: BuildRequest): Promise<SwapPlan> {
      const quote = request.quote;
      if (quote.venue !== venue) {
        throw new VenueError(venue, 'no_quote', `0x cannot build a quote of ${quote.venue}`);
      }
      refuseUnservable(venue, chains, quote);
      const budget = slippageFloor(venue, quote.buyAmount, request.slippageBps);
      const params: Record<string, string> = {
        chainId: String(quote.chainId),
        sellToken: quote.sellToken,
        buyToken: quote.buyToken,
        sellAmount: quote.sellAmount.toString(),
        taker: request.taker,
        slippageBps: String(request.slippageBps),
      };
      if (request.recipient && request.recipient.toLowerCase() !== request.taker.toLowerCase()) {
        params.recipient = request.recipient;
      }
      const body = await get('quote', '/swap/allowance-holder/quote', params, request.signal);
      const read = new AnswerReader(venue, '0x quote');
      const priced = readPriced(read, body, quote);

      if (priced.minBuyAmount < budget) {
        read.fail(
          `minBuyAmount ${priced.minBuyAmount} is below the slippage budget ${budget} of the quote (buyAmount ` +
            `${quote.buyAmount}, ${request.slippageBps} bps): quote again`,
        );
      }

      const transaction = read.object(body.transaction, 'transaction');
      const to = read.address(transaction.to, 'transaction.to');
      const data = read.calldata(transaction.data, 'transaction.data');
      const value = read.uint(transaction.value, 'transaction.value');
      if (value !== 0n) read.fail(`transaction.value is ${value}: selling an ERC-20 sends no ether`);
      if ([quote.sellToken, quote.buyToken].some((t) => t.toLowerCase() === to.toLowerCase())) {
        read.fail('transaction.to is one of the tokens, not a swap contract');
      }

      const issues =
        body.issues === undefined || body.issues === null ? {} : read.object(body.issues, 'issues');
      const spender = spenderNamed(read, body, issues) ?? quote.allowanceTarget;
      if (spender.toLowerCase() !== quote.allowanceTarget.toLowerCase()) {
        read.fail(`the allowance target changed from ${quote.allowanceTarget} to ${spender} since the price`);
      }

      return {
        venue,
        calls: [approveCall(quote.sellToken, spender, quote.sellAmount), { to, data, value: 0n }],
        allowanceTarget: spender,
        minBuyAmount: priced.minBuyAmount,
        expectedBuyAmount: priced.buyAmount,
        // 0x takes no deadline: the plan keeps the caller's, which the executor must not send after.
        deadline: request.deadline,
      };
    },
  };
}

interface Priced {
  buyAmount: bigint;
  minBuyAmount: bigint;
  feeAmount: bigint;
}

/** The part price and quote answers share: liquidity, the echoed request, amounts and fees. */
function readPriced(
  read: AnswerReader,
  body: Record<string, unknown>,
  asked: { chainId: number; sellToken: Address; buyToken: Address; sellAmount: bigint },
): Priced {
  if (body.liquidityAvailable === false) {
    throw new VenueError('0x', 'no_quote', `${read.what}: no liquidity for this pair and size`);
  }
  if (body.liquidityAvailable !== true) read.fail('liquidityAvailable is not a boolean');
  if (body.chainId !== undefined && Number(body.chainId) !== asked.chainId) {
    read.fail(`chainId ${String(body.chainId)} is not the requested ${asked.chainId}`);
  }
  read.sameAddress(read.address(body.sellToken, 'sellToken'), asked.sellToken, 'sellToken');
  read.sameAddress(read.address(body.buyToken, 'buyToken'), asked.buyToken, 'buyToken');
  read.sameAmount(read.uint(body.sellAmount, 'sellAmount'), asked.sellAmount, 'sellAmount');
  const buyAmount = read.uint(body.buyAmount, 'buyAmount');
  if (buyAmount === 0n) read.fail('buyAmount is 0');
  const minBuyAmount = read.uint(body.minBuyAmount, 'minBuyAmount');
  if (minBuyAmount > buyAmount) read.fail(`minBuyAmount ${minBuyAmount} exceeds buyAmount ${buyAmount}`);

  let feeAmount = 0n;
  if (body.fees !== undefined && body.fees !== null) {
    const fees = read.object(body.fees, 'fees');
    for (const field of ['zeroExFee', 'integratorFee'] as const) {
      const fee = fees[field];
      if (fee === undefined || fee === null) continue;
      const f = read.object(fee, `fees.${field}`);
      const amount = read.uint(f.amount, `fees.${field}.amount`);
      const token = read.address(f.token, `fees.${field}.token`);
      if (token.toLowerCase() === asked.buyToken.toLowerCase()) feeAmount += amount;
      // A fee taken in the sell token, valued at this answer's own rate.
      else if (token.toLowerCase() === asked.sellToken.toLowerCase()) {
        feeAmount += (amount * buyAmount) / asked.sellAmount;
      } else read.fail(`fees.${field}.token is neither the sell nor the buy token`);
    }
  }
  return { buyAmount, minBuyAmount, feeAmount };
}

/** The spender the answer names (`allowanceTarget`, else `issues.allowance.spender`); they must agree. */
function spenderNamed(
  read: AnswerReader,
  body: Record<string, unknown>,
  issues: Record<string, unknown>,
): Address | undefined {
  const top =
    body.allowanceTarget === undefined || body.allowanceTarget === null
      ? undefined
      : read.address(body.allowanceTarget, 'allowanceTarget');
  const allowance =
    issues.allowance === undefined || issues.allowance === null
      ? undefined
      : read.object(issues.allowance, 'issues.allowance');
  const fromIssues = allowance ? read.address(allowance.spender, 'issues.allowance.spender') : undefined;
  if (top && fromIssues && top.toLowerCase() !== fromIssues.toLowerCase()) {
    read.fail(`allowanceTarget ${top} and issues.allowance.spender ${fromIssues} disagree`);
  }
  return top ?? fromIssues;
}

/** `data.details` of 0x's error envelope as "field: reason, …". */
function detailsText(data: unknown, apiKey: string): string | undefined {
  const details = (data as { details?: unknown } | null | undefined)?.details;
  if (!Array.isArray(details)) return undefined;
  const parts = details
    .slice(0, 5)
    .map((d) => {
      const field = vendorText((d as { field?: unknown }).field, [apiKey]);
      const reason = vendorText((d as { reason?: unknown }).reason, [apiKey]);
      return field && reason ? `${field}: ${reason}` : (field ?? reason);
    })
    .filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : undefined;
}
