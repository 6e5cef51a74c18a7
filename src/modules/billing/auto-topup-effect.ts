// What a settled arrow does (the settlement effect of purpose `auto_topup`, listed in
// src/settlement-effects.ts).

import { formatUsd } from '../../core/money.ts';
import { recordAudit } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import type { SettlementEffect } from '../payments/index.ts';
import { markArrowSettled, resetFailures } from './auto-topup-store.ts';
import { topupEffect } from './topups.ts';

/**
 * The effect of a settled arrow (purpose `auto_topup`): the prepaid credit (`topup.auto`, with its
 * `balance.credited` event and audit fact), then the arrow settled with its tx hash and its
 * signature destroyed, the failure run reset, and the arrow's event and audit fact: all in the
 * transaction that marks the settlement settled.
 */
export const autoTopupEffect: SettlementEffect = async (tx, clock, row, txHash) => {
  const result = await topupEffect(tx, clock, row, txHash);
  const arrowId = typeof row.request.arrow_id === 'string' ? row.request.arrow_id : null;
  if (arrowId) {
    const now = clock.now();
    const hash = txHash.toLowerCase();
    const arrow = await markArrowSettled(tx, row.account_id, arrowId, row.id, hash, now);
    if (arrow) {
      await resetFailures(tx, row.account_id, now);
      const payload = {
        nonce: arrow.nonce,
        payer: arrow.payer,
        value_usd: formatUsd(BigInt(arrow.value)),
        tx_hash: hash,
        balance_usd: result.balance_usd ?? null,
      };
      await emitEvent(tx, clock, {
        accountId: row.account_id,
        kind: 'auto_topup.arrow_settled',
        subject: arrowId,
        payload,
      });
      await recordAudit(tx, clock, {
        accountId: row.account_id,
        actor: 'system',
        action: 'auto_topup.arrow_settled',
        subject: arrowId,
        details: payload,
      });
    }
  }
  return { ...result, arrow_id: arrowId };
};
