// Money on an account's prepaid balance, as a top-up would leave it, for tests of paid routes.

import type { Clock } from '../../src/core/clock.ts';
import type { Db } from '../../src/core/db/database.ts';
import { creditPrepaid } from '../../src/modules/billing/index.ts';

/** Credits `micro` USD to the account's prepaid balance in its own transaction. */
export async function fundPrepaid(db: Db, clock: Clock, accountId: string, micro: bigint): Promise<void> {
  await db.transaction().execute((tx) =>
    creditPrepaid(tx, clock, {
      accountId,
      amountMicroUsd: micro,
      settlementId: `test:fund:${accountId}:${micro}:${Math.random()}`,
    }),
  );
}
