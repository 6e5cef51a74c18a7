// Re-sealing venue credentials onto the keyring's newest key (docs/operations.md, "Sealing
// keys"), by id, in batches, each batch one transaction holding its rows' locks. Revocation
// overwrites `sealed` with NULL, so a revoked credential is skipped.

import { sql } from 'kysely';
import { withTransaction, type Db } from '../../core/db/database.ts';
import { venueCredentialContext, type ResealCount, type SealingKeyring } from '../../core/sealing.ts';

export async function resealVenueCredentials(
  db: Db,
  keyring: SealingKeyring,
  batchSize: number,
): Promise<ResealCount> {
  const count: ResealCount = { resealed: 0, unopenable: 0 };
  // starts_with, not LIKE: a key id may hold `_`, which LIKE reads as a wildcard.
  const current = keyring.currentPrefix();
  let afterId = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const batch = await withTransaction(db, async (tx) => {
      const { rows } = await sql<{ id: string; account_id: string; venue: string; sealed: string }>`
        SELECT id, account_id, venue, sealed FROM venue_credentials
        WHERE sealed IS NOT NULL AND NOT starts_with(sealed, ${current}) AND id > ${afterId}::uuid
        ORDER BY id LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`.execute(tx);
      for (const row of rows) {
        const fresh = keyring.reseal(venueCredentialContext(row.account_id, row.venue, row.id), row.sealed);
        if (fresh === null) {
          count.unopenable += 1;
          continue;
        }
        await sql`UPDATE venue_credentials SET sealed = ${fresh}
          WHERE id = ${row.id}::uuid AND sealed IS NOT NULL`.execute(tx);
        count.resealed += 1;
      }
      return rows;
    });
    if (batch.length < batchSize) return count;
    afterId = batch[batch.length - 1]!.id;
  }
}
