// Intents: what an intent is (the spec's Intent from a stored row, the create request, the
// dependencies), its reads, and cancel. Admission is admission.ts's. No HTTP here. The executor
// is another module.

import { actorName } from '../../core/http/actor.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import type { Db, DbExecutor } from '../../core/db/database.ts';
import { notFound } from '../../core/errors/app-error.ts';
import type { Actor } from '../../core/http/actor.ts';
import { formatUsd } from '../../core/money.ts';
import { recordAudit } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import { reverseGroup } from '../ledger/index.ts';
import { releaseReservation } from '../policies/index.ts';
import type { PriceReferences } from '../prices/index.ts';
import type { TokenRegistry } from '../registry/index.ts';
import { approvalsOf } from './approvals.ts';
import {
  cancelPlannedIntent,
  findIntent,
  findIntentToRead,
  listIntentRows,
  type IntentKind,
  type IntentParams,
  type IntentRow,
  type IntentStatus,
} from './store.ts';

/** The native coin of a chain, as gas top-ups name it (the buy token). */
export const NATIVE_PLACEHOLDER = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
export { EXECUTE_JOB } from './job-names.ts';

/** The Intent of the spec (section 2). */
export interface Intent {
  id: string;
  wallet: string;
  kind: IntentKind;
  status: IntentStatus;
  policy_version: number;
  policy_hash: string;
  params: IntentParams & { fee_usd: string };
  report: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface CreateIntentRequest {
  wallet: string;
  kind: IntentKind;
  sell_token: string;
  buy_token: string;
  sell_amount: string;
  max_slippage_bps?: number;
  venues?: string[];
}

export interface IntentDeps {
  config: Config;
  clock: Clock;
  db: Db;
  registry: TokenRegistry;
  prices: PriceReferences | undefined;
}

export function toIntent(row: IntentRow): Intent {
  return {
    id: row.id,
    wallet: row.wallet,
    kind: row.kind,
    status: row.status,
    policy_version: row.policy_version,
    policy_hash: row.policy_hash,
    params: { ...row.params, fee_usd: formatUsd(BigInt(row.fee_micro_usd)) },
    report: row.report,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The account's intent (one round trip unless it waited for approvers), or 404. */
export async function getIntent(db: DbExecutor, accountId: string, id: string): Promise<Intent> {
  const found = await findIntentToRead(db, accountId, id);
  if (!found) throw notFound(`No intent ${id} on this account.`);
  const intent = toIntent(found.row);
  return found.waitedForApproval ? (await withApprovals(db, [intent]))[0]! : intent;
}

/** The intents with `report.approval` where they waited (or wait) for approvers. */
async function withApprovals(db: DbExecutor, intents: Intent[]): Promise<Intent[]> {
  const approvals = await approvalsOf(
    db,
    intents.map((i) => i.id),
  );
  if (approvals.size === 0) return intents;
  return intents.map((i) => {
    const approval = approvals.get(i.id);
    return approval ? { ...i, report: { ...i.report, approval } } : i;
  });
}

export async function listIntents(
  db: DbExecutor,
  accountId: string,
  wallet: string | null,
  limit: number,
  offset: number,
): Promise<Intent[]> {
  const rows = await listIntentRows(db, accountId, wallet?.toLowerCase() ?? null, limit, offset);
  return withApprovals(db, rows.map(toIntent));
}

/**
 * Cancels a planned intent in the caller's transaction: releases its spend reservation, reverses
 * its fee, emits `intent.cancelled` and records an audit fact. NOT_FOUND when the account has no
 * such intent or it is no longer planned. Never refused by a switch.
 */
export async function cancelIntent(tx: DbExecutor, clock: Clock, actor: Actor, id: string): Promise<Intent> {
  const accountId = actor.principal.accountId;
  const current = await findIntent(tx, accountId, id, true);
  if (!current || current.status !== 'planned') {
    throw notFound(
      current
        ? `Intent ${id} is ${current.status}: only a planned intent can be cancelled.`
        : `No intent ${id} on this account.`,
    );
  }
  const row = await cancelPlannedIntent(tx, accountId, id, clock.now());
  if (!row) throw notFound(`Intent ${id} is no longer planned: only a planned intent can be cancelled.`);
  const released = row.reservation_id
    ? await releaseReservation(tx, clock, { accountId, reservationId: row.reservation_id })
    : { ok: false };
  let feeReversed = false;
  if (row.fee_group_id) {
    const reversed = await reverseGroup(tx, clock, {
      groupId: row.fee_group_id,
      accountId,
      reason: `intent ${id} cancelled`,
    });
    if (!reversed.ok) throw new Error(`fee of intent ${id} could not be reversed: ${reversed.reason}`);
    feeReversed = true;
  }
  const intent = toIntent(row);
  const facts = {
    id,
    wallet: row.wallet,
    kind: row.kind,
    reservation_released: released.ok,
    fee_reversed_usd: feeReversed ? intent.params.fee_usd : '0',
  };
  await emitEvent(tx, clock, { accountId, kind: 'intent.cancelled', subject: id, payload: facts });
  await recordAudit(tx, clock, {
    accountId,
    actor: actorName(actor),
    action: 'intent.cancelled',
    subject: id,
    details: facts,
    network: actor.network,
  });
  return intent;
}
