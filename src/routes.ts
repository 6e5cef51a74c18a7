// The route table: every endpoint of the service, in one list. The guard, the OpenAPI document
// and the scope-matrix test read it; add a module's routes here. The development routes under
// /v1/dev/ come through the devnet's door (src/devnet/door.ts), in development only.

import type { RouteDefinition } from './core/http/route-table.ts';
import { accountRoutes } from './lifecycle/routes.ts';
import { authRoutes } from './modules/auth/routes.ts';
import { chainwatchRoutes } from './modules/chainwatch/index.ts';
import { autoTopupRoutes } from './modules/billing/auto-topup-routes.ts';
import { billingRoutes } from './modules/billing/routes.ts';
import { delegationsRoutes } from './modules/delegations/index.ts';
import { docsRoutes } from './modules/docs/routes.ts';
import { feedbackRoutes } from './modules/feedback/routes.ts';
import { healthRoutes } from './modules/health/routes.ts';
import { intentsRoutes } from './modules/intents/index.ts';
import { keysRoutes } from './modules/keys/routes.ts';
import { opsRoutes } from './modules/ops/routes.ts';
import { policiesRoutes } from './modules/policies/routes.ts';
import { quotesRoutes } from './modules/quotes/index.ts';
import { pmRoutes } from './modules/pm/index.ts';
import { rebalancesRoutes } from './modules/rebalances/index.ts';
import { registryRoutes } from './modules/registry/routes.ts';
import { screeningRoutes } from './modules/screening/routes.ts';
import { statementsRoutes } from './modules/statements/index.ts';
import { switchesRoutes } from './modules/switches/routes.ts';
import { webhooksRoutes } from './modules/webhooks/index.ts';
import { settlementEffects } from './settlement-effects.ts';

/** What a settled payment does, per purpose: given to the routes that take payments. */
const effects = settlementEffects();

export const routeTable: RouteDefinition[] = [
  ...healthRoutes,
  ...docsRoutes,
  ...registryRoutes,
  ...quotesRoutes,
  ...screeningRoutes,
  ...feedbackRoutes(effects),
  ...authRoutes,
  ...keysRoutes,
  ...policiesRoutes,
  ...billingRoutes(effects),
  ...autoTopupRoutes,
  ...delegationsRoutes,
  ...intentsRoutes,
  ...rebalancesRoutes,
  ...pmRoutes,
  ...webhooksRoutes,
  ...statementsRoutes,
  ...chainwatchRoutes,
  ...accountRoutes,
  ...switchesRoutes,
  ...opsRoutes,
];
