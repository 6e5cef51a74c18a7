// The prediction-market module's part of the account's life cycle (src/core/account-part.ts):
// venue credentials (metadata only; zeroed by offboarding), orders and the positions their fills
// journaled.

import { type AccountPart } from '../../core/account-part.ts';
import { listCredentialViews } from './credentials.ts';
import { exportPositions } from './fills.ts';
import { exportOrders } from './orders.ts';

export const pmAccountPart: AccountPart = {
  module: 'pm',
  tables: [
    { table: 'pm_orders', column: 'account_id', exported: 'pm_orders', offboard: 'kept' },
    // Its networks and usage counts go with each credential (ON DELETE CASCADE).
    { table: 'venue_credentials', column: 'account_id', exported: 'venue_credentials', offboard: 'changed' },
  ],
  async exportSections({ tx, accountId, fetch, bounded }) {
    // Metadata only, revoked ones included: never sealed material.
    const credentials = await listCredentialViews(tx, accountId, {
      limit: fetch,
      offset: 0,
      includeRevoked: true,
    });
    return {
      venue_credentials: bounded('venue_credentials', credentials).map((c) => ({ ...c })),
      // Without signatures: what Purser recorded of each order.
      pm_orders: bounded('pm_orders', await exportOrders(tx, accountId, fetch)),
      // Outcome shares held per wallet and token, from the journaled fills.
      pm_positions: bounded('pm_positions', await exportPositions(tx, accountId, fetch)),
    };
  },
};
