// A migrated database for one test file: a fresh PostgreSQL database when DATABASE_URL is set
// (CI always sets it), otherwise an in-memory PGlite instance. Both are copies of the run's
// migrated template (test/database-global-setup.ts) when the file runs under vitest.

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { testConfig } from '../../src/config.ts';
import { openDatabase, openPostgres, type DatabaseHandle } from '../../src/core/db/database.ts';
import { migrate } from '../../src/core/db/migrate.ts';
import type { DatabaseTemplate } from '../database-global-setup.ts';
import { onServer } from './pg-server.ts';

export interface TestDatabase {
  handle: DatabaseHandle;
  kind: 'postgres' | 'pglite';
  /** Connection string of the fresh database (PostgreSQL only), for extra pools or child processes. */
  url: string | null;
  /** Closes the handle and removes the database. */
  drop(): Promise<void>;
}

export interface CreateTestDatabaseOptions {
  /** Connections in the PostgreSQL pool; default 5. PGlite always has one session. */
  poolSize?: number;
}

/**
 * The run's migrated template, inside a vitest worker. Imported here, not at the top: child
 * processes the tests start load modules that import this file, and vitest refuses to load
 * outside its workers.
 */
async function runTemplate(): Promise<DatabaseTemplate | undefined> {
  const { inject } = await import('vitest');
  return inject('databaseTemplate');
}

export async function createTestDatabase(options: CreateTestDatabaseOptions = {}): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  const template = await runTemplate();
  if (!serverUrl) {
    const pglite =
      template?.kind === 'pglite'
        ? new PGlite({ loadDataDir: new Blob([readFileSync(template.file)]) })
        : new PGlite();
    const handle = await openDatabase(testConfig(), { pglite });
    await migrate(handle.db);
    return {
      handle,
      kind: 'pglite',
      url: null,
      drop: async () => {
        await handle.close();
        await pglite.close();
      },
    };
  }
  const name = `purser_t_${randomBytes(6).toString('hex')}`;
  await onServer(
    serverUrl,
    template?.kind === 'postgres'
      ? `CREATE DATABASE ${name} TEMPLATE ${template.name}`
      : `CREATE DATABASE ${name}`,
  );
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handle = openPostgres(url.toString(), options.poolSize ?? 5);
  try {
    await migrate(handle.db);
  } catch (err) {
    await handle.close();
    await onServer(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    throw err;
  }
  return {
    handle,
    kind: 'postgres',
    url: url.toString(),
    drop: async () => {
      await handle.close();
      // FORCE ends sessions a test left behind (a killed child process, a pool not closed).
      await onServer(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * Runs `fn` and counts the statements sent to the database meanwhile, on every connection of this
 * process (BEGIN and COMMIT count too): each is one round trip. Only for code that runs alone.
 */
export async function countRoundTrips<T>(fn: () => Promise<T>): Promise<{ result: T; roundTrips: number }> {
  const original = pg.Client.prototype.query;
  let roundTrips = 0;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    roundTrips += 1;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    const result = await fn();
    return { result, roundTrips };
  } finally {
    pg.Client.prototype.query = original;
  }
}
