import type { Actor } from '../../core/http/actor.ts';
// Policy versions (put, list, active) and the dry-run check. No HTTP here.

import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import type { AppError } from '../../core/errors/app-error.ts';
import { invalidRequest, notFound } from '../../core/errors/app-error.ts';
import { canonicalJson } from '../../core/canonical-json.ts';
import { recordAudit } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import type { TokenRegistry } from '../registry/index.ts';
import {
  documentProblems,
  fillDefaults,
  policyHash,
  type PolicyDocument,
  type PolicyDocumentInput,
} from './document.ts';
import { evaluateRules, refusalMessage, type PolicyAction, type RuleName, type RuleValue } from './engine.ts';
import { switchRules, type SwitchRuleName } from './switch-rules.ts';
import { switchesOffFor } from '../switches/index.ts';
import { readSpendUsage } from './reservations.ts';
import { usdToMicro } from '../../core/money.ts';
import {
  insertPolicy,
  latestPolicy,
  listPolicyRows,
  lockPolicyHistory,
  policyVersion,
  type PolicyRow,
} from './store.ts';

export const POLICY_LIST_DEFAULT_LIMIT = 50;
export const POLICY_LIST_MAX_LIMIT = 200;

export type PolicyActor = Actor;

/** The policy record of the spec (section 2). */
export interface PolicyRecord {
  wallet: string;
  version: number;
  hash: string;
  created_at: string;
  unchanged?: boolean;
  document: PolicyDocument;
  defaulted: string[];
}

export interface ActivePolicy {
  version: number;
  hash: string;
  /** The stored document with any field introduced after it was written filled from the defaults. */
  document: PolicyDocument;
}

/**
 * Fills defaults and validates a submitted document; returns the stored form. Throws
 * INVALID_REQUEST naming every bad field.
 */
export function preparePolicy(input: PolicyDocumentInput, registry: TokenRegistry) {
  const filled = fillDefaults(input, registry);
  const problems = documentProblems(filled.document, registry);
  if (problems.length > 0) throw invalidRequest(`Invalid body: ${problems.join('; ')}.`);
  return filled;
}

/**
 * Stores the document as version n+1 of its wallet, or returns the latest version with
 * `unchanged: true` when the document (after filling defaults) is the latest one. Writers of one
 * wallet are serialized by a transaction-scoped lock, so concurrent PUTs get consecutive versions.
 * The event `policy.updated` and an audit fact are written in the same transaction.
 */
export async function putPolicy(
  tx: DbExecutor,
  clock: Clock,
  registry: TokenRegistry,
  actor: PolicyActor,
  input: PolicyDocumentInput,
): Promise<{ created: boolean; record: PolicyRecord }> {
  const { document, defaulted } = preparePolicy(input, registry);
  const accountId = actor.principal.accountId;
  await lockPolicyHistory(tx, accountId, document.wallet);
  const latest = await latestPolicy(tx, accountId, document.wallet);
  if (latest && canonicalJson(readStored(latest, registry)) === canonicalJson(document)) {
    return { created: false, record: { ...toRecord(latest), unchanged: true } };
  }
  const row: PolicyRow = {
    account_id: accountId,
    wallet: document.wallet,
    version: (latest?.version ?? 0) + 1,
    hash: policyHash(document),
    document,
    defaulted,
    created_at: clock.now(),
  };
  await insertPolicy(tx, row);
  const facts = { wallet: row.wallet, version: row.version, hash: row.hash, defaulted };
  await emitEvent(tx, clock, { accountId, kind: 'policy.updated', subject: row.wallet, payload: facts });
  await recordAudit(tx, clock, {
    accountId,
    actor: `${actor.principal.kind}:${actor.principal.credentialId}`,
    action: 'policy.updated',
    subject: row.wallet,
    details: facts,
    network: actor.network,
  });
  return { created: true, record: toRecord(row) };
}

