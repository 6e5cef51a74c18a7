// Intents: admission of a conversion or a gas top-up under the wallet's active policy (one
// transaction: switches, policy, registry, rules, USD valuation, spend reservation, fee, row,
// event, executor job), the reads, and cancel. No HTTP here. The executor is another module.

import { sql, type RawBuilder } from 'kysely';
import { actorName } from '../../core/http/actor.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import { withTransaction, type Db, type DbExecutor } from '../../core/db/database.ts';
import { ReadBatcher } from '../../core/db/read-batcher.ts';
import { AppError, invalidRequest, notFound, unavailable } from '../../core/errors/app-error.ts';
import type { Actor } from '../../core/http/actor.ts';
import { newId, newUuid } from '../../core/ids.ts';
import type { StatementKey } from '../../core/http/idempotency.ts';
import { jobCall } from '../../core/jobs/index.ts';
import { formatUsd } from '../../core/money.ts';
import { auditCall, recordAudit, type RecordAuditParameters } from '../audit/index.ts';
import { chargeFee, chargeFeeAlone, type ChargeFeeParameters } from '../billing/index.ts';
import { emitEvent, eventCall, type EventCall } from '../events/index.ts';
import { reverseGroup } from '../ledger/index.ts';
import {
  activePolicyOf,
  evaluateRules,
  noPolicyError,
  refusalMessage,
  releaseReservation,
  releaseSpendCall,
  reservationRefusal,
  reserveSpend,
  reserveSpendGuard,
  type PolicyAction,
  type PolicyDocument,
  type ReserveSpendParameters,
  type ReserveSpendResult,
} from '../policies/index.ts';
import type { PriceReferences } from '../prices/index.ts';
import {
  normalizeSymbol,
  type RegistryChain,
  type RegistryToken,
  type TokenRegistry,
} from '../registry/index.ts';
import { assertExecutionEnabled } from '../switches/index.ts';
import {
  cancelPlannedIntent,
  findIntent,
  insertIntent,
  intentCall,
  listIntentRows,
  readAdmissionContext,
  readAdmissionContexts,
  type AdmissionContext,
  type IntentKind,
  type IntentParams,
  type IntentRow,
  type IntentStatus,
} from './store.ts';

/** The native coin of a chain, as gas top-ups name it (the buy token). */
export const NATIVE_PLACEHOLDER = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
/** The job the executor runs for each admitted intent. */
export const EXECUTE_JOB = 'intents.execute';

/**
 * The executor's queue refused an intent (the wallet's open intents or the waiting execution jobs
 * are at their bound). Thrown inside the admission transaction, so nothing of it is kept; the
 * route then records `intent` (aborted, no reservation, no fee) on its own and answers 503.
 */
export class DispatchRefused extends AppError {
  constructor(
    readonly intent: IntentRow,
    readonly why: string,
  ) {
    // An AppError, so that a retry whose first request was admitted replays its answer instead.
    super('UNAVAILABLE', `The executor's queue refused the intent: ${why}.`);
    this.name = 'DispatchRefused';
  }
}

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

/** Whether the chain has a venue that settles conversions (the testbed has none). */
const convertsOn = (chain: RegistryChain) => chain.venues.some((v) => v.settles);

interface Legs {
  sell: RegistryToken;
  /** Null for the native coin (a gas top-up's buy leg). */
  buy: RegistryToken | null;
}

/** The tokens of the request on the policy's chain; INVALID_REQUEST for anything else. */
/** A token the request names by address or symbol, as the registry spells it for a lookup. */
const tokenKey = (value: string): string =>
  value.startsWith('0x') ? value.toLowerCase() : normalizeSymbol(value);

