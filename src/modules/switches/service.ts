// Execution switches: an operator switches execution off for the environment, a venue, a wallet or
// an account (`purser ops switch`, /v1/ops/switches); an account switches itself off with
// POST /v1/account/panic. Every route that executes (intents, prediction-market orders, hosted
// credential intake…) calls `assertExecutionEnabled` before it transmits anything; reads,
// cancels and pre-flight checks never do, so they keep working while a switch is off.

import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { AppError, invalidRequest, notFound, type NextStep } from '../../core/errors/app-error.ts';
import { actorName, type Actor } from '../../core/http/actor.ts';
import { findAccountById } from '../account/index.ts';
import { recordAudit, type NetworkContext } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import { CONVERSION_VENUES } from '../../adapters/venues/port.ts';
import { PREDICTION_MARKET_VENUES } from '../policies/document.ts';
import {
  accountsOfWallet,
  deleteOffSwitch,
  findOffSwitch,
  insertOffSwitchIfOn,
  listOffSwitches,
  offSwitchesFor,
  offSwitchesOfAccount,
  offVenueSwitches,
  upsertOffSwitch,
  walletsOfAccount,
  SWITCH_SCOPES,
  type OffSwitch,
  type SwitchScope,
  type SwitchSource,
} from './store.ts';

export { SWITCH_SCOPES, type OffSwitch, type SwitchScope, type SwitchSource };

/**
 * Every venue a switch can name, in one list: the conversion venues Purser has an adapter for, the
 * prediction-market venues, and `credential_intake` (hosted venue-credential intake).
 */
export const SWITCH_VENUES = [
  ...CONVERSION_VENUES,
  ...PREDICTION_MARKET_VENUES,
  'credential_intake',
] as const;
export type SwitchVenue = (typeof SWITCH_VENUES)[number];

export const SWITCH_REASON_MAX = 500;
/** The reason a panic without one shows to callers. */
export const DEFAULT_PANIC_REASON = 'The account switched its own execution off (panic).';

/** A switch that is off, as callers and operators see it. */
export interface SwitchView {
  scope: SwitchScope;
  /** null for the environment. */
  target: string | null;
  source: SwitchSource;
  reason: string;
  /** `operator`, or the credential that panicked (`session:<id>`, `key:<id>`). */
  set_by: string;
  set_at: string;
}

