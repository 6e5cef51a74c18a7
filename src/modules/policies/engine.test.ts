// Property tests of the pure policy engine: evaluate agrees with the rule list, caps are
// monotone, the allowlists are exact, and documents hash as stored.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildTokenRegistry } from '../registry/index.ts';
import { fillDefaults, policyHash, type PolicyDocument } from './document.ts';
import { evaluate, evaluateRules, type PolicyAction, type SpendUsage } from './engine.ts';
import { formatUsd, parseUsd } from '../../core/money.ts';

const registry = buildTokenRegistry('development');
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
const params = { numRuns: 300, seed: SEED, verbose: 1 } as const;
const TOKENS = ['USDC', 'WETH', 'EURC'];
const VENUES = ['0x', 'kyberswap', 'aerodrome', 'uniswap-v3', 'devnet-amm'] as const;

const micro = fc.bigInt({ min: 0n, max: 10_000n * 1_000_000n });
const policyArb = fc
  .record({
    perTx: micro,
    daily: micro,
    velocity: fc.integer({ min: 1, max: 50 }),
    allow: fc.subarray(TOKENS),
    venues: fc.subarray([...VENUES]),
    slippage: fc.integer({ min: 0, max: 500 }),
    gas: fc.boolean(),
    pm: fc.boolean(),
  })
  .map(
    (p) =>
      fillDefaults(
        {
          version: 1,
          wallet: '0x' + '11'.repeat(20),
          chain_id: 8453,
          spend: {
            per_tx_usd: formatUsd(p.perTx),
            daily_usd: formatUsd(p.daily),
            velocity_per_hour: p.velocity,
            token_allowlist: p.allow,
          },
          execution: { venues: [...p.venues], max_slippage_bps: p.slippage },
          gas: { enabled: p.gas },
          prediction_markets: { enabled: p.pm },
        },
        registry,
      ).document,
  );

const actionArb: fc.Arbitrary<PolicyAction> = fc.oneof(
  fc.record({
    kind: fc.constant('conversion' as const),
    chainId: fc.constantFrom(8453, 137),
    sellToken: fc.constantFrom(...TOKENS, 'PUSD'),
    buyToken: fc.constantFrom(...TOKENS),
    amountMicroUsd: micro,
    venue: fc.constantFrom(...VENUES, 'sushiswap'),
    slippageBps: fc.integer({ min: 0, max: 1000 }),
  }),
  fc.record({ kind: fc.constant('gas_topup' as const), chainId: fc.constant(8453), amountMicroUsd: micro }),
  fc.record({
    kind: fc.constant('prediction_market_order' as const),
    venue: fc.constantFrom('polymarket', 'kalshi', 'other'),
    amountMicroUsd: micro,
  }),
  fc.record({
    kind: fc.constant('transfer' as const),
    chainId: fc.constant(8453),
    token: fc.constantFrom(...TOKENS),
    amountMicroUsd: micro,
    counterpartySanctioned: fc.constantFrom(true, false, null),
  }),
);
const usageArb: fc.Arbitrary<SpendUsage> = fc.record({
  dayMicroUsd: micro,
  hourCount: fc.integer({ min: 0, max: 60 }),
});

const withAmount = (a: PolicyAction, amount: bigint): PolicyAction =>
  a.kind === 'delegation_scope' ? a : { ...a, amountMicroUsd: amount };