function resolveLegs(chain: RegistryChain, registry: TokenRegistry, body: CreateIntentRequest): Legs {
  const sellLower = tokenKey(body.sell_token);
  const buyLower = tokenKey(body.buy_token);
  if (body.kind === 'gas_topup') {
    const sellAddress = sellLower.startsWith('0x')
      ? sellLower
      : registry.findToken(chain.chainId, sellLower)?.address.toLowerCase();
    if (sellAddress !== chain.wrappedNative.toLowerCase()) {
      throw invalidRequest(
        `Invalid body: sell_token of a gas top-up must be the wrapped native token of chain ${chain.chainId} ` +
          `(${chain.wrappedNative}).`,
      );
    }
    if (buyLower !== NATIVE_PLACEHOLDER) {
      throw invalidRequest(
        `Invalid body: buy_token of a gas top-up must be the native placeholder 0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE.`,
      );
    }
    const sell = registry.findToken(chain.chainId, sellLower);
    if (!sell) throw invalidRequest(`Invalid body: chain ${chain.chainId} lists no wrapped native token.`);
    return { sell, buy: null };
  }
  const sell = registry.findToken(chain.chainId, sellLower);
  const buy = registry.findToken(chain.chainId, buyLower);
  const unsupported = [
    ...(sell ? [] : [`sell_token ${body.sell_token}`]),
    ...(buy ? [] : [`buy_token ${body.buy_token}`]),
  ];
  if (!sell || !buy) {
    throw invalidRequest(
      `Invalid body: ${unsupported.join(' and ')} ${unsupported.length > 1 ? 'are' : 'is'} not a registry token of ` +
        `chain ${chain.chainId} (the chain of the wallet's policy); GET /v1/tokens lists them.`,
    );
  }
  if (sell.address === buy.address) {
    throw invalidRequest('Invalid body: sell_token and buy_token are the same token.');
  }
  return { sell, buy };
}

/**
 * The USD value of the sell leg without RPC: a USD stable at 1:1, else the cached price reference.
 * A missing or unusable reference refuses (503 UNAVAILABLE naming the feed and why).
 */
function valueOf(deps: IntentDeps, chainId: number, token: RegistryToken, amount: bigint): bigint {
  if (token.stable) {
    const scale = 10n ** BigInt(token.decimals);
    return (amount * 1_000_000n + scale - 1n) / scale;
  }
  if (!deps.prices) {
    throw unavailable(`No price reference is configured to value ${token.symbol} on chain ${chainId}.`, {
      remediation: 'Sell a USD stable, or ask the operator to configure the price feeds (docs/prices.md).',
      next: [],
    });
  }
  const valued = deps.prices.valueUsdMicro(chainId, token.address, amount);
  if (!valued.ok) {
    throw unavailable(
      `The price reference for ${token.symbol} on chain ${chainId} is not usable (${valued.refusal.kind}): ` +
        `${valued.refusal.message}`,
      { remediation: 'Retry once the reference is fresh again, or sell a USD stable.', next: [] },
    );
  }
  return valued.usdMicro;
}

function refuse(code: 'POLICY_VIOLATION' | 'BUDGET_EXCEEDED' | 'COUNTERPARTY_BLOCKED', message: string) {
  return new AppError(code, message);
}

/** The venues the intent may use: the request's (each within the policy), or the policy's. */
function venuesOf(policy: PolicyDocument, asked: string[] | undefined): string[] {
  const allowed = policy.execution.venues as string[];
  if (asked === undefined) return [...allowed];
  const outside = asked.filter((v) => !allowed.includes(v));
  if (outside.length > 0) {
    throw refuse(
      'POLICY_VIOLATION',
      refusalMessage({
        rule: 'execution.venues',
        pass: false,
        limit: allowed,
        value: outside,
        code: 'POLICY_VIOLATION',
      }),
    );
  }
  return [...asked];
}

/** An admission checked and ready to write: the planned row and what its writes record. */
interface Admission {
  row: IntentRow;
  reservation: ReserveSpendParameters;
  fee: ChargeFeeParameters;
  facts: Record<string, unknown>;
  audit: RecordAuditParameters;
}

/**
 * Everything admission decides before it writes, from what it read: the execution switches
 * (403, cached), the active policy (404, pinned on the intent), the tokens of its chain (400),
 * the policy's rules (422 naming the rule), the USD valuation (no RPC; 503 when unusable) and the
 * executor queue's bounds (DispatchRefused). The reservation and the fee are still to be taken.
 */
