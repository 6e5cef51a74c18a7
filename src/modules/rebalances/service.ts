// Rebalances: admission of a CCTP V2 transfer of the executor's USDC between two chains under the
// executor wallet's policy (one transaction: executor key, switches, policy, corridor, amounts,
// daily cap, the planned row, its event and its burn job), and the reads. No HTTP here; the burn,
// the attestation and the mint are in run.ts.

import { actorName } from '../../core/http/actor.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import type { Db, DbExecutor } from '../../core/db/database.ts';
import { AppError, invalidRequest, notFound, unavailable } from '../../core/errors/app-error.ts';
import type { Actor } from '../../core/http/actor.ts';
import { newUuid } from '../../core/ids.ts';
import { enqueueJob } from '../../core/jobs/index.ts';
import { formatUsd, parseUsd } from '../../core/money.ts';
import { recordAudit } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import { getActivePolicy, noPolicyError, type PolicyDocument } from '../policies/index.ts';
import type { TokenRegistry } from '../registry/index.ts';
import { assertExecutionEnabled } from '../switches/index.ts';
import {
  findRebalance,
  insertRebalance,
  lockRebalanceWallet,
  rebalancedOn,
  type RebalancePhase,
  type RebalanceReport,
  type RebalanceRow,
  type RebalanceStatus,
} from './store.ts';

/** The job that signs and sends a planned rebalance's burn. */
export const BURN_JOB = 'rebalances.burn';
/**
 * Settles a submitted mint (docs/rebalances.md): enqueued with the mint's record, due shortly after
 * its broadcast, so a process killed while it waited for the receipt leaves the mint to the next
 * worker within a minute, not to the hourly job; it looks again every minute until the mint settles.
 */
export const MINT_JOB = 'rebalances.settle_mint';
/** When the mint job first looks at a submitted mint, after its broadcast. */
export const MINT_CHECK_AFTER_MS = 30_000;
/** Largest amount one rebalance may name (USDC base units: one billion USDC). */
export const MAX_REBALANCE_AMOUNT = 10n ** 15n;

/** The Rebalance of the spec (section 2), with the finality, fee cap and report it ran with. */
export interface Rebalance {
  id: string;
  from_chain_id: number;
  to_chain_id: number;
  amount: string;
  status: RebalanceStatus;
  phase: RebalancePhase | null;
  burn_tx: string | null;
  mint_tx: string | null;
  finality: 'fast' | 'standard';
  max_fee: string;
  policy_version: number;
  policy_hash: string;
  report: RebalanceReport;
  created_at: string;
  updated_at: string;
}

