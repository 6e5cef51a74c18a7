// POST /v1/feedback: a feature request costs 1 USD (spec section 4, "Feedback"). Paid from the
// prepaid balance in the transaction that records it; when the balance does not cover it, the
// answer is an x402 v1 402 and the caller retries with `X-PAYMENT`: an EIP-3009 authorization
// settled on-chain by the payments module BEFORE anything is recorded (docs/payments.md).
//
// The x402 path's effect (`feedbackEffect`) runs in the transaction that marks the settlement
// settled, whether the request itself or the reconciler gets there: the payment is credited to
// the prepaid balance, the fee debited from it, and the feature request recorded, all at once.

import { actorName } from '../../core/http/actor.ts';
import { getAddress } from 'viem';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor, Tx } from '../../core/db/database.ts';
import { AppError } from '../../core/errors/app-error.ts';
import type { Actor } from '../../core/http/actor.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { errorBody, type ErrorBody } from '../../core/http/error-renderer.ts';
import type { StatementKey } from '../../core/http/idempotency.ts';
import type { RouteResult } from '../../core/http/route-table.ts';
import { newId } from '../../core/ids.ts';
import { formatUsd } from '../../core/money.ts';
import { auditCall, recordAudit } from '../audit/index.ts';
import {
  authorizationSettlementId,
  chargeFee,
  chargeFeeAlone,
  creditPrepaid,
  debitFee,
  formatBalanceUsd,
  refuseQuiverAuthorization,
  type ChargeFeeParameters,
  type ChargeFeeResult,
} from '../billing/index.ts';
import { emitEvent, eventCall } from '../events/index.ts';
import {
  findExistingSettlement,
  paymentTerms,
  submitPayment,
  toSubmitted,
  verifyAuthorization,
  type PaymentOutcome,
  type PaymentsDeps,
  type PaymentTerms,
  type SettlementEffect,
  type SettlementEffects,
  type SettlementRow,
  type SubmittedAuthorization,
} from '../payments/index.ts';
import { markChallengeUsed, recordChallenge } from './challenges.ts';
import {
  featureRequestCall,
  findFeatureRequest,
  insertFeatureRequest,
  type FeatureRequestStatus,
} from './store.ts';
import {
  checkPaymentTerms,
  decodePaymentHeader,
  encodePaymentResponseHeader,
  networkOf,
  paymentRequiredHeader,
  paymentRequirements,
  X402_HEADERS,
  X402_PAYMENT_REQUIRED_ERROR,
  X402_VERSION,
  type PaymentRequiredBodyV1,
  type X402Version,
} from './x402.ts';

/** The settlement purpose of an x402 feedback payment (src/settlement-effects.ts). */
export const FEEDBACK_PURPOSE = 'feedback';
export const FEEDBACK_PATH = '/v1/feedback';

export interface FeedbackInput {
  title: string;
  body: string;
}

/** The 201 body: what was recorded and how it was paid. */
export interface FeedbackReceipt {
  id: string;
  status: FeatureRequestStatus;
  /** "1" when a fee was charged, "0" when metering is switched off. */
  charged_usd: string;
  /**
   * Where the fee is: the id of the fee's ledger group (prepaid balance), the settlement
   * transaction hash (x402), or null when nothing was charged.
   */
  paid_ref: string | null;
}

type FeedbackDeps = PaymentsDeps;

/** `session:<id>` or `key:<id>`: who asked, for the audit fact. */
/** The URL a payment pays for: the `resource` of the 402's requirements. */
export function feedbackResource(deps: Pick<FeedbackDeps, 'config'>): string {
  return `${deps.config.publicUrl}${FEEDBACK_PATH}`;
}

// ------------------------------------------------------------------------------ prepaid balance

export type PrepaidFeedbackResult =
  | {
      state: 'created';
      receipt: FeedbackReceipt;
      /** The `feedback.created` event's log line will tell it (false when the booking was replayed). */
      eventLine: boolean;
    }
  | { state: 'payment_required' };

/**
 * Records a feature request paid from the prepaid balance, in the caller's transaction: the fee
 * (`fee:feedback:<request id>`), the request, its event and its audit fact. With metering off
 * nothing is charged. `payment_required` when the balance does not cover the fee: nothing written.
 */