async function planAdmission(
  reader: DbExecutor,
  deps: IntentDeps,
  actor: Actor,
  body: CreateIntentRequest,
  context: AdmissionContext,
): Promise<Admission> {
  const accountId = actor.principal.accountId;
  const wallet = body.wallet.toLowerCase();
  await assertExecutionEnabled(reader, { accountId, wallet }, { cacheKey: deps.db });
  const policy = activePolicyOf(context.policy, deps.registry);
  if (!policy) throw noPolicyError(wallet);
  const doc = policy.document;
  const chain = deps.registry.chain(doc.chain_id);
  if (!chain) throw invalidRequest(`Invalid body: the policy's chain ${doc.chain_id} is not supported.`);
  const legs = resolveLegs(chain, deps.registry, body);
  const maxSlippage = body.max_slippage_bps ?? doc.execution.max_slippage_bps;
  const venues = body.kind === 'conversion' ? venuesOf(doc, body.venues) : [];
  const amount = BigInt(body.sell_amount);
  const valueMicro = valueOf(deps, chain.chainId, legs.sell, amount);

  // The policy's rules, as the dry-run check evaluates them. On a chain where no venue settles
  // conversions (the testbed) the venue rule is not asked: the executor aborts UNSUPPORTED_KIND.
  const action: PolicyAction =
    body.kind === 'gas_topup'
      ? { kind: 'gas_topup', chainId: chain.chainId, amountMicroUsd: valueMicro }
      : {
          kind: 'conversion',
          chainId: chain.chainId,
          sellToken: legs.sell.symbol,
          buyToken: legs.buy?.symbol ?? '',
          amountMicroUsd: valueMicro,
          slippageBps: maxSlippage,
        };
  const failed = evaluateRules(doc, action).find(
    (v) => !v.pass && (v.rule !== 'execution.venues' || convertsOn(chain)),
  );
  if (failed) throw refuse(failed.code, refusalMessage(failed));

  const id = newUuid();
  const now = deps.clock.now();
  const params: IntentParams = {
    chain_id: chain.chainId,
    sell_token: legs.sell.address.toLowerCase(),
    buy_token: legs.buy ? legs.buy.address.toLowerCase() : NATIVE_PLACEHOLDER,
    sell_amount: amount.toString(),
    max_slippage_bps: maxSlippage,
    venues,
    value_usd: formatUsd(valueMicro),
  };
  const base = {
    id,
    account_id: accountId,
    wallet,
    chain_id: chain.chainId,
    kind: body.kind,
    policy_version: policy.version,
    policy_hash: policy.hash,
    report: {},
    value_micro_usd: valueMicro.toString(),
    created_at: now,
    updated_at: now,
  };
  const why = dispatchRefusal(deps, context);
  if (why) {
    throw new DispatchRefused(
      {
        ...base,
        status: 'aborted',
        params: { ...params, abort: { reason: 'EXECUTION_ERROR', detail: 'queue_refused' } },
        reservation_id: null,
        fee_group_id: null,
        fee_micro_usd: '0',
      },
      why,
    );
  }
  const feeMicro = deps.config.fees.conversionIntentMicro;
  const groupId = newId('lgr');
  const row: IntentRow = {
    ...base,
    status: 'planned',
    params,
    reservation_id: id,
    fee_group_id: groupId,
    fee_micro_usd: feeMicro.toString(),
  };
  const facts = {
    id,
    wallet,
    kind: row.kind,
    chain_id: row.chain_id,
    policy_version: row.policy_version,
    policy_hash: row.policy_hash,
    value_usd: params.value_usd,
    fee_usd: formatUsd(feeMicro),
  };
  return {
    row,
    reservation: {
      accountId,
      wallet,
      amountMicroUsd: valueMicro,
      reservationId: id,
      expiresAt: new Date(now.getTime() + doc.execution.deadline_minutes * 60_000),
    },
    fee: {
      accountId,
      product: 'conversion_intent',
      feeMicroUsd: feeMicro,
      settlementId: `fee:conversion_intent:${id}`,
      wallet,
      // The ledger spells a policy hash with its algorithm; policies store the bare hex digest.
      policyHash: `sha256:${policy.hash}`,
      groupId,
    },
    facts,
    audit: {
      accountId,
      actor: actorName(actor),
      action: 'intent.planned',
      subject: id,
      details: facts,
      network: actor.network,
    },
  };
}

