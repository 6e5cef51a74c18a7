// `purser ops …`: its usage and the checks of its arguments, shared by the command's two paths
// (over HTTP to a running server, ops.ts; against the database, ops-direct.ts). Kept free of the
// service's modules, so that a command sent to a server starts at once.

import { parseUsd } from '../core/money.ts';
import { FEATURE_REQUEST_STATUSES } from '../modules/feedback/store.ts';
import { SWITCH_VENUES } from '../modules/switches/service.ts';
import { SWITCH_SCOPES } from '../modules/switches/store.ts';

export { FEATURE_REQUEST_STATUSES };

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

export class UsageError extends Error {}

export function usdOrDefault(value: string | undefined): bigint | null {
  if (value === 'default') return null;
  const micro = value === undefined ? null : parseUsd(value);
  if (micro === null)
    throw new UsageError(`expected a USD amount such as 2500 or "default", got ${value ?? 'nothing'}`);
  return micro;
}

export function driftState(value: string | undefined): 'open' | 'resolved' | 'all' {
  if (value === undefined) return 'open';
  if (value === 'open' || value === 'resolved' || value === 'all') return value;
  throw new UsageError(`drifts takes open, resolved or all, got ${value}`);
}

/** `adjust <drift id> <reason…>`: the reason is required (it is kept in the ledger and the audit log). */
export function adjustArgs(args: string[]): { id: string; reason: string } {
  const [, id, ...rest] = args;
  if (!id || !/^drf_[0-9a-z]{1,64}$/.test(id)) throw new UsageError('adjust needs a drift id (drf_…)');
  const reason = rest.join(' ').trim();
  if (reason.length < 3) throw new UsageError('adjust needs a reason (at least 3 characters)');
  return { id, reason };
}

/** `switch on|off <scope> [target] [reason…]`, checked: switching off needs a reason. */
export function switchArgs(args: string[]): {
  enabled: boolean;
  scope: (typeof SWITCH_SCOPES)[number];
  target: string | undefined;
  reason: string | undefined;
} {
  const [onOff, scope, ...rest] = args;
  if (onOff !== 'on' && onOff !== 'off') throw new UsageError('switch takes on or off');
  if (!scope || !(SWITCH_SCOPES as readonly string[]).includes(scope))
    throw new UsageError(`switch ${onOff} needs a scope: one of ${SWITCH_SCOPES.join(', ')}`);
  const target = scope === 'environment' ? undefined : rest.shift();
  const reason = rest.join(' ').trim() || undefined;
  if (onOff === 'off' && !reason) throw new UsageError('switching off needs a reason (shown to callers)');
  return { enabled: onOff === 'on', scope: scope as (typeof SWITCH_SCOPES)[number], target, reason };
}
