// `purser ops …`: the operator controls on the command line, against the configured database
// (the same settings /v1/ops/ changes). Every change is an audit fact by `operator`. A switch
// changed here reaches the running service processes within two seconds (their cache).
// When a running server holds the embedded database, the command goes to that server's /v1/ops/
// instead (development: see dev-operator.ts).

import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { systemClock } from '../core/clock.ts';
import { withTransaction, type Db } from '../core/db/database.ts';
import { AppError } from '../core/errors/app-error.ts';
import { parseUsd } from '../core/money.ts';
import { findAccountByAddress, findAccountById } from '../modules/account/index.ts';
import { recordAudit } from '../modules/audit/index.ts';
import { adjustDrift, listDrifts } from '../modules/chainwatch/index.ts';
import { registryOf } from '../modules/registry/index.ts';
import {
  billingOverview,
  setAccountPrepaidCap,
  setMeteringEnforced,
  setPrepaidCap,
} from '../modules/billing/index.ts';
import { FEATURE_REQUEST_STATUSES, type FeatureRequestStatus } from '../modules/feedback/index.ts';
import { setFeatureRequestStatus } from '../modules/feedback/service.ts';
import { listSwitches, setSwitch, SWITCH_SCOPES, SWITCH_VENUES } from '../modules/switches/index.ts';
import { openAndMigrate } from '../runtime.ts';
import { embeddedDatabaseHolder, readDevOperatorAccess, type DevOperatorAccess } from './dev-operator.ts';

export const OPS_USAGE = `Usage: purser ops <command>

  billing                                   show billing settings and platform totals
  metering on|off|default                   enforce metered fees, or not (default: METERING_ENFORCED)
  float-cap <USD>|default                   the platform-wide prepaid float cap
  account-cap-default <USD>|default         the default per-account prepaid cap
  account-cap <account id|address> <USD>|default   one account's prepaid cap
  switches                                  every execution switch that is off
  switch off <scope> [target] "<reason>"    switch execution off, with the reason callers see
  switch on <scope> [target]                switch execution back on
  feature-request <id> <status>             set a feature request's status (${FEATURE_REQUEST_STATUSES.join('|')})
  drifts [open|resolved|all]                differences between books and chain (default: open)
  adjust <drift id> "<reason>"              book an open drift's difference, with the reason (audited)

  Switch scopes: environment (no target), venue <name>, wallet <0x address>,
  account <account id|address>. Venues: ${SWITCH_VENUES.join(', ')}.
  Examples: purser ops switch off venue aerodrome "maintenance"
            purser ops switch on environment`;

class UsageError extends Error {}

function usdOrDefault(value: string | undefined): bigint | null {
  if (value === 'default') return null;
  const micro = value === undefined ? null : parseUsd(value);
  if (micro === null)
    throw new UsageError(`expected a USD amount such as 2500 or "default", got ${value ?? 'nothing'}`);
  return micro;
}

function driftState(value: string | undefined): 'open' | 'resolved' | 'all' {
  if (value === undefined) return 'open';
  if (value === 'open' || value === 'resolved' || value === 'all') return value;
  throw new UsageError(`drifts takes open, resolved or all, got ${value}`);
}

/** `adjust <drift id> <reason…>`: the reason is required (it is kept in the ledger and the audit log). */
function adjustArgs(args: string[]): { id: string; reason: string } {
  const [, id, ...rest] = args;
  if (!id || !/^drf_[0-9a-z]{1,64}$/.test(id)) throw new UsageError('adjust needs a drift id (drf_…)');
  const reason = rest.join(' ').trim();
  if (reason.length < 3) throw new UsageError('adjust needs a reason (at least 3 characters)');
  return { id, reason };
}

async function audit(db: Db, accountId: string | null, action: string, details: Record<string, unknown>) {
  await recordAudit(db, systemClock, { accountId, actor: 'operator', action, details, network: null });
}

