// What an operator sees of billing: the settings in force and the platform's totals, all derived
// (the float from the balance rows, fee revenue from its ledger entries), never a hot counter.

import { sql } from 'kysely';
import type { Config } from '../../config.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { formatUsd } from '../../core/money.ts';
import { balanceOf, FEE_REVENUE, readPrepaidFloat, USD } from '../ledger/index.ts';
import { readBillingSettings } from './settings.ts';

export interface BillingOverview {
  metering_enforced: boolean;
  prepaid_float_cap_usd: string;
  prepaid_account_cap_default_usd: string;
  /** Every account's prepaid balance together. */
  prepaid_float_usd: string;
  /** Metered fees earned, net of refunds: minus the sum of the fee revenue entries. */
  fee_revenue_usd: string;
  accounts_with_own_cap: number;
}

export async function billingOverview(db: DbExecutor, config: Config): Promise<BillingOverview> {
  const [settings, float, revenue, ownCaps] = await Promise.all([
    readBillingSettings(db, config),
    readPrepaidFloat(db),
    balanceOf(db, FEE_REVENUE, USD),
    db
      .selectFrom('prepaid_account_caps')
      .select(sql<string>`count(*)::text`.as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return {
    metering_enforced: settings.meteringEnforced,
    prepaid_float_cap_usd: formatUsd(settings.floatCapMicro),
    prepaid_account_cap_default_usd: formatUsd(settings.accountCapMicro),
    prepaid_float_usd: formatUsd(float),
    fee_revenue_usd: formatUsd(-revenue),
    accounts_with_own_cap: Number(ownCaps.n),
  };
}
