// The run of an intent, one step per job (docs/executor.md). A step claims a planned intent and
// checks it (start.ts), or takes up an executing one; reconciles every slice that may be in
// flight before anything else; ends the run when a slice reverted, the deadline passed or the
// continuations ran out; re-reads the switches and the delegation; plans once (the planner's
// refusals are abort reasons); then executes the next part of the plan as one UserOperation from
// the agent's Kernel account signed by the executor's session key (recorded before it is sent),
// ledgers it (book.ts) and either ends the intent or asks to be run again later: between slices
// no worker waits, the job queue holds the intent.

import { getAddress } from 'viem';
import { entryPoint07Abi, entryPoint07Address } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { BundlerError, UserOperationReceiptTimeoutError } from '../../adapters/bundler/port.ts';
import { NoRelayerError } from '../../adapters/chain/port.ts';
import { findDelegation, type Call, type DelegationRow } from '../delegations/index.ts';
import { findIntentById, saveIntentReport, type IntentRow, type IntentStatus } from '../intents/index.ts';
import { pinnedPolicy } from '../policies/index.ts';
import { requiredPrefundWei, sponsorPrefund } from '../smart-account/index.ts';
import { bookSlice } from './book.ts';
import { finishIntent } from './finish.ts';
import { uncoveredCall } from './grant.ts';
import { releaseLanes, takeLane } from './lanes.ts';
import { newerPolicy, newerPolicyRefusal, runDeadline, venuesInForce } from './newest-policy.ts';
import { makePlan, routableVenues, spendCapNow, swapCalls, unwrapCalls, UNWRAP_VENUE } from './next-slice.ts';
import { refuse, runReport, StepAbort, wallClockMs, type Abort, type RunReport } from './report.ts';
import { grantState, signSessionOperation, type SignedOperation } from './session-operation.ts';
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
  type RunDeps,
} from './start.ts';
import { abandonedSlices, intentSlices, walletSignedOperations, type SliceRecord } from './store.ts';

export type StepOutcome =
  | { state: 'done'; status: IntentStatus | 'missing' }
  | { state: 'continue'; runAt: Date; why: ContinueWhy | 'lane' };

/**
 * Why a run goes on later: the plan's next slice; a receipt not in yet; a slice to redo because its
 * operation was dropped, or lost a race on the account's state (its nonce, its deployment, its
 * permission's enabling) to another operation of the wallet; or (not counted as a continuation)
 * every nonce lane of the wallet busy.
 */
type ContinueWhy = 'next_slice' | 'receipt' | 'dropped' | 'race';

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
    beforeSend: (slice) => sponsor(deps, claimed, slice),
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
  // A version the owner published since admission is in force too (newest-policy.ts).
  const newer = await newerPolicy(deps, claimed);
  const docs = newer ? [doc, newer.document] : [doc];
  const deadlineAt = runDeadline(claimed, docs);
  // A settled operation gives its nonce lane back with its booking.
  const book = (slice: SliceRecord) => async (tx: Parameters<typeof bookSlice>[0], o: SliceOutcome) => {
    await bookSlice(tx, deps, slice, o);
    await releaseLanes(tx, slice.intentId);
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
  if (newer) refuse(newerPolicyRefusal(deps, row, newer, report.plan?.venue ?? null));
  timer.lap('checks');

  // 3. The plan (once), and the part to execute now.
  // The venues every policy in force allows and the grant covers: the plan's and each slice's.
  const route = {
    venues: routableVenues(deps, row.chain_id, venuesInForce(row, docs), delegation.scope),
    scope: delegation.scope,
  };
  const plan = report.plan ?? (await makePlan(deps, row, route.venues));
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

  // A nonce lane of the wallet for the operation; the account's first operation (it deploys the
  // account or enables the permission) runs alone.
  const before = await grantState(deps.chain, row.chain_id, delegation);
  const claim = await takeLane(deps.db, deps.clock, {
    chainId: row.chain_id,
    wallet: row.wallet,
    intentId: row.id,
    exclusive: !before.installed,
    lanes: deps.config.executor.nonceLanes,
  });
  if (!claim) return waitForLane(deps);
  timer.lap('lane');
  const { calls, facts, venue } =
    row.kind === 'gas_topup'
      ? { ...unwrapCalls(deps, row, sellNow, landedParts), venue: UNWRAP_VENUE }
      : await swapCalls(deps, row, route, sellNow, landedParts);
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

  // 4. Signed, recorded, funded, sent, ledgered.
  const signed = await sign(deps, sliceDeps, row, delegation, calls, claim.lane, before);
  if (!signed) return continueLater(deps, row.id, 0, 'race');
  timer.lap('sign');
  let slice: SliceRecord;
  try {
    slice = await recordSignedSlice(
      sliceDeps,
      {
        intentId: row.id,
        seq: settled.length + 1,
        chainId: row.chain_id,
        venue,
        grant: delegation,
        calls,
        facts: { ...facts, timings: timer.facts() },
      },
      signed,
    );
  } catch (err) {
    // Another intent signed the very same operation: only two holders of one lane could.
    if (!isUniqueViolation(err, 'intent_slices_user_op_hash_key')) throw err;
    return continueLater(deps, row.id, 0, 'race');
  }
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
  why: ContinueWhy,
): Promise<StepOutcome> {
  const row = (await findIntentById(deps.db, id))!;
  const report = runReport(row);
  report.continuations += 1;
  await saveIntentReport(deps.db, id, report, deps.clock.now(), 'executing');
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
    // Nothing could pay its prefund: it was never sent, and its nonce is unused.
    if (err instanceof StepAbort) {
      await dropSlice(sliceDeps, slice, onSettled);
      throw err;
    }
    if (err instanceof BundlerError && err.kind === 'rpc' && err.refusal !== 'nonce') {
      await dropSlice(sliceDeps, slice, onSettled);
      if (await lostRace(deps, slice, err)) return continueLater(deps, slice.intentId, 0, 'race');
      throw new StepAbort(refusalAbort(err, 'send'));
    }
    throw err;
  }
}