describe('evaluate', () => {
  it('allows exactly when every rule passes, and otherwise names the first failing rule', () => {
    fc.assert(
      fc.property(policyArb, actionArb, usageArb, (policy, action, usage) => {
        const rules = evaluateRules(policy, action, usage);
        const verdict = evaluate(policy, action, usage);
        expect(verdict.allow).toBe(rules.every((r) => r.pass));
        if (!verdict.allow) {
          const first = rules.find((r) => !r.pass);
          expect(verdict.rule).toBe(first?.rule);
          expect(verdict.code).toBe(first?.code);
          expect(verdict.message).toMatch(
            verdict.rule === 'spend.screening_required_above_usd' ? /screening/ : verdict.rule,
          );
        }
      }),
      params,
    );
  });

  it('is monotone in the amount: an allowed action stays allowed for any smaller amount', () => {
    fc.assert(
      fc.property(
        policyArb,
        actionArb,
        usageArb,
        fc.bigInt({ min: 0n, max: 1_000_000n }),
        (policy, action, usage, cut) => {
          if (action.kind === 'delegation_scope' || action.kind === 'transfer') return; // screening depends on size
          if (!evaluate(policy, action, usage).allow) return;
          const smaller = action.amountMicroUsd > cut ? action.amountMicroUsd - cut : 0n;
          expect(evaluate(policy, withAmount(action, smaller), usage).allow).toBe(true);
        },
      ),
      params,
    );
  });

  it('never allows more than per_tx_usd, nor a day beyond daily_usd, nor an hour beyond velocity', () => {
    fc.assert(
      fc.property(policyArb, actionArb, usageArb, (policy: PolicyDocument, action, usage) => {
        if (action.kind === 'delegation_scope' || !evaluate(policy, action, usage).allow) return;
        expect(action.amountMicroUsd).toBeLessThanOrEqual(parseUsd(policy.spend.per_tx_usd) ?? -1n);
        expect(usage.dayMicroUsd + action.amountMicroUsd).toBeLessThanOrEqual(
          parseUsd(policy.spend.daily_usd) ?? -1n,
        );
        expect(usage.hourCount + 1).toBeLessThanOrEqual(policy.spend.velocity_per_hour);
      }),
      params,
    );
  });

  it('refuses a conversion with a token outside the allowlist or a venue outside execution.venues', () => {
    fc.assert(
      fc.property(policyArb, actionArb, (policy, action) => {
        if (action.kind !== 'conversion') return;
        const verdict = evaluate(policy, action);
        const allowed = policy.spend.token_allowlist;
        if (!allowed.includes(action.sellToken) || !allowed.includes(action.buyToken)) {
          expect(verdict.allow).toBe(false);
        }
        if (action.venue !== undefined && !(policy.execution.venues as string[]).includes(action.venue)) {
          expect(verdict.allow).toBe(false);
        }
      }),
      params,
    );
  });

  it('blocks a listed counterparty above the screening threshold with COUNTERPARTY_BLOCKED', () => {
    const policy = fillDefaults(
      {
        version: 1,
        wallet: '0x' + '22'.repeat(20),
        chain_id: 8453,
        spend: { screening_required_above_usd: '10' },
      },
      registry,
    ).document;
    const transfer = (amountMicroUsd: bigint, counterpartySanctioned: boolean | null): PolicyAction => ({
      kind: 'transfer',
      chainId: 8453,
      token: 'USDC',
      amountMicroUsd,
      counterpartySanctioned,
    });
    expect(evaluate(policy, transfer(20_000_000n, true))).toMatchObject({
      allow: false,
      code: 'COUNTERPARTY_BLOCKED',
    });
    expect(evaluate(policy, transfer(20_000_000n, null))).toMatchObject({
      allow: false,
      code: 'POLICY_VIOLATION',
    });
    expect(evaluate(policy, transfer(20_000_000n, false))).toEqual({ allow: true });
    expect(evaluate(policy, transfer(10_000_000n, null))).toEqual({ allow: true });
  });

  it('refuses a prediction-market order above the approval threshold (orders cannot wait), and only those', () => {
    const policy = fillDefaults(
      {
        version: 1,
        wallet: '0x' + '22'.repeat(20),
        chain_id: 137,
        prediction_markets: { enabled: true, max_order_usd: '500' },
        spend: {
          approvals: { above_usd: '50', approvers: ['0x' + '33'.repeat(20)], quorum: 1, ttl_minutes: 60 },
        },
      },
      registry,
    ).document;
    const order = (amountMicroUsd: bigint): PolicyAction => ({
      kind: 'prediction_market_order',
      venue: 'polymarket',
      amountMicroUsd,
    });
    expect(evaluate(policy, order(50_000_000n))).toEqual({ allow: true });
    const refused = evaluate(policy, order(50_000_001n));
    expect(refused).toMatchObject({ allow: false, code: 'POLICY_VIOLATION', rule: 'spend.approvals' });
    // Without an approval tier the same order is allowed.
    const { approvals: _approvals, ...spend } = policy.spend;
    expect(evaluate({ ...policy, spend }, order(50_000_001n))).toEqual({ allow: true });
  });

  it('fits a delegation scope only inside the allowlists and per_tx_usd', () => {
    const policy = fillDefaults(
      { version: 1, wallet: '0x' + '33'.repeat(20), chain_id: 8453, spend: { token_allowlist: ['USDC'] } },
      registry,
    ).document;
    const scope = (calls: Extract<PolicyAction, { kind: 'delegation_scope' }>['calls']): PolicyAction => ({
      kind: 'delegation_scope',
      chainId: 8453,
      calls,
    });
    expect(evaluate(policy, scope([{ target: 'token', symbol: 'USDC', valueLimitMicroUsd: 0n }]))).toEqual({
      allow: true,
    });
    expect(
      evaluate(policy, scope([{ target: 'token', symbol: 'WETH', valueLimitMicroUsd: 0n }])),
    ).toMatchObject({
      rule: 'spend.token_allowlist',
    });
    expect(
      evaluate(policy, scope([{ target: 'venue', venue: 'aerodrome', valueLimitMicroUsd: 0n }])),
    ).toEqual({
      allow: true,
    });
    expect(
      evaluate(policy, scope([{ target: 'wrapped_native', valueLimitMicroUsd: 101_000_000n }])),
    ).toMatchObject({
      rule: 'spend.per_tx_usd',
      code: 'POLICY_VIOLATION',
    });
  });
});

describe('documents', () => {
  it('fills defaults idempotently and hashes independently of key order', () => {
    fc.assert(
      fc.property(policyArb, (doc) => {
        const again = fillDefaults(doc, registry);
        expect(again.document).toEqual(doc);
        expect(again.defaulted).toEqual([]);
        const reversed = Object.fromEntries(Object.entries(doc).reverse()) as unknown as PolicyDocument;
        expect(policyHash(reversed)).toBe(policyHash(doc));
      }),
      params,
    );
  });

  it('keeps the hash of a stored document when a later wave adds an optional field', () => {
    const stored = fillDefaults(
      { version: 1, wallet: '0x' + '44'.repeat(20), chain_id: 8453 },
      registry,
    ).document;
    const hash = policyHash(stored);
    // The hash is over the stored bytes; reading fills missing fields without rewriting them.
    const read = fillDefaults(JSON.parse(JSON.stringify(stored)) as PolicyDocument, registry).document;
    expect(policyHash(read)).toBe(hash);
  });

  it('round-trips USD strings through micro-USD', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 18n }), (m) => {
        expect(parseUsd(formatUsd(m))).toBe(m);
      }),
      params,
    );
  });
});
