// The approval tier (docs/policies.md, "Approvals"; docs/decisions.md, "The approval tier"): an
// intent worth more than the policy's `spend.approvals.above_usd` is admitted as any other (policy,
// reservation, fee) but waits, planned, until `quorum` different approvers signed its EIP-712
// approval; the signature that reaches the quorum dispatches the execution in its transaction.
// Past `expires_at` it ends aborted (POLICY_VIOLATION, approval_expired), its fee reversed and its
// reservation released. The state is the `intent_approvals` table with one row per signature in
// `intent_approval_signatures` (migration 0041); `report.approval` shows it.

import type { Selectable } from 'kysely';
import type { Static } from 'typebox';
import { hashTypedData, type Hex, type TypedDataDefinition } from 'viem';
import type { ChainPort } from '../../adapters/chain/port.ts';
import type { Clock } from '../../core/clock.ts';
import { withTransaction, type Db, type DbExecutor } from '../../core/db/database.ts';
import type { Timestamp } from '../../core/db/schema.ts';
import { AppError, notFound } from '../../core/errors/app-error.ts';
import { enqueueJob } from '../../core/jobs/index.ts';
import { parseUsd } from '../../core/money.ts';
import { emitEvent } from '../events/index.ts';
import { reverseGroup } from '../ledger/index.ts';
import { releaseReservation, type SpendApprovals } from '../policies/index.ts';
import { APPROVAL_EXPIRY_JOB, EXECUTE_JOB } from './job-names.ts';
import type { ApprovalSchema } from './schemas.ts';
import { endPlannedIntent, findIntentById, isIntentId, type IntentRow } from './store.ts';

export interface IntentApprovalsTable {
  intent_id: string;
  account_id: string;
  chain_id: number;
  quorum: number;
  approvers: string[];
  digest: string;
  typed_data: unknown;
  expires_at: Timestamp;
  approved_at: Timestamp | null;
  expired_at: Timestamp | null;
  created_at: Timestamp;
}

export interface IntentApprovalSignaturesTable {
  intent_id: string;
  approver: string;
  signature: string;
  signed_at: Timestamp;
}

declare module '../../core/db/schema.ts' {
  interface Database {
    intent_approvals: IntentApprovalsTable;
    intent_approval_signatures: IntentApprovalSignaturesTable;
  }
}

/** The EIP-712 domain name every approval is signed under. */
export const APPROVAL_DOMAIN_NAME = 'Purser intent approval';

/** What an approver signs: everything that makes the intent what it is, and the deadline. */
export const APPROVAL_TYPES = {
  IntentApproval: [
    { name: 'intentId', type: 'string' },
    { name: 'account', type: 'string' },
    { name: 'wallet', type: 'address' },
    { name: 'chainId', type: 'uint256' },
    { name: 'kind', type: 'string' },
    { name: 'sellToken', type: 'address' },
    { name: 'buyToken', type: 'address' },
    { name: 'sellAmount', type: 'uint256' },
    { name: 'maxSlippageBps', type: 'uint256' },
    { name: 'policyVersion', type: 'uint256' },
    { name: 'policyHash', type: 'bytes32' },
    { name: 'expiresAt', type: 'uint256' },
  ],
} as const;

/** What admission decides for an intent that must wait: who may approve, how many, until when. */
export interface ApprovalPlan {
  quorum: number;
  approvers: string[];
  expiresAt: Date;
}

/** The plan for an intent worth `valueMicroUsd` under `approvals`, or null when it need not wait. */
export function approvalPlan(
  approvals: SpendApprovals | undefined,
  valueMicroUsd: bigint,
  now: Date,
): ApprovalPlan | null {
  if (!approvals) return null;
  const threshold = parseUsd(approvals.above_usd);
  if (threshold === null || valueMicroUsd <= threshold) return null;
  return {
    quorum: approvals.quorum,
    approvers: approvals.approvers.map((a) => a.toLowerCase()),
    expiresAt: new Date(now.getTime() + approvals.ttl_minutes * 60_000),
  };
}

/** The typed data of an intent's approval (JSON-safe: integers as decimal strings). */
export function approvalTypedData(row: IntentRow, expiresAt: Date) {
  return {
    domain: { name: APPROVAL_DOMAIN_NAME, version: '1', chainId: row.chain_id },
    types: APPROVAL_TYPES,
    primaryType: 'IntentApproval' as const,
    message: {
      intentId: row.id,
      account: row.account_id,
      wallet: row.wallet,
      chainId: String(row.chain_id),
      kind: row.kind,
      sellToken: row.params.sell_token,
      buyToken: row.params.buy_token,
      sellAmount: row.params.sell_amount,
      maxSlippageBps: String(row.params.max_slippage_bps),
      policyVersion: String(row.policy_version),
      policyHash: `0x${row.policy_hash}`,
      expiresAt: String(Math.floor(expiresAt.getTime() / 1000)),
    },
  };
}

export type ApprovalTypedData = ReturnType<typeof approvalTypedData>;

