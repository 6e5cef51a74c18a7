import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planOrder, probeSellAmount, type PlannerInput } from './plan.ts';

/** Uniswap v2's getAmountOut: what a constant-product pool with a 0.30% fee gives for x. */
function cpmm(reserveIn: bigint, reserveOut: bigint) {
  return (x: bigint) => (x * 997n * reserveOut) / (reserveIn * 1000n + x * 997n);
}

const WETH = 10n ** 18n;
const USDC = 10n ** 6n;

function input(overrides: Partial<PlannerInput> = {}): PlannerInput {
  return {
    sellAmount: 10n * WETH,
    slippageBps: 50,
    tokensSupported: true,
    venuesAsked: 1,
    quotes: [],
    reference: null,
    probe: null,
    maxSlices: 20,
    intervalMs: 4_000,
    ...overrides,
  };
}

/** An order against one pool, probed as the planner's caller does. */
function poolOrder(reserveIn: bigint, reserveOut: bigint, S: bigint, overrides: Partial<PlannerInput> = {}) {
  const out = cpmm(reserveIn, reserveOut);
  const p = probeSellAmount(S);
  return input({
    sellAmount: S,
    quotes: [{ venue: 'devnet-amm', buyAmount: out(S) }],
    reference: { num: reserveOut, den: reserveIn },
    probe: { sellAmount: p, buyAmount: out(p) },
    ...overrides,
  });
}

describe('the worked example of docs/execution.md', () => {
  it('slices 3 WETH into a 300 WETH / 900,000 USDC pool at a 50 bps budget into 4', () => {
    const result = planOrder(poolOrder(300n * WETH, 900_000n * USDC, 3n * WETH));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { plan, savings } = result;
    expect(plan.probeSellAmount).toBe((3n * WETH) / 50n); // 0.06 WETH
    expect(plan.probeBuyAmount).toBe(179_424_222n); // 179.42 USDC: 2,990.40 per WETH
    expect(plan.impactBpsAtFullSize).toBe(96.74);
    expect(plan.sliceCount).toBe(4);
    expect(plan.sliceSellAmount).toBe((3n * WETH) / 4n);
    expect(plan.slices.reduce((a, b) => a + b, 0n)).toBe(3n * WETH);
    expect(plan.sliceImpactBps).toBe(24.36);
    expect(plan.intervalMs).toBe(4_000);
    // The full-size fill gets 8,884.42 USDC; 4 slices with recovery 8,949.36.
    expect(result.best.buyAmount).toBe(8_884_422_309n);
    expect(plan.estimatedBuyTotal).toBe(8_949_355_324n);
    expect(savings).toEqual({ buyAmount: 64_933_015n, bps: 73.09 });
  });

  it('refuses 10 WETH into the same pool: half of it alone moves the price 160 bps, past the whole budget', () => {
    const result = planOrder(poolOrder(300n * WETH, 900_000n * USDC, 10n * WETH));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.abort).toEqual({
      reason: 'DEPTH_COLLAPSE',
      detail: {
        venue: 'devnet-amm',
        impact_bps_at_full_size: 315.21,
        impact_bps_at_half_size: 160.13,
        slippage_bps: 50,
        slices_needed: 13,
        max_slices: 20,
      },
    });
  });

  it('fills a small order in one slice, with no savings to report', () => {
    const result = planOrder(poolOrder(300n * WETH, 900_000n * USDC, WETH / 10n));
    expect(result.ok && result.plan.sliceCount).toBe(1);
    expect(result.ok && result.plan.intervalMs).toBe(0);
    expect(result.ok && result.savings).toBeNull();
    expect(result.ok && result.plan.estimatedBuyTotal).toBe(result.best?.buyAmount);
  });
});