export function switchView(row: OffSwitch): SwitchView {
  return {
    scope: row.scope,
    target: row.scope === 'environment' ? null : row.target,
    source: row.source,
    reason: row.reason,
    set_by: row.set_by,
    set_at: new Date(row.set_at).toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// The check on the request path

const CACHE_MS = 2_000;
const CACHE_MAX_ENTRIES = 10_000;
interface CachedOff {
  off: OffSwitch[];
  readAt: number;
  generation: number;
}
const cache = new WeakMap<object, Map<string, CachedOff>>();
/** Bumped by every change in this process, so this process sees its own change at once. */
let generation = 0;

/**
 * Forget every cached answer of this process. The change functions below call it; a caller that
 * changed a switch in a transaction calls it again once that transaction committed (a read that
 * ran between the change and the commit may have cached the old state).
 */
export function switchesChanged(): void {
  generation += 1;
}

export interface ExecutionTarget {
  accountId: string;
  /** The wallet that would act (any case). */
  wallet?: string | null;
  /** The venue that would be used (one of SWITCH_VENUES). */
  venue?: SwitchVenue | null;
}

export interface AssertExecutionOptions {
  /** The cache is kept per key (default: `db`); pass the pool when `db` is a transaction. */
  cacheKey?: object;
  /** Monotonic milliseconds (default: performance.now()); tests pass their own. */
  nowMs?: number;
  /** Skip the cache: read the switches in force now (inside the executing transaction). */
  fresh?: boolean;
}

/** Which switch is named when several are off: the widest first. */
const PRECEDENCE: Array<[SwitchScope, SwitchSource]> = [
  ['environment', 'operator'],
  ['account', 'operator'],
  ['account', 'panic'],
  ['wallet', 'operator'],
  ['venue', 'operator'],
];

/**
 * Refuses with 403 EXECUTION_DISABLED when the environment, the account, the wallet or the venue
 * of an execution is switched off, naming the switch and its reason. One query; its answer is
 * cached for at most two seconds per (account, wallet, venue), so a change made by another
 * process takes effect within two seconds and one made by this process at once. Every route
 * that executes calls it before transmitting anything; reads and checks never do.
 */
export async function assertExecutionEnabled(
  db: DbExecutor,
  target: ExecutionTarget,
  options: AssertExecutionOptions = {},
): Promise<void> {
  const wallet = target.wallet ? target.wallet.toLowerCase() : null;
  const venue = target.venue ?? null;
  const key = `${target.accountId}|${wallet ?? ''}|${venue ?? ''}`;
  const nowMs = options.nowMs ?? performance.now();
  const cacheKey = options.cacheKey ?? db;
  let entries = cache.get(cacheKey);
  const cached = options.fresh ? undefined : entries?.get(key);
  let off: OffSwitch[];
  if (cached && cached.generation === generation && nowMs - cached.readAt < CACHE_MS) {
    off = cached.off;
  } else {
    const readGeneration = generation;
    off = await offSwitchesFor(db, target.accountId, wallet ? [wallet] : [], venue);
    if (!entries) {
      entries = new Map();
      cache.set(cacheKey, entries);
    }
    if (entries.size >= CACHE_MAX_ENTRIES) entries.clear();
    entries.set(key, { off, readAt: nowMs, generation: readGeneration });
  }
  const first = firstByPrecedence(off);
  if (first) throw executionDisabled(first);
}

/**
 * Every switch that is off and touches an execution by the account through `wallet`: the
 * environment, the account (operator and panic), the wallet and every venue, the widest first
 * (the order of the precedence above, then by target). Read now, never cached: the pre-flight
 * check (POST /v1/checks) reports them as refused rules.
 */
export async function switchesOffFor(
  db: DbExecutor,
  accountId: string,
  wallet: string,
): Promise<OffSwitch[]> {
  const off = await offSwitchesOfAccount(db, accountId, [wallet.toLowerCase()]);
  return PRECEDENCE.flatMap(([scope, source]) => off.filter((s) => s.scope === scope && s.source === source));
}

/**
 * The venues the operator switched off (platform-wide), by venue name with the reason. Read now,
 * never cached, so a switch removes a venue from quoting and planning at once, in every process.
 */
export async function venuesSwitchedOff(db: DbExecutor): Promise<Map<string, SwitchView>> {
  const off = await offVenueSwitches(db);
  return new Map(off.map((s) => [s.target, switchView(s)]));
}

/**
 * The operator's switch of one venue (platform-wide), read now, never cached: the 403 it
 * answers, or null while the venue is on. For what only the venue's switch governs (hosted
 * credential intake), not executions (assertExecutionEnabled covers those).
 */
export async function venueSwitchRefusal(db: DbExecutor, venue: SwitchVenue): Promise<AppError | null> {
  const off = (await offVenueSwitches(db)).find((s) => s.target === venue);
  return off ? executionDisabled(off) : null;
}

function firstByPrecedence(off: OffSwitch[]): OffSwitch | undefined {
  for (const [scope, source] of PRECEDENCE) {
    const hit = off.find((s) => s.scope === scope && s.source === source);
    if (hit) return hit;
  }
  return undefined;
}

const READS_REMAIN = 'Reads, cancels and pre-flight checks (POST /v1/checks) keep working';

/** The 403 a switched-off execution answers: which switch, who set it, and why. */
export function executionDisabled(s: OffSwitch): AppError {
  const why = `Reason: ${s.reason}`;
  let message: string;
  let remediation = `${READS_REMAIN}; retry once the operator switches execution back on.`;
  let next: NextStep[] | undefined;
  switch (s.scope) {
    case 'environment':
      message = `Execution is switched off for the whole environment by the operator. ${why}`;
      break;
    case 'account':
      if (s.source === 'panic') {
        message =
          `Execution is switched off for this account: panic by ${s.set_by} at ` +
          `${new Date(s.set_at).toISOString()}. ${why}`;
        remediation = `${READS_REMAIN}. An admin credential of the account switches execution back on with DELETE /v1/account/panic.`;
        next = [{ method: 'DELETE', path: '/v1/account/panic', why: 'Lift the panic (admin scope).' }];
      } else {
        message = `Execution is switched off for this account by the operator. ${why}`;
      }
      break;
    case 'wallet':
      message = `Execution is switched off for wallet ${s.target} by the operator. ${why}`;
      break;
    case 'venue':
      message =
        s.target === 'credential_intake'
          ? `Hosted credential intake is switched off by the operator. ${why}`
          : `Execution is switched off for venue ${s.target} by the operator. ${why}`;
      remediation =
        s.target === 'credential_intake'
          ? `${READS_REMAIN}; use the client-signed flow (store the credential without a signer key), or retry once intake is back on.`
          : `${READS_REMAIN}; use another venue, or retry once the operator switches ${s.target} back on.`;
      break;
  }
  return new AppError('EXECUTION_DISABLED', message, { remediation, ...(next ? { next } : {}) });
}

// ---------------------------------------------------------------------------------------------
// Operator changes

export interface SwitchChange {
  scope: SwitchScope;
  target?: string | null | undefined;
  enabled: boolean;
  /** Required when switching off; shown to callers. */
  reason?: string | null | undefined;
}

export interface SwitchState {
  scope: SwitchScope;
  target: string | null;
  enabled: boolean;
  reason: string | null;
  set_by: string | null;
  set_at: string | null;
}

function isVenue(name: string): name is SwitchVenue {
  return (SWITCH_VENUES as readonly string[]).includes(name);
}

/** The reason as stored: trimmed, 1 to 500 characters. */
function cleanReason(reason: string | null | undefined, required: boolean): string | null {
  const trimmed = reason?.trim() ?? '';
  if (!trimmed) {
    if (required) throw invalidRequest('reason is required when switching execution off.');
    return null;
  }
  if (trimmed.length > SWITCH_REASON_MAX)
    throw invalidRequest(`reason must be at most ${SWITCH_REASON_MAX} characters.`);
  return trimmed;
}

/**
 * Checks a change and returns its stored target ('' for the environment). Throws 400 for an
 * unknown scope, a missing or unknown target and 404 for an unknown account; nothing is written.
 */
export async function normaliseSwitchTarget(
  db: DbExecutor,
  scope: string,
  target: string | null | undefined,
): Promise<string> {
  const given = target?.trim() ?? '';
  switch (scope) {
    case 'environment':
      if (given) throw invalidRequest('The environment switch takes no target.');
      return '';
    case 'venue':
      if (!given) throw invalidRequest(`A venue switch needs a target: one of ${SWITCH_VENUES.join(', ')}.`);
      if (!isVenue(given))
        throw invalidRequest(`Unknown venue ${given}: one of ${SWITCH_VENUES.join(', ')}.`);
      return given;
    case 'wallet':
      if (!/^0x[0-9a-fA-F]{40}$/.test(given))
        throw invalidRequest('A wallet switch needs a target: a 0x address of 40 hex digits.');
      return given.toLowerCase();
    case 'account': {
      if (!given) throw invalidRequest('An account switch needs a target: an account id (acc_…).');
      const account = await findAccountById(db, given);
      if (!account) throw notFound(`No account ${given}.`);
      return account.id;
    }
    default:
      throw invalidRequest(`Unknown scope ${scope}: one of ${SWITCH_SCOPES.join(', ')}.`);
  }
}

/**
 * Operator: switches execution off (with a reason) or back on for one scope, in the caller's
 * transaction. Switching off what is off replaces its reason; switching on what is on changes
 * nothing. Either way an audit fact by `operator` records the call; an account switch that
 * changed also emits `account.panic` / `account.unpanic` (source `operator`). An operator never
 * lifts an account's own panic, and an account never lifts the operator's account switch.
 */
export async function setSwitch(
  tx: DbExecutor,
  clock: Clock,
  change: SwitchChange,
  network: NetworkContext | null,
): Promise<SwitchState> {
  const target = await normaliseSwitchTarget(tx, change.scope, change.target);
  const reason = cleanReason(change.reason, !change.enabled);
  const now = clock.now();
  let row: OffSwitch | undefined;
  let changed: boolean;
  if (change.enabled) {
    changed = (await deleteOffSwitch(tx, change.scope, target, 'operator')) !== undefined;
  } else {
    const before = await findOffSwitch(tx, change.scope, target, 'operator');
    row = await upsertOffSwitch(tx, {
      scope: change.scope,
      target,
      source: 'operator',
      reason: reason ?? '',
      setBy: 'operator',
      at: now,
    });
    changed = before === undefined;
  }
  switchesChanged();

  const accounts =
    change.scope === 'account'
      ? [target]
      : change.scope === 'wallet'
        ? await accountsOfWallet(tx, target)
        : [];
  const details = {
    scope: change.scope,
    target: change.scope === 'environment' ? null : target,
    enabled: change.enabled,
    reason,
    changed,
  };
  const action = change.enabled ? 'ops.switch_on' : 'ops.switch_off';
  for (const accountId of accounts.length ? accounts : [null]) {
    await recordAudit(tx, clock, {
      accountId,
      actor: 'operator',
      action,
      subject: target || null,
      details,
      network,
    });
  }
  if (change.scope === 'account' && changed) {
    await emitAccountSwitchEvent(tx, clock, target, change.enabled, row, 'operator');
  }
  return {
    scope: change.scope,
    target: change.scope === 'environment' ? null : target,
    enabled: change.enabled,
    reason: row?.reason ?? null,
    set_by: row?.set_by ?? null,
    set_at: row ? new Date(row.set_at).toISOString() : null,
  };
}

/** Every switch that is off (operators). */
export async function listSwitches(db: DbExecutor): Promise<SwitchView[]> {
  return (await listOffSwitches(db)).map(switchView);
}

// ---------------------------------------------------------------------------------------------
// Panic

export interface AccountSwitchState {
  account_id: string;
  /** False while the environment or the account (panic or operator) is switched off. */
  execution_enabled: boolean;
  /** The account's own switch, or null when it has not panicked. */
  panic: SwitchView | null;
  /**
   * Every switch that is off and touches the account: the environment, the account (panic and
   * operator), its wallets (its address and those it has policies for), and every venue.
   */
  switches: SwitchView[];
}

/** The switches that touch one account, and whether it may execute at all. */
export async function accountSwitchState(db: DbExecutor, accountId: string): Promise<AccountSwitchState> {
  const wallets = await walletsOfAccount(db, accountId);
  const off = await offSwitchesOfAccount(db, accountId, wallets);
  const panic = off.find((s) => s.scope === 'account' && s.source === 'panic');
  return {
    account_id: accountId,
    execution_enabled: !off.some((s) => s.scope === 'environment' || s.scope === 'account'),
    panic: panic ? switchView(panic) : null,
    switches: off.map(switchView),
  };
}

/**
 * POST /v1/account/panic: switches execution off for the caller's account at once, in the caller's
 * transaction. Already panicked: nothing changes (the first panic's reason and credential stand).
 * The audit fact is recorded either way; `account.panic` only when it switched.
 */
export async function panicAccount(
  tx: DbExecutor,
  clock: Clock,
  actor: Actor,
  reason: string | null | undefined,
): Promise<AccountSwitchState> {
  const accountId = actor.principal.accountId;
  const cleaned = cleanReason(reason, false) ?? DEFAULT_PANIC_REASON;
  const by = actorName(actor);
  const row = await insertOffSwitchIfOn(tx, {
    scope: 'account',
    target: accountId,
    source: 'panic',
    reason: cleaned,
    setBy: by,
    at: clock.now(),
  });
  switchesChanged();
  await recordAudit(tx, clock, {
    accountId,
    actor: by,
    action: 'account.panic',
    subject: accountId,
    details: { reason: cleaned, changed: row !== undefined },
    network: actor.network,
  });
  if (row) await emitAccountSwitchEvent(tx, clock, accountId, false, row, by);
  return accountSwitchState(tx, accountId);
}

/**
 * DELETE /v1/account/panic: lifts the account's own panic (an operator's switch on the account
 * stays). Not panicked: nothing changes. Audit fact either way; `account.unpanic` when it switched.
 */
export async function unpanicAccount(
  tx: DbExecutor,
  clock: Clock,
  actor: Actor,
): Promise<AccountSwitchState> {
  const accountId = actor.principal.accountId;
  const by = actorName(actor);
  const row = await deleteOffSwitch(tx, 'account', accountId, 'panic');
  switchesChanged();
  await recordAudit(tx, clock, {
    accountId,
    actor: by,
    action: 'account.unpanic',
    subject: accountId,
    details: { changed: row !== undefined, panic_reason: row?.reason ?? null },
    network: actor.network,
  });
  if (row) await emitAccountSwitchEvent(tx, clock, accountId, true, row, by);
  return accountSwitchState(tx, accountId);
}

/** `account.panic` (switched off) or `account.unpanic` (switched back on) for an account switch. */
async function emitAccountSwitchEvent(
  tx: DbExecutor,
  clock: Clock,
  accountId: string,
  enabled: boolean,
  row: OffSwitch | undefined,
  by: string,
): Promise<void> {
  const source: SwitchSource = by === 'operator' ? 'operator' : 'panic';
  if (!enabled) {
    await emitEvent(tx, clock, {
      accountId,
      kind: 'account.panic',
      subject: accountId,
      payload: {
        source,
        reason: row?.reason ?? null,
        set_by: row?.set_by ?? by,
        set_at: row ? new Date(row.set_at).toISOString() : clock.now().toISOString(),
      },
    });
    return;
  }
  const state = await accountSwitchState(tx, accountId);
  await emitEvent(tx, clock, {
    accountId,
    kind: 'account.unpanic',
    subject: accountId,
    payload: { source, cleared_by: by, execution_enabled: state.execution_enabled },
  });
}
