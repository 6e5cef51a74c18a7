// Batched retention deletes: each batch one statement of at most RETENTION_BATCH_SIZE rows, so a
// sweep never holds many locks for long. The modules write the DELETE of their own tables; the
// housekeeping module decides when a row is past its period.

import type { RawBuilder } from 'kysely';
import type { Db } from './database.ts';

/** Rows deleted per statement. */
export const RETENTION_BATCH_SIZE = 1000;

/** Runs one batched `DELETE … RETURNING 1` until a batch comes back short; returns the rows deleted. */
export async function deleteInBatches(db: Db, batch: () => RawBuilder<{ one: number }>): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await batch().execute(db);
    total += result.rows.length;
    if (result.rows.length < RETENTION_BATCH_SIZE) return total;
  }
}
