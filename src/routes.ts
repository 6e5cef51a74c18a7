// The route table: every endpoint of the service, in one list. The guard, the OpenAPI document
// and the scope-matrix test read it; add a module's routes here.

import type { RouteDefinition } from './core/http/route-table.ts';
import { docsRoutes } from './modules/docs/routes.ts';
import { healthRoutes } from './modules/health/routes.ts';

export const routeTable: RouteDefinition[] = [...healthRoutes, ...docsRoutes];