/** The EIP-712 digest an approver signs. */
export function approvalDigest(typed: ApprovalTypedData): Hex {
  const m = typed.message;
  return hashTypedData({
    domain: typed.domain,
    types: typed.types,
    primaryType: typed.primaryType,
    message: {
      ...m,
      wallet: m.wallet as Hex,
      sellToken: m.sellToken as Hex,
      buyToken: m.buyToken as Hex,
      policyHash: m.policyHash as Hex,
      chainId: BigInt(m.chainId),
      sellAmount: BigInt(m.sellAmount),
      maxSlippageBps: BigInt(m.maxSlippageBps),
      policyVersion: BigInt(m.policyVersion),
      expiresAt: BigInt(m.expiresAt),
    },
  } as TypedDataDefinition);
}

/** `report.approval` of a waiting (or once waiting) intent. */
export type ApprovalView = Static<typeof ApprovalSchema>;

function viewOf(
  row: Selectable<IntentApprovalsTable>,
  signatures: Selectable<IntentApprovalSignaturesTable>[],
) {
  const view: ApprovalView = {
    quorum: row.quorum,
    approvers: row.approvers,
    signatures: signatures.map((s) => ({ approver: s.approver, signed_at: s.signed_at.toISOString() })),
    state: row.approved_at ? 'approved' : row.expired_at ? 'expired' : 'waiting',
    expires_at: row.expires_at.toISOString(),
    digest: row.digest,
    typed_data: (typeof row.typed_data === 'string' ? JSON.parse(row.typed_data) : row.typed_data) as Record<
      string,
      unknown
    >,
  };
  return view;
}

/**
 * Records that a just-admitted intent waits, in the admission's transaction: its approval row,
 * the expiry job at `expires_at` and `intent.approval_requested`. Returns its `report.approval`.
 */
