// The webhook secret: made here, sealed at rest under the sealing keyring (src/core/sealing.ts),
// bound to the account (a sealed secret copied to another account's row does not open).

import { randomBytes } from 'node:crypto';

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
