// What a prediction-market call to the venue goes through: a token of its rate lane (orders,
// reads, cancels; 429 with Retry-After when the platform's budget is spent), the L2
// authentication of the stored credential it is made with (a use), and the venue's failures as
// Purser's errors.

import { getAddress } from 'viem';
import { VenueRejected, VenueUnavailable, type ClobL2Auth } from '../../adapters/pm-venue/port.ts';
import { withTransaction } from '../../core/db/database.ts';
import { AppError, invalidRequest, unavailable } from '../../core/errors/app-error.ts';
import type { Actor } from '../../core/http/actor.ts';
import { returnTokens, takeTokens, rateLaneName } from '../ratelanes/index.ts';
import { noActiveCredential } from './credentials.ts';
import type { OrderDeps } from './orders-types.ts';
import { clobCredsOf } from './types.ts';
import { useCredential } from './usage.ts';

/** The orders lane of the venue: 429 with Retry-After when the platform's order cap is spent. */
export async function takeOrderToken(deps: OrderDeps): Promise<() => Promise<void>> {
  const lane = rateLaneName('polymarket', 'orders');
  const config = deps.config.pm.rateLanes.orders;
  const taken = await takeTokens(deps.db, deps.clock, lane, config);
  if (!taken.ok) {
    const seconds = Math.max(1, Math.ceil(taken.retryAfterMs / 1000));
    throw new AppError(
      'RATE_LIMITED',
      `The platform's order cap for polymarket is spent for now: nothing was transmitted.`,
      {
        remediation: `Retry after ${seconds} s (Retry-After). Cancels are never subject to it.`,
        headers: { 'retry-after': String(seconds) },
      },
    );
  }
  return async () => {
    await returnTokens(deps.db, deps.clock, lane, config);
  };
}

/** The venue lane of a read or a cancel: 429 with Retry-After when the platform budget is spent. */
export async function takeLane(deps: OrderDeps, kind: 'reads' | 'cancels'): Promise<void> {
  const taken = await takeLaneToken(deps, kind);
  if (taken.ok) return;
  const seconds = Math.max(1, Math.ceil(taken.retryAfterMs / 1000));
  throw new AppError(
    'RATE_LIMITED',
    `The platform's ${kind === 'reads' ? 'read budget' : 'cancel lane'} for polymarket is spent for now.`,
    {
      remediation: `Retry after ${seconds} s (Retry-After).`,
      headers: { 'retry-after': String(seconds) },
    },
  );
}

/** One token of the venue's `kind` lane, if the lane has one now. */
export function takeLaneToken(deps: OrderDeps, kind: 'reads' | 'cancels') {
  return takeTokens(deps.db, deps.clock, rateLaneName('polymarket', kind), deps.config.pm.rateLanes[kind]);
}

/** Opens a polymarket credential of the account for `operation` and gives its L2 authentication. */
export async function venueAuth(
  deps: OrderDeps,
  actor: Actor,
  credentialId: string,
  operation: 'orders.read' | 'order.cancel' | 'fills.sync',
): Promise<ClobL2Auth> {
  const used = await withTransaction(deps.db, (tx) =>
    useCredential(tx, deps, { accountId: actor.principal.accountId, credentialId, operation, actor }),
  );
  if (!used) throw noActiveCredential(credentialId);
  if (used.material.venue !== 'polymarket' || !used.row.signer_address) {
    throw invalidRequest(`credential_id: a ${used.row.venue} credential has no polymarket orders.`);
  }
  return {
    address: getAddress(used.row.signer_address),
    creds: clobCredsOf(used.material),
  };
}

/** A venue failure as Purser's error (422 VENUE_REJECTED, 503); anything else unchanged. */
export function venueFailure(err: unknown, what: string): unknown {
  if (err instanceof VenueRejected)
    return new AppError('VENUE_REJECTED', `polymarket refused ${what}: ${err.message}`);
  if (err instanceof VenueUnavailable) {
    return unavailable(`polymarket did not answer ${what}: ${err.message}`, {
      remediation: 'Retry in a few seconds.',
      next: [],
    });
  }
  return err;
}
