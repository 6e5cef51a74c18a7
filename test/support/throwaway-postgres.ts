// A private PostgreSQL cluster in a temporary directory, for tests that stop and restart the
// server (never the shared one on 5432). initdb refuses to run as root, so as root every
// PostgreSQL binary runs as the `postgres` user through runuser.

import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** The bin directory of the newest installed PostgreSQL that has initdb, or null. PG_BIN overrides. */
export function findPostgresBin(): string | null {
  const fromEnv = process.env.PG_BIN;
  if (fromEnv) return existsSync(join(fromEnv, 'initdb')) ? fromEnv : null;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : null;
}

/** A free TCP port on 127.0.0.1 (free when asked; the caller retries if it is taken meanwhile). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface ThrowawayPostgres {
  port: number;
  dir: string;
  /** Connection string of `database` on this cluster. */
  url(database: string): string;
  createDatabase(name: string): Promise<string>;
  /** pg_ctl stop -m fast: sessions are terminated, the server is gone until `start`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server (immediate mode) and deletes its directory; safe to call twice. */
  destroy(): Promise<void>;
  /** The server log, for failure messages. */
  log(): string;
}

export async function createThrowawayPostgres(bin: string): Promise<ThrowawayPostgres> {
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'purser-pg-'));
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const pgRun = async (tool: string, args: string[]) => {
    const file = join(bin, tool);
    try {
      if (asRoot) await run('runuser', ['-u', 'postgres', '--', file, ...args], { timeout: 60_000 });
      else await run(file, args, { timeout: 60_000 });
    } catch (err) {
      const e = err as { stderr?: string; stdout?: string; message: string };
      throw new Error(`${tool} ${args.join(' ')} failed: ${e.stderr || e.stdout || e.message}`);
    }
  };

  let destroyed = false;
  let port = 0;
  const handle: ThrowawayPostgres = {
    get port() {
      return port;
    },
    dir,
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    createDatabase: async (name) => {
      const client = new pg.Client({ connectionString: handle.url('postgres') });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      } finally {
        await client.end();
      }
      return handle.url(name);
    },
    stop: () => pgRun('pg_ctl', ['-D', dataDir, 'stop', '-m', 'fast', '-w', '-t', '30']),
    start: () =>
      pgRun('pg_ctl', [
        '-D',
        dataDir,
        '-o',
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
        '-l',
        logFile,
        'start',
        '-w',
        '-t',
        '30',
      ]),
    destroy: async () => {
      if (destroyed) return;
      destroyed = true;
      if (existsSync(join(dataDir, 'postmaster.pid'))) {
        await pgRun('pg_ctl', ['-D', dataDir, 'stop', '-m', 'immediate', '-w', '-t', '30']).catch(
          () => undefined,
        );
      }
      rmSync(dir, { recursive: true, force: true });
    },
    log: () => {
      try {
        return execFileSync('tail', ['-n', '30', logFile], { encoding: 'utf8' });
      } catch {
        return '(no server log)';
      }
    },
  };

  try {
    if (asRoot) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      chownSync(dir, uid, gid);
    }
    await pgRun('initdb', [
      '-D',
      dataDir,
      '-A',
      'trust',
      '-U',
      'postgres',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    // The port is free when picked but may be taken before the server binds it: try a few.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        await handle.start();
        break;
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
  } catch (err) {
    await handle.destroy();
    throw err;
  }
  return handle;
}
