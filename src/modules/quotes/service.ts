// The public quote comparison (POST /v1/quotes): every venue's live full-size quote, and what the
// planner would do with the order in preview (one extra small probe quote on the best venue). No
// state is read but the operator's venue switches; nothing is written. An estimate only.

import { isAddress, type Address } from 'viem';
import type { VenueAdapter } from '../../adapters/venues/index.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { AppError, invalidRequest } from '../../core/errors/app-error.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { formatUsd } from '../../core/money.ts';
import { productFeeMicro } from '../billing/index.ts';
import {
  planOrder,
  probeSellAmount,
  type PlannerResult,
  type Price,
  type SlicedPlan,
} from '../planner/index.ts';
import { platformDefaults, type PolicyChainId } from '../policies/index.ts';
import type { PriceReferences } from '../prices/index.ts';
import type { RegistryChain, TokenRegistry } from '../registry/index.ts';
import { bestCut, quoteAllVenues, type Cut, type QuoteAllResult } from '../venues/index.ts';

export interface QuoteDeps {
  db: DbExecutor;
  venues: readonly VenueAdapter[];
  registry: TokenRegistry;
  prices: PriceReferences | undefined;
  clock: Clock;
  config: Pick<Config, 'venues' | 'planner' | 'fees' | 'executor'>;
  log: { info(obj: object, msg: string): void };
  /** The chain's fees, to value a split's extra gas; absent: no split is previewed. */
  chain: SplitGasDeps['chain'];
}

export interface QuoteRequest {
  chainId: number;
  /** An address, or a registry symbol of the chain. */
  sellToken: string;
  buyToken: string;
  sellAmount: bigint;
}

const TOKENS_NEXT = [
  { method: 'GET' as const, path: '/v1/tokens', why: 'lists the supported chains and their tokens' },
];

/** The chain's registry entry, or 400 naming the supported chains. */
function supportedChain(registry: TokenRegistry, chainId: number): RegistryChain {
  const chain = registry.chain(chainId);
  if (chain) return chain;
  const supported = registry
    .registryChains()
    .map((c) => `${c.chainId} (${c.name})`)
    .join(', ');
  throw invalidRequest(`chain_id ${chainId} is not supported; supported chains: ${supported}.`, {
    remediation: 'Use a supported chain id (8453, Base, is the default).',
    next: TOKENS_NEXT,
  });
}

/** An address (registry member or not), or a registry symbol; 400 for a symbol the chain lacks. */
function resolveToken(
  registry: TokenRegistry,
  chain: RegistryChain,
  field: 'sell_token' | 'buy_token',
  value: string,
): { address: Address; listed: boolean } {
  if (isAddress(value, { strict: false })) {
    const listed = registry.findToken(chain.chainId, value);
    return { address: listed?.address ?? (value as Address), listed: listed !== null };
  }
  const token = registry.findToken(chain.chainId, value.trim().toUpperCase());
  if (!token) {
    throw invalidRequest(
      `${field} ${JSON.stringify(value)} is neither an address nor a token of chain ${chain.chainId}; ` +
        `its tokens: ${chain.tokens.map((t) => t.symbol).join(', ')}.`,
      {
        remediation: 'Give the token’s address, or its symbol as GET /v1/tokens lists it.',
        next: TOKENS_NEXT,
      },
    );
  }
  return { address: token.address, listed: true };
}

/** Why no venue answered, for the 502: who was asked and what each said, or why none was asked. */
function noVenueMessage(chainId: number, result: QuoteAllResult): string {
  if (result.asked.length === 0) {
    const skipped = result.skipped.map(
      (s) => `${s.venue} ${s.why.replace('_', ' ')}${s.detail ? ` (${s.detail})` : ''}`,
    );
    return skipped.length > 0
      ? `No venue could be asked on chain ${chainId}: ${skipped.join('; ')}.`
      : `No venue serves chain ${chainId}.`;
  }
  return `No venue answered: ${result.failures.map((f) => `${f.venue} ${f.kind} (${f.message})`).join('; ')}.`;
}

export interface QuoteComparison {
  chain_id: number;
  sell_token: Address;
  buy_token: Address;
  sell_amount: string;
  quoted_at: string;
  full_size: {
    quotes: { venue: string; buy_amount: string; fee_amount: string; expires_at: string }[];
    best_venue: string;
    best_buy_amount: string;
  };
  sliced_plan: {
    slice_count: number;
    slice_sell_amount: string;
    probe_sell_amount: string;
    probe_buy_amount: string;
    impact_bps_at_full_size: number;
    interval_ms: number;
    estimated_buy_total: string;
    venue: string;
    split: {
      parts: { venue: string; sell_amount: string; buy_amount: string }[];
      gain: string;
      gas_cost: string;
    } | null;
  } | null;
  expected_savings: { buy_amount: string; bps: number } | null;
  planner_abort: { reason: string; detail: Record<string, unknown> } | null;
  assumed_max_slippage_bps: number;
  metered_fee: { product: 'conversion'; estimated_fee_usd: string; basis: string };
}

