// The housekeeping module's jobs: retention (batched, idempotent deletes of rows past their
// period) every hour, and moving sealed values onto the newest sealing key.

import { purgeExpiredIdempotencyKeys } from '../../core/http/idempotency.ts';
import { defineJob, type AnyJobDefinition } from '../../core/jobs/index.ts';
import { keyringOf } from '../../core/sealing.ts';
import type { AppDeps } from '../../deps.ts';
import { resealStale } from './reseal.ts';
import {
  compactWebhookEnvelopes,
  purgeExpiredSiweNonces,
  purgeNetworkContext,
  purgeVenueCredentialUsage,
  purgeWebhookOutbox,
} from './service.ts';

export const HOURLY = 3600;

/** An hourly sweep that deletes rows past their period and says how many, under `key`. */
export function hourlySweep(
  name: string,
  sweep: (deps: AppDeps) => Promise<number>,
  said: string,
  key = 'deleted',
): AnyJobDefinition<AppDeps> {
  return defineJob({
    name,
    every: HOURLY,
    run: async (deps: AppDeps) => {
      const count = await sweep(deps);
      if (count > 0) deps.log.info({ [key]: count }, said);
    },
  });
}

export const housekeepingJobs: AnyJobDefinition<AppDeps>[] = [
  hourlySweep(
    'housekeeping.idempotency_keys',
    (deps) => purgeExpiredIdempotencyKeys(deps.db, deps.clock),
    'expired idempotency keys deleted',
  ),
  hourlySweep(
    'housekeeping.siwe_nonces',
    (deps) => purgeExpiredSiweNonces(deps.db, deps.clock),
    'expired sign-in nonces deleted',
  ),
  defineJob({
    name: 'housekeeping.network_context',
    every: HOURLY,
    run: async (deps: AppDeps) => {
      const deleted = await purgeNetworkContext(deps.db, deps.clock);
      if (deleted.networkContext + deleted.credentialUses + deleted.venueCredentialNetworks > 0)
        deps.log.info(deleted, 'network context older than 90 days deleted');
      const usage = await purgeVenueCredentialUsage(deps.db, deps.clock);
      if (usage > 0)
        deps.log.info({ deleted: usage }, 'venue credential use counts older than 8 days deleted');
    },
  }),
  hourlySweep(
    'housekeeping.webhook_outbox',
    (deps) => purgeWebhookOutbox(deps.db, deps.clock),
    'settled webhook outbox rows deleted',
  ),
  hourlySweep(
    'housekeeping.webhook_envelopes',
    (deps) => compactWebhookEnvelopes(deps.db, deps.clock),
    'webhook envelopes older than 90 days compacted',
    'compacted',
  ),
  // Moves sealed values onto the newest sealing key (docs/operations.md, "Sealing keys").
  defineJob({
    name: 'sealing.reseal',
    every: HOURLY,
    run: async (deps: AppDeps) => {
      const moved = await resealStale(deps.db, keyringOf(deps.config.sealingKeys));
      if (moved.webhookSecrets + moved.venueCredentials > 0)
        deps.log.info(moved, 'sealed values moved onto the newest sealing key');
      if (moved.unopenable > 0)
        deps.log.error(
          { unopenable: moved.unopenable },
          'sealed values that no configured sealing key opens: put the removed key back in PURSER_SEALING_KEYS',
        );
    },
  }),
];
