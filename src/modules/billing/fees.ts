// The fee schedule (docs/fees.md) and charging a fee on a metered route: debited from the prepaid
// balance in the caller's transaction, or nothing at all when an operator switched metering off.

import type { RawBuilder } from 'kysely';
import type { Config } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import type { Db, DbExecutor } from '../../core/db/database.ts';
import { formatUsd } from '../../core/money.ts';
import { groupBatcher, type BookingGuard } from '../ledger/index.ts';
import { debitFee, debitFeeAlone, paymentRequired, type DebitFeeResult } from './prepaid.ts';
import { meteringEnforced } from './settings.ts';

export type MeteredProduct = 'conversion_intent' | 'pm_order' | 'feedback';

export interface PublishedFeeSchedule {
  metering_enforced: boolean;
  currency: 'USD';
  fees: {
    conversion_intent: { per_intent_usd: string };
    pm_order: { base_usd: string; bps: number };
    feedback: { per_request_usd: string };
  };
}

export function publishedFeeSchedule(config: Config, enforced: boolean): PublishedFeeSchedule {
  return {
    metering_enforced: enforced,
    currency: 'USD',
    fees: {
      conversion_intent: { per_intent_usd: formatUsd(config.fees.conversionIntentMicro) },
      pm_order: { base_usd: formatUsd(config.fees.pmOrderBaseMicro), bps: config.fees.pmOrderBps },
      feedback: { per_request_usd: formatUsd(config.fees.feedbackMicro) },
    },
  };
}

/** The fee of a prediction-market order of `notionalMicro` USD: base plus bps of the notional, rounded up. */
export function pmOrderFeeMicro(config: Config, notionalMicro: bigint): bigint {
  if (notionalMicro < 0n) throw new RangeError('pmOrderFeeMicro: the notional cannot be negative');
  const bps = BigInt(config.fees.pmOrderBps);
  return config.fees.pmOrderBaseMicro + (notionalMicro * bps + 9_999n) / 10_000n;
}

export function productFeeMicro(config: Config, product: Exclude<MeteredProduct, 'pm_order'>): bigint {
  return product === 'feedback' ? config.fees.feedbackMicro : config.fees.conversionIntentMicro;
}

export interface ChargeFeeParameters {
  accountId: string;
  product: MeteredProduct;
  feeMicroUsd: bigint;
  /** The fee's identity: charged once (`fee:<product>:<resource id>`). */
  settlementId: string;
  wallet?: string | null;
  policyHash?: string | null;
  /** The fee group's id, when the caller names it in what it records. */
  groupId?: string;
  /**
   * What the fee pays for, as SQL calls recorded in the fee's own statement (see postGroup's
   * `then`): one round trip for the debit and the write. With metering off they are NOT run: the
   * caller records them itself (`charged: false`).
   */
  then?: RawBuilder<unknown>[];
}

export type ChargeFeeResult =
  | {
      charged: true;
      feeMicroUsd: bigint;
      groupId: string;
      balanceMicro: bigint | null;
      /** Booked before under the same settlement: nothing new was written, `then` did not run. */
      replayed: boolean;
    }
  | { charged: false; reason: 'metering_off' };

/**
 * Charges a metered fee in the caller's transaction (`deps.db` is only the settings cache's key). Throws PAYMENT_REQUIRED (402, with a `next`
 * at the top-up) when the balance does not cover it: nothing is debited then. With metering
 * switched off, nothing is debited and `charged` is false.
 */
export async function chargeFee(
  tx: DbExecutor,
  deps: { config: Config; clock: Clock; db: DbExecutor },
  params: ChargeFeeParameters,
): Promise<ChargeFeeResult> {
  if (!(await meteringEnforced(tx, deps.db, deps.config, deps.clock.now().getTime()))) {
    return { charged: false, reason: 'metering_off' };
  }
  return chargeOutcome(params, await debitFee(tx, deps.clock, params));
}

/**
 * The same charge when the fee and its `then` calls are the whole write: booked in its own commit
 * through the ledger's batcher (group commit with concurrent fees), outside any transaction, with
 * `guard`'s calls around the booking (a request's Idempotency-Key). With metering off nothing is
 * written (`charged: false`): the caller records in a transaction.
 */
export async function chargeFeeAlone(
  deps: { config: Config; clock: Clock; db: Db },
  params: ChargeFeeParameters,
  guard?: BookingGuard,
): Promise<ChargeFeeResult> {
  if (!(await meteringEnforced(deps.db, deps.db, deps.config, deps.clock.now().getTime()))) {
    return { charged: false, reason: 'metering_off' };
  }
  return chargeOutcome(params, await debitFeeAlone(groupBatcher(deps.db), deps.clock, params, guard));
}

function chargeOutcome(params: ChargeFeeParameters, res: DebitFeeResult): ChargeFeeResult {
  if (res.ok) {
    return {
      charged: true,
      feeMicroUsd: params.feeMicroUsd,
      groupId: res.groupId,
      balanceMicro: res.balanceMicro,
      replayed: res.replayed,
    };
  }
  if (res.reason === 'insufficient') throw paymentRequired(res);
  throw new Error(`fee ${params.settlementId} was booked before with other terms`);
}