export async function listPolicies(
  db: DbExecutor,
  accountId: string,
  wallet: string | null,
  limit: number,
): Promise<PolicyRecord[]> {
  const rows = await listPolicyRows(db, accountId, wallet?.toLowerCase() ?? null, limit);
  return rows.map(toRecord);
}

/** The wallet's latest policy version, or null when it has none. */
export async function getActivePolicy(
  db: DbExecutor,
  registry: TokenRegistry,
  accountId: string,
  wallet: string,
): Promise<ActivePolicy | null> {
  return activePolicyOf(await latestPolicy(db, accountId, wallet.toLowerCase()), registry);
}

/**
 * The policy version an action pinned (an intent's), read back: null when that version is gone
 * or its hash is not the pinned one (then the action is no longer covered by what it pinned).
 */
export async function pinnedPolicy(
  db: DbExecutor,
  registry: TokenRegistry,
  pin: { accountId: string; wallet: string; version: number; hash: string },
): Promise<ActivePolicy | null> {
  const row = await policyVersion(db, pin.accountId, pin.wallet.toLowerCase(), pin.version);
  return row && row.hash === pin.hash ? activePolicyOf(row, registry) : null;
}

/** The active policy a latest policy row (read by the caller) stands for. */
export function activePolicyOf(row: PolicyRow | null, registry: TokenRegistry): ActivePolicy | null {
  if (!row) return null;
  return { version: row.version, hash: row.hash, document: readStored(row, registry) };
}

/** NOT_FOUND for a wallet without a policy, pointing at PUT /v1/policies. */
export function noPolicyError(wallet: string): AppError {
  return notFound(`Wallet ${wallet} has no policy on this account.`, {
    remediation: 'Publish a policy for the wallet with PUT /v1/policies.',
    next: [{ method: 'PUT', path: '/v1/policies', why: 'Publish a policy for this wallet' }],
  });
}

/** One verdict of a check: a policy rule, or a switch that refuses the action (`switch.*`). */
export interface CheckRule {
  rule: RuleName | SwitchRuleName;
  pass: boolean;
  limit: RuleValue;
  value: RuleValue;
  code: string;
}

export interface CheckResult {
  wallet: string;
  policy_version: number;
  policy_hash: string;
  allowed: boolean;
  /** The first failing rule, as a spending path would report it; null when allowed. */
  refusal: { code: string; rule: string; message: string } | null;
  rules: CheckRule[];
}

/**
 * Evaluates a hypothetical action against the execution switches, the wallet's active policy and
 * the current counters: reads only, reserves nothing. Throws NOT_FOUND when the wallet has no
 * policy. A switch that refuses the action is a failing rule: those admission checks come first,
 * a conversion's venue switch (planning) after the policy's rules.
 */
export async function checkAction(
  db: DbExecutor,
  clock: Clock,
  registry: TokenRegistry,
  accountId: string,
  wallet: string,
  buildAction: (policy: PolicyDocument) => PolicyAction | Promise<PolicyAction>,
): Promise<CheckResult> {
  const lower = wallet.toLowerCase();
  // The counters and the switches do not depend on the policy: read them at once (one round
  // trip of latency).
  const usageRead = readSpendUsage(db, clock, accountId, lower);
  usageRead.catch(() => undefined); // awaited below unless the policy is missing
  const switchesRead = switchesOffFor(db, accountId, lower);
  switchesRead.catch(() => undefined);
  const policy = await getActivePolicy(db, registry, accountId, lower);
  if (!policy) throw noPolicyError(lower);
  const action = await buildAction(policy.document);
  const usage = action.kind === 'delegation_scope' ? undefined : await usageRead;
  const switches = switchRules(action, policy.document, await switchesRead);
  const verdicts: Array<CheckRule & { message: string | null }> = [
    ...switches.admission,
    ...evaluateRules(policy.document, action, usage).map((v) => ({
      ...v,
      message: v.pass ? null : refusalMessage(v),
    })),
    ...switches.planning,
  ];
  const failed = verdicts.find((r) => !r.pass);
  return {
    wallet: lower,
    policy_version: policy.version,
    policy_hash: policy.hash,
    allowed: !failed,
    refusal: failed ? { code: failed.code, rule: failed.rule, message: failed.message ?? '' } : null,
    rules: verdicts.map(({ rule, pass, limit, value, code }) => ({ rule, pass, limit, value, code })),
  };
}

