// The account's prediction-market orders for the account export: what Purser recorded of each,
// without signatures.

import type { DbExecutor } from '../../core/db/database.ts';
import { formatUsd } from '../../core/money.ts';

/** The account's orders for the export: what Purser recorded, without signatures. */
export async function exportOrders(
  db: DbExecutor,
  accountId: string,
  limit: number,
): Promise<Record<string, unknown>[]> {
  const rows = await db
    .selectFrom('pm_orders')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    venue: r.venue,
    order_id: r.order_hash,
    wallet: r.wallet,
    credential_id: r.credential_id,
    client_order_id: r.client_order_id,
    condition_id: r.condition_id,
    token_id: r.token_id,
    side: r.side,
    price_usd: formatUsd(BigInt(r.price_micro)),
    size_shares: formatUsd(BigInt(r.size_micro)),
    cost_usd: formatUsd(BigInt(r.notional_micro)),
    fee_usd: formatUsd(BigInt(r.fee_micro)),
    status: r.status,
    venue_status: r.venue_status,
    venue_error: r.venue_error,
    state: r.state,
    policy_version: r.policy_version,
    policy_hash: r.policy_hash,
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  }));
}
