// The housekeeping module: the retention sweeps the job table (src/jobs.ts) runs every hour.

export {
  BATCH_SIZE,
  compactWebhookEnvelopes,
  NETWORK_CONTEXT_RETENTION_MS,
  purgeExpiredSiweNonces,
  purgeNetworkContext,
  purgeVenueCredentialUsage,
  purgeWebhookOutbox,
  SIWE_NONCE_GRACE_MS,
  WEBHOOK_ENVELOPE_RETENTION_MS,
  WEBHOOK_OUTBOX_RETENTION_MS,
} from './service.ts';
export { resealStale, type ResealResult } from './reseal.ts';
