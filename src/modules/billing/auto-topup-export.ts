// The auto-top-up part of the account export (GET /v1/account/export).

import type { DbExecutor } from '../../core/db/database.ts';
import { formatUsd } from '../../core/money.ts';
import { findRule, listAllArrows } from './auto-topup-store.ts';

/**
 * The account export's `auto_topup`: null when the account never had a rule or an arrow, else
 * the rule and at most `limit` arrows, newest first. Never a signature.
 */
export async function exportAutoTopup(
  db: DbExecutor,
  accountId: string,
  limit: number,
): Promise<{ rule: Record<string, unknown> | null; authorizations: Record<string, unknown>[] } | null> {
  const rule = await findRule(db, accountId);
  const arrows = await listAllArrows(db, accountId, limit);
  if (!rule && arrows.length === 0) return null;
  return {
    rule: rule
      ? {
          threshold_usd: formatUsd(BigInt(rule.threshold_micro)),
          max_per_month: rule.max_per_month,
          suspended: rule.suspended,
          consecutive_failures: rule.consecutive_failures,
          created_at: rule.created_at.toISOString(),
          updated_at: rule.updated_at.toISOString(),
        }
      : null,
    authorizations: arrows.map((a) => ({
      id: a.id,
      chain_id: a.chain_id,
      token: a.token,
      payer: a.payer,
      payee: a.payee,
      nonce: a.nonce,
      value_usd: formatUsd(BigInt(a.value)),
      valid_after: a.valid_after,
      valid_before: a.valid_before,
      status: a.status,
      settlement_id: a.settlement_id,
      tx_hash: a.tx_hash,
      fail_reason: a.fail_reason,
      fired_at: a.fired_at?.toISOString() ?? null,
      created_at: a.created_at.toISOString(),
      updated_at: a.updated_at.toISOString(),
    })),
  };
}
