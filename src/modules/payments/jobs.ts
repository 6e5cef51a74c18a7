// The payments module's job: settlements a request left unfinished (crash, timeout), finished
// from chain truth with the effects each purpose has (given by the composition, src/jobs.ts).

import { defineJob, type AnyJobDefinition, type JobDeps } from '../../core/jobs/index.ts';
import { reconcileStaleSettlements, type PaymentsDeps, type SettlementEffects } from './service.ts';

export function paymentsJobs(effects: SettlementEffects): AnyJobDefinition<PaymentsDeps & JobDeps>[] {
  return [
    defineJob({
      name: 'payments.reconcile',
      every: 10,
      run: async (deps: PaymentsDeps & JobDeps) => {
        if (!deps.chain) return;
        const done = await reconcileStaleSettlements(deps, effects);
        if (done.settled + done.failed > 0) deps.log.info(done, 'payment settlements reconciled');
      },
    }),
  ];
}
