// The newest policy in force during a run. An intent is pinned to the policy version it was
// admitted under, and every slice must pass it; when the wallet's owner publishes a newer version
// while the intent runs (a token dropped from the allowlist, a lower cap after a key leak), every
// later slice must pass that one too. Both apply at once, so a looser newer version never widens a
// running intent: its venues are the intersection, its deadline the earlier, its slippage the one
// admitted. The intent's `policy_version` stays the pinned one; a refusal names the newer version.
//
// The daily and hourly caps are not asked again: the intent's spend was counted against them when
// it was admitted (its reservation), and a newer version's caps refuse the admissions after it.

import {
  evaluateRules,
  getActivePolicy,
  refusalMessage,
  type ActivePolicy,
  type PolicyAction,
  type PolicyDocument,
} from '../policies/index.ts';
import type { IntentRow } from '../intents/index.ts';
import { spendCapNow, UNWRAP_VENUE } from './next-slice.ts';
import type { Abort } from './report.ts';
import type { RunDeps } from './start.ts';

/** The wallet's active policy when it is newer than the intent's pinned version, else null. */
export async function newerPolicy(deps: RunDeps, row: IntentRow): Promise<ActivePolicy | null> {
  const latest = await getActivePolicy(deps.db, deps.registry, row.account_id, row.wallet);
  return latest && latest.version > row.policy_version ? latest : null;
}

/** The intent's venues both policies allow, in the intent's order. */
export function venuesInForce(row: IntentRow, docs: readonly PolicyDocument[]): string[] {
  return row.params.venues.filter((v) =>
    docs.every((doc) => (doc.execution.venues as readonly string[]).includes(v)),
  );
}

/** The run's deadline: the earliest that the policies in force allow from the intent's admission. */
export function runDeadline(row: IntentRow, docs: readonly PolicyDocument[]): Date {
  const minutes = Math.min(...docs.map((d) => d.execution.deadline_minutes));
  return new Date(row.created_at.getTime() + minutes * 60_000);
}

/**
 * POLICY_VIOLATION when the next slice breaks a rule of the newer policy: the chain, the
 * allowlist, the accepted stables, the venue (the plan's, once planned; before, whether any of the
 * intent's venues is still allowed), the slippage admitted, the per-action cap (on the value
 * admitted, and on the sale valued now) or, for a gas top-up, whether top-ups are on and their cap.
 */
export function newerPolicyRefusal(
  deps: RunDeps,
  row: IntentRow,
  newer: ActivePolicy,
  plannedVenue: string | null,
): Abort | null {
  const doc = newer.document;
  const sell = deps.registry.findToken(row.chain_id, row.params.sell_token);
  const buy = deps.registry.findToken(row.chain_id, row.params.buy_token);
  const amountMicroUsd = BigInt(row.value_micro_usd);
  const action: PolicyAction =
    row.kind === 'gas_topup'
      ? { kind: 'gas_topup', chainId: row.chain_id, amountMicroUsd }
      : {
          kind: 'conversion',
          chainId: row.chain_id,
          sellToken: sell?.symbol ?? row.params.sell_token,
          buyToken: buy?.symbol ?? row.params.buy_token,
          amountMicroUsd,
          slippageBps: row.params.max_slippage_bps,
          ...(plannedVenue !== null && plannedVenue !== UNWRAP_VENUE ? { venue: plannedVenue } : {}),
        };
  const violation = (rule: string, why: string, more: Record<string, unknown> = {}): Abort => ({
    reason: 'POLICY_VIOLATION',
    detail: {
      rule,
      policy_version: newer.version,
      pinned_policy_version: row.policy_version,
      why: `policy version ${newer.version}, published while the intent ran: ${why}`,
      ...more,
    },
  });
  const failed = evaluateRules(doc, action).find((v) => !v.pass);
  if (failed) {
    return violation(failed.rule, refusalMessage(failed), { limit: failed.limit, value: failed.value });
  }
  if (row.kind === 'conversion' && plannedVenue === null && venuesInForce(row, [doc]).length === 0) {
    return violation('execution.venues', 'none of the intent’s venues is allowed any more', {
      limit: doc.execution.venues,
      value: row.params.venues,
    });
  }
  const now = spendCapNow(deps, row, doc);
  if (now) {
    const rule = String(now.detail['rule']);
    return violation(rule, `the sale, valued now, is over ${rule}`, { ...now.detail });
  }
  return null;
}
