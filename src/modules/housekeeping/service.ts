// Housekeeping: the retention rules of the spec's section 8 that have a period (decisions.md,
// "Accounts and retention" and "Housekeeping"). One function per rule: housekeeping decides the
// cutoff, the module that owns the table deletes its rows (auth, audit, pm, webhooks). Every rule
// is idempotent (it deletes what is past its period, so a second run finds nothing) and works in
// batches of `BATCH_SIZE` rows, each batch its own statement (src/core/db/retention.ts).
// Time comes from the clock port. Idempotency keys (7 days) are purged by
// purgeExpiredIdempotencyKeys in src/core/http/idempotency.ts and payment challenges by
// purgePaymentChallenges in the feedback module; the job table (src/jobs.ts) runs them all. The
// sweeps that cross modules (test accounts, statement exports of offboarded accounts) are in
// src/lifecycle/purge.ts.

import type { Clock } from '../../core/clock.ts';
import type { Db } from '../../core/db/database.ts';
import { RETENTION_BATCH_SIZE } from '../../core/db/retention.ts';
import { deleteNetworkContextBefore } from '../audit/index.ts';
import { deleteCredentialUsesSeenBefore, deleteSiweNoncesExpiredBefore } from '../auth/index.ts';
import { deleteVenueCredentialNetworksSeenBefore, deleteVenueCredentialUsageBefore } from '../pm/index.ts';
import { compactEnvelopes, deleteSettledDeliveriesBefore } from '../webhooks/index.ts';

const DAY_MS = 86_400_000;

/** Rows deleted per statement. */
export const BATCH_SIZE = RETENTION_BATCH_SIZE;
/** Expired sign-in nonces are kept this long after their expiry (for diagnosing failed sign-ins). */
export const SIWE_NONCE_GRACE_MS = 1 * DAY_MS;
/** Client IP and user agent of sign-ins, key uses and audit facts. */
export const NETWORK_CONTEXT_RETENTION_MS = 90 * DAY_MS;
export const VENUE_CREDENTIAL_USAGE_RETENTION_MS = 8 * DAY_MS;
/** Settled (delivered or dead-lettered) webhook outbox rows. */
export const WEBHOOK_OUTBOX_RETENTION_MS = 14 * DAY_MS;
/** Signed webhook envelopes, counted from their first attempt; then compacted to their hash. */
export const WEBHOOK_ENVELOPE_RETENTION_MS = 90 * DAY_MS;

function cutoff(clock: Clock, periodMs: number): Date {
  return new Date(clock.now().getTime() - periodMs);
}

/** SIWE nonces (valid 10 minutes, single use) whose expiry is more than a day past. */
export function purgeExpiredSiweNonces(db: Db, clock: Clock): Promise<number> {
  return deleteSiweNoncesExpiredBefore(db, cutoff(clock, SIWE_NONCE_GRACE_MS));
}

/**
 * Network context older than 90 days: `network_context` rows (beside audit facts, by created_at;
 * the audit facts themselves stay), `credential_uses` rows not seen for 90 days, and the client
 * networks venue credentials were used from (the watch's "new network" memory).
 */
export async function purgeNetworkContext(
  db: Db,
  clock: Clock,
): Promise<{ networkContext: number; credentialUses: number; venueCredentialNetworks: number }> {
  const before = cutoff(clock, NETWORK_CONTEXT_RETENTION_MS);
  const networkContext = await deleteNetworkContextBefore(db, before);
  const credentialUses = await deleteCredentialUsesSeenBefore(db, before);
  const venueCredentialNetworks = await deleteVenueCredentialNetworksSeenBefore(db, before);
  return { networkContext, credentialUses, venueCredentialNetworks };
}

/** The per-minute use counts of venue credentials: the watch looks 24 hours back; kept 8 days. */
export function purgeVenueCredentialUsage(db: Db, clock: Clock): Promise<number> {
  return deleteVenueCredentialUsageBefore(db, cutoff(clock, VENUE_CREDENTIAL_USAGE_RETENTION_MS));
}

/**
 * Webhook outbox rows settled (delivered or dead) more than 14 days ago. Pending rows are never
 * touched, and neither is `webhook_dead_letters`: a dead letter lives in that table apart from
 * the outbox and stays listed by GET /v1/webhooks/failures until the account is offboarded.
 */
export function purgeWebhookOutbox(db: Db, clock: Clock): Promise<number> {
  return deleteSettledDeliveriesBefore(db, cutoff(clock, WEBHOOK_OUTBOX_RETENTION_MS));
}

/**
 * Signed webhook envelopes (the raw body and `x-service-signature` sent, kept with the event)
 * whose first attempt is more than 90 days old: compacted to `sha256:<hex>` of
 * `<signature>\n<body>`, body and signature dropped. The event itself stays. Returns how many.
 */
export async function compactWebhookEnvelopes(db: Db, clock: Clock): Promise<number> {
  const before = cutoff(clock, WEBHOOK_ENVELOPE_RETENTION_MS);
  let total = 0;
  for (;;) {
    const n = await compactEnvelopes(db, clock.now(), { before }, BATCH_SIZE);
    total += n;
    if (n < BATCH_SIZE) return total;
  }
}
