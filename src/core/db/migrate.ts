import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { Db } from './database.ts';
import { projectPath } from '../paths.ts';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

const MIGRATIONS_DIR = projectPath('src/core/db/migrations');

/** The numbered SQL files of `migrations/`, in order. Forward-only: an applied file never changes. */
export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  const seen = new Set<number>();
  return files.map((file) => {
    const version = Number(file.slice(0, 4));
    if (seen.has(version)) throw new Error(`Two migrations share the number ${version}: rename one.`);
    seen.add(version);
    const text = readFileSync(`${dir}/${file}`, 'utf8');
    return {
      version,
      name: file.replace(/\.sql$/, ''),
      sql: text,
      checksum: createHash('sha256').update(text).digest('hex'),
    };
  });
}

export interface MigrateResult {
  applied: string[];
  current: number;
}

// One number every Purser process agrees on, so two processes starting at once migrate one after the other.
const MIGRATION_LOCK_KEY = 774_411_001;

/** Applies every pending migration in one transaction (all or none). Refuses edited migrations. */
export async function migrate(db: Db, migrations = loadMigrations()): Promise<MigrateResult> {
  await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`.execute(db);
  const applied: string[] = [];
  await db.transaction().execute(async (tx) => {
    await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.execute(tx);
    const done = await tx.selectFrom('schema_migrations').select(['version', 'name', 'checksum']).execute();
    const byVersion = new Map(done.map((m) => [m.version, m]));
    for (const m of migrations) {
      const prior = byVersion.get(m.version);
      if (prior) {
        if (prior.checksum !== m.checksum) {
          throw new Error(
            `Migration ${m.name} was edited after it was applied. Migrations are forward-only: ` +
              'restore the file and add a new numbered migration instead.',
          );
        }
        continue;
      }
      await sql.raw(m.sql).execute(tx);
      await tx
        .insertInto('schema_migrations')
        .values({ version: m.version, name: m.name, checksum: m.checksum })
        .execute();
      applied.push(m.name);
    }
  });
  return { applied, current: migrations.at(-1)?.version ?? 0 };
}

/** The highest applied migration, or 0; used by readiness. */
export async function appliedVersion(db: Db): Promise<number> {
  const row = await sql<{ v: number | null }>`SELECT max(version) AS v FROM schema_migrations`.execute(db);
  return row.rows[0]?.v ?? 0;
}