export async function requestApproval(
  tx: DbExecutor,
  clock: Clock,
  row: IntentRow,
  plan: ApprovalPlan,
): Promise<ApprovalView> {
  const typed = approvalTypedData(row, plan.expiresAt);
  const digest = approvalDigest(typed);
  const now = clock.now();
  const inserted = await tx
    .insertInto('intent_approvals')
    .values({
      intent_id: row.id,
      account_id: row.account_id,
      chain_id: row.chain_id,
      quorum: plan.quorum,
      approvers: plan.approvers,
      digest,
      typed_data: JSON.stringify(typed),
      expires_at: plan.expiresAt,
      approved_at: null,
      expired_at: null,
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await enqueueJob(tx, clock, {
    name: APPROVAL_EXPIRY_JOB,
    payload: { intent_id: row.id },
    runAt: plan.expiresAt,
    singletonKey: row.id,
  });
  await emitEvent(tx, clock, {
    accountId: row.account_id,
    kind: 'intent.approval_requested',
    subject: row.id,
    payload: {
      id: row.id,
      wallet: row.wallet,
      value_usd: row.params.value_usd,
      quorum: plan.quorum,
      approvers: plan.approvers,
      digest,
      expires_at: plan.expiresAt.toISOString(),
    },
  });
  return viewOf(inserted, []);
}

/** The approvals of these intents, by intent id (those that never waited are absent). */
export async function approvalsOf(db: DbExecutor, intentIds: string[]): Promise<Map<string, ApprovalView>> {
  const views = new Map<string, ApprovalView>();
  if (intentIds.length === 0) return views;
  const rows = await db
    .selectFrom('intent_approvals')
    .selectAll()
    .where('intent_id', 'in', intentIds)
    .execute();
  // Most pages hold no intent that waited: their signatures are not asked for.
  if (rows.length === 0) return views;
  const signatures = await db
    .selectFrom('intent_approval_signatures')
    .selectAll()
    .where(
      'intent_id',
      'in',
      rows.map((r) => r.intent_id),
    )
    .orderBy('signed_at')
    .orderBy('approver')
    .execute();
  for (const row of rows)
    views.set(
      row.intent_id,
      viewOf(
        row,
        signatures.filter((s) => s.intent_id === row.intent_id),
      ),
    );
  return views;
}

/** The intent's approval row, locked until the transaction ends (signatures and expiry queue on it). */
function lockApproval(tx: DbExecutor, intentId: string) {
  return tx
    .selectFrom('intent_approvals')
    .selectAll()
    .where('intent_id', '=', intentId)
    .forUpdate()
    .executeTakeFirst();
}

export interface ApprovalDeps {
  db: Db;
  clock: Clock;
  chain: ChainPort | undefined;
}

/**
 * An approver's signature over an intent's approval. The signature alone authenticates it: it
 * must be `approver`'s (EOA, ERC-1271, or ERC-6492 when undeployed) over this intent's digest, and
 * `approver` one of the policy's. A second signature of one approver counts once. The signature
 * that reaches the quorum marks the approval and enqueues the execution, in one transaction.
 */
export async function approveIntent(
  deps: ApprovalDeps,
  intentId: string,
  approver: string,
  signature: Hex,
): Promise<ApprovalView> {
  const unknown = () => notFound(`No intent ${intentId} waits for approval.`);
  if (!isIntentId(intentId)) throw unknown();
  const pending = await deps.db
    .selectFrom('intent_approvals')
    .selectAll()
    .where('intent_id', '=', intentId)
    .executeTakeFirst();
  if (!pending) throw unknown();
  const signer = approver.toLowerCase();
  if (!pending.approvers.includes(signer))
    throw new AppError('FORBIDDEN', `${approver} is not an approver of this intent's policy.`, {
      remediation: "Sign with one of the approvers the wallet's policy names (spend.approvals.approvers).",
    });
  if (!deps.chain) throw new AppError('UNAVAILABLE', 'No chain is configured to check signatures.');
  const valid = await deps.chain.verifyHash(pending.chain_id, {
    signer: signer as Hex,
    hash: pending.digest as Hex,
    signature,
  });
  if (!valid)
    throw new AppError(
      'AUTH_SIGNATURE_INVALID',
      `The signature is not ${approver}'s over this intent's approval.`,
      {
        remediation:
          'Sign report.approval.typed_data of this intent (EIP-712) with the approver, exactly as given; ' +
          'an approval of another intent or amount does not carry over.',
      },
    );
  return withTransaction(deps.db, async (tx) => {
    const row = await lockApproval(tx, intentId);
    const intent = await findIntentById(tx, intentId, true);
    if (!row || !intent) throw unknown();
    const now = deps.clock.now();
    const closed = (why: string) =>
      new AppError('CONFLICT', `Intent ${intentId} no longer waits for approval: ${why}.`, {
        remediation: 'Read the intent (GET /v1/intents/{id}) for its status; nothing was recorded.',
      });
    if (intent.status !== 'planned') throw closed(`it is ${intent.status}`);
    if (row.expired_at || row.expires_at <= now) throw closed('its approval expired');
    await tx
      .insertInto('intent_approval_signatures')
      .values({ intent_id: intentId, approver: signer, signature, signed_at: now })
      .onConflict((oc) => oc.columns(['intent_id', 'approver']).doNothing())
      .execute();
    const signatures = await tx
      .selectFrom('intent_approval_signatures')
      .selectAll()
      .where('intent_id', '=', intentId)
      .orderBy('signed_at')
      .orderBy('approver')
      .execute();
    let current = row;
    if (!row.approved_at && signatures.length >= row.quorum) {
      current = await tx
        .updateTable('intent_approvals')
        .set({ approved_at: now })
        .where('intent_id', '=', intentId)
        .returningAll()
        .executeTakeFirstOrThrow();
      await enqueueJob(tx, deps.clock, {
        name: EXECUTE_JOB,
        payload: { intent_id: intentId },
        singletonKey: intentId,
      });
      await emitEvent(tx, deps.clock, {
        accountId: row.account_id,
        kind: 'intent.approved',
        subject: intentId,
        payload: { id: intentId, wallet: intent.wallet, approvers: signatures.map((s) => s.approver) },
      });
    }
    return viewOf(current, signatures);
  });
}

/**
 * The expiry job: an intent still waiting at its `expires_at` ends aborted (POLICY_VIOLATION,
 * approval_expired), its reservation released and its fee reversed, with `intent.aborted`.
 * Anything else (approved, cancelled, already ended) is left as it is.
 */
export async function expireApproval(deps: { db: Db; clock: Clock }, intentId: string): Promise<boolean> {
  if (!isIntentId(intentId)) return false;
  return withTransaction(deps.db, async (tx) => {
    const row = await lockApproval(tx, intentId);
    const now = deps.clock.now();
    if (!row || row.approved_at || row.expired_at || row.expires_at > now) return false;
    const abort = { reason: 'POLICY_VIOLATION', detail: 'approval_expired' };
    const ended = await endPlannedIntent(tx, intentId, abort, now);
    if (!ended) return false;
    await tx
      .updateTable('intent_approvals')
      .set({ expired_at: now })
      .where('intent_id', '=', intentId)
      .execute();
    const accountId = ended.account_id;
    if (ended.reservation_id)
      await releaseReservation(tx, deps.clock, { accountId, reservationId: ended.reservation_id });
    if (ended.fee_group_id) {
      const reversed = await reverseGroup(tx, deps.clock, {
        groupId: ended.fee_group_id,
        accountId,
        reason: `intent ${intentId} approval expired`,
      });
      if (!reversed.ok)
        throw new Error(`fee of intent ${intentId} could not be reversed: ${reversed.reason}`);
    }
    await emitEvent(tx, deps.clock, {
      accountId,
      kind: 'intent.aborted',
      subject: intentId,
      payload: {
        id: intentId,
        wallet: ended.wallet,
        kind: ended.kind,
        reason: abort.reason,
        detail: abort.detail,
        fee_reversed: ended.fee_group_id !== null,
        sold: '0',
        bought: '0',
        gas_wei: '0',
        sponsored_wei: '0',
        average_price: null,
        filled_value_usd: '0',
      },
    });
    return true;
  });
}
