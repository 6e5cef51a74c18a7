// Auto-top-up: when a fee debit leaves the prepaid balance below the account's threshold, one
// pre-signed EIP-3009 authorization (an "arrow") from the account's quiver is settled on-chain
// and credited, at most `max_per_month` times a UTC month (docs/payments.md, "Auto-top-up").
//
// The fee path pays nothing for it unless the balance falls below the threshold (the rule's
// threshold is mirrored on the balance row, migration 0018): a trigger on prepaid_balances
// (migration 0013) enqueues the account's `auto_topup.fire` job in the debit's own statement,
// deduplicated by the job queue's singleton key. The job settles one arrow through the payments
// module (purpose `auto_topup`); `autoTopupEffect` credits the balance and marks the arrow settled
// in the transaction that marks the settlement settled. Arrows whose settlement the reconciler
// failed are caught up by `syncSettlingArrows`; arrows past validBefore by `expireArrows`.

import { getAddress, type Hex } from 'viem';
import type { Clock } from '../../core/clock.ts';
import type { Db, DbExecutor, Tx } from '../../core/db/database.ts';
import { AppError, invalidRequest } from '../../core/errors/app-error.ts';
import type { Actor } from '../../core/http/actor.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { newId } from '../../core/ids.ts';
import { enqueueJob } from '../../core/jobs/index.ts';
import { formatUsd, MAX_USD_MICRO, parseUsd } from '../../core/money.ts';
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
  type SettlementEffect,
  type SettlementEffects,
  type SettlementRow,
  type SubmittedAuthorization,
} from '../payments/index.ts';
import {
  countFailure,
  countFiredSince,
  deleteReadyArrows,
  expireReadyArrows,
  findArrowByNonce,
  findRule,
  insertArrows,
  listAllArrows,
  listArrows,
  listSettlingArrows,
  lockQuiver,
  markArrowFailed,
  markArrowSettled,
  markArrowSettling,
  nextReadyArrow,
  quiverCounts,
  readyArrowTokens,
  resetFailures,
  setArrowSettlement,
  setQuietUntil,
  upsertRule,
  type ArrowRow,
  type ArrowStatus,
  type RuleRow,
} from './auto-topup-store.ts';
import { readPrepaidBalance } from './prepaid.ts';
import { admitPrepaidCredit, MIN_TOPUP_MICRO, topupEffect } from './topups.ts';

/** Ready arrows an account may hold at once. */
export const QUIVER_CAP = 50;
/** Arrows one POST may add. */
export const ARROWS_PER_CALL = 20;
/** Consecutive failed arrows that suspend the rule (a PUT of the rule re-enables it). */
export const SUSPEND_AFTER_FAILURES = 3;
/** The highest `max_per_month`. */
export const MAX_PER_MONTH_LIMIT = 100;
/** How far ahead an arrow's validBefore may lie when it is added. */
export const MAX_ARROW_VALIDITY_SECONDS = 366 * 86_400;
/** Finished (settled, failed, expired) arrows shown in the state, newest first. */
export const FINISHED_ARROWS_SHOWN = 50;
/** How long the trigger stays quiet after a cap refused an arrow (a PUT of the rule ends it). */
export const CAP_QUIET_MS = 15 * 60_000;
/** The job that fires one arrow of an account (payload `{account_id}`, singleton per account). */
export const FIRE_JOB = 'auto_topup.fire';

export interface ArrowView {
  nonce: string;
  payer: string;
  value_usd: string;
  valid_before: string;
  status: ArrowStatus;
  tx_hash: string | null;
  fail_reason: string | null;
}

/** The spec's auto-top-up state (section 2). */
export interface AutoTopupState {
  threshold_usd: string;
  max_per_month: number;
  suspended: boolean;
  consecutive_failures: number;
  quiver: { ready: number; settled: number; failed: number; expired: number };
  ready_value_usd: string;
  used_this_month: number;
  arrows: ArrowView[];
}

function monthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

function nextMonthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

function unixSeconds(at: Date): bigint {
  return BigInt(Math.floor(at.getTime() / 1000));
}

function actorLabel(actor: Actor): string {
  return `${actor.principal.kind}:${actor.principal.credentialId}`;
}

