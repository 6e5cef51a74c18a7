// The whole HTTP app over a fresh migrated database, for route tests. Probe routes passed as
// `extraRoutes` go through the same layers as the real table (guard, idempotency, time budget,
// error renderer).

import { buildTokenRegistry } from '../../src/modules/registry/index.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFilesystemObjectStore } from '../../src/adapters/object-store/filesystem.ts';
import { buildApp, type App } from '../../src/app.ts';
import { testConfig, type Config } from '../../src/config.ts';
import { systemClock, type Clock } from '../../src/core/clock.ts';
import type { DatabaseHandle } from '../../src/core/db/database.ts';
import type { RouteDefinition } from '../../src/core/http/route-table.ts';
import { createLogger } from '../../src/core/log.ts';
import { createAuthenticator } from '../../src/modules/auth/authenticator.ts';
import { startCredentialCache } from '../../src/modules/auth/credential-cache.ts';
import type { AppDeps } from '../../src/deps.ts';
import { devRoutes } from '../../src/devnet/routes/routes.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';

export interface CreateTestAppOptions {
  config?: Partial<Config>;
  extraRoutes?: RouteDefinition[];
  clock?: Clock;
  /** Connections in the PostgreSQL pool (ignored on PGlite). */
  poolSize?: number;
  /** Adapters and other dependencies beyond the defaults (chain port, devnet, registry…). */
  deps?: Partial<Omit<AppDeps, 'config' | 'db' | 'dbKind'>>;
}

export interface TestApp {
  app: App;
  deps: AppDeps;
  db: DatabaseHandle;
  database: TestDatabase;
  /** Closes the app, then drops the database. */
  close(): Promise<void>;
}

export async function createTestApp(options: CreateTestAppOptions = {}): Promise<TestApp> {
  const database = await createTestDatabase(
    options.poolSize === undefined ? {} : { poolSize: options.poolSize },
  );
  // Statement exports of this app go to a directory of its own, removed on close.
  const statementsDir = mkdtempSync(join(tmpdir(), 'purser-statements-'));
  const dropAll = async () => {
    try {
      await database.drop();
    } finally {
      rmSync(statementsDir, { recursive: true, force: true });
    }
  };
  try {
    const config = testConfig({
      ...options.config,
      statements: options.config?.statements ?? { dir: statementsDir, s3: null },
    });
    const clock = options.clock ?? systemClock;
    const log = createLogger('silent');
    // The same credential cache as production, so revocation tests prove the invalidation path.
    const credentials = await startCredentialCache(database.handle);
    const deps: AppDeps = {
      config,
      // What the runtime builds at start; a test on the devnet passes the devnet's.
      tokenRegistry: buildTokenRegistry(config.env),
      db: database.handle.db,
      dbKind: database.kind,
      clock,
      log,
      authenticator: createAuthenticator({
        db: database.handle.db,
        clock,
        config,
        log,
        cache: credentials.cache,
      }),
      credentialCache: credentials.cache,
      objectStore: createFilesystemObjectStore({ root: config.statements.dir }),
      ...options.deps,
    };
    // As `npm start` in development: the devnet's routes come in through its door.
    const app = await buildApp(deps, { extraRoutes: [...devRoutes, ...(options.extraRoutes ?? [])] });
    let closed = false;
    return {
      app,
      deps,
      db: database.handle,
      database,
      close: async () => {
        if (closed) return;
        closed = true;
        try {
          await app.fastify.close();
          await credentials.stop();
        } finally {
          await dropAll();
        }
      },
    };
  } catch (err) {
    await dropAll();
    throw err;
  }
}
