// The `auto_topup.expire` job: ready arrows past their validBefore are expired.

import type { Clock } from '../../core/clock.ts';
import { type Db, withTransaction } from '../../core/db/database.ts';
import { formatUsd } from '../../core/money.ts';
import { recordAudit } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import { expireReadyArrows } from './auto-topup-store.ts';
import { arrowView, unixSeconds } from './auto-topup-state.ts';

/**
 * Ready arrows whose validBefore has passed by the clock become expired, signatures destroyed,
 * each with an event and an audit fact, in one transaction (the `auto_topup.expire` job, every
 * minute). Returns how many expired.
 */
export async function expireArrows(db: Db, clock: Clock, limit = 500): Promise<number> {
  return withTransaction(db, async (tx) => {
    const now = clock.now();
    const expired = await expireReadyArrows(tx, unixSeconds(now), now, limit);
    for (const arrow of expired) {
      const payload = {
        nonce: arrow.nonce,
        payer: arrow.payer,
        value_usd: formatUsd(BigInt(arrow.value)),
        valid_before: arrowView(arrow).valid_before,
      };
      await emitEvent(tx, clock, {
        accountId: arrow.account_id,
        kind: 'auto_topup.arrow_expired',
        subject: arrow.id,
        payload,
      });
      await recordAudit(tx, clock, {
        accountId: arrow.account_id,
        actor: 'system',
        action: 'auto_topup.arrow_expired',
        subject: arrow.id,
        details: payload,
      });
    }
    return expired.length;
  });
}