function arrowView(a: ArrowRow): ArrowView {
  return {
    nonce: a.nonce,
    payer: a.payer,
    value_usd: formatUsd(BigInt(a.value)),
    valid_before: new Date(Number(a.valid_before) * 1000).toISOString(),
    status: a.status,
    tx_hash: a.tx_hash,
    fail_reason: a.fail_reason,
  };
}

/**
 * The account's auto-top-up state. Without a rule it reads threshold "0" and max_per_month 0 (never
 * fires). `quiver` counts arrows by status; one being settled appears only in `arrows`.
 */
export async function readAutoTopupState(
  db: DbExecutor,
  clock: Clock,
  accountId: string,
): Promise<AutoTopupState> {
  const rule = await findRule(db, accountId);
  const counts = await quiverCounts(db, accountId);
  const used = await countFiredSince(db, accountId, monthStart(clock.now()));
  const arrows = await listArrows(db, accountId, FINISHED_ARROWS_SHOWN);
  return {
    threshold_usd: formatUsd(BigInt(rule?.threshold_micro ?? 0)),
    max_per_month: rule?.max_per_month ?? 0,
    suspended: rule?.suspended ?? false,
    consecutive_failures: rule?.consecutive_failures ?? 0,
    quiver: { ready: counts.ready, settled: counts.settled, failed: counts.failed, expired: counts.expired },
    ready_value_usd: formatUsd(counts.readyValueMicro),
    used_this_month: used,
    arrows: arrows.map(arrowView),
  };
}

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
async function enqueueFireIfDue(
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

function arrowRefused(index: number, reason: string, message: string): AppError {
  return new AppError(
    'PAYMENT_INVALID',
    `arrows[${index}]: ${message} (${reason}). Nothing was added to the quiver.`,
  );
}

function sameTerms(arrow: ArrowRow, s: SubmittedAuthorization): boolean {
  const a = s.authorization;
  return (
    arrow.payee === a.to.toLowerCase() &&
    arrow.value === a.value.toString() &&
    arrow.valid_after === a.validAfter.toString() &&
    arrow.valid_before === a.validBefore.toString()
  );
}

export interface AddArrowsResult {
  /** Arrows new to the quiver (the others were in it already). */
  added: number;
  state: AutoTopupState;
}

/**
 * Adds pre-signed authorizations to the account's quiver. Each is verified like a top-up (payee,
 * asset, at least MIN_TOPUP_MICRO, window, signature, nonce unused on-chain, the payer's USDC) but
 * NOT broadcast. All or nothing: the first refused arrow refuses the call. An authorization
 * already in this account's quiver with the same terms is accepted again without a second copy.
 * Throws INVALID_REQUEST (the same authorization twice in one call), PAYMENT_INVALID (a refused
 * arrow, naming its index, or one submitted before elsewhere), LIMIT_EXCEEDED (more than
 * QUIVER_CAP ready arrows), UNAVAILABLE (payments not configured, chain unreadable),
 * DEADLINE_EXCEEDED (nothing stored).
 */
export async function addArrows(
  deps: PaymentsDeps,
  actor: Actor,
  arrows: SubmittedAuthorization[],
  deadline?: Deadline,
): Promise<AddArrowsResult> {
  const accountId = actor.principal.accountId;
  const seen = new Map<string, number>();
  arrows.forEach((s, i) => {
    const key = `${s.authorization.from.toLowerCase()}:${s.authorization.nonce.toLowerCase()}`;
    const first = seen.get(key);
    if (first !== undefined) {
      throw invalidRequest(
        `arrows[${i}] repeats the authorization of arrows[${first}] (same payer and nonce).`,
      );
    }
    seen.set(key, i);
  });

  const terms = await paymentTerms(deps);
  const token = terms.asset.toLowerCase();
  const latest = unixSeconds(deps.clock.now()) + BigInt(MAX_ARROW_VALIDITY_SECONDS);
  const fresh: SubmittedAuthorization[] = [];
  for (const [i, s] of arrows.entries()) {
    const a = s.authorization;
    const existing = await findArrowByNonce(deps.db, terms.chainId, token, a.from.toLowerCase(), a.nonce);
    if (existing) {
      if (existing.account_id === accountId && sameTerms(existing, s)) continue;
      throw arrowRefused(
        i,
        'invalid_transaction_state',
        `The nonce ${a.nonce} of ${a.from} was already submitted as another arrow`,
      );
    }
    if (await findExistingSettlement(deps.db, terms, s)) {
      throw arrowRefused(
        i,
        'invalid_transaction_state',
        `The nonce ${a.nonce} of ${a.from} was already submitted for a payment`,
      );
    }
    if (a.validBefore > latest) {
      throw arrowRefused(
        i,
        'invalid_exact_evm_payload_authorization_valid_before',
        `validBefore ${a.validBefore} is more than ${MAX_ARROW_VALIDITY_SECONDS / 86_400} days away; ` +
          'an arrow must expire within that',
      );
    }
    deadline?.check('verifying an arrow on-chain');
    try {
      await verifyAuthorization(deps, terms, s, { atLeast: MIN_TOPUP_MICRO, atMost: MAX_USD_MICRO });
    } catch (err) {
      if (err instanceof AppError && err.code === 'PAYMENT_INVALID') {
        throw new AppError(
          'PAYMENT_INVALID',
          `arrows[${i}]: ${err.message.replace(/Nothing was broadcast or credited\.$/, 'Nothing was added to the quiver.')}`,
        );
      }
      throw err;
    }
    fresh.push(s);
  }
  deadline?.check('storing the arrows');

  return deps.db.transaction().execute(async (tx) => {
    await lockQuiver(tx, accountId);
    const counts = await quiverCounts(tx, accountId);
    if (counts.ready + fresh.length > QUIVER_CAP) {
      throw new AppError(
        'LIMIT_EXCEEDED',
        `The quiver holds at most ${QUIVER_CAP} ready arrows; it has ${counts.ready} and this call adds ` +
          `${fresh.length}. Nothing was added.`,
        {
          remediation: `Add at most ${Math.max(0, QUIVER_CAP - counts.ready)} arrows, or wait for some to be used or expire.`,
        },
      );
    }
    const now = deps.clock.now();
    const inserted = await insertArrows(
      tx,
      fresh.map((s) => ({
        id: newId('arw'),
        account_id: accountId,
        chain_id: terms.chainId,
        token,
        payer: s.authorization.from.toLowerCase(),
        payee: s.authorization.to.toLowerCase(),
        value: s.authorization.value,
        valid_after: s.authorization.validAfter,
        valid_before: s.authorization.validBefore,
        nonce: s.authorization.nonce.toLowerCase(),
        signature: s.signature.toLowerCase(),
      })),
      now,
    );
    if (inserted.length !== fresh.length) {
      // A concurrent call stored some of them first: fine when it was this account, with these terms.
      for (const [i, s] of fresh.entries()) {
        const a = s.authorization;
        const row = await findArrowByNonce(tx, terms.chainId, token, a.from.toLowerCase(), a.nonce);
        if (!row || row.account_id !== accountId || !sameTerms(row, s)) {
          throw arrowRefused(
            i,
            'invalid_transaction_state',
            `The nonce ${a.nonce} of ${a.from} was just submitted as another arrow`,
          );
        }
      }
    }
    for (const arrow of inserted) {
      await emitEvent(tx, deps.clock, {
        accountId,
        kind: 'auto_topup.arrow_added',
        subject: arrow.id,
        payload: {
          nonce: arrow.nonce,
          payer: arrow.payer,
          value_usd: formatUsd(BigInt(arrow.value)),
          valid_before: arrowView(arrow).valid_before,
        },
      });
    }
    if (inserted.length > 0) {
      await recordAudit(tx, deps.clock, {
        accountId,
        actor: actorLabel(actor),
        action: 'auto_topup.arrows_added',
        subject: accountId,
        details: {
          arrows: inserted.map((a) => ({
            id: a.id,
            nonce: a.nonce,
            payer: a.payer,
            value_usd: formatUsd(BigInt(a.value)),
          })),
        },
        network: actor.network,
      });
      await enqueueFireIfDue(tx, deps.clock, accountId);
    }
    return { added: inserted.length, state: await readAutoTopupState(tx, deps.clock, accountId) };
  });
}

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
  await deps.db.transaction().execute(async (tx) => {
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

/**
 * Ready arrows whose validBefore has passed by the clock become expired, signatures destroyed,
 * each with an event and an audit fact, in one transaction (the `auto_topup.expire` job, every
 * minute). Returns how many expired.
 */
export async function expireArrows(db: Db, clock: Clock, limit = 500): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const now = clock.now();
    const expired = await expireReadyArrows(tx, unixSeconds(now), now, limit);
    for (const arrow of expired) {
      const payload = {
        nonce: arrow.nonce,
        payer: arrow.payer,
        value_usd: formatUsd(BigInt(arrow.value)),
        valid_before: arrowView(arrow).valid_before,
      };
      await emitEvent(tx, clock, {
        accountId: arrow.account_id,
        kind: 'auto_topup.arrow_expired',
        subject: arrow.id,
        payload,
      });
      await recordAudit(tx, clock, {
        accountId: arrow.account_id,
        actor: 'system',
        action: 'auto_topup.arrow_expired',
        subject: arrow.id,
        details: payload,
      });
    }
    return expired.length;
  });
}

