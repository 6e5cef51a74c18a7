import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { testConfig } from '../../config.ts';
import { openDatabase, takeDataDirLock } from './database.ts';
import { appliedVersion, loadMigrations, migrate } from './migrate.ts';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'purser-db-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('embedded database lock', () => {
  it('refuses a second process on the same data directory with a clear message', async () => {
    const dir = tempDir();
    // Another live process holds the lock: a child that sleeps.
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      writeFileSync(join(dir, 'purser.lock'), String(child.pid));
      expect(() => takeDataDirLock(dir)).toThrow(/in use by another Purser process \(pid \d+\)/);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('takes over a lock left by a dead process, and releases its own', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'purser.lock'), '999999999');
    const release = takeDataDirLock(dir);
    expect(readFileSync(join(dir, 'purser.lock'), 'utf8')).toBe(String(process.pid));
    release();
    const again = takeDataDirLock(dir);
    again();
  });

  it('is refused in production', async () => {
    await expect(openDatabase({ ...testConfig(), env: 'production', databaseUrl: null })).rejects.toThrow(
      /refused in production/,
    );
  });
});

describe('migrations', () => {
  it('apply once, in order, and refuse an edited migration', async () => {
    const pglite = new PGlite();
    const handle = await openDatabase(testConfig(), { pglite });
    try {
      const all = loadMigrations();
      expect(all.map((m) => m.version)).toEqual([...all.map((m) => m.version)].sort((a, b) => a - b));
      const first = await migrate(handle.db);
      expect(first.applied).toEqual(all.map((m) => m.name));
      expect(await appliedVersion(handle.db)).toBe(all.at(-1)?.version);
      expect((await migrate(handle.db)).applied).toEqual([]);

      const edited = all.map((m, i) => (i === 0 ? { ...m, checksum: 'different' } : m));
      await expect(migrate(handle.db, edited)).rejects.toThrow(/edited after it was applied/);
    } finally {
      await handle.close();
      await pglite.close();
    }
  });
});
