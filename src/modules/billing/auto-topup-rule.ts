// The account's auto-top-up rule (PUT /v1/balance/auto-topup), and the check, shared with the
// quiver and the fire job, that enqueues the fire job when the balance is already below it.

import type { Clock } from '../../core/clock.ts';
import type { DbExecutor, Tx } from '../../core/db/database.ts';
import { invalidRequest } from '../../core/errors/app-error.ts';
import type { Actor } from '../../core/http/actor.ts';
import { enqueueJob } from '../../core/jobs/index.ts';
import { formatUsd, parseUsd } from '../../core/money.ts';
import { recordAudit } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import { findRule, quiverCounts, upsertRule, type RuleRow } from './auto-topup-store.ts';
import {
  actorLabel,
  FIRE_JOB,
  MAX_PER_MONTH_LIMIT,
  readAutoTopupState,
  type AutoTopupState,
} from './auto-topup-state.ts';
import { readPrepaidBalance } from './prepaid.ts';

export interface SetAutoTopupRuleParameters {
  threshold_usd: string;
  max_per_month: number;
}

/**
 * Creates or replaces the account's rule in the caller's transaction. Writing the rule re-enables
 * a suspended one (failures forgotten). When the balance is already below the new threshold, the
 * fire job is enqueued at once. Throws INVALID_REQUEST for a threshold that is not a positive
 * USD amount or a max_per_month outside 0–100.
 */
export async function setAutoTopupRule(
  tx: Tx,
  clock: Clock,
  actor: Actor,
  params: SetAutoTopupRuleParameters,
): Promise<AutoTopupState> {
  const thresholdMicro = parseUsd(params.threshold_usd);
  if (thresholdMicro === null || thresholdMicro <= 0n) {
    throw invalidRequest(
      `threshold_usd must be a positive USD amount with at most 6 decimals (got ${JSON.stringify(params.threshold_usd)}).`,
    );
  }
  if (
    !Number.isInteger(params.max_per_month) ||
    params.max_per_month < 0 ||
    params.max_per_month > MAX_PER_MONTH_LIMIT
  ) {
    throw invalidRequest(`max_per_month must be an integer from 0 to ${MAX_PER_MONTH_LIMIT}.`);
  }
  const accountId = actor.principal.accountId;
  const now = clock.now();
  const { rule, previous } = await upsertRule(tx, accountId, thresholdMicro, params.max_per_month, now);
  const payload = {
    threshold_usd: formatUsd(thresholdMicro),
    max_per_month: rule.max_per_month,
    re_enabled: previous?.suspended === true,
  };
  await emitEvent(tx, clock, { accountId, kind: 'auto_topup.rule_updated', subject: accountId, payload });
  await recordAudit(tx, clock, {
    accountId,
    actor: actorLabel(actor),
    action: 'auto_topup.rule_updated',
    subject: accountId,
    details: payload,
    network: actor.network,
  });
  await enqueueFireIfDue(tx, clock, accountId, rule);
  return readAutoTopupState(tx, clock, accountId);
}

/** Enqueues the fire job when the balance is below the threshold and an arrow is ready. */
export async function enqueueFireIfDue(
  tx: DbExecutor,
  clock: Clock,
  accountId: string,
  rule?: RuleRow,
): Promise<void> {
  const r = rule ?? (await findRule(tx, accountId));
  if (!r || r.suspended || r.max_per_month === 0) return;
  const { balanceMicro } = await readPrepaidBalance(tx, accountId);
  if (balanceMicro >= BigInt(r.threshold_micro)) return;
  const counts = await quiverCounts(tx, accountId);
  if (counts.ready === 0 || counts.settling > 0) return;
  await enqueueJob(tx, clock, {
    name: FIRE_JOB,
    payload: { account_id: accountId },
    singletonKey: accountId,
  });
}