/** BUDGET_EXCEEDED naming the cap, or NOT_FOUND for a wallet whose policy went away. */
function reservationRefused(wallet: string, refused: Exclude<ReserveSpendResult, { ok: true }>): AppError {
  if (refused.refused === 'no_policy') return noPolicyError(wallet);
  if (refused.refused === 'conflict')
    throw new Error(`spend reservation for wallet ${wallet} already exists`);
  const isCount = refused.refused === 'spend.velocity_per_hour';
  return refuse(
    'BUDGET_EXCEEDED',
    refusalMessage({
      rule: refused.refused,
      pass: false,
      limit: isCount ? Number(refused.limit) : formatUsd(refused.limit),
      value: isCount ? Number(refused.wouldUse) : formatUsd(refused.wouldUse),
      code: 'BUDGET_EXCEEDED',
    }),
  );
}

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
  );
  for (const call of writes.calls) await sql`SELECT ${call}`.execute(tx);
  writes.planned.committed(tx);
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
      jobCall(deps.clock, { name: EXECUTE_JOB, payload: { intent_id: row.id }, singletonKey: row.id }),
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

export async function getIntent(db: DbExecutor, accountId: string, id: string): Promise<Intent> {
  const row = await findIntent(db, accountId, id);
  if (!row) throw notFound(`No intent ${id} on this account.`);
  return toIntent(row);
}

export async function listIntents(
  db: DbExecutor,
  accountId: string,
  wallet: string | null,
  limit: number,
  offset: number,
): Promise<Intent[]> {
  const rows = await listIntentRows(db, accountId, wallet?.toLowerCase() ?? null, limit, offset);
  return rows.map(toIntent);
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

/**
 * Why the executor's queue refuses another intent of `wallet` now, or null: the wallet's open
 * (planned or executing) intents, or the execution jobs waiting overall, are at their bound. The
 * wallet's count is read with the context; the overall one at most once a second per process.
 * Concurrent admissions may pass together, so the bounds are approximate by their number in
 * flight.
 */
function dispatchRefusal(deps: IntentDeps, context: AdmissionContext): string | null {
  const bounds = deps.config.intentQueue;
  if (context.openIntents >= bounds.perWallet) {
    return `the wallet already has ${context.openIntents} open intents (at most ${bounds.perWallet}: INTENT_QUEUE_PER_WALLET)`;
  }
  const jobs = context.openJobs ?? queueDepth.get(deps.db)?.jobs ?? 0;
  if (jobs >= bounds.max) {
    return `${jobs} intents are waiting for the executor (at most ${bounds.max}: INTENT_QUEUE_MAX)`;
  }
  return null;
}

/** The execution jobs waiting overall, per database handle, read at most once a second. */
const queueDepth = new WeakMap<object, { jobs: number; readAt: number }>();
const QUEUE_DEPTH_MS = 1000;

function queueDepthStale(deps: IntentDeps): boolean {
  const seen = queueDepth.get(deps.db);
  return !seen || performance.now() - seen.readAt >= QUEUE_DEPTH_MS;
}

function rememberQueueDepth(deps: IntentDeps, jobs: number): void {
  queueDepth.set(deps.db, { jobs, readAt: performance.now() });
}

/** Records an intent the executor's queue refused, in its own transaction: aborted, nothing held. */
export async function recordRefusedIntent(db: Db, refused: DispatchRefused): Promise<void> {
  await withTransaction(db, (tx) => insertIntent(tx, refused.intent));
}
