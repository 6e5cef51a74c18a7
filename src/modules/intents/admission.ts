// Intents' admission: a conversion or a gas top-up admitted under the wallet's active policy (one
// transaction: switches, policy, registry, rules, USD valuation, spend reservation, fee, row,
// event, executor job), on its two paths (admitIntent in the caller's transaction, admitIntentAlone
// in one statement batched with the ledger's bookings) that write the same things
// (admissionWrites), from the context both read first. What it checks before writing is
// admission-checks.ts's; what an intent is, its reads and its cancel are service.ts's. No HTTP here.

import { sql, type RawBuilder } from 'kysely';
import { withTransaction, type Db, type DbExecutor } from '../../core/db/database.ts';
import { ReadBatcher } from '../../core/db/read-batcher.ts';
import type { Actor } from '../../core/http/actor.ts';
import type { StatementKey } from '../../core/http/idempotency.ts';
import { jobCall } from '../../core/jobs/index.ts';
import { auditCall, type RecordAuditParameters } from '../audit/index.ts';
import { chargeFee, chargeFeeAlone } from '../billing/index.ts';
import { eventCall, type EventCall } from '../events/index.ts';
import { releaseSpendCall, reservationRefusal, reserveSpend, reserveSpendGuard } from '../policies/index.ts';
import {
  planAdmission,
  queueDepthStale,
  rememberQueueDepth,
  reservationRefused,
  type DispatchRefused,
} from './admission-checks.ts';
import { requestApproval } from './approvals.ts';
import { EXECUTE_JOB, toIntent, type CreateIntentRequest, type Intent, type IntentDeps } from './service.ts';
import {
  insertIntent,
  intentCall,
  readAdmissionContext,
  readAdmissionContexts,
  type AdmissionContext,
  type IntentRow,
} from './store.ts';
export { DispatchRefused } from './admission-checks.ts';

/**
 * The context admission reads first: one statement (the global queue depth only when stale).
 * Inside a transaction (`tx`) it reads there; otherwise through the process's read batcher, so
 * concurrent admissions share one statement.
 */
async function admissionContext(
  deps: IntentDeps,
  accountId: string,
  wallet: string,
  tx?: DbExecutor,
): Promise<AdmissionContext> {
  const key = { accountId, wallet: wallet.toLowerCase() };
  const context = tx
    ? await readAdmissionContext(
        tx,
        key.accountId,
        key.wallet,
        EXECUTE_JOB,
        deps.config.intentQueue,
        queueDepthStale(deps),
      )
    : await contextBatcher(deps).read(key);
  if (context.openJobs !== null) rememberQueueDepth(deps, context.openJobs);
  return context;
}

const contextBatchers = new WeakMap<
  object,
  ReadBatcher<{ accountId: string; wallet: string }, AdmissionContext>
>();

function contextBatcher(deps: IntentDeps) {
  let batcher = contextBatchers.get(deps.db);
  if (!batcher) {
    batcher = new ReadBatcher((keys) =>
      readAdmissionContexts(deps.db, keys, EXECUTE_JOB, deps.config.intentQueue, queueDepthStale(deps)),
    );
    contextBatchers.set(deps.db, batcher);
  }
  return batcher;
}

/**
 * Admits an intent in the caller's transaction: planAdmission's checks, then the spend
 * reservation (422 BUDGET_EXCEEDED naming the cap) and the fee (402), the row, its
 * `intent.planned` event, an audit fact and the executor's job. The path for metering off (no fee
 * to book); admitIntentAlone is the fast one.
 */
