// The `auto_topup.fire` job: settles one ready arrow through the payments module (purpose
// `auto_topup`) when the balance is below the threshold; marks refused and failed arrows failed
// (suspending the rule after SUSPEND_AFTER_FAILURES in a row); and catches up arrows whose
// settlement the reconciler failed (`syncSettlingArrows`).

import { getAddress, type Hex } from 'viem';
import type { Clock } from '../../core/clock.ts';
import { type DbExecutor, type Tx, withTransaction } from '../../core/db/database.ts';
import { AppError } from '../../core/errors/app-error.ts';
import { formatUsd, MAX_USD_MICRO } from '../../core/money.ts';
import { recordAudit } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import {
  findExistingSettlement,
  paymentTerms,
  submitPayment,
  verifyAuthorization,
  type PaymentOutcome,
  type PaymentsDeps,
  type PaymentTerms,
  type SettlementEffects,
  type SettlementRow,
  type SubmittedAuthorization,
} from '../payments/index.ts';
import {
  countFailure,
  countFiredSince,
  findRule,
  listSettlingArrows,
  markArrowFailed,
  markArrowSettling,
  nextReadyArrow,
  quiverCounts,
  setArrowSettlement,
  setQuietUntil,
  type ArrowRow,
  type RuleRow,
} from './auto-topup-store.ts';
import { enqueueFireIfDue } from './auto-topup-rule.ts';
import {
  CAP_QUIET_MS,
  monthStart,
  nextMonthStart,
  SUSPEND_AFTER_FAILURES,
  unixSeconds,
} from './auto-topup-state.ts';
import { readPrepaidBalance } from './prepaid.ts';
import { admitPrepaidCredit, MIN_TOPUP_MICRO } from './topups.ts';

function submittedOfArrow(arrow: ArrowRow): SubmittedAuthorization {
  return {
    authorization: {
      from: getAddress(arrow.payer),
      to: getAddress(arrow.payee),
      value: BigInt(arrow.value),
      validAfter: BigInt(arrow.valid_after),
      validBefore: BigInt(arrow.valid_before),
      nonce: arrow.nonce as Hex,
    },
    signature: (arrow.signature ?? '0x') as Hex,
  };
}

/** The settlement of this arrow (and not of another payment that used the same authorization). */
function isArrowSettlement(row: SettlementRow, arrow: ArrowRow): boolean {
  return (
    row.purpose === 'auto_topup' && row.account_id === arrow.account_id && row.request.arrow_id === arrow.id
  );
}

/** Why the account cannot fire now, or the arrow it would fire. */
type Eligibility = { ok: true; rule: RuleRow; arrow: ArrowRow | undefined } | { ok: false; reason: string };

async function checkEligible(
  db: DbExecutor,
  clock: Clock,
  accountId: string,
  options: { lock: boolean; validitySeconds: number },
): Promise<Eligibility> {
  const rule = await findRule(db, accountId, { forUpdate: options.lock });
  if (!rule) return { ok: false, reason: 'the account has no auto-top-up rule' };
  if (rule.suspended) return { ok: false, reason: 'the rule is suspended' };
  if (rule.max_per_month === 0) return { ok: false, reason: 'max_per_month is 0' };
  const now = clock.now();
  const used = await countFiredSince(db, accountId, monthStart(now));
  if (used >= rule.max_per_month) {
    const until = nextMonthStart(now);
    if (rule.quiet_until?.getTime() !== until.getTime()) await setQuietUntil(db, accountId, until, now);
    return { ok: false, reason: `this month's ${rule.max_per_month} auto-top-ups are used` };
  }
  const counts = await quiverCounts(db, accountId);
  if (counts.settling > 0) return { ok: false, reason: 'an arrow is being settled' };
  const { balanceMicro } = await readPrepaidBalance(db, accountId);
  if (balanceMicro >= BigInt(rule.threshold_micro)) {
    return { ok: false, reason: 'the balance is not below the threshold' };
  }
  const arrow = await nextReadyArrow(db, accountId, unixSeconds(now) + BigInt(options.validitySeconds));
  return { ok: true, rule, arrow };
}

/** Thrown inside the settlement's transaction when the account may no longer fire (rolled back). */
class NotEligible extends Error {}