/**
 * The effect of a settled arrow (purpose `auto_topup`): the prepaid credit (`topup.auto`, with its
 * `balance.credited` event and audit fact), then the arrow settled with its tx hash and its
 * signature destroyed, the failure run reset, and the arrow's event and audit fact: all in the
 * transaction that marks the settlement settled.
 */
export const autoTopupEffect: SettlementEffect = async (tx, clock, row, txHash) => {
  const result = await topupEffect(tx, clock, row, txHash);
  const arrowId = typeof row.request.arrow_id === 'string' ? row.request.arrow_id : null;
  if (arrowId) {
    const now = clock.now();
    const hash = txHash.toLowerCase();
    const arrow = await markArrowSettled(tx, row.account_id, arrowId, row.id, hash, now);
    if (arrow) {
      await resetFailures(tx, row.account_id, now);
      const payload = {
        nonce: arrow.nonce,
        payer: arrow.payer,
        value_usd: formatUsd(BigInt(arrow.value)),
        tx_hash: hash,
        balance_usd: result.balance_usd ?? null,
      };
      await emitEvent(tx, clock, {
        accountId: row.account_id,
        kind: 'auto_topup.arrow_settled',
        subject: arrowId,
        payload,
      });
      await recordAudit(tx, clock, {
        accountId: row.account_id,
        actor: 'system',
        action: 'auto_topup.arrow_settled',
        subject: arrowId,
        details: payload,
      });
    }
  }
  return { ...result, arrow_id: arrowId };
};

