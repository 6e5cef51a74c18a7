// The prepaid USD balance of an account: metered fees are debited from it and top-ups credit it.
// Both are ledger groups (account prepaid ↔ platform fee revenue or treasury) booked by one call
// of purser_ledger_post, which moves the account's balance row in the statement that checks it
// (a conditional UPDATE … WHERE balance − held ≥ fee): under any number of concurrent debits the
// balance never goes below zero and each debit either fully happens or answers `insufficient`.
// Fee revenue has no balance row of its own: it is the sum of its entries.

import type { RawBuilder } from 'kysely';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { AppError } from '../../core/errors/app-error.ts';
import { newId } from '../../core/ids.ts';
import { formatUsd } from '../../core/money.ts';
import { eventCall, type EventCall } from '../events/index.ts';
import {
  FEE_REVENUE,
  postGroup,
  prepaidAccount,
  transfer,
  TREASURY,
  USD,
  type BookingGuard,
  type GroupBatcher,
  type PostGroupParameters,
  type PostGroupResult,
} from '../ledger/index.ts';

const PRODUCT = /^[a-z][a-z0-9_]{0,47}$/;

export interface DebitFeeParameters {
  accountId: string;
  feeMicroUsd: bigint;
  /** The metered product (`conversion_intent`, `pm_order`, `feedback`): the group's kind is `fee.<product>`. */
  product: string;
  /** The fee's identity (`fee:<request or resource id>`): debited once. */
  settlementId: string;
  /** The active policy hash when the fee comes from a policed action. */
  policyHash?: string | null;
  /** The wallet whose action the fee is for: kept lowercase as `memo.wallet` (its statement shows it). */
  wallet?: string | null;
  /** The fee group's id, when the caller names it in what it records (default: a new one). */
  groupId?: string;
  /** SQL calls recorded in the fee's own statement when it is booked (see postGroup's `then`). */
  then?: RawBuilder<unknown>[];
}

export type DebitFeeResult =
  | {
      ok: true;
      groupId: string;
      /** The fee was debited before under this settlement identity: nothing new was written. */
      replayed: boolean;
      /** The balance after the debit (null on a replay). */
      balanceMicro: bigint | null;
    }
  | { ok: false; reason: 'insufficient'; feeMicroUsd: bigint; availableMicro: bigint }
  | { ok: false; reason: 'conflict'; groupId: string };

/**
 * Debits a fee from the account's prepaid balance in the caller's transaction: one round trip,
 * one ledger group `account:<id>:prepaid` → `platform:fee_revenue`. `insufficient` writes nothing;
 * the route answers it with `paymentRequired` (402).
 */
export async function debitFee(
  tx: DbExecutor,
  clock: Clock,
  params: DebitFeeParameters,
): Promise<DebitFeeResult> {
  const { group, debited } = feeGroup(clock, params);
  const result = await postGroup(tx, clock, group);
  if (result.ok && !result.replayed) debited.committed(tx);
  return debitOutcome(params, result);
}

/**
 * The same debit booked in its own commit through the ledger's batcher (group commit with
 * concurrent fees: src/modules/ledger/batcher.ts). Never inside a transaction.
 */
export async function debitFeeAlone(
  batcher: GroupBatcher,
  clock: Clock,
  params: DebitFeeParameters,
  guard?: BookingGuard,
): Promise<DebitFeeResult> {
  const { group, debited } = feeGroup(clock, params);
  const result = await batcher.post(clock, group, guard);
  if (result.ok && !result.replayed) debited.committed(batcher.db);
  return debitOutcome(params, result);
}

