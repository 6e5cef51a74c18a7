// The attestation port: what the rebalances need from Circle's attestation service (Iris) for a
// CCTP V2 burn. The real adapter (iris.ts) speaks Iris's HTTP API; in development it is pointed at
// the devnet's attestation service, which speaks the same API, so there is no separate sandbox.

import type { Hex } from 'viem';

export type AttestationLookup =
  /** Iris signed the message: pass `message` (not the burn's event bytes) to `receiveMessage`. */
  | { ready: true; message: Hex; attestation: Hex; status: 'complete' }
  | {
      ready: false;
      /**
       * not_found: Iris has not indexed the burn yet (a 404, normal for a while);
       * pending: seen, not attested yet (any status but `complete`);
       * rate_limited: Iris answered 429, or this process is waiting out an earlier 429.
       */
      why: 'not_found' | 'pending' | 'rate_limited';
      /** Iris's status value, when it gave one. */
      status?: string;
      delayReason?: string;
      /** When asking again makes sense, in milliseconds. */
      retryAfterMs: number;
    };

export interface AttestationPort {
  /** The attestation of the (first) CCTP message the transaction `txHash` sent from `sourceDomain`. */
  lookup(sourceDomain: number, txHash: Hex): Promise<AttestationLookup>;
}

/** The attestation service failed (network, 5xx, an answer not in Iris's format). */
export class AttestationUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AttestationUnavailable';
  }
}
