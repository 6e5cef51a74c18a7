// Types the prediction-market credential files share.

import type { Hex } from 'viem';
import type { ClobApiCredentials } from '../../adapters/pm-venue/port.ts';

export interface UsageWatchSettings {
  /** A minute with at least this many uses can be a burst… */
  burstMinPerMinute: number;
  /** …when it is this many times the credential's mean rate of the 24 hours before. */
  burstFactor: number;
}

/** What is sealed: the secret material of one credential. */
export type CredentialMaterial =
  | {
      venue: 'polymarket';
      api_key: string;
      api_secret: string;
      api_passphrase: string;
      /** The hosted flow's signer key; absent in the client-signed flow. */
      signer_key?: Hex;
    }
  | { venue: 'kalshi'; api_key: string; private_key_pem: string };

/** The CLOB L2 credential inside a polymarket credential's material. */
export function clobCredsOf(
  material: Extract<CredentialMaterial, { venue: 'polymarket' }>,
): ClobApiCredentials {
  return { apiKey: material.api_key, secret: material.api_secret, passphrase: material.api_passphrase };
}