export async function recordPrepaidFeedback(
  tx: Tx,
  deps: Pick<FeedbackDeps, 'config' | 'clock' | 'db'>,
  actor: Actor,
  input: FeedbackInput,
): Promise<PrepaidFeedbackResult> {
  const request = prepaidFeedback(deps, actor, input);
  const paid = await request.charged(() => chargeFee(tx, deps, request.charge), tx);
  if (paid) return paid;
  // Metering is off: nothing was booked, so nothing of `then` ran. Record it free.
  const free = request.free();
  await insertFeatureRequest(tx, { ...request.row, updated_at: request.row.created_at });
  await emitEvent(tx, deps.clock, free.facts.event);
  await recordAudit(tx, deps.clock, free.facts.audit);
  return { state: 'created', receipt: free.receipt, eventLine: true };
}

/**
 * The same request as one statement committing alone, booked through the ledger's batcher so
 * that concurrent requests share a commit: the fee, the request, its event and audit fact, and
 * with an Idempotency-Key its claim and stored answer (`key`, from the route's `mutateAlone`).
 * Null when metering is off: record it with recordPrepaidFeedback in a transaction instead
 * (nothing was written).
 */
export async function recordPrepaidFeedbackAlone(
  deps: Pick<FeedbackDeps, 'config' | 'clock' | 'db'>,
  actor: Actor,
  input: FeedbackInput,
  key: StatementKey | null,
): Promise<PrepaidFeedbackResult | null> {
  const request = prepaidFeedback(deps, actor, input);
  if (!key) return request.charged(() => chargeFeeAlone(deps, request.charge), deps.db);
  // The stored answer is written with the booking, so it is exactly the answer sent.
  const charge = { ...request.charge, then: [...(request.charge.then ?? []), key.answer(request.answer)] };
  return request.charged(
    () => chargeFeeAlone(deps, charge, { before: (wait) => key.claim(wait), unlessBooked: key.release }),
    deps.db,
  );
}

/** 201 with the receipt, or a bare 402 the route turns into the x402 answer. */
export function prepaidFeedbackAnswer(result: PrepaidFeedbackResult): RouteResult {
  return result.state === 'payment_required'
    ? { status: 402, body: null }
    : { status: 201, body: result.receipt };
}

/** What a prepaid feature request records, paid or (metering off) free. */
function prepaidFeedback(deps: Pick<FeedbackDeps, 'config' | 'clock'>, actor: Actor, input: FeedbackInput) {
  const accountId = actor.principal.accountId;
  const id = newId('fr');
  const feeMicro = deps.config.fees.feedbackMicro;
  const now = deps.clock.now();
  const row = {
    id,
    account_id: accountId,
    title: input.title,
    body: input.body,
    status: 'open' as const,
    created_at: now,
  };
  // What is recorded, as the receipt says it, for a paid and for a free request.
  const facts = (receipt: FeedbackReceipt, paidBy: 'prepaid' | 'free') => ({
    event: {
      accountId,
      kind: 'feedback.created',
      subject: id,
      payload: {
        id,
        title: input.title,
        status: 'open',
        charged_usd: receipt.charged_usd,
        paid_by: paidBy,
        paid_ref: receipt.paid_ref,
      },
    },
    audit: {
      accountId,
      actor: actorName(actor),
      action: 'feedback.create',
      subject: id,
      details: { charged_usd: receipt.charged_usd, paid_by: paidBy, paid_ref: receipt.paid_ref },
      network: actor.network,
    },
  });
  // The fee, the request, its event and its audit fact in one statement (one round trip).
  const groupId = newId('lgr');
  const paid: FeedbackReceipt = { id, status: 'open', charged_usd: formatUsd(feeMicro), paid_ref: groupId };
  const paidFacts = facts(paid, 'prepaid');
  const created = eventCall(deps.clock, paidFacts.event);
  const charge: ChargeFeeParameters = {
    accountId,
    product: 'feedback',
    feeMicroUsd: feeMicro,
    settlementId: `fee:feedback:${id}`,
    groupId,
    then: [featureRequestCall(row), created.call, auditCall(deps.clock, paidFacts.audit).call],
  };
  return {
    row,
    charge,
    /** The answer once the fee is booked (what an Idempotency-Key stores for replay). */
    answer: prepaidFeedbackAnswer({ state: 'created', receipt: paid, eventLine: true }),
    /**
     * Runs the charge (its statements through `on`): the created result, payment_required, or null
     * when metering is off.
     */
    async charged(
      run: () => Promise<ChargeFeeResult>,
      on: DbExecutor,
    ): Promise<PrepaidFeedbackResult | null> {
      try {
        const result = await run();
        if (!result.charged) return null;
        if (!result.replayed) created.committed(on);
        return { state: 'created', receipt: paid, eventLine: !result.replayed };
      } catch (err) {
        if (err instanceof AppError && err.code === 'PAYMENT_REQUIRED') return { state: 'payment_required' };
        throw err;
      }
    },
    free() {
      const receipt: FeedbackReceipt = { id, status: 'open', charged_usd: '0', paid_ref: null };
      return { receipt, facts: facts(receipt, 'free') };
    },
  };
}

