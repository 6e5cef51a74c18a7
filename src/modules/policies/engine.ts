// The policy engine: a pure function of a stored policy document and one hypothetical action.
// No I/O and no clock: the caller supplies what needs them (the counters of spendUsage, the
// screening answer), so every spending path and the dry-run check agree rule for rule.

import type { PolicyDocument } from './document.ts';
import { formatUsd, usdToMicro } from '../../core/money.ts';

/** The error code a failing rule maps to (decisions.md, "Cap refusals"). */
export type RefusalCode = 'BUDGET_EXCEEDED' | 'POLICY_VIOLATION' | 'COUNTERPARTY_BLOCKED';

/** Names of the rules, as in the document (`spend.per_tx_usd`), plus `chain_id` and `counterparty`. */
export type RuleName =
  | 'chain_id'
  | 'execution.venues'
  | 'execution.max_slippage_bps'
  | 'spend.token_allowlist'
  | 'spend.per_tx_usd'
  | 'spend.daily_usd'
  | 'spend.velocity_per_hour'
  | 'spend.screening_required_above_usd'
  | 'spend.approvals'
  | 'stables.accepted'
  | 'gas.enabled'
  | 'gas.max_top_up_usd'
  | 'prediction_markets.enabled'
  | 'prediction_markets.venues'
  | 'prediction_markets.max_order_usd'
  | 'prediction_markets.markets'
  | 'prediction_markets.min_price'
  | 'prediction_markets.max_price';

export type RuleValue = string | number | boolean | string[] | null;

export interface RuleVerdict {
  rule: RuleName;
  pass: boolean;
  /** The policy's limit (USD as a decimal string, counts as integers, lists as arrays). */
  limit: RuleValue;
  /** What the action would use or name, in the limit's unit. */
  value: RuleValue;
  /** The code a failure gives. */
  code: RefusalCode;
}

/** A token conversion (an intent): tokens are registry symbols, the amount is its USD value. */
export interface ConversionAction {
  kind: 'conversion';
  chainId: number;
  sellToken: string;
  buyToken: string;
  amountMicroUsd: bigint;
  /** The venue asked to execute, when one is chosen. */
  venue?: string;
  /** The slippage the caller accepts, when it names one. */
  slippageBps?: number;
}

export interface GasTopUpAction {
  kind: 'gas_topup';
  chainId: number;
  amountMicroUsd: bigint;
}

export interface PredictionMarketOrderAction {
  kind: 'prediction_market_order';
  venue: string;
  amountMicroUsd: bigint;
  /** The market (condition id) and the limit price per share, when the order names them. */
  market?: string;
  priceMicro?: bigint;
}

/** An outbound transfer of a token to a counterparty. */
export interface TransferAction {
  kind: 'transfer';
  chainId: number;
  token: string;
  amountMicroUsd: bigint;
  /** The screening answer for the counterparty, or null when it was not screened. */
  counterpartySanctioned: boolean | null;
}

/** One call of a delegation's scope, as the delegation module classifies its target. */
export type DelegationCall =
  | { target: 'token'; symbol: string | null; valueLimitMicroUsd: bigint }
  | { target: 'venue'; venue: string | null; valueLimitMicroUsd: bigint }
  | { target: 'wrapped_native'; valueLimitMicroUsd: bigint };

export interface DelegationScopeAction {
  kind: 'delegation_scope';
  chainId: number;
  calls: DelegationCall[];
}

export type PolicyAction =
  ConversionAction | GasTopUpAction | PredictionMarketOrderAction | TransferAction | DelegationScopeAction;

/** The wallet's usage so far, for the daily and velocity rules (from spendUsage). */
export interface SpendUsage {
  /** Pending plus settled micro-USD of the current UTC day. */
  dayMicroUsd: bigint;
  /** Spending actions (pending or settled) in the last rolling hour. */
  hourCount: number;
}

export type Evaluation =
  { allow: true } | { allow: false; rule: RuleName; code: RefusalCode; message: string };

const usd = (micro: bigint) => formatUsd(micro);

