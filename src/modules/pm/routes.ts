// The prediction-market routes, in the order of the route table: the credentials
// (credential-routes.ts), getting a wallet ready to trade (onboarding-routes.ts), the orders
// (order-routes.ts) and the fills (fill-routes.ts); what they share is in route-deps.ts.

import type { RouteDefinition } from '../../core/http/route-table.ts';
import { credentialRoutes } from './credential-routes.ts';
import { fillRoutes } from './fill-routes.ts';
import { onboardingRoutes } from './onboarding-routes.ts';
import { orderRoutes } from './order-routes.ts';

export { credentialDeps, orderDeps } from './route-deps.ts';

export const pmRoutes: RouteDefinition[] = [
  ...credentialRoutes,
  ...onboardingRoutes,
  ...orderRoutes,
  ...fillRoutes,
];