// Stored documents are immutable and hash-addressed, so the filled form of a hash never changes
// (for one registry): fill each once per process.
const filledByHash = new WeakMap<TokenRegistry, Map<string, PolicyDocument>>();

function readStored(row: PolicyRow, registry: TokenRegistry): PolicyDocument {
  let cache = filledByHash.get(registry);
  if (!cache) filledByHash.set(registry, (cache = new Map()));
  const hit = cache.get(row.hash);
  if (hit) return hit;
  const document = fillDefaults(row.document as PolicyDocumentInput, registry).document;
  if (cache.size >= 10_000) cache.clear();
  cache.set(row.hash, deepFreeze(document));
  return document;
}

/** Shared cached documents must never be edited by a caller. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as Record<string, unknown>)) deepFreeze(child);
  }
  return value;
}

function toRecord(row: PolicyRow): PolicyRecord {
  return {
    wallet: row.wallet,
    version: row.version,
    hash: row.hash,
    created_at: new Date(row.created_at).toISOString(),
    document: row.document as PolicyDocument,
    defaulted: row.defaulted,
  };
}

/** The body of POST /v1/checks. */
export interface CheckRequest {
  wallet: string;
  kind: string;
  amount_usd: string;
  chain_id?: number;
  sell_token?: string;
  buy_token?: string;
  venue?: string;
  slippage_bps?: number;
  token?: string;
  counterparty?: string;
}

/**
 * The action a check request describes; throws INVALID_REQUEST naming the fields its kind needs.
 * `screen` answers whether a counterparty is listed; it is asked only when the policy requires
 * screening at this amount.
 */
export async function actionFromCheck(
  body: CheckRequest,
  policy: PolicyDocument,
  screen: (address: `0x${string}`) => Promise<boolean>,
): Promise<PolicyAction> {
  const amountMicroUsd = usdToMicro(body.amount_usd);
  const chainId = body.chain_id ?? policy.chain_id;
  const need = (fields: Array<keyof CheckRequest>) => {
    const missing = fields.filter((f) => body[f] === undefined);
    if (missing.length > 0) {
      throw invalidRequest(
        `Invalid body: ${missing.map((f) => `${f} is required when kind is ${body.kind}`).join('; ')}.`,
      );
    }
  };
  switch (body.kind) {
    case 'conversion':
      need(['sell_token', 'buy_token']);
      return {
        kind: 'conversion',
        chainId,
        sellToken: body.sell_token ?? '',
        buyToken: body.buy_token ?? '',
        amountMicroUsd,
        ...(body.venue !== undefined ? { venue: body.venue } : {}),
        ...(body.slippage_bps !== undefined ? { slippageBps: body.slippage_bps } : {}),
      };
    case 'gas_topup':
      return { kind: 'gas_topup', chainId, amountMicroUsd };
    case 'prediction_market_order':
      need(['venue']);
      return { kind: 'prediction_market_order', venue: body.venue ?? '', amountMicroUsd };
    case 'transfer': {
      need(['token']);
      const threshold = policy.spend.screening_required_above_usd;
      const screened =
        body.counterparty !== undefined && threshold !== null && amountMicroUsd > usdToMicro(threshold)
          ? await screen(body.counterparty as `0x${string}`)
          : null;
      return {
        kind: 'transfer',
        chainId,
        token: body.token ?? '',
        amountMicroUsd,
        counterpartySanctioned: screened,
      };
    }
    default:
      throw invalidRequest(`Invalid body: kind ${JSON.stringify(body.kind)} is not checkable.`);
  }
}
