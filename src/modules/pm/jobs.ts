// The prediction-market module's jobs (docs/prediction-markets.md, "Orders").

import { defineJob, type AnyJobDefinition } from '../../core/jobs/index.ts';
import type { AppDeps } from '../../deps.ts';
import { reconcileTransmitting, sweepPrepared } from './orders.ts';
import { orderDeps } from './routes.ts';

export const pmJobs: AnyJobDefinition<AppDeps>[] = [
  // Orders whose transmit got no answer: the venue is asked about their hash; nothing is sent again.
  defineJob({
    name: 'pm.orders.reconcile',
    every: 60,
    run: async (deps: AppDeps) => {
      if (!deps.pmVenues) return;
      const done = await reconcileTransmitting(orderDeps(deps), deps.log);
      if (done.placed + done.closed > 0)
        deps.log.info(done, 'unanswered prediction-market orders reconciled');
    },
  }),
  // Prepared (client-signed) orders past expires_at: exposure released, fee reversed.
  defineJob({
    name: 'pm.orders.sweep',
    every: 60,
    run: async (deps: AppDeps) => {
      if (!deps.pmVenues) return;
      const swept = await sweepPrepared(orderDeps(deps));
      if (swept > 0) deps.log.info({ swept }, 'expired prepared prediction-market orders swept');
    },
  }),
];
