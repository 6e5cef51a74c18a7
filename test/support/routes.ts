// Every route a development deployment serves: the route table and the devnet's routes, which
// come in through its door (src/devnet/door.ts). What the route-wide tests walk.

import type { RouteDefinition } from '../../src/core/http/route-table.ts';
import { devRoutes } from '../../src/devnet/routes/routes.ts';
import { routeTable } from '../../src/routes.ts';

export const everyRoute: RouteDefinition[] = [...routeTable, ...devRoutes];