/**
 * The account export's `auto_topup`: null when the account never had a rule or an arrow, else
 * the rule and at most `limit` arrows, newest first. Never a signature.
 */
export async function exportAutoTopup(
  db: DbExecutor,
  accountId: string,
  limit: number,
): Promise<{ rule: Record<string, unknown> | null; authorizations: Record<string, unknown>[] } | null> {
  const rule = await findRule(db, accountId);
  const arrows = await listAllArrows(db, accountId, limit);
  if (!rule && arrows.length === 0) return null;
  return {
    rule: rule
      ? {
          threshold_usd: formatUsd(BigInt(rule.threshold_micro)),
          max_per_month: rule.max_per_month,
          suspended: rule.suspended,
          consecutive_failures: rule.consecutive_failures,
          created_at: rule.created_at.toISOString(),
          updated_at: rule.updated_at.toISOString(),
        }
      : null,
    authorizations: arrows.map((a) => ({
      id: a.id,
      chain_id: a.chain_id,
      token: a.token,
      payer: a.payer,
      payee: a.payee,
      nonce: a.nonce,
      value_usd: formatUsd(BigInt(a.value)),
      valid_after: a.valid_after,
      valid_before: a.valid_before,
      status: a.status,
      settlement_id: a.settlement_id,
      tx_hash: a.tx_hash,
      fail_reason: a.fail_reason,
      fired_at: a.fired_at?.toISOString() ?? null,
      created_at: a.created_at.toISOString(),
      updated_at: a.updated_at.toISOString(),
    })),
  };
}

/** An arrow taken out of the quiver at offboarding: its terms, never its signature. */
export interface RemovedArrow {
  id: string;
  chainId: number;
  token: string;
  payer: string;
  payee: string;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: string;
}

/**
 * The distinct (chain, token) of the account's ready arrows, so the caller can read each token's
 * EIP-712 domain before the offboarding transaction (`arrowCancellation` needs it).
 */