/**
 * Every rule that applies to the action, in a fixed order, each with its verdict. With `usage`,
 * the daily and velocity caps are included (as the action would leave them).
 */
export function evaluateRules(
  policy: PolicyDocument,
  action: PolicyAction,
  usage?: SpendUsage,
): RuleVerdict[] {
  const out: RuleVerdict[] = [];
  const add = (rule: RuleName, pass: boolean, limit: RuleValue, value: RuleValue, code: RefusalCode) =>
    out.push({ rule, pass, limit, value, code });
  const perTx = usdToMicro(policy.spend.per_tx_usd);
  const allow = policy.spend.token_allowlist;
  const spendCaps = (amount: bigint, actions: number) => {
    add('spend.per_tx_usd', amount <= perTx, policy.spend.per_tx_usd, usd(amount), 'BUDGET_EXCEEDED');
    if (usage) {
      const daily = usdToMicro(policy.spend.daily_usd);
      const day = usage.dayMicroUsd + amount;
      add('spend.daily_usd', day <= daily, policy.spend.daily_usd, usd(day), 'BUDGET_EXCEEDED');
      const hour = usage.hourCount + actions;
      const cap = policy.spend.velocity_per_hour;
      add('spend.velocity_per_hour', hour <= cap, cap, hour, 'BUDGET_EXCEEDED');
    }
  };
  const chain = (chainId: number) =>
    add('chain_id', chainId === policy.chain_id, policy.chain_id, chainId, 'POLICY_VIOLATION');

  switch (action.kind) {
    case 'conversion': {
      chain(action.chainId);
      const tokens = [action.sellToken, action.buyToken];
      const outside = tokens.filter((t) => !allow.includes(t));
      add('spend.token_allowlist', outside.length === 0, allow, tokens, 'POLICY_VIOLATION');
      const stableLeg = tokens.some((t) => policy.stables.accepted.includes(t));
      add('stables.accepted', stableLeg, policy.stables.accepted, tokens, 'BUDGET_EXCEEDED');
      if (action.venue !== undefined) {
        const ok = (policy.execution.venues as string[]).includes(action.venue);
        add('execution.venues', ok, policy.execution.venues, action.venue, 'POLICY_VIOLATION');
      } else {
        add(
          'execution.venues',
          policy.execution.venues.length > 0,
          policy.execution.venues,
          null,
          'POLICY_VIOLATION',
        );
      }
      if (action.slippageBps !== undefined) {
        const ok = action.slippageBps <= policy.execution.max_slippage_bps;
        add(
          'execution.max_slippage_bps',
          ok,
          policy.execution.max_slippage_bps,
          action.slippageBps,
          'POLICY_VIOLATION',
        );
      }
      spendCaps(action.amountMicroUsd, 1);
      break;
    }
    case 'gas_topup': {
      chain(action.chainId);
      add('gas.enabled', policy.gas.enabled, true, policy.gas.enabled, 'POLICY_VIOLATION');
      const max = usdToMicro(policy.gas.max_top_up_usd);
      add(
        'gas.max_top_up_usd',
        action.amountMicroUsd <= max,
        policy.gas.max_top_up_usd,
        usd(action.amountMicroUsd),
        'POLICY_VIOLATION',
      );
      spendCaps(action.amountMicroUsd, 1);
      break;
    }
    case 'prediction_market_order': {
      const pm = policy.prediction_markets;
      add('prediction_markets.enabled', pm.enabled, true, pm.enabled, 'POLICY_VIOLATION');
      const venueOk = (pm.venues as string[]).includes(action.venue);
      add('prediction_markets.venues', venueOk, pm.venues, action.venue, 'POLICY_VIOLATION');
      const max = usdToMicro(pm.max_order_usd);
      add(
        'prediction_markets.max_order_usd',
        action.amountMicroUsd <= max,
        pm.max_order_usd,
        usd(action.amountMicroUsd),
        'POLICY_VIOLATION',
      );
      // Orders have no waiting state: above the approval threshold they are refused, never held.
      const approvals = policy.spend.approvals;
      if (approvals) {
        add(
          'spend.approvals',
          action.amountMicroUsd <= usdToMicro(approvals.above_usd),
          approvals.above_usd,
          usd(action.amountMicroUsd),
          'POLICY_VIOLATION',
        );
      }
      if (action.market !== undefined) {
        const market = action.market.toLowerCase();
        const allowed = pm.markets.length === 0 || pm.markets.some((m) => m.toLowerCase() === market);
        add('prediction_markets.markets', allowed, pm.markets, [market], 'POLICY_VIOLATION');
      }
      if (action.priceMicro !== undefined) {
        const low = usdToMicro(pm.min_price);
        const high = usdToMicro(pm.max_price);
        add(
          'prediction_markets.min_price',
          action.priceMicro >= low,
          pm.min_price,
          usd(action.priceMicro),
          'POLICY_VIOLATION',
        );
        add(
          'prediction_markets.max_price',
          action.priceMicro <= high,
          pm.max_price,
          usd(action.priceMicro),
          'POLICY_VIOLATION',
        );
      }
      spendCaps(action.amountMicroUsd, 1);
      break;
    }
    case 'transfer': {
      chain(action.chainId);
      add('spend.token_allowlist', allow.includes(action.token), allow, [action.token], 'POLICY_VIOLATION');
      const threshold = policy.spend.screening_required_above_usd;
      if (threshold !== null && action.amountMicroUsd > usdToMicro(threshold)) {
        // Unscreened above the threshold is a policy violation; a listed counterparty is blocked.
        if (action.counterpartySanctioned === null) {
          add('spend.screening_required_above_usd', false, threshold, 'unscreened', 'POLICY_VIOLATION');
        } else {
          add(
            'spend.screening_required_above_usd',
            !action.counterpartySanctioned,
            threshold,
            action.counterpartySanctioned ? 'listed' : 'clear',
            'COUNTERPARTY_BLOCKED',
          );
        }
      }
      spendCaps(action.amountMicroUsd, 1);
      break;
    }
    case 'delegation_scope': {
      chain(action.chainId);
      action.calls.forEach((call) => {
        if (call.target === 'token') {
          const ok = call.symbol !== null && allow.includes(call.symbol);
          add('spend.token_allowlist', ok, allow, call.symbol, 'POLICY_VIOLATION');
        } else if (call.target === 'venue') {
          const ok = call.venue !== null && (policy.execution.venues as string[]).includes(call.venue);
          add('execution.venues', ok, policy.execution.venues, call.venue, 'POLICY_VIOLATION');
        }
        add(
          'spend.per_tx_usd',
          call.valueLimitMicroUsd <= perTx,
          policy.spend.per_tx_usd,
          usd(call.valueLimitMicroUsd),
          'POLICY_VIOLATION',
        );
      });
      break;
    }
  }
  return out;
}