/**
 * The 402 for a feature request the balance does not cover, recording the challenge it carries:
 * the x402 v1 body (`x402Version`, `error`, `accepts`) that v1 clients read, with the error
 * body's fields beside it (`code` PAYMENT_REQUIRED, `message`, `remediation`, `docs_url`,
 * `request_id`, `next`) for every other client, and the same requirement as x402 v2 in the
 * `PAYMENT-REQUIRED` header (`headers`), which v2 clients read. Throws UNAVAILABLE when payments
 * are not configured (no x402 then).
 */
export async function feedbackPaymentRequired(
  deps: FeedbackDeps,
  accountId: string,
  requestId: string,
): Promise<{ body: PaymentRequiredBodyV1 & ErrorBody; headers: Record<string, string> }> {
  const terms = await paymentTerms(deps);
  const amount = deps.config.fees.feedbackMicro;
  const resource = feedbackResource(deps);
  await recordChallenge(deps.db, deps.clock, {
    accountId,
    resource,
    amount,
    payee: terms.payee,
    asset: terms.asset,
    network: terms.network,
  });
  const refusal = new AppError(
    'PAYMENT_REQUIRED',
    `The prepaid balance does not cover the fee of ${formatUsd(amount)} USD for recording a feature request.`,
    {
      remediation:
        'Pay this request with x402: retry it with a PAYMENT-SIGNATURE header signed from the PAYMENT-REQUIRED ' +
        'header (x402 v2), or an X-PAYMENT header signed from `accepts` (x402 v1). Or top up the prepaid ' +
        'balance (POST /v1/balance/topups) and retry without one.',
    },
  );
  const requirement = {
    resource,
    amount,
    description:
      `Fee of ${formatUsd(amount)} USD for recording a feature request (POST ${FEEDBACK_PATH}), paid in USDC. ` +
      'A funded prepaid balance pays it instead (POST /v1/balance/topups).',
  };
  const required = X402_HEADERS[2].required;
  return {
    body: {
      ...errorBody(refusal, requestId, deps.config),
      x402Version: X402_VERSION,
      error: X402_PAYMENT_REQUIRED_ERROR,
      accepts: [paymentRequirements(terms, requirement)],
    },
    headers: {
      [required.toLowerCase()]: paymentRequiredHeader(terms, requirement),
      'access-control-expose-headers': required,
      'cache-control': 'no-store',
    },
  };
}

// ------------------------------------------------------------------------------ x402

export type PaidFeedbackResult =
  | {
      state: 'settled';
      receipt: FeedbackReceipt;
      /** The settlement answer header of the payment's version, named and encoded. */
      paymentResponse: { name: string; value: string };
    }
  | { state: 'pending'; row: SettlementRow };

/**
 * Records a feature request paid by an x402 payment (`X-PAYMENT`, v1, or `PAYMENT-SIGNATURE`,
 * v2: the same authorization either way): decoded, checked without
 * broadcasting (exactly the fee, to the treasury, in USDC on the payments chain), then settled
 * with the request written beside the settlement before anything is broadcast. The same header
 * again never pays twice: `pending` while the settlement is unfinished, then the recorded request.
 *
 * Throws PAYMENT_INVALID (a bad header or authorization, a failed settlement, or a nonce already
 * used for another payment or request: nothing credited), UNAVAILABLE (payments not configured,
 * chain unreadable, relayer without gas), DEADLINE_EXCEEDED (nothing transmitted).
 */
