// The webhooks module's part of the account's life cycle (src/core/account-part.ts): whether a
// secret is configured (never the secret) and the dead letters; offboarding retires them all.

import { type AccountPart, isoTime } from '../../core/account-part.ts';

export const webhooksAccountPart: AccountPart = {
  module: 'webhooks',
  tables: [
    {
      table: 'webhook_deliveries',
      column: 'account_id',
      exported: { omitted: 'the outbox; the events it delivers are exported' },
      offboard: 'changed',
    },
    {
      table: 'webhook_dead_letters',
      column: 'account_id',
      exported: 'webhooks.failures',
      offboard: 'removed',
    },
    {
      table: 'webhook_envelopes',
      column: 'account_id',
      exported: { omitted: 'signed request bodies; the events they carried are exported' },
      offboard: 'changed',
    },
    { table: 'webhook_endpoints', column: 'account_id', exported: 'webhooks', offboard: 'removed' },
  ],
  async exportSections({ tx, accountId, fetch, bounded }) {
    const endpoint = await tx
      .selectFrom('webhook_endpoints')
      .select(['secret_sealed'])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    // Not selected: the body of each dead letter (the events themselves are exported).
    const failures = await tx
      .selectFrom('webhook_dead_letters')
      .select([
        'id',
        'event_id',
        'kind',
        'attempts',
        'last_status',
        'last_error',
        'first_attempt_at',
        'dead_at',
      ])
      .where('account_id', '=', accountId)
      .orderBy('id', 'desc')
      .limit(fetch)
      .execute();
    return {
      webhooks: {
        secret_configured: endpoint?.secret_sealed != null,
        failures: bounded('webhooks.failures', failures).map((f) => ({
          ...f,
          id: Number(f.id),
          first_attempt_at: isoTime(f.first_attempt_at),
          dead_at: isoTime(f.dead_at),
        })),
      },
    };
  },
};
