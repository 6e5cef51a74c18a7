// Prepaid top-ups: an EIP-3009 authorization paying USDC to the platform treasury, admitted
// against the per-account and platform-wide caps, settled on-chain, and credited only once the
// transfer is confirmed (the `topup` settlement effect).

import { sql } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor, Tx } from '../../core/db/database.ts';
import { AppError } from '../../core/errors/app-error.ts';
import type { Actor } from '../../core/http/actor.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { formatUsd } from '../../core/money.ts';
import { recordAudit } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import {
  findExistingSettlement,
  openSettlementsSql,
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
  TRANSFER_WITH_AUTHORIZATION_TYPES,
} from '../payments/index.ts';
import { findArrowByNonce } from './auto-topup-store.ts';
import { prepaidBalanceSql, prepaidFloatSql } from '../ledger/index.ts';
import { creditPrepaid, formatBalanceUsd, readPrepaidBalance } from './prepaid.ts';
import { accountPrepaidCap, readBillingSettings } from './settings.ts';

/** The smallest top-up: one cent (USDC base units, which are micro-USD). */
export const MIN_TOPUP_MICRO = 10_000n;
/** Settlement purposes whose value lands in a prepaid balance (counted against the caps while open). */
export const CREDITING_PURPOSES = ['topup', 'auto_topup'];

/** The ledger settlement identity of a credit paid by an authorization: the authorization itself. */
export function authorizationSettlementId(row: SettlementRow): string {
  return `eip3009:${row.chain_id}:${row.payer}:${row.nonce}`;
}

/**
 * Refuses a credit that would push the account's cap or the platform float cap, counting what is
 * already on its way in (unfinished settlements). Serialized by one advisory lock, so two
 * concurrent top-ups cannot both squeeze under a cap. Throws LIMIT_EXCEEDED naming the cap.
 */
export async function admitPrepaidCredit(
  tx: Tx,
  deps: Pick<PaymentsDeps, 'config'>,
  accountId: string,
  valueMicro: bigint,
): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext('purser.prepaid_caps'))`.execute(tx);
  const settings = await readBillingSettings(tx, deps.config);
  const cap = await accountPrepaidCap(tx, settings, accountId);
  // One statement, so one snapshot: a settlement finishing meanwhile is counted either as open or
  // in the balance it credited, never in neither. The ledger and the payments module give the
  // expressions; the statement is billing's.
  const totals = await sql<{
    account_balance: string;
    float: string;
    open_account: string;
    open_all: string;
  }>`
    SELECT
      ${prepaidBalanceSql(accountId)} AS account_balance,
      ${prepaidFloatSql()} AS float,
      ${openSettlementsSql(CREDITING_PURPOSES, accountId)} AS open_account,
      ${openSettlementsSql(CREDITING_PURPOSES)} AS open_all`.execute(tx);
  const row = totals.rows[0];
  if (!row) throw new Error('prepaid cap totals: no row');
  const openAccount = BigInt(row.open_account);
  const openAll = BigInt(row.open_all);
  const accountBalance = BigInt(row.account_balance);
  if (accountBalance + openAccount + valueMicro > cap) {
    throw new AppError(
      'LIMIT_EXCEEDED',
      `This top-up of ${formatUsd(valueMicro)} USD would push the account's prepaid balance past its cap of ` +
        `${formatUsd(cap)} USD (balance ${formatUsd(accountBalance)} USD` +
        `${openAccount > 0n ? `, ${formatUsd(openAccount)} USD settling` : ''}). Nothing was broadcast; ` +
        'the authorization is unused.',
      {
        remediation: `Top up at most ${formatUsd(cap > accountBalance + openAccount ? cap - accountBalance - openAccount : 0n)} USD, with a new authorization or this one after spending.`,
      },
    );
  }
  const float = BigInt(row.float);
  if (float + openAll + valueMicro > settings.floatCapMicro) {
    throw new AppError(
      'LIMIT_EXCEEDED',
      `The platform-wide prepaid float cap of ${formatUsd(settings.floatCapMicro)} USD would be exceeded by ` +
        `this top-up of ${formatUsd(valueMicro)} USD. Nothing was broadcast; the authorization is unused.`,
      { remediation: 'Top up a smaller amount, or retry later; the operator may raise the float cap.' },
    );
  }
}

