// The database a benchmark runs against: embedded PGlite in a fresh temporary data directory by
// default; with DATABASE_URL, a fresh database on that PostgreSQL server, dropped afterwards.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { testConfig, type Config } from '../src/config.ts';

export interface BenchDatabase {
  kind: 'pglite' | 'postgres';
  description: string;
  /** A development config pointing at it (for seeding from the bench process). */
  config: Config;
  /** The environment that points a service child process at it. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

/** `label` names the temporary directory or database (`purser_bench_<label>_<random>`). */
export async function prepareBenchDatabase(label: string): Promise<BenchDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const dataDir = mkdtempSync(join(tmpdir(), `purser-bench-${label}-`));
    return {
      kind: 'pglite',
      description: 'embedded PGlite, fresh temporary data directory',
      config: testConfig({ databaseUrl: null, dataDir }),
      env: { PURSER_DATA_DIR: dataDir },
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `purser_bench_${label}_${randomBytes(4).toString('hex')}`;
  const onServer = async (statement: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      return await client.query<{ server_version?: string }>(statement);
    } finally {
      await client.end();
    }
  };
  const version = (await onServer('SHOW server_version')).rows[0]?.server_version?.split(' ')[0];
  await onServer(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    kind: 'postgres',
    description: `PostgreSQL ${version ?? 'unknown'} on ${url.host}, fresh database ${name}`,
    config: testConfig({ databaseUrl: url.toString() }),
    env: { DATABASE_URL: url.toString() },
    drop: async () => {
      await onServer(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    },
  };
}