export async function payFeedbackWithX402(
  deps: FeedbackDeps,
  effects: SettlementEffects,
  actor: Actor,
  input: FeedbackInput,
  sent: { version: X402Version; header: string | string[] },
  deadline: Deadline,
): Promise<PaidFeedbackResult> {
  const payment = decodePaymentHeader(sent.header, sent.version);
  const terms = await paymentTerms(deps);
  checkPaymentTerms(payment, terms, deps.config.fees.feedbackMicro);
  const submitted = toSubmitted(payment.payload);
  const version = payment.version;
  const accountId = actor.principal.accountId;

  let outcome: PaymentOutcome;
  const existing = await findExistingSettlement(deps.db, terms, submitted);
  if (existing) {
    outcome = sameRequestOutcome(existing, accountId, submitted, input);
  } else {
    await refuseQuiverAuthorization(deps.db, terms, submitted);
    try {
      await verifyAuthorization(deps, terms, submitted, { exactly: deps.config.fees.feedbackMicro });
    } catch (err) {
      // A concurrent retry of this very payment may have recorded (and used) it meanwhile.
      const raced = await findExistingSettlement(deps.db, terms, submitted);
      if (!raced) throw err;
      return finish(deps, terms, version, sameRequestOutcome(raced, accountId, submitted, input));
    }
    outcome = await submitPayment(deps, effects, {
      accountId,
      purpose: FEEDBACK_PURPOSE,
      terms,
      submitted,
      request: {
        title: input.title,
        body: input.body,
        actor: actorName(actor),
        resource: feedbackResource(deps),
      },
      deadline,
    });
    // A concurrent submission of the same authorization may have written the row first.
    assertSameRequest(outcome.row, accountId, submitted, input);
  }
  return finish(deps, terms, version, outcome);
}

/** What a second submission of a recorded authorization gets; another request or payer is refused. */
function sameRequestOutcome(
  existing: SettlementRow,
  accountId: string,
  submitted: SubmittedAuthorization,
  input: FeedbackInput,
): PaymentOutcome {
  assertSameRequest(existing, accountId, submitted, input);
  if (existing.status === 'settled') return { state: 'settled', row: existing };
  if (existing.status === 'failed') return { state: 'failed', row: existing };
  return { state: 'pending', row: existing };
}

/** Refuses a settlement row that is not this account's payment of this very request. */
function assertSameRequest(
  existing: SettlementRow,
  accountId: string,
  submitted: SubmittedAuthorization,
  input: FeedbackInput,
): void {
  const a = submitted.authorization;
  const request = existing.request;
  const same =
    existing.account_id === accountId &&
    existing.purpose === FEEDBACK_PURPOSE &&
    existing.payee === a.to.toLowerCase() &&
    existing.value === a.value.toString() &&
    existing.valid_after === a.validAfter.toString() &&
    existing.valid_before === a.validBefore.toString() &&
    request['title'] === input.title &&
    request['body'] === input.body;
  if (!same) {
    throw new AppError(
      'PAYMENT_INVALID',
      `The nonce ${a.nonce} of ${a.from} was already submitted for another payment or another feature ` +
        'request (invalid_transaction_state). Nothing was broadcast or credited.',
      {
        remediation:
          'To read the outcome of the first submission, retry it unchanged (same body, same payment header). ' +
          'For a new feature request, sign a new authorization with a fresh nonce.',
      },
    );
  }
}

async function finish(
  deps: FeedbackDeps,
  terms: PaymentTerms,
  version: X402Version,
  outcome: PaymentOutcome,
): Promise<PaidFeedbackResult> {
  if (outcome.state === 'pending') return { state: 'pending', row: outcome.row };
  const row = outcome.row;
  if (outcome.state === 'failed') {
    throw new AppError(
      'PAYMENT_INVALID',
      `The settlement of the feedback fee failed: ${row.fail_reason ?? 'unknown reason'}. Nothing was credited ` +
        'and no feature request was recorded.',
    );
  }
  const result = row.result ?? {};
  const id = typeof result['feature_request_id'] === 'string' ? result['feature_request_id'] : null;
  const txHash = row.tx_hash;
  if (!id || !txHash) throw new Error(`settled feedback payment ${row.id} has no recorded request`);
  // The request as it is now (an operator may have moved it to planned or shipped since).
  const current = await findFeatureRequest(deps.db, row.account_id, id);
  return {
    state: 'settled',
    receipt: {
      id,
      status: current?.status ?? 'open',
      charged_usd:
        typeof result['charged_usd'] === 'string' ? result['charged_usd'] : formatUsd(BigInt(row.value)),
      paid_ref: txHash,
    },
    paymentResponse: {
      name: X402_HEADERS[version].response,
      value: encodePaymentResponseHeader({
        success: true,
        transaction: txHash,
        network: networkOf(terms, version),
        payer: getAddress(row.payer),
      }),
    },
  };
}

