// What a settled payment does, per purpose (the counterpart of src/routes.ts and src/jobs.ts):
// applied by the payments module in the transaction that marks the settlement settled.

import { autoTopupEffect } from './modules/billing/auto-topup.ts';
import { topupEffect } from './modules/billing/topups.ts';
import { feedbackEffect } from './modules/feedback/index.ts';
import type { SettlementEffects } from './modules/payments/index.ts';

export function settlementEffects(): SettlementEffects {
  return {
    topup: topupEffect,
    auto_topup: autoTopupEffect,
    feedback: feedbackEffect,
  };
}
