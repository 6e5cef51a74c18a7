// The auto-top-up limits and the account's auto-top-up state as the API shows it (spec section 2),
// with the calendar and naming helpers the other auto-top-up files share.

import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import type { Actor } from '../../core/http/actor.ts';
import { formatUsd } from '../../core/money.ts';
import {
  countFiredSince,
  findRule,
  listArrows,
  quiverCounts,
  type ArrowRow,
  type ArrowStatus,
} from './auto-topup-store.ts';

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

export function monthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

export function nextMonthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

export function unixSeconds(at: Date): bigint {
  return BigInt(Math.floor(at.getTime() / 1000));
}

export function actorLabel(actor: Actor): string {
  return `${actor.principal.kind}:${actor.principal.credentialId}`;
}

/** What the audit log records of each arrow added or removed: never its signature. */
export function arrowAuditItem(a: Pick<ArrowRow, 'id' | 'nonce' | 'payer' | 'value'>) {
  return { id: a.id, nonce: a.nonce, payer: a.payer, value_usd: formatUsd(BigInt(a.value)) };
}

export function arrowView(a: ArrowRow): ArrowView {
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