export function toRebalance(row: RebalanceRow): Rebalance {
  return {
    id: row.id,
    from_chain_id: row.from_chain_id,
    to_chain_id: row.to_chain_id,
    amount: row.amount.toString(),
    status: row.status,
    phase: row.phase,
    burn_tx: row.burn_tx,
    mint_tx: row.mint_tx,
    finality: row.finality,
    max_fee: row.max_fee.toString(),
    policy_version: row.policy_version,
    policy_hash: row.policy_hash,
    report: row.report,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export interface AdmissionDeps {
  config: Config;
  clock: Clock;
  db: Db;
  registry: TokenRegistry;
}

export interface CreateRebalanceRequest {
  from_chain_id: number;
  to_chain_id: number;
  amount: string;
}

function policyViolation(rule: string, limit: string, value: string): AppError {
  return new AppError(
    'POLICY_VIOLATION',
    `Refused by ${rule}: the limit is ${limit}, the action would use ${value}.`,
    {
      remediation:
        `Publish a policy for the executor's wallet whose ${rule} allows this rebalance (PUT /v1/policies), ` +
        'or ask for a rebalance within it.',
      next: [{ method: 'PUT', path: '/v1/policies', why: "Change the executor wallet's rebalance section" }],
    },
  );
}

/** The request's chains and amount, checked against what this deployment serves (400 naming the field). */
function checkRequest(config: Config, registry: TokenRegistry, body: CreateRebalanceRequest): bigint {
  const served = Object.keys(config.cctp.chains).map(Number);
  for (const field of ['from_chain_id', 'to_chain_id'] as const) {
    const chainId = body[field];
    if (!served.includes(chainId) || !registry.findToken(chainId, 'USDC')) {
      throw invalidRequest(
        `Invalid body: ${field} ${chainId} is not a CCTP chain of this deployment (${served.join(', ')}).`,
      );
    }
  }
  if (body.from_chain_id === body.to_chain_id) {
    throw invalidRequest(
      'Invalid body: to_chain_id must differ from from_chain_id (a rebalance moves USDC between chains).',
    );
  }
  const amount = BigInt(body.amount);
  if (amount <= 0n) throw invalidRequest('Invalid body: amount must be more than 0 (USDC base units).');
  if (amount > MAX_REBALANCE_AMOUNT) {
    throw invalidRequest(`Invalid body: amount must be at most ${MAX_REBALANCE_AMOUNT} (USDC base units).`);
  }
  return amount;
}

/** A policy USD amount (validated when the policy was stored) in micro-USD. */
const micro = (usd: string): bigint => parseUsd(usd) ?? 0n;

/** The rebalance section's rules, in order; throws POLICY_VIOLATION naming the first that refuses. */
function checkPolicy(doc: PolicyDocument, body: CreateRebalanceRequest, amount: bigint, dayTotal: bigint) {
  const r = doc.rebalance;
  if (!r.enabled) throw policyViolation('rebalance.enabled', 'false', 'a rebalance');
  const corridor = `${body.from_chain_id}>${body.to_chain_id}`;
  if (!r.corridors.some((c) => `${c.from_chain_id}>${c.to_chain_id}` === corridor)) {
    const allowed = r.corridors.map((c) => `${c.from_chain_id}>${c.to_chain_id}`);
    throw policyViolation('rebalance.corridors', `[${allowed.join(', ')}]`, corridor);
  }
  // USDC has 6 decimals and counts 1:1 as USD: base units are micro-USD.
  const min = micro(r.min_transfer_usd);
  const max = micro(r.max_transfer_usd);
  if (amount < min)
    throw policyViolation(
      'rebalance.min_transfer_usd',
      `${r.min_transfer_usd} USD`,
      `${formatUsd(amount)} USD`,
    );
  if (amount > max)
    throw policyViolation(
      'rebalance.max_transfer_usd',
      `${r.max_transfer_usd} USD`,
      `${formatUsd(amount)} USD`,
    );
  const cap = micro(r.daily_cap_usd);
  if (dayTotal + amount > cap) {
    throw policyViolation(
      'rebalance.daily_cap_usd',
      `${r.daily_cap_usd} USD`,
      `${formatUsd(dayTotal + amount)} USD`,
    );
  }
}

/** The fee cap a rebalance burns with: none for standard transfers, max_fee_bps of the amount for fast ones. */
export function maxFeeOf(doc: PolicyDocument, amount: bigint): bigint {
  if (doc.rebalance.finality !== 'fast') return 0n;
  const fee = (amount * BigInt(doc.rebalance.max_fee_bps) + 9_999n) / 10_000n;
  return fee < amount ? fee : amount - 1n;
}

/**
 * Admits a rebalance in the caller's transaction: 503 without an executor key, the execution
 * switches (403), the executor wallet's policy (404), the request (400), the rebalance section
 * (422 naming the rule; the daily cap counted under the wallet's lock, so concurrent admissions
 * are exact), then the planned row, `rebalance.planned`, an audit fact and the burn job.
 */
export async function admitRebalance(
  tx: DbExecutor,
  deps: AdmissionDeps,
  actor: Actor,
  body: CreateRebalanceRequest,
): Promise<Rebalance> {
  if (!deps.config.executorPrivateKey) {
    throw unavailable('No executor key is configured, so nothing can sign the burn and the mint.', {
      remediation: 'Set PURSER_EXECUTOR_PRIVATE_KEY (the key of PURSER_EXECUTOR_ADDRESS) and restart.',
      next: [],
    });
  }
  const accountId = actor.principal.accountId;
  const wallet = actor.principal.address.toLowerCase();
  const amount = checkRequest(deps.config, deps.registry, body);
  await assertExecutionEnabled(tx, { accountId, wallet }, { cacheKey: deps.db });
  const policy = await getActivePolicy(tx, deps.registry, accountId, wallet);
  if (!policy) throw noPolicyError(wallet);
  const now = deps.clock.now();
  const day = now.toISOString().slice(0, 10);
  await lockRebalanceWallet(tx, wallet);
  checkPolicy(policy.document, body, amount, await rebalancedOn(tx, wallet, day));

  const row: RebalanceRow = {
    id: newUuid(),
    account_id: accountId,
    wallet,
    from_chain_id: body.from_chain_id,
    to_chain_id: body.to_chain_id,
    amount,
    finality: policy.document.rebalance.finality,
    max_fee: maxFeeOf(policy.document, amount),
    status: 'planned',
    phase: 'burn_pending',
    policy_version: policy.version,
    policy_hash: policy.hash,
    day,
    burn_tx: null,
    mint_tx: null,
    message: null,
    message_nonce: null,
    report: {},
    created_at: now,
    updated_at: now,
  };
  await insertRebalance(tx, row);
  const facts = {
    id: row.id,
    from_chain_id: row.from_chain_id,
    to_chain_id: row.to_chain_id,
    amount: row.amount.toString(),
    finality: row.finality,
    max_fee: row.max_fee.toString(),
    policy_version: row.policy_version,
    policy_hash: row.policy_hash,
  };
  await emitEvent(tx, deps.clock, { accountId, kind: 'rebalance.planned', subject: row.id, payload: facts });
  await recordAudit(tx, deps.clock, {
    accountId,
    actor: actorName(actor),
    action: 'rebalance.planned',
    subject: row.id,
    details: facts,
    network: actor.network,
  });
  await enqueueJob(tx, deps.clock, {
    name: BURN_JOB,
    payload: { rebalance_id: row.id },
    singletonKey: row.id,
  });
  return toRebalance(row);
}

/** One of the account's rebalances, or 404. */
export async function getRebalance(db: DbExecutor, accountId: string, id: string): Promise<Rebalance> {
  const row = await findRebalance(db, id, accountId);
  if (!row) throw notFound(`No rebalance ${id} on this account.`);
  return toRebalance(row);
}