/** What `splitGasCost` reads: the chain's fees, the registry's wrapped native token, the references. */
export interface SplitGasDeps {
  registry: TokenRegistry;
  prices: PriceReferences | undefined;
  chain: { feesPerGas(chainId: number): Promise<{ maxFeePerGas: bigint }> } | undefined;
  config: { executor: { splitExtraGas: number } };
}

/**
 * What a second swap's gas (`EXECUTOR_SPLIT_EXTRA_GAS` at the chain's current `maxFeePerGas`)
 * is worth in `buyToken` base units, at the reference price of the wrapped native token; null
 * when nothing can value it (no chain, no reference): then no sale is cut between venues.
 */
export async function splitGasCost(
  deps: SplitGasDeps,
  chainId: number,
  buyToken: Address,
): Promise<bigint | null> {
  const wrapped = deps.registry.chain(chainId)?.wrappedNative;
  if (!wrapped || !deps.prices || !deps.chain) return null;
  const fees = await deps.chain.feesPerGas(chainId);
  const wei = BigInt(deps.config.executor.splitExtraGas) * fees.maxFeePerGas;
  if (wrapped.toLowerCase() === buyToken.toLowerCase()) return wei;
  const cross = deps.prices.crossPrice(chainId, wrapped, buyToken);
  return cross.ok ? (wei * cross.price.num) / cross.price.den : null;
}

/** A sale to plan: the tokens resolved, whether both are the registry's, and the slippage budget. */
export interface SaleToPlan {
  chainId: number;
  sellToken: Address;
  buyToken: Address;
  sellAmount: bigint;
  /** The account that will execute (aggregators may tailor the route). */
  taker?: Address;
  /** Only these venues may be asked (an intent's venues); absent: every venue. */
  allow?: readonly string[];
  tokensSupported: boolean;
  slippageBps: number;
}

export interface PlannedSale {
  /** Every asked venue's full-size answer. */
  full: QuoteAllResult;
  /** The independent reference the planner used, or null. */
  reference: Price | null;
  result: PlannerResult;
}

/**
 * Asks the venues for the full size, reads the reference, and runs the planner, probing the best
 * venue when every check before the probe passes: the quote preview and the executor plan the same
 * way.
 */
export async function planSale(
  deps: Pick<QuoteDeps, 'db' | 'venues' | 'prices' | 'config'>,
  sale: SaleToPlan,
  deadline: Deadline,
): Promise<PlannedSale> {
  const venueDeps = { db: deps.db, venues: deps.venues, venueTimeoutMs: deps.config.venues.timeoutMs };
  const pair = {
    chainId: sale.chainId,
    sellToken: sale.sellToken,
    buyToken: sale.buyToken,
    ...(sale.taker ? { taker: sale.taker } : {}),
  };
  const full = await quoteAllVenues(venueDeps, {
    ...pair,
    sellAmount: sale.sellAmount,
    ...(sale.allow ? { allow: sale.allow } : {}),
    deadline,
  });
  let reference: Price | null = null;
  if (sale.tokensSupported && deps.prices) {
    const cross = deps.prices.crossPrice(sale.chainId, sale.sellToken, sale.buyToken);
    if (cross.ok) reference = { num: cross.price.num, den: cross.price.den };
  }
  const plannerInput = {
    sellAmount: sale.sellAmount,
    slippageBps: sale.slippageBps,
    tokensSupported: sale.tokensSupported,
    venuesAsked: full.asked.length,
    quotes: full.quotes.map((q) => ({ venue: q.venue, buyAmount: q.buyAmount })),
    reference,
    maxSlices: deps.config.planner.maxSlices,
    intervalMs: deps.config.planner.sliceIntervalMs,
  };
  // Only an order that passes every check before the probe is worth the probe's quote.
  let result: PlannerResult = planOrder({ ...plannerInput, probe: null });
  if (!result.ok && result.abort.reason === 'VENUE_NO_QUOTE' && result.best && !deadline.expired()) {
    const probeAmount = probeSellAmount(sale.sellAmount);
    const probed = await quoteAllVenues(venueDeps, {
      ...pair,
      sellAmount: probeAmount,
      allow: [result.best.venue],
      deadline,
    });
    const answer = probed.quotes[0];
    result = planOrder({
      ...plannerInput,
      probe: answer ? { sellAmount: probeAmount, buyAmount: answer.buyAmount } : null,
    });
  }
  return { full, reference, result };
}

/**
 * The cut of the plan's first slice between its venue and another venue that answered, as
 * the executor would make it (venues' `bestCut`), or null: one venue answered, no cut beats the
 * first venue alone once a second swap's gas is paid, or nothing values that gas.
 */