describe('refusals', () => {
  const order = poolOrder(300n * WETH, 900_000n * USDC, WETH);
  const reason = (i: PlannerInput) => {
    const r = planOrder(i);
    return r.ok ? null : r.abort.reason;
  };

  it('names each condition', () => {
    expect(reason({ ...order, venuesAsked: 0, quotes: [] })).toBe('VENUE_UNAVAILABLE');
    expect(reason({ ...order, quotes: [] })).toBe('VENUE_NO_QUOTE');
    expect(reason({ ...order, probe: null })).toBe('VENUE_NO_QUOTE');
    expect(reason({ ...order, tokensSupported: false })).toBe('UNSUPPORTED_TOKEN');
    expect(reason({ ...order, reference: null })).toBe('NO_PRICE_REFERENCE');
    // A second venue removes the need for a reference …
    const second = { venue: 'aerodrome', buyAmount: order.quotes[0]!.buyAmount - 1_000_000n };
    expect(reason({ ...order, reference: null, quotes: [...order.quotes, second] })).toBeNull();
    // … unless the two disagree by more than ten budgets (5%).
    const far = { venue: 'aerodrome', buyAmount: (order.quotes[0]!.buyAmount * 94n) / 100n };
    expect(reason({ ...order, quotes: [...order.quotes, far] })).toBe('VENUE_DISAGREEMENT');
    // The oracle says 3,100 while the pool says about 3,000: a 3.3% gap, beyond two budgets.
    expect(reason({ ...order, reference: { num: 3_100n * USDC, den: WETH } })).toBe('PRICE_GAP');
    // 100 WETH into the same pool: half of it alone moves the price far past the budget.
    expect(reason(poolOrder(300n * WETH, 900_000n * USDC, 100n * WETH))).toBe('DEPTH_COLLAPSE');
    // 3 WETH needs 4 slices: within a limit of 4, more than a limit of 3 is depth collapse.
    expect(reason(poolOrder(300n * WETH, 900_000n * USDC, 3n * WETH, { maxSlices: 4 }))).toBeNull();
    expect(reason(poolOrder(300n * WETH, 900_000n * USDC, 3n * WETH, { maxSlices: 3 }))).toBe(
      'DEPTH_COLLAPSE',
    );
  });
});

// Orders against a constant-product pool of random depth, price and size, at a random budget.
const arbOrder = fc
  .record({
    reserveIn: fc.bigInt({ min: 10n ** 15n, max: 10n ** 27n }),
    priceNum: fc.bigInt({ min: 1n, max: 10n ** 6n }),
    priceDen: fc.bigInt({ min: 1n, max: 10n ** 6n }),
    share: fc.integer({ min: 1, max: 400_000 }), // order size in millionths of the pool's depth
    slippageBps: fc.integer({ min: 1, max: 1_000 }),
    maxSlices: fc.integer({ min: 1, max: 50 }),
  })
  .map(({ reserveIn, priceNum, priceDen, share, slippageBps, maxSlices }) => {
    const reserveOut = (reserveIn * priceNum) / priceDen + 1n;
    const S = (reserveIn * BigInt(share)) / 1_000_000n + 1n;
    return poolOrder(reserveIn, reserveOut, S, { slippageBps, maxSlices });
  });