export async function listReadyArrowTokens(
  db: DbExecutor,
  accountId: string,
): Promise<Array<{ chainId: number; token: string }>> {
  const rows = await readyArrowTokens(db, accountId);
  return rows.map((r) => ({ chainId: r.chain_id, token: r.token }));
}

/**
 * Offboarding, in the caller's transaction: every ready arrow leaves the quiver, its row and
 * signature deleted, each with an `auto_topup.arrow_removed` event, and one audit fact listing
 * them. Removing the service's copy does not revoke the authorization on-chain: whoever else holds
 * the signed authorization could still submit it until validBefore; `arrowCancellation` gives the
 * payer what cancels it. An arrow already being settled is left to its settlement (its
 * transfer is on its way; its signature is destroyed when it ends). A fire job that races loses:
 * it marks an arrow settling only while the arrow is still ready.
 */
export async function removeReadyArrows(
  tx: DbExecutor,
  clock: Clock,
  actor: Actor,
  accountId: string,
): Promise<RemovedArrow[]> {
  const rows = await deleteReadyArrows(tx, accountId);
  for (const arrow of rows) {
    await emitEvent(tx, clock, {
      accountId,
      kind: 'auto_topup.arrow_removed',
      subject: arrow.id,
      payload: {
        nonce: arrow.nonce,
        payer: arrow.payer,
        value_usd: formatUsd(BigInt(arrow.value)),
        valid_before: arrowView(arrow).valid_before,
        reason: 'offboarding',
      },
    });
  }
  if (rows.length > 0) {
    await recordAudit(tx, clock, {
      accountId,
      actor: actorLabel(actor),
      action: 'auto_topup.arrows_removed',
      subject: accountId,
      details: {
        reason: 'offboarding',
        arrows: rows.map((a) => ({
          id: a.id,
          nonce: a.nonce,
          payer: a.payer,
          value_usd: formatUsd(BigInt(a.value)),
        })),
      },
      network: actor.network,
    });
  }
  return rows.map((a) => ({
    id: a.id,
    chainId: a.chain_id,
    token: a.token,
    payer: a.payer,
    payee: a.payee,
    value: BigInt(a.value),
    validAfter: BigInt(a.valid_after),
    validBefore: BigInt(a.valid_before),
    nonce: a.nonce,
  }));
}

/** EIP-3009 `CancelAuthorization(address authorizer, bytes32 nonce)`. */
export const CANCEL_AUTHORIZATION_TYPES = {
  CancelAuthorization: [
    { name: 'authorizer', type: 'address' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/**
 * What the payer needs to cancel a removed arrow's authorization on-chain: the EIP-712
 * CancelAuthorization typed data under the token's domain (name and version as read from the
 * token; null when it could not be read, with a note), and the token's `cancelAuthorization`
 * function to send with the resulting signature. Anyone may send it; it must be the payer who
 * signs. Without it the authorization stays usable by whoever holds it until `valid_before`.
 */
export function arrowCancellation(
  arrow: RemovedArrow,
  domain: { name: string; version: string } | null,
): Record<string, unknown> {
  const authorizer = getAddress(arrow.payer);
  const token = getAddress(arrow.token);
  return {
    nonce: arrow.nonce,
    payer: authorizer,
    payee: getAddress(arrow.payee),
    value_usd: formatUsd(arrow.value),
    valid_before: new Date(Number(arrow.validBefore) * 1000).toISOString(),
    token: { chain_id: arrow.chainId, address: token },
    typed_data: {
      domain: {
        ...(domain ? { name: domain.name, version: domain.version } : { name: null, version: null }),
        chainId: arrow.chainId,
        verifyingContract: token,
      },
      types: CANCEL_AUTHORIZATION_TYPES,
      primaryType: 'CancelAuthorization',
      message: { authorizer, nonce: arrow.nonce },
    },
    ...(domain
      ? {}
      : {
          domain_note:
            "The token's EIP-712 name and version could not be read; read name() and version() " +
            `from ${token} on chain ${arrow.chainId} and put them in the domain before signing.`,
        }),
    call: {
      to: token,
      function: 'cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)',
      alternative: 'cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
      args: { authorizer, nonce: arrow.nonce, signature: "the payer's signature over typed_data" },
      check: 'authorizationState(authorizer, nonce) returns true once the authorization is canceled or used',
    },
  };
}