/** The fee's ledger group, with its `balance.debited` event and the caller's `then` calls. */
function feeGroup(
  clock: Clock,
  params: DebitFeeParameters,
): { group: PostGroupParameters; debited: EventCall } {
  if (params.feeMicroUsd <= 0n) throw new RangeError('debitFee: the fee must be positive');
  if (!PRODUCT.test(params.product)) throw new RangeError(`debitFee: bad product ${params.product}`);
  if (params.wallet != null && !/^0x[0-9a-fA-F]{40}$/.test(params.wallet))
    throw new RangeError(`debitFee: bad wallet ${params.wallet}`);
  const groupId = params.groupId ?? newId('lgr');
  const debited = eventCall(clock, {
    accountId: params.accountId,
    kind: 'balance.debited',
    subject: groupId,
    payload: {
      product: params.product,
      fee_usd: formatUsd(params.feeMicroUsd),
      group_id: groupId,
      wallet: params.wallet?.toLowerCase() ?? null,
    },
  });
  const group: PostGroupParameters = {
    settlementId: params.settlementId,
    accountId: params.accountId,
    kind: `fee.${params.product}`,
    entries: transfer(prepaidAccount(params.accountId), FEE_REVENUE, USD, params.feeMicroUsd),
    policyHash: params.policyHash ?? null,
    groupId,
    // The debit's event is recorded in the booking's own statement, with what the fee paid for.
    then: [debited.call, ...(params.then ?? [])],
    memo: params.wallet
      ? { product: params.product, wallet: params.wallet.toLowerCase() }
      : { product: params.product },
  };
  return { group, debited };
}

function debitOutcome(params: DebitFeeParameters, result: PostGroupResult): DebitFeeResult {
  if (result.ok) {
    return {
      ok: true,
      groupId: result.groupId,
      replayed: result.replayed,
      balanceMicro: result.prepaid?.balanceMicro ?? null,
    };
  }
  if (result.reason === 'insufficient') {
    return {
      ok: false,
      reason: 'insufficient',
      feeMicroUsd: params.feeMicroUsd,
      availableMicro: result.availableMicro,
    };
  }
  return result;
}

export interface CreditPrepaidParameters {
  accountId: string;
  amountMicroUsd: bigint;
  /** The credit's identity (the EIP-3009 authorization nonce, the settlement tx): credited once. */
  settlementId: string;
  /** The group's kind: `topup` (default) or `topup.auto`. */
  kind?: 'topup' | 'topup.auto';
  memo?: Record<string, unknown>;
}

export type CreditPrepaidResult =
  | { ok: true; groupId: string; replayed: boolean; balanceMicro: bigint | null }
  | { ok: false; reason: 'conflict'; groupId: string };

/**
 * Credits the account's prepaid balance (a confirmed top-up): one group `platform:treasury` →
 * `account:<id>:prepaid`, once per settlement identity. Caps are the caller's to check first.
 */
export async function creditPrepaid(
  tx: DbExecutor,
  clock: Clock,
  params: CreditPrepaidParameters,
): Promise<CreditPrepaidResult> {
  if (params.amountMicroUsd <= 0n) throw new RangeError('creditPrepaid: the amount must be positive');
  const result = await postGroup(tx, clock, {
    settlementId: params.settlementId,
    accountId: params.accountId,
    kind: params.kind ?? 'topup',
    entries: transfer(TREASURY, prepaidAccount(params.accountId), USD, params.amountMicroUsd),
    ...(params.memo ? { memo: params.memo } : {}),
  });
  if (result.ok) {
    return {
      ok: true,
      groupId: result.groupId,
      replayed: result.replayed,
      balanceMicro: result.prepaid?.balanceMicro ?? null,
    };
  }
  if (result.reason === 'conflict') return result;
  throw new Error('creditPrepaid: a credit cannot be insufficient');
}

// The balance itself is the ledger's (prepaid_balances).
export { readPrepaidBalance, type PrepaidBalance } from '../ledger/index.ts';

/** Micro-USD as the wire's balance string: always six decimals (`12500000n` → `"12.500000"`). */
export function formatBalanceUsd(micro: bigint): string {
  const negative = micro < 0n;
  const abs = negative ? -micro : micro;
  return `${negative ? '-' : ''}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, '0')}`;
}

/**
 * The 402 for a fee the prepaid balance does not cover: the error body with code
 * `PAYMENT_REQUIRED` and the code's default `next` (top-up terms, top-up, development faucet).
 */
export function paymentRequired(shortfall: { feeMicroUsd: bigint; availableMicro: bigint }): AppError {
  return new AppError(
    'PAYMENT_REQUIRED',
    `The prepaid balance (${formatBalanceUsd(shortfall.availableMicro)} USD) does not cover the fee of ` +
      `${formatBalanceUsd(shortfall.feeMicroUsd)} USD.`,
    // No `next` here: the error table's default names the top-up terms, the top-up and, in
    // development, the faucet with the chain to fund (src/core/errors/codes.ts).
  );
}