export async function admitIntent(
  tx: DbExecutor,
  deps: IntentDeps,
  actor: Actor,
  body: CreateIntentRequest,
): Promise<Intent> {
  const context = await admissionContext(deps, actor.principal.accountId, body.wallet, tx);
  const admission = await planAdmission(tx, deps, actor, body, context);
  const { row, facts } = admission;
  const reserved = await reserveSpend(tx, deps.clock, admission.reservation);
  if (!reserved.ok) throw reservationRefused(row.wallet, reserved);
  const fee = await chargeFee(tx, deps, admission.fee);
  const charged: IntentRow = {
    ...row,
    fee_group_id: fee.charged ? fee.groupId : null,
    fee_micro_usd: (fee.charged ? fee.feeMicroUsd : 0n).toString(),
  };
  const intent = toIntent(charged);
  const writes = admissionWrites(
    deps,
    charged,
    { ...facts, fee_usd: intent.params.fee_usd },
    admission.audit,
    // An intent that waits for approval gets no executor job until its quorum is reached.
    admission.approval === null,
  );
  for (const call of writes.calls) await sql`SELECT ${call}`.execute(tx);
  writes.planned.committed(tx);
  if (admission.approval) {
    const approval = await requestApproval(tx, deps.clock, charged, admission.approval);
    return { ...intent, report: { ...intent.report, approval } };
  }
  return intent;
}

/**
 * What admitting an intent writes besides the spend reservation and the fee, as SQL calls in the
 * order they run: the row, its `intent.planned` event, the audit fact and the executor's job. The
 * one definition of those writes, so the two paths cannot drift: admitIntentAlone hands them to
 * the fee's booking statement (the ledger runs them after the booking, in the same statement);
 * admitIntent runs them in its transaction after booking the fee. `planned.committed` writes the
 * event's log line once they have committed.
 */
export interface AdmissionWrites {
  calls: RawBuilder<unknown>[];
  planned: EventCall;
}

export function admissionWrites(
  deps: Pick<IntentDeps, 'clock'>,
  row: IntentRow,
  facts: Record<string, unknown>,
  audit: RecordAuditParameters,
  dispatch = true,
): AdmissionWrites {
  const planned = eventCall(deps.clock, {
    accountId: row.account_id,
    kind: 'intent.planned',
    subject: row.id,
    payload: facts,
  });
  return {
    planned,
    calls: [
      intentCall(row),
      planned.call,
      auditCall(deps.clock, { ...audit, details: facts }).call,
      ...(dispatch
        ? [jobCall(deps.clock, { name: EXECUTE_JOB, payload: { intent_id: row.id }, singletonKey: row.id })]
        : []),
    ],
  };
}

/**
 * The same admission in two round trips: one statement reads the context (policy, queue depth),
 * then ONE statement committing alone, batched with concurrent bookings through the ledger's
 * batcher, claims the Idempotency-Key (`key`), reserves the spend (its guard: a refusal raises
 * and writes nothing), books the fee and records the row, its event, the audit fact, the job and
 * the stored answer. Null when metering is off (nothing booked, nothing written): admit with
 * admitIntent in a transaction instead.
 */
export async function admitIntentAlone(
  deps: IntentDeps,
  actor: Actor,
  body: CreateIntentRequest,
  key: StatementKey | null,
): Promise<Intent | null> {
  const context = await admissionContext(deps, actor.principal.accountId, body.wallet);
  const admission = await planAdmission(deps.db, deps, actor, body, context);
  // An intent that must wait for approval takes the transactional path (admitIntent).
  if (admission.approval) return null;
  const { row, facts } = admission;
  const intent = toIntent(row);
  const now = deps.clock.now();
  const writes = admissionWrites(deps, row, facts, admission.audit);
  const then = [...writes.calls, ...(key ? [key.answer({ status: 201, body: intent })] : [])];
  try {
    const fee = await chargeFeeAlone(
      deps,
      { ...admission.fee, then },
      {
        before: (wait) => reserveSpendGuard(key ? key.claim(wait) : null, admission.reservation, now, wait),
        unlessBooked: releaseSpendCall(key ? key.release : null, row.id, now),
      },
    );
    if (!fee.charged) return null;
    if (!fee.replayed) writes.planned.committed(deps.db);
    return intent;
  } catch (err) {
    const refused = reservationRefusal(err);
    if (refused) throw reservationRefused(row.wallet, refused);
    throw err;
  }
}

/** Records an intent the executor's queue refused, in its own transaction: aborted, nothing held. */
export async function recordRefusedIntent(db: Db, refused: DispatchRefused): Promise<void> {
  await withTransaction(db, (tx) => insertIntent(tx, refused.intent));
}
