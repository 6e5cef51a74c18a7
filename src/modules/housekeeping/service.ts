// Housekeeping: the retention rules of the spec's section 8 that have a period (decisions.md,
// "Accounts and retention" and "Housekeeping"). One function per rule: housekeeping decides the
// cutoff, the module that owns the table deletes its rows (auth, audit, pm, webhooks). Every rule
// is idempotent (it deletes what is past its period, so a second run finds nothing) and works in
// batches of `BATCH_SIZE` rows, each batch its own statement (src/core/db/retention.ts).
// Time comes from the clock port. Idempotency keys (7 days) are purged by
// purgeExpiredIdempotencyKeys in src/core/http/idempotency.ts and payment challenges by
// purgePaymentChallenges in the feedback module; the job table (src/jobs.ts) runs them all.

import { sql } from 'kysely';
import type { ObjectStore } from '../../adapters/object-store/port.ts';
import type { PurserEnv } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import type { Db, DbExecutor } from '../../core/db/database.ts';
import { withTransaction } from '../../core/db/database.ts';
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
/** Statement exports of offboarded accounts handled per batch (one object delete each). */
export const STATEMENT_EXPORT_BATCH = 100;
/** Development test-fixture accounts, with everything they own. */
export const TEST_ACCOUNT_RETENTION_MS = 7 * DAY_MS;
/** Test-fixture accounts deleted per run (each in its own transaction). */
export const TEST_ACCOUNT_BATCH = 50;

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

/**
 * Statement exports of offboarded accounts: each object is deleted from the object store, then
 * its row, so a failure leaves the row for the next run (never an unlisted object). Objects are
 * keyed by account (`statements/<account_id>/…`), so no other account's export is touched.
 * Without an object store configured nothing is deleted (the rows still name the objects). The
 * account export's `statements_manifest.keys` is empty afterwards. Returns the rows deleted.
 */
export async function purgeOffboardedStatementExports(
  db: Db,
  objectStore: ObjectStore | undefined,
): Promise<number> {
  if (!objectStore) return 0;
  let total = 0;
  for (;;) {
    const rows = await db
      .selectFrom('statement_exports')
      .innerJoin('accounts', 'accounts.id', 'statement_exports.account_id')
      .select([
        'statement_exports.account_id',
        'statement_exports.content_hash',
        'statement_exports.object_key',
      ])
      .where('accounts.offboarded_at', 'is not', null)
      .orderBy('statement_exports.account_id')
      .orderBy('statement_exports.content_hash')
      .limit(STATEMENT_EXPORT_BATCH)
      .execute();
    for (const row of rows) {
      await objectStore.delete(row.object_key);
      const deleted = await db
        .deleteFrom('statement_exports')
        .where('account_id', '=', row.account_id)
        .where('content_hash', '=', row.content_hash)
        .executeTakeFirst();
      total += Number(deleted.numDeletedRows);
    }
    if (rows.length < STATEMENT_EXPORT_BATCH) return total;
  }
}

/**
 * Every table holding rows an account owns, in deletion order (children before the rows they
 * reference; ledger holds before the groups they were posted as). `column` names the owner.
 * Ledger entries go with their groups (ON DELETE CASCADE). A test checks this list against every
 * `account_id` column of the schema, so a new table cannot be forgotten.
 */
export const ACCOUNT_OWNED_TABLES: ReadonlyArray<{ table: string; column: string }> = [
  { table: 'network_context', column: 'account_id' },
  { table: 'pm_orders', column: 'account_id' },
  { table: 'venue_credentials', column: 'account_id' },
  { table: 'credential_uses', column: 'account_id' },
  { table: 'idempotency_keys', column: 'scope' },
  { table: 'webhook_deliveries', column: 'account_id' },
  { table: 'webhook_dead_letters', column: 'account_id' },
  { table: 'webhook_envelopes', column: 'account_id' },
  { table: 'webhook_endpoints', column: 'account_id' },
  { table: 'events', column: 'account_id' },
  { table: 'audit_log', column: 'account_id' },
  { table: 'feature_requests', column: 'account_id' },
  { table: 'payment_challenges', column: 'account_id' },
  { table: 'auto_topup_arrows', column: 'account_id' },
  { table: 'auto_topup_rules', column: 'account_id' },
  { table: 'payment_settlements', column: 'account_id' },
  { table: 'prepaid_account_caps', column: 'account_id' },
  { table: 'statement_exports', column: 'account_id' },
  { table: 'rebalances', column: 'account_id' },
  { table: 'prefund_deposits', column: 'account_id' },
  { table: 'chain_watch_wallets', column: 'account_id' },
  { table: 'ledger_drifts', column: 'account_id' },
  { table: 'intents', column: 'account_id' },
  { table: 'spend_reservations', column: 'account_id' },
  { table: 'policies', column: 'account_id' },
  { table: 'delegations', column: 'account_id' },
  { table: 'ledger_holds', column: 'account_id' },
  { table: 'ledger_groups', column: 'account_id' },
  { table: 'prepaid_balances', column: 'account_id' },
  { table: 'sessions', column: 'account_id' },
  { table: 'api_keys', column: 'account_id' },
];

/** Deletes one account and everything it owns, in the caller's transaction (retention mode on). */
async function deleteAccountAndOwned(tx: DbExecutor, accountId: string): Promise<void> {
  // The one path through the append-only guards; SET LOCAL ends with the transaction.
  await sql`SET LOCAL purser.retention = 'on'`.execute(tx);
  for (const { table, column } of ACCOUNT_OWNED_TABLES) {
    await sql`DELETE FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ${accountId}`.execute(tx);
  }
  await sql`DELETE FROM accounts WHERE id = ${accountId}`.execute(tx);
}

/**
 * Development test-fixture accounts created more than 7 days ago, deleted with everything they
 * own (ledger, events, policies and audit facts included): each account in ONE transaction with
 * `purser.retention` on, at most `TEST_ACCOUNT_BATCH` accounts per run. Does nothing outside
 * development (production never sets the flag; this guards it anyway). Returns the ids deleted.
 */
export async function purgeTestAccounts(db: Db, clock: Clock, env: PurserEnv): Promise<string[]> {
  if (env !== 'development') return [];
  const before = cutoff(clock, TEST_ACCOUNT_RETENTION_MS);
  const candidates = await db
    .selectFrom('accounts')
    .select('id')
    .where('is_test_fixture', '=', true)
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(TEST_ACCOUNT_BATCH)
    .execute();
  const deleted: string[] = [];
  for (const { id } of candidates) {
    const gone = await withTransaction(db, async (tx) => {
      // Re-read under a row lock: a concurrent sweep may have taken it already.
      const row = await tx
        .selectFrom('accounts')
        .select('id')
        .where('id', '=', id)
        .where('is_test_fixture', '=', true)
        .where('created_at', '<', before)
        .forUpdate()
        .executeTakeFirst();
      if (!row) return false;
      await deleteAccountAndOwned(tx, id);
      return true;
    });
    if (gone) deleted.push(id);
  }
  return deleted;
}
