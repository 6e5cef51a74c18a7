// Re-sealing webhook secrets onto the keyring's newest key (docs/operations.md, "Sealing keys"),
// by account id, in batches, each batch one transaction holding its rows' locks.

import { sql } from 'kysely';
import { withTransaction, type Db } from '../../core/db/database.ts';
import { webhookSecretContext, type ResealCount, type SealingKeyring } from '../../core/sealing.ts';

export async function resealWebhookSecrets(
  db: Db,
  keyring: SealingKeyring,
  batchSize: number,
): Promise<ResealCount> {
  const count: ResealCount = { resealed: 0, unopenable: 0 };
  // starts_with, not LIKE: a key id may hold `_`, which LIKE reads as a wildcard.
  const current = keyring.currentPrefix();
  let after = '';
  for (;;) {
    const batch = await withTransaction(db, async (tx) => {
      const { rows } = await sql<{ account_id: string; secret_sealed: string }>`
        SELECT account_id, secret_sealed FROM webhook_endpoints
        WHERE secret_sealed IS NOT NULL AND NOT starts_with(secret_sealed, ${current}) AND account_id > ${after}
        ORDER BY account_id LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`.execute(tx);
      for (const row of rows) {
        const fresh = keyring.reseal(webhookSecretContext(row.account_id), row.secret_sealed);
        if (fresh === null) {
          count.unopenable += 1;
          continue;
        }
        await sql`UPDATE webhook_endpoints SET secret_sealed = ${fresh}
          WHERE account_id = ${row.account_id}`.execute(tx);
        count.resealed += 1;
      }
      return rows;
    });
    if (batch.length < batchSize) return count;
    after = batch[batch.length - 1]!.account_id;
  }
}