describe('planner properties', () => {
  it('never plans a slice whose estimated impact exceeds half the budget, and its slices sum to the order', () => {
    fc.assert(
      fc.property(arbOrder, (order) => {
        const result = planOrder(order);
        if (!result.ok) return;
        const { plan } = result;
        expect(plan.slices).toHaveLength(plan.sliceCount);
        expect(plan.slices.reduce((a, b) => a + b, 0n)).toBe(order.sellAmount);
        expect(plan.slices.every((x) => x > 0n)).toBe(true);
        expect(plan.sliceCount).toBeLessThanOrEqual(order.maxSlices);
        // Half the budget, with the rounding of bps to hundredths.
        expect(plan.sliceImpactBps).toBeLessThanOrEqual(order.slippageBps / 2 + 0.01);
      }),
      { numRuns: 500 },
    );
  });

  it('answers the same input with the same plan', () => {
    fc.assert(
      fc.property(arbOrder, (order) => {
        expect(planOrder(structuredClone(order))).toEqual(planOrder(order));
      }),
      { numRuns: 200 },
    );
  });

  it('refuses exactly under each reason’s condition', () => {
    const arbCase = fc.record({
      order: arbOrder,
      venuesAsked: fc.integer({ min: 0, max: 5 }),
      noQuotes: fc.boolean(),
      noProbe: fc.boolean(),
      tokensSupported: fc.boolean(),
      noReference: fc.boolean(),
      // A second venue, from 20% below to 5% above the first; or none.
      second: fc.option(fc.integer({ min: -2_000, max: 500 })),
      // The reference, from 10% below to 10% above the pool's price.
      referenceSkewBps: fc.integer({ min: -1_000, max: 1_000 }),
    });
    fc.assert(
      fc.property(arbCase, (c) => {
        const first = c.order.quotes[0]!;
        const quotes = c.noQuotes
          ? []
          : c.second === null
            ? [first]
            : [
                first,
                { venue: 'aerodrome', buyAmount: (first.buyAmount * BigInt(10_000 + c.second)) / 10_000n },
              ];
        const ref = c.order.reference!;
        const reference = c.noReference
          ? null
          : { num: ref.num * BigInt(10_000 + c.referenceSkewBps), den: ref.den * 10_000n };
        const i: PlannerInput = {
          ...c.order,
          venuesAsked: c.venuesAsked,
          quotes,
          tokensSupported: c.tokensSupported,
          reference,
          probe: c.noProbe ? null : c.order.probe,
        };
        const result = planOrder(i);
        // The conditions, checked in the planner's order, from the raw figures.
        const s = i.slippageBps / 10_000;
        // The spread as the planner takes it: the difference exact, then divided (amounts pass 2^53).
        const buys = quotes.map((q) => q.buyAmount);
        const maxBuy = buys.reduce((a, b) => (b > a ? b : a), 0n);
        const minBuy = buys.reduce((a, b) => (b < a ? b : a), maxBuy);
        const spread = maxBuy > 0n ? Number(maxBuy - minBuy) / Number(maxBuy) : 0;
        const probe = i.probe;
        const gap =
          probe && reference
            ? (Number(probe.buyAmount) * Number(reference.den)) /
                (Number(probe.sellAmount) * Number(reference.num)) -
              1
            : 0;
        const expected =
          i.venuesAsked === 0
            ? 'VENUE_UNAVAILABLE'
            : quotes.length === 0
              ? 'VENUE_NO_QUOTE'
              : !i.tokensSupported
                ? 'UNSUPPORTED_TOKEN'
                : quotes.length === 1 && !reference
                  ? 'NO_PRICE_REFERENCE'
                  : quotes.length > 1 && spread > 10 * s
                    ? 'VENUE_DISAGREEMENT'
                    : !probe || probe.buyAmount <= 0n
                      ? 'VENUE_NO_QUOTE'
                      : Math.abs(gap) > 2 * s
                        ? 'PRICE_GAP'
                        : 'later';
        if (expected !== 'later') {
          expect(result.ok ? null : result.abort.reason).toBe(expected);
          return;
        }
        // Past those, only depth can refuse: exactly when half the order alone would cost more
        // than the budget, or the slices needed exceed the limit.
        const best = quotes.reduce((a, b) => (b.buyAmount > a.buyAmount ? b : a));
        const impact = Math.max(
          0,
          1 -
            (Number(best.buyAmount) * Number(probe!.sellAmount)) /
              (Number(i.sellAmount) * Number(probe!.buyAmount)),
        );
        if (impact <= s / 2) {
          expect(result.ok && result.plan.sliceCount).toBe(1);
          return;
        }
        const R = (Number(i.sellAmount) * (1 - impact)) / impact;
        const n = Math.ceil(Number(i.sellAmount) / (((s / 2) * R) / (1 - s / 2)));
        const half = Number(i.sellAmount) / 2;
        const collapse = half / (R + half) > s || n > i.maxSlices || BigInt(n) > i.sellAmount;
        expect(result.ok ? null : result.abort.reason).toBe(collapse ? 'DEPTH_COLLAPSE' : null);
      }),
      { numRuns: 1_000 },
    );
  });
});
