// Types the prediction-market credential files share.

import type { Hex } from 'viem';

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