/** What a top-up settlement looks like on the wire (201 and the replays of a settled one). */
export interface TopupView {
  id: string;
  status: 'settled';
  payer: string;
  value_usd: string;
  nonce: string;
  tx_hash: string;
  settled_at: string;
}

export type TopupResult =
  | { state: 'created' | 'existing'; topup: TopupView; balanceMicro: bigint }
  | { state: 'pending'; row: SettlementRow };

function topupView(row: SettlementRow): TopupView {
  return {
    id: row.id,
    status: 'settled',
    payer: row.payer,
    value_usd: formatUsd(BigInt(row.value)),
    nonce: row.nonce,
    tx_hash: row.tx_hash ?? '',
    settled_at: (row.settled_at ?? row.updated_at).toISOString(),
  };
}

/**
 * Refuses, as a top-up or an x402 payment, an authorization that is an arrow in an auto-top-up
 * quiver (any state): the quiver keeps it for a later top-up, which would fail on a nonce already
 * used, and count as a failure towards suspension. Arrows are refused the other way round when
 * added (addArrows).
 */
export async function refuseQuiverAuthorization(
  db: DbExecutor,
  terms: PaymentTerms,
  submitted: SubmittedAuthorization,
): Promise<void> {
  const a = submitted.authorization;
  const arrow = await findArrowByNonce(
    db,
    terms.chainId,
    terms.asset.toLowerCase(),
    a.from.toLowerCase(),
    a.nonce,
  );
  if (!arrow) return;
  throw new AppError(
    'PAYMENT_INVALID',
    `The nonce ${a.nonce} of ${a.from} was already submitted as an auto-top-up arrow (invalid_transaction_state). ` +
      'Nothing was broadcast or credited.',
    { remediation: 'Sign a new authorization with a fresh random nonce; the arrow stays in the quiver.' },
  );
}

/**
 * Tops up the prepaid balance. Throws PAYMENT_INVALID (a check failed, or the settlement failed:
 * nothing credited), LIMIT_EXCEEDED (a cap; nothing broadcast), UNAVAILABLE (payments not
 * configured, chain unreadable), DEADLINE_EXCEEDED (nothing transmitted).
 */
export async function topUp(
  deps: PaymentsDeps,
  effects: SettlementEffects,
  actor: Actor,
  submitted: SubmittedAuthorization,
  deadline: Deadline,
): Promise<TopupResult> {
  const accountId = actor.principal.accountId;
  const terms = await paymentTerms(deps);
  const existing = await findExistingSettlement(deps.db, terms, submitted);
  let outcome: PaymentOutcome;
  if (existing) {
    const a = submitted.authorization;
    const same =
      existing.account_id === accountId &&
      existing.purpose === 'topup' &&
      existing.payee === a.to.toLowerCase() &&
      existing.value === a.value.toString() &&
      existing.valid_after === a.validAfter.toString() &&
      existing.valid_before === a.validBefore.toString();
    if (!same) {
      throw new AppError(
        'PAYMENT_INVALID',
        `The nonce ${a.nonce} of ${a.from} was already submitted for another payment (invalid_transaction_state). ` +
          'Nothing was broadcast or credited.',
      );
    }
    outcome =
      existing.status === 'settled'
        ? { state: 'settled', row: existing }
        : { state: 'pending', row: existing };
    if (existing.status === 'failed') outcome = { state: 'failed', row: existing };
  } else {
    await refuseQuiverAuthorization(deps.db, terms, submitted);
    await verifyAuthorization(deps, terms, submitted, {
      atLeast: MIN_TOPUP_MICRO,
      atMost: 1_000_000_000_000n * 1_000_000n,
    });
    outcome = await submitPayment(deps, effects, {
      accountId,
      purpose: 'topup',
      terms,
      submitted,
      request: { actor: actorLabel(actor) },
      admit: (tx) => admitPrepaidCredit(tx, deps, accountId, submitted.authorization.value),
      deadline,
    });
  }
  if (outcome.state === 'failed') {
    throw new AppError(
      'PAYMENT_INVALID',
      `The top-up's settlement failed: ${outcome.row.fail_reason ?? 'unknown reason'}. Nothing was credited.`,
    );
  }
  if (outcome.state === 'pending') return { state: 'pending', row: outcome.row };
  const balance = await readPrepaidBalance(deps.db, accountId);
  return {
    state: existing ? 'existing' : 'created',
    topup: topupView(outcome.row),
    balanceMicro: balance.balanceMicro,
  };
}