/** `switch on|off <scope> [target] [reason]`: prints the switch's state. */
async function runSwitch(db: Db, args: string[]): Promise<void> {
  const [onOff, scope, ...rest] = args;
  if (onOff !== 'on' && onOff !== 'off') throw new UsageError('switch takes on or off');
  if (!scope || !(SWITCH_SCOPES as readonly string[]).includes(scope))
    throw new UsageError(`switch ${onOff} needs a scope: one of ${SWITCH_SCOPES.join(', ')}`);
  let target = scope === 'environment' ? undefined : rest.shift();
  const reason = rest.join(' ').trim() || undefined;
  if (onOff === 'off' && !reason) throw new UsageError('switching off needs a reason (shown to callers)');
  if (scope === 'account' && target && /^0x[0-9a-fA-F]{40}$/.test(target)) {
    const account = await findAccountByAddress(db, target.toLowerCase());
    if (!account) throw new UsageError(`no account ${target}`);
    target = account.id;
  }
  const state = await withTransaction(db, (tx) =>
    setSwitch(
      tx,
      systemClock,
      {
        scope: scope as (typeof SWITCH_SCOPES)[number],
        target,
        enabled: onOff === 'on',
        reason,
      },
      null,
    ),
  );
  console.log(JSON.stringify(state, null, 2));
}

async function runFeatureRequest(db: Db, id: string | undefined, status: string | undefined) {
  if (!id) throw new UsageError('feature-request needs an id');
  if (!status || !(FEATURE_REQUEST_STATUSES as readonly string[]).includes(status))
    throw new UsageError(`feature-request needs a status: one of ${FEATURE_REQUEST_STATUSES.join(', ')}`);
  const changed = await withTransaction(db, (tx) =>
    setFeatureRequestStatus(tx, systemClock, id, status as FeatureRequestStatus, null),
  );
  console.log(`Feature request ${changed.id}: ${changed.previousStatus} -> ${changed.status}.`);
}

async function run(db: Db, config: Config, args: string[]): Promise<void> {
  const [command, a, b] = args;
  const now = systemClock.now();
  switch (command) {
    case 'switches':
      console.log(JSON.stringify({ switches: await listSwitches(db) }, null, 2));
      return;
    case 'switch':
      return runSwitch(db, args.slice(1));
    case 'feature-request':
      return runFeatureRequest(db, a, b);
    case 'drifts': {
      const state = driftState(a);
      console.log(
        JSON.stringify(
          await listDrifts(db, { accountId: null, wallet: null, state, limit: 200, cursor: null }),
          null,
          2,
        ),
      );
      return;
    }
    case 'adjust': {
      const { id, reason } = adjustArgs(args);
      const drift = await withTransaction(db, (tx) =>
        adjustDrift(tx, systemClock, {
          driftId: id,
          reason,
          actor: 'operator',
          network: null,
          registry: registryOf({ config }),
        }),
      );
      console.log(JSON.stringify(drift, null, 2));
      return;
    }
    case 'billing':
      break;
    case 'metering': {
      if (a !== 'on' && a !== 'off' && a !== 'default')
        throw new UsageError('metering takes on, off or default');
      const enforced = a === 'default' ? null : a === 'on';
      await setMeteringEnforced(db, enforced, 'operator', now);
      await audit(db, null, 'ops.billing_settings', { metering_enforced: enforced });
      break;
    }
    case 'float-cap':
    case 'account-cap-default': {
      const cap = usdOrDefault(a);
      await setPrepaidCap(db, command === 'float-cap' ? 'float' : 'account_default', cap, 'operator', now);
      await audit(db, null, 'ops.billing_settings', { [command]: a });
      break;
    }
    case 'account-cap': {
      if (!a) throw new UsageError('account-cap needs an account id or address');
      const account = /^0x[0-9a-fA-F]{40}$/.test(a)
        ? await findAccountByAddress(db, a.toLowerCase())
        : await findAccountById(db, a);
      if (!account) throw new UsageError(`no account ${a}`);
      const cap = usdOrDefault(b);
      await setAccountPrepaidCap(db, account.id, cap, 'operator', now);
      await audit(db, account.id, 'ops.prepaid_cap', { cap_usd: b });
      console.log(
        `Account ${account.id}: prepaid cap ${b === 'default' ? 'back to the default' : `${b} USD`}.`,
      );
      break;
    }
    default:
      throw new UsageError(command ? `unknown ops command: ${command}` : 'an ops command is needed');
  }
  console.log(JSON.stringify(await billingOverview(db, config), null, 2));
}

