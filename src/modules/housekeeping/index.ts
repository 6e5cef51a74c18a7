// The housekeeping module: the retention sweeps the job table (src/jobs.ts) runs every hour.

export {
  ACCOUNT_OWNED_TABLES,
  BATCH_SIZE,
  NETWORK_CONTEXT_RETENTION_MS,
  purgeExpiredSiweNonces,
  purgeNetworkContext,
  purgeTestAccounts,
  purgeWebhookOutbox,
  SIWE_NONCE_GRACE_MS,
  TEST_ACCOUNT_BATCH,
  TEST_ACCOUNT_RETENTION_MS,
  WEBHOOK_OUTBOX_RETENTION_MS,
} from './service.ts';