function actorLabel(actor: Actor): string {
  return `${actor.principal.kind}:${actor.principal.credentialId}`;
}

/** The 202 body: the outcome is unknown; the reconciler finishes it from chain truth. */
export function pendingSettlementBody(row: SettlementRow, what: string) {
  return {
    settlement_status: 'pending' as const,
    nonce: row.nonce,
    value_usd: formatUsd(BigInt(row.value)),
    remediation:
      `The settlement of this ${what} was broadcast or is about to be, and its outcome is not known yet. ` +
      'Do not sign a new authorization: retry the same request (same authorization) in a few seconds to read ' +
      'the outcome; it is reconciled from the chain either way.',
  };
}

/** The effect of a settled top-up: the prepaid credit, its event and its audit fact. */
export const topupEffect: SettlementEffect = async (tx, clock: Clock, row, txHash) => {
  const credit = await creditPrepaid(tx, clock, {
    accountId: row.account_id,
    amountMicroUsd: BigInt(row.value),
    settlementId: authorizationSettlementId(row),
    kind: row.purpose === 'auto_topup' ? 'topup.auto' : 'topup',
    memo: { settlement: row.id, payer: row.payer, tx_hash: txHash.toLowerCase(), chain_id: row.chain_id },
  });
  if (!credit.ok)
    throw new Error(`top-up ${row.id}: the ledger holds another booking for this authorization`);
  const balanceUsd = credit.balanceMicro === null ? null : formatBalanceUsd(credit.balanceMicro);
  await emitEvent(tx, clock, {
    accountId: row.account_id,
    kind: 'balance.credited',
    subject: row.id,
    payload: {
      source: row.purpose,
      value_usd: formatUsd(BigInt(row.value)),
      balance_usd: balanceUsd,
      payer: row.payer,
      tx_hash: txHash.toLowerCase(),
    },
  });
  await recordAudit(tx, clock, {
    accountId: row.account_id,
    actor: typeof row.request.actor === 'string' ? row.request.actor : 'system',
    action: row.purpose === 'auto_topup' ? 'balance.auto_topup' : 'balance.topup',
    subject: row.id,
    details: { value_usd: formatUsd(BigInt(row.value)), tx_hash: txHash.toLowerCase(), payer: row.payer },
  });
  return { credit_group: credit.groupId, balance_usd: balanceUsd };
};

/**
 * What an agent needs to sign a top-up: chain, asset, the EIP-712 domain, types and primary type of
 * the authorization, payee, limits.
 */
export async function topupTerms(deps: PaymentsDeps, accountId: string) {
  const terms: PaymentTerms = await paymentTerms(deps);
  const settings = await readBillingSettings(deps.db, deps.config);
  const cap = await accountPrepaidCap(deps.db, settings, accountId);
  return {
    chain_id: terms.chainId,
    network: terms.network,
    asset: terms.asset,
    pay_to: terms.payee,
    eip712_domain: {
      name: terms.domain.name,
      version: terms.domain.version,
      chainId: terms.chainId,
      verifyingContract: terms.asset,
    },
    // The typed data to sign, in the shape viem's signTypedData and ethers' signTypedData take.
    eip712_types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primary_type: 'TransferWithAuthorization' as const,
    min_value: MIN_TOPUP_MICRO.toString(),
    min_validity_seconds: terms.minValiditySeconds,
    account_cap_usd: formatUsd(cap),
  };
}
