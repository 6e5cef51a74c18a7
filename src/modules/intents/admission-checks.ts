// Intents' admission checks: everything admission decides before it writes (planAdmission: the
// execution switches, the active policy, the tokens of its chain, the policy's rules, the USD
// valuation, the executor queue's bounds), the refusals they answer with (DispatchRefused for a
// full queue, BUDGET_EXCEEDED for a refused spend reservation), and the overall queue depth they
// read at most once a second. The writes are admission.ts's.

import { actorName } from '../../core/http/actor.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { AppError, invalidRequest, unavailable } from '../../core/errors/app-error.ts';
import type { Actor } from '../../core/http/actor.ts';
import { newId, newUuid } from '../../core/ids.ts';
import { formatUsd } from '../../core/money.ts';
import type { RecordAuditParameters } from '../audit/index.ts';
import type { ChargeFeeParameters } from '../billing/index.ts';
import {
  activePolicyOf,
  evaluateRules,
  noPolicyError,
  refusalMessage,
  type PolicyAction,
  type PolicyDocument,
  type ReserveSpendParameters,
  type ReserveSpendResult,
} from '../policies/index.ts';
import {
  normalizeSymbol,
  type RegistryChain,
  type RegistryToken,
  type TokenRegistry,
} from '../registry/index.ts';
import { assertExecutionEnabled } from '../switches/index.ts';
import { approvalPlan, type ApprovalPlan } from './approvals.ts';
import { NATIVE_PLACEHOLDER, type CreateIntentRequest, type IntentDeps } from './service.ts';
import type { AdmissionContext, IntentParams, IntentRow } from './store.ts';

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
export interface Admission {
  row: IntentRow;
  /** Set when the intent must wait for its approvers (the policy's spend.approvals). */
  approval: ApprovalPlan | null;
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
export async function planAdmission(
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
  // Above the approval threshold it waits; its reservation is held while it waits, then runs.
  const approval = approvalPlan(doc.spend.approvals, valueMicro, now);
  const holdFrom = approval ? approval.expiresAt : now;
  return {
    row,
    approval,
    reservation: {
      accountId,
      wallet,
      amountMicroUsd: valueMicro,
      reservationId: id,
      expiresAt: new Date(holdFrom.getTime() + doc.execution.deadline_minutes * 60_000),
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
export function reservationRefused(
  wallet: string,
  refused: Exclude<ReserveSpendResult, { ok: true }>,
): AppError {
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

export function queueDepthStale(deps: IntentDeps): boolean {
  const seen = queueDepth.get(deps.db);
  return !seen || performance.now() - seen.readAt >= QUEUE_DEPTH_MS;
}

export function rememberQueueDepth(deps: IntentDeps, jobs: number): void {
  queueDepth.set(deps.db, { jobs, readAt: performance.now() });
}
