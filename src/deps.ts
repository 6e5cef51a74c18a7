// Everything a service needs, passed in: no module-level singletons, so tests can build an app
// from any mix of real and sandbox parts.

import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Config } from './config.ts';
import type { Clock } from './core/clock.ts';
import type { Db } from './core/db/database.ts';
import type { Principal, RouteDefinition } from './core/http/route-table.ts';

export interface Authenticator {
  /** Resolves the bearer credential of a request; throws UNAUTHORIZED or FORBIDDEN. */
  authenticate(req: FastifyRequest, route: RouteDefinition): Promise<Principal>;
}

export interface AppDeps {
  config: Config;
  db: Db;
  dbKind: 'postgres' | 'pglite';
  clock: Clock;
  log: FastifyBaseLogger;
  authenticator: Authenticator;
}