async function previewSplit(
  deps: QuoteDeps,
  chainId: number,
  sellToken: Address,
  buyToken: Address,
  plan: SlicedPlan,
  full: QuoteAllResult,
): Promise<Cut | null> {
  const others = full.quotes.map((q) => q.venue).filter((v) => v !== plan.venue);
  if (others.length === 0) return null;
  const gasCost = await splitGasCost(deps, chainId, buyToken).catch(() => null);
  if (gasCost === null) return null;
  const venueDeps = { db: deps.db, venues: deps.venues, venueTimeoutMs: deps.config.venues.timeoutMs };
  return bestCut(venueDeps, {
    chainId,
    sellToken,
    buyToken,
    amount: plan.slices[0]!,
    best: { venue: plan.venue },
    others,
    gasCost,
  });
}

/** Compares the venues for one sale and previews the planner; see the file comment. */
export async function compareQuotes(
  deps: QuoteDeps,
  request: QuoteRequest,
  deadline: Deadline,
): Promise<QuoteComparison> {
  if (request.sellAmount >= 2n ** 256n) {
    throw invalidRequest(
      'sell_amount is larger than any token amount can be (at most 2^256 − 1 base units).',
      {
        remediation: 'Give the amount in base units of the sell token, as a uint256.',
      },
    );
  }
  const chain = supportedChain(deps.registry, request.chainId);
  const sell = resolveToken(deps.registry, chain, 'sell_token', request.sellToken);
  const buy = resolveToken(deps.registry, chain, 'buy_token', request.buyToken);
  if (sell.address.toLowerCase() === buy.address.toLowerCase()) {
    throw invalidRequest('sell_token and buy_token are the same token.', {
      remediation: 'Quote a conversion between two different tokens.',
    });
  }
  const slippageBps = platformDefaults(deps.registry, chain.chainId as PolicyChainId).execution
    .max_slippage_bps;
  const { full, result } = await planSale(
    deps,
    {
      chainId: chain.chainId,
      sellToken: sell.address,
      buyToken: buy.address,
      sellAmount: request.sellAmount,
      tokensSupported: sell.listed && buy.listed,
      slippageBps,
    },
    deadline,
  );
  if (full.failures.length > 0) {
    deps.log.info(
      {
        chain_id: chain.chainId,
        venue_failures: full.failures.map((f) => ({ venue: f.venue, kind: f.kind, message: f.message })),
      },
      'venues that gave no quote',
    );
  }
  if (full.quotes.length === 0) {
    throw new AppError('VENUE_UNAVAILABLE', noVenueMessage(chain.chainId, full), {
      remediation: 'Retry in a few seconds; GET /v1/tokens lists the venues that settle on the chain.',
      next: TOKENS_NEXT,
    });
  }

  const best = full.quotes[0]!;
  const split = result.ok
    ? await previewSplit(deps, chain.chainId, sell.address, buy.address, result.plan, full)
    : null;
  const larger = split && (split.a.sellAmount >= split.b.sellAmount ? split.a : split.b);
  return {
    chain_id: chain.chainId,
    sell_token: sell.address,
    buy_token: buy.address,
    sell_amount: request.sellAmount.toString(),
    quoted_at: deps.clock.now().toISOString(),
    full_size: {
      quotes: full.quotes.map((q) => ({
        venue: q.venue,
        buy_amount: q.buyAmount.toString(),
        fee_amount: q.feeAmount.toString(),
        expires_at: q.expiresAt.toISOString(),
      })),
      best_venue: best.venue,
      best_buy_amount: best.buyAmount.toString(),
    },
    sliced_plan: result.ok
      ? {
          slice_count: result.plan.sliceCount,
          slice_sell_amount: result.plan.sliceSellAmount.toString(),
          probe_sell_amount: result.plan.probeSellAmount.toString(),
          probe_buy_amount: result.plan.probeBuyAmount.toString(),
          impact_bps_at_full_size: result.plan.impactBpsAtFullSize,
          interval_ms: result.plan.intervalMs,
          estimated_buy_total: result.plan.estimatedBuyTotal.toString(),
          venue: larger ? larger.venue : result.plan.venue,
          split: split
            ? {
                parts: [split.a, split.b].map((q) => ({
                  venue: q.venue,
                  sell_amount: q.sellAmount.toString(),
                  buy_amount: q.buyAmount.toString(),
                })),
                gain: split.gain.toString(),
                gas_cost: split.gasCost.toString(),
              }
            : null,
        }
      : null,
    expected_savings:
      result.ok && result.savings
        ? { buy_amount: result.savings.buyAmount.toString(), bps: result.savings.bps }
        : null,
    planner_abort: result.ok ? null : { reason: result.abort.reason, detail: result.abort.detail },
    assumed_max_slippage_bps: slippageBps,
    metered_fee: {
      product: 'conversion',
      estimated_fee_usd: formatUsd(productFeeMicro(deps.config as Config, 'conversion_intent')),
      basis:
        'The published fee per conversion intent (GET /v1/fees), debited when POST /v1/intents admits the ' +
        'order; this quote is free.',
    },
  };
}
