// vitest globalSetup: the migrated database every test file starts from, made once per run.
// Opening a new embedded database and running every migration costs seconds per test file; a copy
// of one made here costs well under one. On PostgreSQL (DATABASE_URL) it is a template database each
// file's fresh database is created from; on the embedded database, a dump of a migrated PGlite
// data directory each file's in-memory instance loads. Tests read it with `inject('databaseTemplate')`
// through test/support/db.ts, which still runs `migrate` on the copy (a check that finds nothing
// to apply, unless a migration was added while the run was starting).

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { testConfig } from '../src/config.ts';
import { openDatabase, openPostgres } from '../src/core/db/database.ts';
import { migrate } from '../src/core/db/migrate.ts';
import { onServer } from './support/pg-server.ts';

export type DatabaseTemplate =
  | { kind: 'postgres'; name: string }
  | { kind: 'pglite'; /** A tar of the migrated data directory. */ file: string };

declare module 'vitest' {
  export interface ProvidedContext {
    databaseTemplate: DatabaseTemplate;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    const name = `purser_tpl_${randomBytes(6).toString('hex')}`;
    await onServer(serverUrl, `CREATE DATABASE ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    const handle = openPostgres(url.toString(), 1);
    try {
      await migrate(handle.db);
    } finally {
      // A template must have no session open while databases are created from it.
      await handle.close();
    }
    project.provide('databaseTemplate', { kind: 'postgres', name });
    return async () => {
      await onServer(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    };
  }
  const pglite = new PGlite();
  const handle = await openDatabase(testConfig(), { pglite });
  await migrate(handle.db);
  const dump = await pglite.dumpDataDir('none');
  await handle.close();
  await pglite.close();
  const dir = mkdtempSync(join(tmpdir(), 'purser-db-template-'));
  const file = join(dir, 'pgdata.tar');
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('databaseTemplate', { kind: 'pglite', file });
  return async () => {
    rmSync(dir, { recursive: true, force: true });
  };
}
