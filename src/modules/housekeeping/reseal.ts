// The re-seal job (docs/operations.md, "Sealing keys"): every sealed value not sealed with the
// keyring's newest key (an older key, or the format of before the keyring) is opened and sealed
// again with the newest key, in batches, each batch one transaction holding its rows' locks.
// Webhook secrets and active venue credentials; revoked credentials hold nothing. A value no key
// of the ring opens is left as it is and counted (the operator removed a key too early).

import { sql } from 'kysely';
import { type Db, withTransaction } from '../../core/db/database.ts';
import { venueCredentialContext, webhookSecretContext, type SealingKeyring } from '../../core/sealing.ts';

const RESEAL_BATCH = 200;

export interface ResealResult {
  webhookSecrets: number;
  venueCredentials: number;
  /** Values no key of the ring opens (left untouched). */
  unopenable: number;
}

export async function resealStale(db: Db, keyring: SealingKeyring): Promise<ResealResult> {
  const result: ResealResult = { webhookSecrets: 0, venueCredentials: 0, unopenable: 0 };
  // starts_with, not LIKE: a key id may hold `_`, which LIKE reads as a wildcard.
  const current = keyring.currentPrefix();

  // Webhook secrets, by account id.
  let after = '';
  for (;;) {
    const batch = await withTransaction(db, async (tx) => {
      const { rows } = await sql<{ account_id: string; secret_sealed: string }>`
        SELECT account_id, secret_sealed FROM webhook_endpoints
        WHERE secret_sealed IS NOT NULL AND NOT starts_with(secret_sealed, ${current}) AND account_id > ${after}
        ORDER BY account_id LIMIT ${RESEAL_BATCH} FOR UPDATE SKIP LOCKED`.execute(tx);
      for (const row of rows) {
        const context = webhookSecretContext(row.account_id);
        const fresh = reseal(keyring, context, row.secret_sealed);
        if (fresh === null) {
          result.unopenable += 1;
          continue;
        }
        await sql`UPDATE webhook_endpoints SET secret_sealed = ${fresh}
          WHERE account_id = ${row.account_id}`.execute(tx);
        result.webhookSecrets += 1;
      }
      return rows;
    });
    if (batch.length < RESEAL_BATCH) break;
    after = batch[batch.length - 1]!.account_id;
  }

  // Venue credentials, by id; revocation overwrites `sealed` with NULL, so a revoked one is skipped.
  let afterId = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const batch = await withTransaction(db, async (tx) => {
      const { rows } = await sql<{ id: string; account_id: string; venue: string; sealed: string }>`
        SELECT id, account_id, venue, sealed FROM venue_credentials
        WHERE sealed IS NOT NULL AND NOT starts_with(sealed, ${current}) AND id > ${afterId}::uuid
        ORDER BY id LIMIT ${RESEAL_BATCH} FOR UPDATE SKIP LOCKED`.execute(tx);
      for (const row of rows) {
        const context = venueCredentialContext(row.account_id, row.venue, row.id);
        const fresh = reseal(keyring, context, row.sealed);
        if (fresh === null) {
          result.unopenable += 1;
          continue;
        }
        await sql`UPDATE venue_credentials SET sealed = ${fresh}
          WHERE id = ${row.id}::uuid AND sealed IS NOT NULL`.execute(tx);
        result.venueCredentials += 1;
      }
      return rows;
    });
    if (batch.length < RESEAL_BATCH) break;
    afterId = batch[batch.length - 1]!.id;
  }
  return result;
}

function reseal(keyring: SealingKeyring, context: string, sealed: string): string | null {
  let plaintext: string;
  try {
    plaintext = keyring.open(context, sealed);
  } catch {
    return null;
  }
  return keyring.seal(context, plaintext);
}
