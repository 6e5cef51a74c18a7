// The auth module's part of the account's life cycle (src/core/account-part.ts): API keys and
// sessions, exported as metadata (never a token or its hash) and revoked by offboarding, and the
// record of where credentials were used.

import { type AccountPart, isoTime, isoTimeOrNull } from '../../core/account-part.ts';
import type { DbExecutor } from '../../core/db/database.ts';

export const authAccountPart: AccountPart = {
  module: 'auth',
  tables: [
    {
      table: 'credential_uses',
      column: 'account_id',
      exported: { omitted: 'network context of credential uses, kept 90 days for security review' },
      offboard: 'kept',
    },
    { table: 'sessions', column: 'account_id', exported: 'sessions', offboard: 'changed' },
    { table: 'api_keys', column: 'account_id', exported: 'api_keys', offboard: 'changed' },
  ],
  async exportSections({ tx, accountId, fetch, bounded }) {
    const keys = await tx
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
    const sessions = await tx
      .selectFrom('sessions')
      .select(['id', 'created_at', 'expires_at', 'revoked_at'])
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(fetch)
      .execute();
    return {
      api_keys: bounded('api_keys', keys).map((k) => ({
        ...k,
        created_at: isoTime(k.created_at),
        expires_at: isoTime(k.expires_at),
        revoked_at: isoTimeOrNull(k.revoked_at),
      })),
      sessions: bounded('sessions', sessions).map((s) => ({
        id: s.id,
        created_at: isoTime(s.created_at),
        expires_at: isoTime(s.expires_at),
        revoked_at: isoTimeOrNull(s.revoked_at),
      })),
    };
  },
};

/** Offboarding: revokes the account's live sessions at `now`; returns their ids, sorted. */
export function revokeAccountSessions(tx: DbExecutor, accountId: string, now: Date): Promise<string[]> {
  return revokeLive(tx, 'sessions', accountId, now);
}

/** Offboarding: revokes the account's live keys at `now`; returns their ids, sorted. */
export function revokeAccountKeys(tx: DbExecutor, accountId: string, now: Date): Promise<string[]> {
  return revokeLive(tx, 'api_keys', accountId, now);
}

async function revokeLive(
  tx: DbExecutor,
  table: 'sessions' | 'api_keys',
  accountId: string,
  now: Date,
): Promise<string[]> {
  const rows = await tx
    .updateTable(table)
    .set({ revoked_at: now })
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['id'])
    .execute();
  return rows.map((r) => r.id).sort();
}