/** Runs one `purser ops` command; exit code 0, or 64 on a usage error. */
export async function runOps(config: Config, log: Logger, args: string[]): Promise<number> {
  const holder = config.databaseUrl === null ? embeddedDatabaseHolder(config.dataDir) : null;
  if (holder !== null) {
    // A running server holds the embedded database: ask it over its operator surface.
    const access =
      (config.env === 'development' ? readDevOperatorAccess(config.dataDir, holder) : null) ??
      (config.operatorToken ? { url: config.publicUrl, token: config.operatorToken, pid: holder } : null);
    if (!access) {
      console.error(
        `The embedded database in ${config.dataDir} is in use by a running Purser (pid ${holder}) that ` +
          'offers no operator access to this command. Start it with `purser serve` in development ' +
          'without PURSER_OPERATOR_TOKEN (it then writes its operator access to the data directory), ' +
          'or set PURSER_OPERATOR_TOKEN (and PURSER_PUBLIC_URL) to the values the server runs with.',
      );
      return 69; // EX_UNAVAILABLE
    }
    return runOpsOverHttp(access, args);
  }
  const handle = await openAndMigrate(config, log);
  try {
    await run(handle.db, config, args);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n\n${OPS_USAGE}`);
      return 64;
    }
    if (
      err instanceof AppError &&
      (err.code === 'INVALID_REQUEST' || err.code === 'NOT_FOUND' || err.code === 'CONFLICT')
    ) {
      console.error(`${err.message}\n\n${OPS_USAGE}`);
      return 64;
    }
    throw err;
  } finally {
    await handle.close();
  }
}

// ------------------------------------------------------------------------------ over HTTP

interface HttpCall {
  method: 'GET' | 'PUT' | 'POST';
  path: string;
  body?: unknown;
}

/** The /v1/ops/ request of each command (validated here first, so a usage error sends nothing). */
function httpCallFor(args: string[]): { call: HttpCall; thenBilling: boolean; print: 'json' | 'switches' } {
  const [command, a, b] = args;
  const billing = (body: unknown) => ({
    call: { method: 'PUT' as const, path: '/v1/ops/billing', body },
    thenBilling: false,
    print: 'json' as const,
  });
  const usd = (v: string | undefined) => {
    usdOrDefault(v);
    return v === 'default' ? null : (v ?? null);
  };
  switch (command) {
    case 'billing':
      return { call: { method: 'GET', path: '/v1/ops/billing' }, thenBilling: false, print: 'json' };
    case 'switches':
      return { call: { method: 'GET', path: '/v1/ops/switches' }, thenBilling: false, print: 'switches' };
    case 'metering':
      if (a !== 'on' && a !== 'off' && a !== 'default')
        throw new UsageError('metering takes on, off or default');
      return billing({ metering_enforced: a === 'default' ? null : a === 'on' });
    case 'float-cap':
      return billing({ prepaid_float_cap_usd: usd(a) });
    case 'account-cap-default':
      return billing({ prepaid_account_cap_default_usd: usd(a) });
    case 'account-cap': {
      if (!a) throw new UsageError('account-cap needs an account id or address');
      const cap = usd(b);
      return {
        call: {
          method: 'PUT',
          path: `/v1/ops/accounts/${encodeURIComponent(a)}/prepaid-cap`,
          body: { cap_usd: cap },
        },
        thenBilling: true,
        print: 'json',
      };
    }
    case 'switch': {
      const [onOff, scope, ...rest] = args.slice(1);
      if (onOff !== 'on' && onOff !== 'off') throw new UsageError('switch takes on or off');
      if (!scope || !(SWITCH_SCOPES as readonly string[]).includes(scope))
        throw new UsageError(`switch ${onOff} needs a scope: one of ${SWITCH_SCOPES.join(', ')}`);
      const target = scope === 'environment' ? undefined : rest.shift();
      const reason = rest.join(' ').trim() || undefined;
      if (onOff === 'off' && !reason) throw new UsageError('switching off needs a reason (shown to callers)');
      return {
        call: {
          method: 'PUT',
          path: '/v1/ops/switches',
          body: {
            scope,
            enabled: onOff === 'on',
            ...(target ? { target } : {}),
            ...(reason ? { reason } : {}),
          },
        },
        thenBilling: false,
        print: 'json',
      };
    }
    case 'drifts':
      return {
        call: { method: 'GET', path: `/v1/ops/drifts?state=${driftState(a)}&limit=200` },
        thenBilling: false,
        print: 'json',
      };
    case 'adjust': {
      const { id, reason } = adjustArgs(args);
      return {
        call: { method: 'POST', path: `/v1/ops/drifts/${encodeURIComponent(id)}/adjust`, body: { reason } },
        thenBilling: false,
        print: 'json',
      };
    }
    case 'feature-request':
      if (!a) throw new UsageError('feature-request needs an id');
      if (!b || !(FEATURE_REQUEST_STATUSES as readonly string[]).includes(b))
        throw new UsageError(`feature-request needs a status: one of ${FEATURE_REQUEST_STATUSES.join(', ')}`);
      return {
        call: {
          method: 'PUT',
          path: `/v1/ops/feature-requests/${encodeURIComponent(a)}`,
          body: { status: b },
        },
        thenBilling: false,
        print: 'json',
      };
    default:
      throw new UsageError(command ? `unknown ops command: ${command}` : 'an ops command is needed');
  }
}

async function send(access: DevOperatorAccess, call: HttpCall): Promise<{ status: number; body: unknown }> {
  const res = await fetch(new URL(call.path, access.url), {
    method: call.method,
    headers: {
      authorization: `Bearer ${access.token}`,
      ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: shown as it is
  }
  return { status: res.status, body };
}

/** Runs one `purser ops` command against the running server's /v1/ops/. */
async function runOpsOverHttp(access: DevOperatorAccess, args: string[]): Promise<number> {
  let plan: ReturnType<typeof httpCallFor>;
  try {
    plan = httpCallFor(args);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n\n${OPS_USAGE}`);
      return 64;
    }
    throw err;
  }
  let answer: { status: number; body: unknown };
  try {
    answer = await send(access, plan.call);
  } catch (err) {
    console.error(
      `The running Purser (pid ${access.pid}) holds the embedded database, but ${access.url} did not answer: ` +
        `${err instanceof Error ? err.message : String(err)}.`,
    );
    return 69;
  }
  if (answer.status >= 400) {
    const e = answer.body as { code?: string; message?: string };
    console.error(
      typeof e === 'object' && e !== null && e.code
        ? `${e.code}: ${e.message ?? ''}`
        : `HTTP ${answer.status}`,
    );
    return answer.status < 500 ? 64 : 1;
  }
  if (plan.print === 'switches') {
    const { switches } = answer.body as { switches: unknown };
    console.log(JSON.stringify({ switches }, null, 2));
    return 0;
  }
  console.log(JSON.stringify(answer.body, null, 2));
  if (plan.thenBilling) {
    const overview = await send(access, { method: 'GET', path: '/v1/ops/billing' });
    console.log(JSON.stringify(overview.body, null, 2));
  }
  return 0;
}
