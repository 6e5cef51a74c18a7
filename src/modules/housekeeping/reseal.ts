// The re-seal job (docs/operations.md, "Sealing keys"): every sealed value not sealed with the
// keyring's newest key (an older key, or the format of before the keyring) is opened and sealed
// again with the newest key, in batches: webhook secrets (the webhooks module) and active venue
// credentials (the prediction-market module); revoked credentials hold nothing. A value no key of
// the ring opens is left as it is and counted (the operator removed a key too early).

import type { Db } from '../../core/db/database.ts';
import type { SealingKeyring } from '../../core/sealing.ts';
import { resealVenueCredentials } from '../pm/index.ts';
import { resealWebhookSecrets } from '../webhooks/index.ts';

const RESEAL_BATCH = 200;

export interface ResealResult {
  webhookSecrets: number;
  venueCredentials: number;
  /** Values no key of the ring opens (left untouched). */
  unopenable: number;
}

export async function resealStale(db: Db, keyring: SealingKeyring): Promise<ResealResult> {
  const webhooks = await resealWebhookSecrets(db, keyring, RESEAL_BATCH);
  const venues = await resealVenueCredentials(db, keyring, RESEAL_BATCH);
  return {
    webhookSecrets: webhooks.resealed,
    venueCredentials: venues.resealed,
    unopenable: webhooks.unopenable + venues.unopenable,
  };
}
