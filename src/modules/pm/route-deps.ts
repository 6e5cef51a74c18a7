// What the prediction-market route files share: their tag, the 451 every one of them can answer
// first, and the dependencies their handlers build from the app's: the credentials' (sealing, the
// venues, the use watch), the orders' (503 without a configured venue) and the chain's.

import type { ChainPort } from '../../adapters/chain/port.ts';
import { unavailable } from '../../core/errors/app-error.ts';
import type { DocumentedError } from '../../core/http/route-table.ts';
import { keyringOf } from '../../core/sealing.ts';
import type { AppDeps } from '../../deps.ts';
import type { CredentialDeps } from './credentials.ts';
import type { OrderDeps } from './orders-types.ts';

export const TAGS = ['prediction markets'];

/** Every prediction-market route can answer 451 before anything else. */
export const GATED: DocumentedError = {
  code: 'JURISDICTION_BLOCKED',
  when: 'the request comes from a restricted or unknown origin (checked before anything else)',
};

/** What the credential routes need (sealing, the venues, the use watch). */
export function credentialDeps(deps: AppDeps): CredentialDeps {
  return {
    clock: deps.clock,
    keyring: keyringOf(deps.config.sealingKeys),
    venues: deps.pmVenues ?? null,
    watch: deps.config.pm.watch,
  };
}

/** What the order routes need; 503 without a configured venue. */
export function orderDeps(deps: AppDeps): OrderDeps {
  if (!deps.pmVenues) {
    throw unavailable('No prediction-market venue is configured here.', {
      remediation: 'The operator configures POLYMARKET_CLOB_URL (docs/operations.md).',
      next: [],
    });
  }
  return {
    ...credentialDeps(deps),
    config: deps.config,
    db: deps.db,
    registry: deps.tokenRegistry,
    clob: deps.pmVenues.polymarket,
  };
}

/** The chains of this process; 503 without them. */
export function chainOf(deps: AppDeps): ChainPort {
  if (!deps.chain) {
    throw unavailable('This process has no chain connection.', {
      remediation: 'The operator configures RPC_URL_137; retry later.',
      next: [],
    });
  }
  return deps.chain;
}