export type FireResult =
  | { state: 'idle'; reason: string; failed: number }
  | { state: 'settled' | 'pending'; arrowId: string; settlementId: string; failed: number }
  | { state: 'capped'; arrowId: string; reason: string; failed: number };

/**
 * The `auto_topup.fire` job of one account: if the rule is active, the month's allowance not used,
 * no arrow already settling and the balance still below the threshold, settles the ready arrow
 * that expires soonest. A refused or failed arrow is marked failed (signature destroyed, failure
 * counted, the rule suspended at SUSPEND_AFTER_FAILURES) and the next one is tried. A cap refusal
 * (LIMIT_EXCEEDED) leaves the arrow ready, counts no failure and quiets the trigger for
 * CAP_QUIET_MS. Safe to run twice at once: the rule row is locked and re-checked in the
 * transaction that records the settlement. Throws UNAVAILABLE (chain unreadable; the job retries).
 */
export async function fireAutoTopup(
  deps: PaymentsDeps,
  effects: SettlementEffects,
  accountId: string,
): Promise<FireResult> {
  await syncSettlingArrows(deps, { accountId });
  const validitySeconds = deps.config.payments.minValiditySeconds;
  let failed = 0;
  let terms: PaymentTerms | undefined;
  for (let round = 0; round <= SUSPEND_AFTER_FAILURES; round++) {
    const plan = await checkEligible(deps.db, deps.clock, accountId, { lock: false, validitySeconds });
    if (!plan.ok) return { state: 'idle', reason: plan.reason, failed };
    const arrow = plan.arrow;
    if (!arrow) return { state: 'idle', reason: 'no ready arrow', failed };
    terms ??= await paymentTerms(deps);
    if (arrow.chain_id !== terms.chainId || arrow.token !== terms.asset.toLowerCase()) {
      await failArrow(deps, arrow, `payments now use token ${terms.asset} on chain ${terms.chainId}`, null);
      failed += 1;
      continue;
    }
    const submitted = submittedOfArrow(arrow);
    try {
      await verifyAuthorization(deps, terms, submitted, { atLeast: MIN_TOPUP_MICRO, atMost: MAX_USD_MICRO });
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'PAYMENT_INVALID')) throw err;
      await failArrow(deps, arrow, err.message, null);
      failed += 1;
      continue;
    }
    let outcome: PaymentOutcome;
    try {
      outcome = await submitPayment(deps, effects, {
        accountId,
        purpose: 'auto_topup',
        terms,
        submitted,
        request: { arrow_id: arrow.id },
        admit: (tx) => admitArrow(tx, deps, accountId, arrow),
      });
    } catch (err) {
      if (err instanceof NotEligible) return { state: 'idle', reason: err.message, failed };
      if (err instanceof AppError && err.code === 'LIMIT_EXCEEDED') {
        deps.log.warn(
          { account: accountId, arrow: arrow.id, reason: err.message },
          'auto-top-up refused by a cap',
        );
        const now = deps.clock.now();
        await setQuietUntil(deps.db, accountId, new Date(now.getTime() + CAP_QUIET_MS), now);
        return { state: 'capped', arrowId: arrow.id, reason: err.message, failed };
      }
      throw err;
    }
    const row = outcome.row;
    if (!isArrowSettlement(row, arrow)) {
      await failArrow(
        deps,
        arrow,
        'the authorization was submitted for another payment (invalid_transaction_state)',
        null,
      );
      failed += 1;
      continue;
    }
    if (outcome.state === 'failed') {
      await failArrow(deps, arrow, row.fail_reason ?? 'the settlement failed', row.id);
      failed += 1;
      continue;
    }
    if (outcome.state === 'pending') await setArrowSettlement(deps.db, arrow.id, row.id);
    return { state: outcome.state, arrowId: arrow.id, settlementId: row.id, failed };
  }
  return { state: 'idle', reason: 'too many failed arrows in one run', failed };
}