/** What a bundler's refusal of an operation means for the intent (execution reference §3.9). */
function refusalAbort(err: BundlerError, step: 'estimate' | 'send'): Abort {
  const detail = { step, code: err.code, aa_code: err.aaCode, message: err.message };
  // The account's validation refused it (AA22–AA24): the grant on chain does not cover it.
  if (err.refusal === 'validation') {
    return {
      reason: 'POLICY_VIOLATION',
      detail: { rule: 'delegation', why: 'the chain refused the grant', ...detail },
    };
  }
  if (err.refusal === 'prefund') {
    return {
      reason: 'INSUFFICIENT_BALANCE',
      detail: { token: 'ETH', why: 'the account cannot pay its prefund', ...detail },
    };
  }
  return { reason: 'EXECUTION_FAILED', detail };
}

/**
 * Signs the slice's operation on the intent's nonce lane. A bundler's refusal of the estimate ends
 * the run, unless another operation of the wallet changed the account under it (null: redo).
 */
async function sign(
  deps: RunDeps,
  sliceDeps: SliceDeps,
  row: IntentRow,
  delegation: DelegationRow,
  calls: Call[],
  lane: number,
  before: { deployed: boolean; installed: boolean },
): Promise<SignedOperation | null> {
  try {
    return await signSessionOperation(sliceDeps, row.chain_id, delegation, calls, lane);
  } catch (err) {
    if (!(err instanceof BundlerError && err.kind === 'rpc')) throw err;
    if (racedOnNonce(err)) return null;
    if (err.refusal === 'validation') {
      const now = await grantState(deps.chain, row.chain_id, delegation);
      if (now.deployed !== before.deployed || now.installed !== before.installed) return null;
    }
    throw new StepAbort(refusalAbort(err, 'estimate'));
  }
}

/** Refusals that only a race on the account's nonce or deployment gives (AA25, AA10). */
function racedOnNonce(err: BundlerError): boolean {
  return err.refusal === 'nonce' || err.refusal === 'deployment';
}

/**
 * Whether a bundler's refusal of a recorded operation came from another operation of the wallet
 * that changed the account first: the operation's nonce is used, it deploys an account that has
 * code now, or it enables a permission that is installed now. Such a refusal is never the
 * policy's: the slice is redone.
 */
async function lostRace(deps: RunDeps, slice: SliceRecord, err: BundlerError): Promise<boolean> {
  if (racedOnNonce(err)) return true;
  if (err.refusal !== 'validation') return false;
  const sender = getAddress(slice.op.sender);
  if (slice.op.factory && (await deps.chain.isContract(slice.chainId, sender))) return true;
  const key = slice.op.nonce >> 64n;
  const next = await deps.chain.publicClient(slice.chainId).readContract({
    address: entryPoint07Address,
    abi: entryPoint07Abi,
    functionName: 'getNonce',
    args: [sender, key],
  });
  if (next > slice.op.nonce) return true;
  // Kernel's nonce key starts with its validation mode: 0x01 is enable mode.
  if (key >> 184n === 1n) {
    const intent = await findIntentById(deps.db, slice.intentId);
    const delegation = intent ? await currentDelegation(deps, intent).catch(() => null) : null;
    if (delegation && (await grantState(deps.chain, slice.chainId, delegation)).installed) return true;
  }
  return false;
}

/** Every nonce lane of the wallet is busy: look again shortly, without counting a continuation. */
function waitForLane(deps: RunDeps): StepOutcome {
  return {
    state: 'continue',
    runAt: new Date(deps.clock.now().getTime() + deps.config.executor.receiptPollMs),
    why: 'lane',
  };
}

function isUniqueViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return e?.code === '23505' && e.constraint === constraint;
}

/**
 * Before a recorded operation is sent (again): the relayer deposits at the EntryPoint whatever
 * prefund the account's ETH and deposit lack for all its operations that may run now (the
 * smart-account funding choice: an account with no ETH still runs). The deposit is recorded and
 * booked on its own (docs/smart-accounts.md), whatever becomes of the operation.
 */
async function sponsor(deps: RunDeps, row: IntentRow, slice: SliceRecord): Promise<void> {
  try {
    await sponsorPrefund(
      deps,
      {
        accountId: row.account_id,
        chainId: row.chain_id,
        account: getAddress(row.wallet),
        intentId: row.id,
        sliceSeq: slice.seq,
        requiredWei: async (tx) => {
          const ops = await walletSignedOperations(tx, row.chain_id, row.wallet);
          return ops.reduce((sum, op) => sum + requiredPrefundWei(op), 0n);
        },
      },
      { receiptTimeoutMs: deps.config.executor.receiptTimeoutMs },
    );
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
