// The keys module's part of the account's life cycle (src/core/account-part.ts): its API keys,
// exported as metadata (never a token or its hash) and revoked by offboarding.

import { type AccountPart, isoTime, isoTimeOrNull } from '../../core/account-part.ts';
import type { DbExecutor } from '../../core/db/database.ts';

export const keysAccountPart: AccountPart = {
  module: 'keys',
  tables: [{ table: 'api_keys', column: 'account_id', exported: 'api_keys', offboard: 'changed' }],
  async exportSections({ tx, accountId, fetch, bounded }) {
    const rows = await tx
      .selectFrom('api_keys')
      .select([
        'id',
        'name',
        'scopes',
        'wallets',
        'allowed_ips',
        'created_at',
        'expires_at',
        'revoked_at',
        'rotated_to',
        'rotated_from',
        'created_by',
      ])
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(fetch)
      .execute();
    return {
      api_keys: bounded('api_keys', rows).map((k) => ({
        ...k,
        created_at: isoTime(k.created_at),
        expires_at: isoTime(k.expires_at),
        revoked_at: isoTimeOrNull(k.revoked_at),
      })),
    };
  },
};

/** Offboarding: revokes the account's live keys at `now`; returns their ids, sorted. */
export async function revokeAccountKeys(tx: DbExecutor, accountId: string, now: Date): Promise<string[]> {
  const rows = await tx
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['id'])
    .execute();
  return rows.map((r) => r.id).sort();
}