/** In the settlement's transaction: re-check under the rule's lock, admit against the caps, fire. */
async function admitArrow(tx: Tx, deps: PaymentsDeps, accountId: string, arrow: ArrowRow): Promise<void> {
  const plan = await checkEligible(tx, deps.clock, accountId, { lock: true, validitySeconds: 0 });
  if (!plan.ok) throw new NotEligible(plan.reason);
  await admitPrepaidCredit(tx, deps, accountId, BigInt(arrow.value));
  const now = deps.clock.now();
  if (!(await markArrowSettling(tx, arrow.id, now))) throw new NotEligible('the arrow is no longer ready');
  const payload = { nonce: arrow.nonce, payer: arrow.payer, value_usd: formatUsd(BigInt(arrow.value)) };
  await emitEvent(tx, deps.clock, { accountId, kind: 'auto_topup.arrow_fired', subject: arrow.id, payload });
  await recordAudit(tx, deps.clock, {
    accountId,
    actor: 'system',
    action: 'auto_topup.arrow_fired',
    subject: arrow.id,
    details: payload,
  });
}

/**
 * Marks an arrow failed (signature destroyed) and counts the failure, suspending the rule at
 * SUSPEND_AFTER_FAILURES, with its events and audit facts, in one transaction. `refire` enqueues
 * the fire job again so the next arrow is tried (when the rule is still active).
 */
async function failArrow(
  deps: Pick<PaymentsDeps, 'db' | 'clock'>,
  arrow: ArrowRow,
  reason: string,
  settlementId: string | null,
  refire = false,
): Promise<void> {
  await withTransaction(deps.db, async (tx) => {
    const now = deps.clock.now();
    const failed = await markArrowFailed(tx, arrow.id, reason, settlementId, now);
    if (!failed) return;
    const accountId = arrow.account_id;
    const rule = await countFailure(tx, accountId, SUSPEND_AFTER_FAILURES, now);
    const payload = {
      nonce: failed.nonce,
      payer: failed.payer,
      value_usd: formatUsd(BigInt(failed.value)),
      reason: failed.fail_reason,
      consecutive_failures: rule?.consecutive_failures ?? null,
    };
    await emitEvent(tx, deps.clock, {
      accountId,
      kind: 'auto_topup.arrow_failed',
      subject: arrow.id,
      payload,
    });
    await recordAudit(tx, deps.clock, {
      accountId,
      actor: 'system',
      action: 'auto_topup.arrow_failed',
      subject: arrow.id,
      details: payload,
    });
    if (rule?.newlySuspended) {
      const suspended = { consecutive_failures: rule.consecutive_failures, last_reason: failed.fail_reason };
      await emitEvent(tx, deps.clock, {
        accountId,
        kind: 'auto_topup.suspended',
        subject: accountId,
        payload: suspended,
      });
      await recordAudit(tx, deps.clock, {
        accountId,
        actor: 'system',
        action: 'auto_topup.suspended',
        subject: accountId,
        details: suspended,
      });
    }
    if (refire && rule && !rule.suspended) await enqueueFireIfDue(tx, deps.clock, accountId);
  });
}

/**
 * Catches up arrows left `settling` whose settlement ended without their effect: failed (the
 * reconciler found it reverted, canceled or expired) or taken by another payment. Each becomes
 * failed like a refused arrow, and the account's fire job is enqueued again so the next arrow is
 * tried. A settled settlement needs nothing: its effect marked the arrow in the same transaction.
 * Returns how many arrows failed.
 */
export async function syncSettlingArrows(
  deps: PaymentsDeps,
  options: { accountId?: string; limit?: number } = {},
): Promise<number> {
  const settling = await listSettlingArrows(deps.db, options.limit ?? 100, options.accountId);
  if (settling.length === 0) return 0;
  const terms = await paymentTerms(deps);
  let failed = 0;
  for (const arrow of settling) {
    const row = await findExistingSettlement(
      deps.db,
      { ...terms, chainId: arrow.chain_id, asset: getAddress(arrow.token) },
      submittedOfArrow(arrow),
    );
    // None: cannot happen (an arrow turns settling in the transaction that writes its settlement).
    if (!row) continue;
    if (!isArrowSettlement(row, arrow)) {
      await failArrow(
        deps,
        arrow,
        'the authorization was submitted for another payment (invalid_transaction_state)',
        null,
        true,
      );
      failed += 1;
    } else if (row.status === 'failed') {
      await failArrow(deps, arrow, row.fail_reason ?? 'the settlement failed', row.id, true);
      failed += 1;
    } else if (arrow.settlement_id === null) {
      await setArrowSettlement(deps.db, arrow.id, row.id);
    }
  }
  return failed;
}
