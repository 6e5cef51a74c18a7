// The delegations module's part of the account's life cycle (src/core/account-part.ts): the
// session-key grants, exported without the owner's enable signature and revoked by offboarding.

import { type AccountPart, isoTime, isoTimeOrNull, jsonColumn } from '../../core/account-part.ts';

export const delegationsAccountPart: AccountPart = {
  module: 'delegations',
  tables: [{ table: 'delegations', column: 'account_id', exported: 'delegations', offboard: 'changed' }],
  async exportSections({ tx, accountId, fetch, bounded }) {
    // Not selected: enable_sig (the owner's signature) and anything derived from signing.
    const rows = await tx
      .selectFrom('delegations')
      .select([
        'id',
        'wallet',
        'chain_id',
        'status',
        'permission_id',
        'validation_id',
        'kernel_version',
        'session_key',
        'modules',
        'scope',
        'valid_after',
        'valid_until',
        'account_deployed',
        'policy_version',
        'renewed_from',
        'owner',
        'account_index',
        'created_at',
        'confirmed_at',
        'revoked_at',
        'expired_at',
      ])
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(fetch)
      .execute();
    return {
      delegations: bounded('delegations', rows).map((d) => ({
        ...d,
        modules: jsonColumn(d.modules),
        scope: jsonColumn(d.scope),
        valid_after: Number(d.valid_after),
        valid_until: Number(d.valid_until),
        created_at: isoTime(d.created_at),
        confirmed_at: isoTimeOrNull(d.confirmed_at),
        revoked_at: isoTimeOrNull(d.revoked_at),
        expired_at: isoTimeOrNull(d.expired_at),
      })),
    };
  },
};
