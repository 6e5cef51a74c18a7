// Every use of a venue credential: confined to trading operations, audited (one fact per use,
// naming the operation), and watched. Anomalous use raises a `security.alert` event
// (docs/prediction-markets.md, "Watching credential use"):
// - usage_burst: a minute with at least `burstMinPerMinute` uses and at least `burstFactor` times
//   the credential's own mean rate of the 24 hours before (at most one alert an hour);
// - new_network: a use from a client network (IPv4 /24, IPv6 /48) the credential was never used
//   from, once it has been used from another (each network alerts once).

import { isIP } from 'node:net';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { unavailable } from '../../core/errors/app-error.ts';
import { actorName, type Actor } from '../../core/http/actor.ts';
import { venueCredentialContext, type SealingKeyring } from '../../core/sealing.ts';
import type { PmVenue } from '../../adapters/pm-venue/port.ts';
import { recordAudit } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import type { CredentialMaterial, UsageWatchSettings } from './types.ts';
import { countUse, lockActiveCredential, noteNetwork, stampUse, type CredentialRow } from './store.ts';

/** What a credential may be used for: trading, and nothing else. */
export const TRADING_OPERATIONS = [
  'authenticate',
  'order.place',
  'order.cancel',
  'orders.read',
  'fills.sync',
  'balance.read',
  'wrap',
] as const;
export type TradingOperation = (typeof TRADING_OPERATIONS)[number];

export interface UseParameters {
  accountId: string;
  credentialId: string;
  venue: PmVenue;
  operation: TradingOperation;
  /** The caller; null for the service's own jobs (no client network to watch). */
  actor: Actor | null;
}

export interface UsageDeps {
  clock: Clock;
  watch: UsageWatchSettings;
}

/**
 * Records one use in the caller's transaction: the audit fact, the minute's count and the client
 * network, and any security alert it raises. Returns the alerts raised.
 */
export async function noteUse(
  tx: DbExecutor,
  deps: UsageDeps,
  params: UseParameters,
): Promise<Array<'usage_burst' | 'new_network'>> {
  if (!(TRADING_OPERATIONS as readonly string[]).includes(params.operation)) {
    throw new Error(`a venue credential cannot be used for "${params.operation}"`);
  }
  const now = deps.clock.now();
  await recordAudit(tx, deps.clock, {
    accountId: params.accountId,
    actor: params.actor ? actorName(params.actor) : 'system',
    action: 'venue_credential.use',
    subject: params.credentialId,
    details: { venue: params.venue, operation: params.operation },
    network: params.actor?.network ?? null,
  });
  const alerts: Array<'usage_burst' | 'new_network'> = [];
  const counts = await countUse(tx, params.credentialId, now);
  const baselinePerMinute = counts.previousDay / 1440;
  const threshold = Math.max(
    deps.watch.burstMinPerMinute,
    Math.ceil(deps.watch.burstFactor * baselinePerMinute),
  );
  const burst = counts.thisMinute >= threshold;
  if (await stampUse(tx, params.credentialId, now, burst)) {
    alerts.push('usage_burst');
    await raiseAlert(tx, deps.clock, params, 'usage_burst', {
      uses_this_minute: counts.thisMinute,
      mean_per_minute_previous_24h: Math.round(baselinePerMinute * 100) / 100,
      threshold,
    });
  }
  const network = networkOf(params.actor?.network.clientIp ?? null);
  if (network) {
    const seen = await noteNetwork(tx, params.credentialId, network, now);
    if (seen.isNew && seen.known > 0) {
      alerts.push('new_network');
      await raiseAlert(tx, deps.clock, params, 'new_network', { network, networks_seen_before: seen.known });
    }
  }
  return alerts;
}

/** The `security.alert` event of one anomalous use, in the use's transaction. */
async function raiseAlert(
  tx: DbExecutor,
  clock: Clock,
  params: UseParameters,
  reason: 'usage_burst' | 'new_network',
  detail: Record<string, unknown>,
): Promise<void> {
  await emitEvent(tx, clock, {
    accountId: params.accountId,
    kind: 'security.alert',
    subject: params.credentialId,
    payload: {
      credential_id: params.credentialId,
      venue: params.venue,
      reason,
      operation: params.operation,
      detail,
      remediation:
        'If this was not you, revoke the credential (DELETE /v1/pm/credentials/{id}) and rotate the key at the venue.',
    },
  });
}

/**
 * The one way to open a credential: locks the active credential, notes the use (audit, watch) in
 * the caller's transaction and returns the opened material. Null when the account has no such
 * active credential (a revoked one is gone).
 */
export async function useCredential(
  tx: DbExecutor,
  deps: UsageDeps & { keyring: SealingKeyring },
  params: Omit<UseParameters, 'venue'>,
): Promise<{ row: CredentialRow; material: CredentialMaterial } | null> {
  const row = await lockActiveCredential(tx, params.accountId, params.credentialId);
  if (!row || row.sealed === null) return null;
  await noteUse(tx, deps, { ...params, venue: row.venue });
  let material: CredentialMaterial;
  try {
    material = JSON.parse(
      deps.keyring.open(venueCredentialContext(row.account_id, row.venue, row.id), row.sealed),
    ) as CredentialMaterial;
  } catch (err) {
    // A key removed from the ring too early: the operator's fault, and nothing the caller can fix.
    throw unavailable(`This credential cannot be opened here: ${(err as Error).message}.`, {
      remediation:
        'Retry later; the operator must restore the sealing key (docs/operations.md, "Sealing keys").',
      next: [],
    });
  }
  return { row, material };
}

/** The client network of an address: IPv4 /24 or IPv6 /48 (IPv4-mapped IPv6 as IPv4); null if none. */
export function networkOf(ip: string | null): string | null {
  if (!ip) return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const addr = mapped ? mapped[1]! : ip;
  const kind = isIP(addr);
  if (kind === 4) return `${addr.split('.').slice(0, 3).join('.')}.0/24`;
  if (kind !== 6) return null;
  const [head = '', tail = ''] = addr.split('::');
  const left = head ? head.split(':') : [];
  const right = addr.includes('::') && tail ? tail.split(':') : [];
  const groups = addr.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 3)
    .map((g) => Number.parseInt(g || '0', 16).toString(16))
    .join(':')}::/48`;
}
