// The run of an intent, one step per job (docs/executor.md). A step claims a planned intent and
// checks it (start.ts), or takes up an executing one; reconciles every slice that may be in
// flight before anything else; ends the run when a slice reverted, the deadline passed or the
// continuations ran out; re-reads the switches and the delegation; plans once (the planner's
// refusals are abort reasons); then executes the next part of the plan as one UserOperation from
// the agent's Kernel account signed by the executor's session key (recorded before it is sent),
// ledgers it (book.ts) and either ends the intent or asks to be run again later: between slices
// no worker waits, the job queue holds the intent.

import { encodeFunctionData, getAddress, parseAbi, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { BundlerError, UserOperationReceiptTimeoutError } from '../../adapters/bundler/port.ts';
import { NoRelayerError } from '../../adapters/chain/port.ts';
import { VenueError, type VenueAdapter } from '../../adapters/venues/index.ts';
import { Deadline } from '../../core/http/deadline.ts';
import { findDelegation, type Call, type DelegationRow } from '../delegations/index.ts';
import { findIntentById, type IntentRow, type IntentStatus } from '../intents/index.ts';
import { formatUsd, pinnedPolicy, usdToMicro, type PolicyDocument } from '../policies/index.ts';
import type { PriceReferences } from '../prices/index.ts';
import { planSale } from '../quotes/index.ts';
import { ensurePrefund, requiredPrefundWei } from '../smart-account/index.ts';
import { buildSwap, quoteAllVenues } from '../venues/index.ts';
import { bookSlice } from './book.ts';
import { finishIntent } from './finish.ts';
import { uncoveredCall } from './grant.ts';
import { runReport, wallClockMs, type Abort, type PlanReport, type RunReport } from './report.ts';
import { signSessionOperation, type SignedOperation } from './session-operation.ts';
import {
  dropSlice,
  landSlice,
  recordSignedSlice,
  settleIfDecided,
  type SliceDeps,
  type SliceOutcome,
} from './slices.ts';
import {
  activeDelegation,
  balanceShort,
  startIntent,
  switchedOff,
  unservedChain,
  type ExecutorDeps,
} from './start.ts';
import { abandonedSlices, intentSlices, type SliceFacts, type SliceRecord } from './store.ts';

export interface RunDeps extends ExecutorDeps {
  venues: readonly VenueAdapter[];
  prices: PriceReferences | undefined;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export type StepOutcome =
  | { state: 'done'; status: IntentStatus | 'missing' }
  | { state: 'continue'; runAt: Date; why: 'next_slice' | 'receipt' | 'dropped' };

/** The venue name a gas top-up's unwrap is ledgered against: the chain's wrapped native token. */
export const UNWRAP_VENUE = 'wrapped-native';

const wethAbi = parseAbi(['function withdraw(uint256 wad)']);

/** A step's end by an abort reason: thrown inside a step, turned into the intent's abort. */
class StepAbort extends Error {
  constructor(readonly abort: Abort) {
    super(`${abort.reason}: ${JSON.stringify(abort.detail)}`);
  }
}

const refuse = (abort: Abort | null): void => {
  if (abort) throw new StepAbort(abort);
};

/** Runs one step of the intent's run; see the file comment. */
export async function runIntentStep(deps: RunDeps, id: string): Promise<StepOutcome> {
  let row = await findIntentById(deps.db, id);
  if (!row) return { state: 'done', status: 'missing' };
  if (row.status === 'planned') {
    const started = await startIntent(deps, id);
    if (started.state === 'not_planned') return { state: 'done', status: 'cancelled' };
    if (started.state === 'aborted') return { state: 'done', status: 'aborted' };
    row = started.intent;
  } else if (row.status !== 'executing') {
    return { state: 'done', status: row.status };
  }
  try {
    return await advance(deps, row);
  } catch (err) {
    if (!(err instanceof StepAbort)) throw err;
    await finishIntent(deps, id, { status: 'aborted', abort: err.abort });
    return { state: 'done', status: 'aborted' };
  }
}

/**
 * Ends an executing intent with EXECUTION_ERROR after its job failed for the last time (its fills
 * stay ledgered); false when it is not executing.
 */
export async function failIntent(deps: RunDeps, id: string, message: string): Promise<boolean> {
  const row = await findIntentById(deps.db, id);
  if (row?.status !== 'executing') return false;
  await finishIntent(deps, id, {
    status: 'aborted',
    abort: { reason: 'EXECUTION_ERROR', detail: { message, unconfirmed: await unconfirmed(deps, id) } },
  });
  return true;
}

/**
 * Settles the slices of ended runs that the chain has decided since (a broadcast the run gave up
 * on that landed later is ledgered like any fill); never sends anything. Returns how many settled.
 */
export async function reconcileAbandonedSlices(deps: RunDeps): Promise<number> {
  const key = deps.config.executorPrivateKey;
  if (!key || !deps.bundler) return 0;
  const sliceDeps: SliceDeps = {
    db: deps.db,
    clock: deps.clock,
    chain: deps.chain,
    bundler: deps.bundler,
    sessionKey: privateKeyToAccount(key),
  };
  let settled = 0;
  for (const slice of await abandonedSlices(deps.db)) {
    if (!deps.chain.supports(slice.chainId) || !deps.bundler.supports(slice.chainId)) continue;
    const outcome = await settleIfDecided(sliceDeps, slice, async (tx, o) => {
      await bookSlice(tx, deps, slice, o);
    });
    if (outcome) settled++;
  }
  return settled;
}

async function unconfirmed(deps: RunDeps, id: string): Promise<string[]> {
  return (await intentSlices(deps.db, id))
    .filter((s) => s.state === 'signed')
    .map((s) => s.hash.toLowerCase());
}

async function advance(deps: RunDeps, claimed: IntentRow): Promise<StepOutcome> {
  const timer = stepTimer();
  // The chain and the key again: the configuration may have changed since the claim.
  refuse(unservedChain(deps, claimed.chain_id));
  const key = deps.config.executorPrivateKey;
  if (!key) refuse({ reason: 'EXECUTOR_UNCONFIGURED', detail: { missing: 'PURSER_EXECUTOR_PRIVATE_KEY' } });
  const sliceDeps: SliceDeps = {
    db: deps.db,
    clock: deps.clock,
    chain: deps.chain,
    bundler: deps.bundler!,
    sessionKey: privateKeyToAccount(key!),
  };
  const policy = await pinnedPolicy(deps.db, deps.registry, {
    accountId: claimed.account_id,
    wallet: claimed.wallet,
    version: claimed.policy_version,
    hash: claimed.policy_hash,
  });
  if (!policy) {
    refuse({
      reason: 'POLICY_VIOLATION',
      detail: {
        rule: 'policy',
        why: 'the pinned policy version is no longer readable with its hash',
        policy_version: claimed.policy_version,
        policy_hash: claimed.policy_hash,
      },
    });
  }
  const doc = policy!.document;
  const deadlineAt = new Date(claimed.created_at.getTime() + doc.execution.deadline_minutes * 60_000);
  const book = (slice: SliceRecord) => async (tx: Parameters<typeof bookSlice>[0], o: SliceOutcome) => {
    await bookSlice(tx, deps, slice, o);
  };

  // 1. Whatever may be in flight, before anything else.
  for (const slice of (await intentSlices(deps.db, claimed.id)).filter((s) => s.state === 'signed')) {
    const landed = await land(deps, sliceDeps, slice, book(slice), deadlineAt);
    if (landed) return landed;
  }

  // 2. Where the run stands, and whether it may go on.
  timer.lap('reconcile');
  const row = (await findIntentById(deps.db, claimed.id))!;
  const report = runReport(row);
  const settled = await intentSlices(deps.db, row.id);
  const reverted = settled.find((s) => s.state === 'reverted');
  if (reverted) refuse(executionFailed(reverted, report));
  const now = deps.clock.now();
  if (now >= deadlineAt) {
    refuse(interrupted('the deadline passed', { deadline_at: deadlineAt.toISOString() }));
  }
  if (report.continuations >= deps.config.executor.maxContinuations) {
    refuse(interrupted('the continuations ran out', { continuations: report.continuations }));
  }
  refuse(await switchedOff(deps.db, row));
  const delegation = await currentDelegation(deps, row);
  refuse(spendCapNow(deps, row, doc));
  timer.lap('checks');

  // 3. The plan (once), and the part to execute now.
  const plan = report.plan ?? (await makePlan(deps, row, doc));
  timer.lap('plan');
  const landedParts = settled.filter((s) => s.state === 'landed').length;
  const sold = BigInt(report.totals.sold);
  const remaining = BigInt(row.params.sell_amount) - sold;
  if (landedParts >= plan.slices.length || remaining <= 0n) {
    await finishIntent(deps, row.id, { status: 'filled' });
    return { state: 'done', status: 'filled' };
  }
  const last = landedParts === plan.slices.length - 1;
  const sellNow = last ? remaining : BigInt(plan.slices[landedParts]!);
  refuse(await balanceShort(deps, row, sellNow));
  const { calls, facts } =
    row.kind === 'gas_topup'
      ? unwrapCalls(deps, row, sellNow, landedParts)
      : await swapCalls(deps, row, plan, sellNow, landedParts);
  timer.lap('quote_build');
  const outside = uncoveredCall(delegation.scope, calls);
  if (outside) {
    refuse({
      reason: 'POLICY_VIOLATION',
      detail: {
        rule: 'delegation',
        delegation: delegation.id,
        why: `outside the delegated scope: ${outside}`,
      },
    });
  }

  // 4. Signed, funded, recorded, sent, ledgered.
  const signed = await sign(sliceDeps, row, delegation, calls);
  timer.lap('sign');
  const sponsoredWei = await sponsor(deps, row, signed);
  timer.lap('sponsor');
  const slice = await recordSignedSlice(
    sliceDeps,
    {
      intentId: row.id,
      seq: settled.length + 1,
      chainId: row.chain_id,
      venue: row.kind === 'gas_topup' ? UNWRAP_VENUE : plan.venue,
      grant: delegation,
      calls,
      facts: { ...facts, sponsored_wei: sponsoredWei.toString(), timings: timer.facts() },
    },
    signed,
  );
  const waiting = await land(deps, sliceDeps, slice, book(slice), deadlineAt);
  if (waiting) return waiting;
  const outcome = (await intentSlices(deps.db, row.id)).find((s) => s.seq === slice.seq)!;
  if (outcome.state === 'reverted')
    refuse(executionFailed(outcome, runReport((await findIntentById(deps.db, row.id))!)));
  if (outcome.state === 'dropped') return continueLater(deps, row.id, 0, 'dropped');
  if (landedParts + 1 >= plan.slices.length) {
    await finishIntent(deps, row.id, { status: 'filled' });
    return { state: 'done', status: 'filled' };
  }
  return continueLater(deps, row.id, plan.interval_ms, 'next_slice');
}

/**
 * Where a step's time goes, for the slice's report: milliseconds of each phase, and the wall-clock
 * start of the step (the slice's "planned" moment), so the report can say how long it took until
 * its fill was ledgered.
 */
function stepTimer() {
  const startedAt = wallClockMs();
  let last = performance.now();
  const laps: Record<string, number> = {};
  return {
    lap(name: string) {
      const now = performance.now();
      laps[name] = Math.round(now - last);
      last = now;
    },
    facts: () => ({ started_at_ms: startedAt, recorded_at_ms: wallClockMs(), ms: { ...laps } }),
  };
}

function interrupted(why: string, more: Record<string, unknown> = {}): Abort {
  return { reason: 'EXECUTION_INTERRUPTED', detail: { why, ...more, unconfirmed: [] } };
}

function executionFailed(slice: SliceRecord, report: RunReport): Abort {
  const entry = report.slices.find((s) => s.seq === slice.seq);
  return {
    reason: 'EXECUTION_FAILED',
    detail: {
      slice: slice.seq,
      user_op_hash: slice.hash.toLowerCase(),
      tx_hash: slice.txHash?.toLowerCase() ?? null,
      ...(entry?.revert_reason ? { revert_reason: entry.revert_reason } : {}),
    },
  };
}

/** Counts one more continuation and says when to run again. */
async function continueLater(
  deps: RunDeps,
  id: string,
  afterMs: number,
  why: 'next_slice' | 'receipt' | 'dropped',
): Promise<StepOutcome> {
  const row = (await findIntentById(deps.db, id))!;
  const report = runReport(row);
  report.continuations += 1;
  await deps.db
    .updateTable('intents')
    .set({ report: JSON.stringify(report), updated_at: deps.clock.now() })
    .where('id', '=', id)
    .where('status', '=', 'executing')
    .execute();
  return { state: 'continue', runAt: new Date(deps.clock.now().getTime() + afterMs), why };
}

/**
 * Lands a recorded slice (its fill ledgered with it). A receipt that does not come in time asks
 * for a later step, or ends the run naming the operation once the deadline passed; a bundler that
 * refuses the operation drops it and ends the run with the refusal's reason. Null when it settled.
 */
async function land(
  deps: RunDeps,
  sliceDeps: SliceDeps,
  slice: SliceRecord,
  onSettled: (tx: Parameters<typeof bookSlice>[0], o: SliceOutcome) => Promise<void>,
  deadlineAt: Date,
): Promise<StepOutcome | null> {
  const wait = {
    timeoutMs: deps.config.executor.receiptTimeoutMs,
    pollIntervalMs: deps.config.executor.receiptPollMs,
  };
  try {
    await landSlice(sliceDeps, slice, wait, onSettled);
    return null;
  } catch (err) {
    if (err instanceof UserOperationReceiptTimeoutError) {
      if (deps.clock.now() >= deadlineAt) {
        throw new StepAbort({
          reason: 'EXECUTION_INTERRUPTED',
          detail: {
            why: 'a broadcast was still unconfirmed at the deadline',
            deadline_at: deadlineAt.toISOString(),
            unconfirmed: [slice.hash.toLowerCase()],
          },
        });
      }
      return continueLater(deps, slice.intentId, deps.config.executor.receiptPollMs, 'receipt');
    }
    if (err instanceof BundlerError && err.kind === 'rpc' && err.aaCode !== 'AA25') {
      await dropSlice(sliceDeps, slice, onSettled);
      throw new StepAbort(refusalAbort(err, 'send'));
    }
    throw err;
  }
}

/** What a bundler's refusal of an operation means for the intent (execution reference §3.9). */
function refusalAbort(err: BundlerError, step: 'estimate' | 'send'): Abort {
  const detail = { step, code: err.code, aa_code: err.aaCode, message: err.message };
  // AA22/AA23/AA24: the account's validation refused it: the grant on chain does not cover it.
  if (err.aaCode && ['AA22', 'AA23', 'AA24'].includes(err.aaCode)) {
    return {
      reason: 'POLICY_VIOLATION',
      detail: { rule: 'delegation', why: 'the chain refused the grant', ...detail },
    };
  }
  if (err.aaCode === 'AA21') {
    return {
      reason: 'INSUFFICIENT_BALANCE',
      detail: { token: 'ETH', why: 'the account cannot pay its prefund', ...detail },
    };
  }
  return { reason: 'EXECUTION_FAILED', detail };
}

/** Signs the slice's operation; a bundler's refusal of the estimate ends the run. */
async function sign(
  sliceDeps: SliceDeps,
  row: IntentRow,
  delegation: DelegationRow,
  calls: Call[],
): Promise<SignedOperation> {
  try {
    return await signSessionOperation(sliceDeps, row.chain_id, delegation, calls);
  } catch (err) {
    if (err instanceof BundlerError && err.kind === 'rpc') throw new StepAbort(refusalAbort(err, 'estimate'));
    throw err;
  }
}

/**
 * The relayer deposits at the EntryPoint whatever prefund the account's ETH and deposit lack
 * (the smart-account funding choice: an account with no ETH still runs); returns the wei deposited.
 */
async function sponsor(deps: RunDeps, row: IntentRow, signed: SignedOperation): Promise<bigint> {
  try {
    const funded = await ensurePrefund(
      deps.chain,
      row.chain_id,
      getAddress(row.wallet),
      requiredPrefundWei(signed.op),
    );
    return funded.depositedWei;
  } catch (err) {
    if (!(err instanceof NoRelayerError)) throw err;
    throw new StepAbort({
      reason: 'INSUFFICIENT_BALANCE',
      detail: { token: 'ETH', why: 'the account cannot pay its prefund and no relayer is configured' },
    });
  }
}

/** The wallet's newest active delegation now (a revocation mid-intent stops the next slice). */
async function currentDelegation(deps: RunDeps, row: IntentRow): Promise<DelegationRow> {
  const nowSecs = Math.floor(deps.clock.now().getTime() / 1000);
  const id = await activeDelegation(deps.db, row, nowSecs);
  const delegation = id ? await findDelegation(deps.db, row.account_id, id) : null;
  if (!delegation) {
    throw new StepAbort({
      reason: 'NO_DELEGATION',
      detail: {
        wallet: row.wallet,
        chain_id: row.chain_id,
        why: 'no active session-key delegation (revoked or expired during the run)',
      },
    });
  }
  return delegation;
}

/**
 * SPEND_CAP_EXCEEDED when the sale, valued now, is over the cap it was admitted under
 * (`spend.per_tx_usd`, or `gas.max_top_up_usd` for a gas top-up): a sell leg that is not a USD
 * stable is valued at the current price reference, as admission valued it; when no reference can
 * value it now and neither leg is a USD stable, nothing can say what it spends.
 */
function spendCapNow(deps: RunDeps, row: IntentRow, doc: PolicyDocument): Abort | null {
  const sell = deps.registry.findToken(row.chain_id, row.params.sell_token);
  if (!sell || sell.stable) return null;
  const [rule, limitUsd] =
    row.kind === 'gas_topup'
      ? (['gas.max_top_up_usd', doc.gas.max_top_up_usd] as const)
      : (['spend.per_tx_usd', doc.spend.per_tx_usd] as const);
  const valued = deps.prices?.valueUsdMicro(row.chain_id, sell.address, BigInt(row.params.sell_amount));
  if (!valued?.ok) {
    if (deps.registry.findToken(row.chain_id, row.params.buy_token)?.stable) return null;
    return {
      reason: 'SPEND_CAP_EXCEEDED',
      detail: {
        rule,
        why: `neither leg is a USD stable and no price reference values ${sell.symbol} now`,
        ...(valued ? { reference: valued.refusal.kind } : {}),
      },
    };
  }
  if (valued.usdMicro <= usdToMicro(limitUsd)) return null;
  return {
    reason: 'SPEND_CAP_EXCEEDED',
    detail: {
      rule,
      limit_usd: limitUsd,
      value_usd: formatUsd(valued.usdMicro),
      admitted_value_usd: row.params.value_usd,
    },
  };
}

/** Plans the intent and keeps the plan in its report; the planner's refusals end the run. */
async function makePlan(deps: RunDeps, row: IntentRow, doc: PolicyDocument): Promise<PlanReport> {
  const now = deps.clock.now().toISOString();
  let plan: PlanReport;
  if (row.kind === 'gas_topup') {
    plan = {
      venue: UNWRAP_VENUE,
      slice_count: 1,
      slices: [row.params.sell_amount],
      interval_ms: 0,
      impact_bps_at_full_size: 0,
      estimated_buy_total: row.params.sell_amount,
      best_full_size_buy_amount: row.params.sell_amount,
      planned_at: now,
    };
  } else {
    const planned = await planSale(
      deps,
      {
        chainId: row.chain_id,
        sellToken: getAddress(row.params.sell_token),
        buyToken: getAddress(row.params.buy_token),
        sellAmount: BigInt(row.params.sell_amount),
        taker: getAddress(row.wallet),
        allow: row.params.venues.filter((v) => (doc.execution.venues as readonly string[]).includes(v)),
        // Admission checked both; a registry changed since (a restart) may have dropped one.
        tokensSupported:
          deps.registry.findToken(row.chain_id, row.params.sell_token) !== null &&
          deps.registry.findToken(row.chain_id, row.params.buy_token) !== null,
        slippageBps: row.params.max_slippage_bps,
      },
      new Deadline(deps.config.venues.timeoutMs * 3),
    );
    if (!planned.result.ok) {
      // Which venues were left out and which failed, beside the planner's own words.
      const { reason, detail } = planned.result.abort;
      const asked = planned.full;
      throw new StepAbort({
        reason,
        detail: {
          ...detail,
          ...(asked.skipped.length > 0 ? { skipped: asked.skipped } : {}),
          ...(asked.failures.length > 0
            ? { failures: asked.failures.map((f) => ({ venue: f.venue, kind: f.kind, message: f.message })) }
            : {}),
        },
      });
    }
    const p = planned.result.plan;
    plan = {
      venue: p.venue,
      slice_count: p.sliceCount,
      slices: p.slices.map(String),
      interval_ms: p.intervalMs,
      impact_bps_at_full_size: p.impactBpsAtFullSize,
      estimated_buy_total: p.estimatedBuyTotal.toString(),
      best_full_size_buy_amount: planned.result.best.buyAmount.toString(),
      planned_at: now,
    };
  }
  const report = runReport(row);
  report.plan = plan;
  await deps.db
    .updateTable('intents')
    .set({ report: JSON.stringify(report), updated_at: deps.clock.now() })
    .where('id', '=', row.id)
    .where('status', '=', 'executing')
    .execute();
  return plan;
}

/** A gas top-up's one call: the wrapped native token's `withdraw`. */
function unwrapCalls(
  deps: RunDeps,
  row: IntentRow,
  amount: bigint,
  part: number,
): { calls: Call[]; facts: SliceFacts } {
  const wrapped = deps.registry.chain(row.chain_id)!.wrappedNative;
  return {
    calls: [
      {
        to: wrapped,
        data: encodeFunctionData({ abi: wethAbi, functionName: 'withdraw', args: [amount] }),
        value: 0n,
      },
    ],
    facts: {
      part,
      sell_amount: amount.toString(),
      quoted_buy_amount: amount.toString(),
      min_buy_amount: amount.toString(),
      reference: { num: '1', den: '1' },
    },
  };
}

/**
 * A conversion slice's calls: a fresh quote for the part on the plan's venue, checked against the
 * reference (PRICE_GAP beyond twice the budget), built as approve and swap with the minimum out
 * from the slippage budget.
 */
async function swapCalls(
  deps: RunDeps,
  row: IntentRow,
  plan: PlanReport,
  amount: bigint,
  part: number,
): Promise<{ calls: Call[]; facts: SliceFacts }> {
  const venueDeps = { db: deps.db, venues: deps.venues, venueTimeoutMs: deps.config.venues.timeoutMs };
  const deadline = new Deadline(deps.config.venues.timeoutMs * 2);
  const wallet: Address = getAddress(row.wallet);
  const sellToken = getAddress(row.params.sell_token);
  const buyToken = getAddress(row.params.buy_token);
  const fresh = await quoteAllVenues(venueDeps, {
    chainId: row.chain_id,
    sellToken,
    buyToken,
    sellAmount: amount,
    taker: wallet,
    allow: [plan.venue],
    deadline,
  });
  const quote = fresh.quotes[0];
  if (!quote) {
    const off = fresh.skipped.find((s) => s.why === 'switched_off');
    const failure = fresh.failures[0];
    throw new StepAbort(
      off || failure?.kind !== 'no_quote'
        ? {
            reason: 'VENUE_UNAVAILABLE',
            detail: {
              venue: plan.venue,
              part,
              why: off ? `switched off: ${off.detail ?? ''}` : (failure?.message ?? 'not asked'),
            },
          }
        : { reason: 'VENUE_NO_QUOTE', detail: { venue: plan.venue, part, why: failure.message } },
    );
  }
  const cross = deps.prices?.crossPrice(row.chain_id, sellToken, buyToken);
  const reference = cross?.ok ? { num: cross.price.num, den: cross.price.den } : null;
  if (reference) {
    const gap =
      Number((quote.buyAmount * reference.den * 1_000_000n) / (amount * reference.num)) / 1_000_000 - 1;
    const limit = 2 * row.params.max_slippage_bps;
    if (Math.abs(gap) * 10_000 > limit) {
      throw new StepAbort({
        reason: 'PRICE_GAP',
        detail: { venue: plan.venue, part, gap_bps: Math.round(gap * 10_000 * 100) / 100, limit_bps: limit },
      });
    }
  }
  let swap;
  try {
    swap = await buildSwap(
      venueDeps,
      {
        quote,
        taker: wallet,
        slippageBps: row.params.max_slippage_bps,
        swapDeadline: BigInt(
          Math.floor(deps.clock.now().getTime() / 1000) + deps.config.executor.swapTtlSeconds,
        ),
        deadline,
      },
      deps.clock.now(),
    );
  } catch (err) {
    if (!(err instanceof VenueError)) throw err;
    throw new StepAbort({
      reason: err.kind === 'no_quote' ? 'VENUE_NO_QUOTE' : 'VENUE_UNAVAILABLE',
      detail: { venue: plan.venue, part, step: 'build', why: err.message },
    });
  }
  return {
    calls: swap.calls,
    facts: {
      part,
      sell_amount: amount.toString(),
      quoted_buy_amount: quote.buyAmount.toString(),
      min_buy_amount: swap.minBuyAmount.toString(),
      reference: reference ? { num: reference.num.toString(), den: reference.den.toString() } : null,
    },
  };
}
