// The housekeeping module: the retention sweeps the job table (src/jobs.ts) runs every hour.

export {
  ACCOUNT_OWNED_TABLES,
  BATCH_SIZE,
  compactWebhookEnvelopes,
  NETWORK_CONTEXT_RETENTION_MS,
  purgeExpiredSiweNonces,
  purgeNetworkContext,
  purgeVenueCredentialUsage,
  purgeOffboardedStatementExports,
  purgeTestAccounts,
  purgeWebhookOutbox,
  SIWE_NONCE_GRACE_MS,
  STATEMENT_EXPORT_BATCH,
  TEST_ACCOUNT_BATCH,
  TEST_ACCOUNT_RETENTION_MS,
  WEBHOOK_ENVELOPE_RETENTION_MS,
  WEBHOOK_OUTBOX_RETENTION_MS,
} from './service.ts';
export { resealStale, type ResealResult } from './reseal.ts';
