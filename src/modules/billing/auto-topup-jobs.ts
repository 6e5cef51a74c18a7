// The auto-top-up's jobs: firing an arrow when a debit crosses the threshold, failing arrows
// whose settlement failed, and expiring arrows past their authorization.

import { Type } from 'typebox';
import { defineJob, type AnyJobDefinition } from '../../core/jobs/index.ts';
import type { AppDeps } from '../../deps.ts';
import type { SettlementEffects } from '../payments/index.ts';
import { expireArrows } from './auto-topup-expiry.ts';
import { fireAutoTopup, syncSettlingArrows } from './auto-topup-fire.ts';
import { FIRE_JOB } from './auto-topup-state.ts';

export function autoTopupJobs(effects: SettlementEffects): AnyJobDefinition<AppDeps>[] {
  return [
    // Enqueued by the prepaid_balances trigger (migration 0013) when a debit crosses the threshold.
    defineJob({
      name: FIRE_JOB,
      payload: Type.Object({ account_id: Type.String() }),
      run: async (deps: AppDeps, { account_id: accountId }) => {
        if (!deps.chain) return;
        const fired = await fireAutoTopup(deps, effects, accountId);
        if (fired.state !== 'idle' || fired.failed > 0)
          deps.log.info({ account: accountId, ...fired }, 'auto-top-up');
      },
    }),
    // Arrows whose settlement the reconciler failed: failed too, and the next arrow gets its turn.
    defineJob({
      name: 'auto_topup.sync',
      every: 60,
      run: async (deps: AppDeps) => {
        if (!deps.chain) return;
        const failed = await syncSettlingArrows(deps);
        if (failed > 0) deps.log.info({ failed }, 'auto-top-up arrows failed after reconciliation');
      },
    }),
    defineJob({
      name: 'auto_topup.expire',
      every: 60,
      run: async (deps: AppDeps) => {
        const expired = await expireArrows(deps.db, deps.clock);
        if (expired > 0) deps.log.info({ expired }, 'auto-top-up arrows expired');
      },
    }),
  ];
}