/** Allow, or the first violated rule by name (in the order of evaluateRules). */
export function evaluate(policy: PolicyDocument, action: PolicyAction, usage?: SpendUsage): Evaluation {
  const failed = evaluateRules(policy, action, usage).find((v) => !v.pass);
  if (!failed) return { allow: true };
  return { allow: false, rule: failed.rule, code: failed.code, message: refusalMessage(failed) };
}

/** One sentence naming the rule, its limit and what the action would use. */
export function refusalMessage(v: RuleVerdict): string {
  const show = (x: RuleValue) => (Array.isArray(x) ? `[${x.join(', ')}]` : String(x));
  if (v.rule === 'spend.screening_required_above_usd') {
    return v.value === 'listed'
      ? `The counterparty is on a sanctions list and the policy requires screening above ${show(v.limit)} USD.`
      : `The policy requires counterparty screening above ${show(v.limit)} USD, and none was done.`;
  }
  if (v.rule === 'spend.approvals') {
    return (
      `Refused by spend.approvals: an order above ${show(v.limit)} USD would need the approvers, and orders ` +
      `cannot wait for them (this one is ${show(v.value)} USD).`
    );
  }
  return `Refused by ${v.rule}: the limit is ${show(v.limit)}, the action would use ${show(v.value)}.`;
}