interface PaidFeedbackRequest {
  title: string;
  body: string;
  actor: string;
  resource: string | null;
}

function paidRequestOf(row: SettlementRow): PaidFeedbackRequest {
  const r = row.request;
  const title = r['title'];
  const body = r['body'];
  if (typeof title !== 'string' || typeof body !== 'string') {
    throw new Error(`feedback settlement ${row.id} carries no title and body`);
  }
  return {
    title,
    body,
    actor: typeof r['actor'] === 'string' ? r['actor'] : 'system',
    resource: typeof r['resource'] === 'string' ? r['resource'] : null,
  };
}

/**
 * The effect of a settled feedback payment, in the transaction that marks it settled: the
 * payment is credited to the prepaid balance (identity: the authorization) and the fee debited
 * from it (`fee:feedback:<that identity>`), so the balance ends where it was and the ledger shows
 * both; then the feature request, the challenge it answered, its event and its audit fact.
 */
export const feedbackEffect: SettlementEffect = async (tx, clock: Clock, row, txHash) => {
  const request = paidRequestOf(row);
  const value = BigInt(row.value);
  const hash = txHash.toLowerCase();
  const creditId = authorizationSettlementId(row);
  const credit = await creditPrepaid(tx, clock, {
    accountId: row.account_id,
    amountMicroUsd: value,
    settlementId: creditId,
    memo: {
      source: 'x402',
      purpose: FEEDBACK_PURPOSE,
      settlement: row.id,
      payer: row.payer,
      tx_hash: hash,
      chain_id: row.chain_id,
    },
  });
  if (!credit.ok) throw new Error(`feedback payment ${row.id}: the ledger holds another booking for it`);
  await emitEvent(tx, clock, {
    accountId: row.account_id,
    kind: 'balance.credited',
    subject: row.id,
    payload: {
      source: 'x402',
      value_usd: formatUsd(value),
      balance_usd: credit.balanceMicro === null ? null : formatBalanceUsd(credit.balanceMicro),
      payer: row.payer,
      tx_hash: hash,
    },
  });
  const fee = await debitFee(tx, clock, {
    accountId: row.account_id,
    feeMicroUsd: value,
    product: 'feedback',
    settlementId: `fee:feedback:${creditId}`,
  });
  if (!fee.ok) throw new Error(`feedback payment ${row.id}: the fee could not be debited (${fee.reason})`);

  const id = newId('fr');
  const now = clock.now();
  await insertFeatureRequest(tx, {
    id,
    account_id: row.account_id,
    title: request.title,
    body: request.body,
    status: 'open',
    created_at: now,
    updated_at: now,
  });
  const challengeId = request.resource
    ? await markChallengeUsed(tx, clock, {
        accountId: row.account_id,
        resource: request.resource,
        amount: value,
        payee: row.payee,
        asset: row.token,
        settlementId: row.id,
        recordedAt: row.created_at,
      })
    : null;
  const chargedUsd = formatUsd(value);
  await emitEvent(tx, clock, {
    accountId: row.account_id,
    kind: 'feedback.created',
    subject: id,
    payload: {
      id,
      title: request.title,
      status: 'open',
      charged_usd: chargedUsd,
      paid_by: 'x402',
      paid_ref: hash,
    },
  });
  await recordAudit(tx, clock, {
    accountId: row.account_id,
    actor: request.actor,
    action: 'feedback.create',
    subject: id,
    details: {
      charged_usd: chargedUsd,
      paid_by: 'x402',
      paid_ref: hash,
      settlement: row.id,
      payer: row.payer,
      challenge: challengeId,
    },
  });
  return {
    feature_request_id: id,
    status: 'open',
    charged_usd: chargedUsd,
    paid_ref: hash,
    credit_group: credit.groupId,
    fee_group: fee.groupId,
    challenge: challengeId,
  };
};
