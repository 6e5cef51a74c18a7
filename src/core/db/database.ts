import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import type { DatabaseSettings } from '../settings.ts';
import type { Database } from './schema.ts';
import { isAlive } from '../process.ts';
import { prepareStatementsOn } from './prepared.ts';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** Either the pool or an open transaction: functions that write in the caller's transaction take this. */
export type DbExecutor = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** The raw pool, for the few places that need plain SQL outside Kysely (migrations, health). */
  pool: pg.Pool;
  /**
   * Subscribes to a NOTIFY channel. `onState(false)` reports that notifications may have been
   * missed (connection lost) until the next `onState(true)`; caches must not trust themselves
   * in between. Returns the unsubscribe function.
   */
  listen(
    channel: string,
    onPayload: (payload: string) => void,
    onState: (live: boolean) => void,
  ): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

// int8 and numeric stay strings (money never passes through a float); timestamps become Dates.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

export interface OpenDatabaseOptions {
  /** Use this PGlite instance instead of opening the data directory (tests). */
  pglite?: PGlite;
  /** Called when the pool reports a background connection error (the database went away). */
  onPoolError?: (err: Error) => void;
}

/** Opens PostgreSQL when DATABASE_URL is set, else the embedded PGlite database (development only). */
export async function openDatabase(
  config: DatabaseSettings,
  options: OpenDatabaseOptions = {},
): Promise<DatabaseHandle> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl, config.databasePoolSize, options);
  if (config.env === 'production') {
    throw new Error(
      'The embedded database is refused in production: set DATABASE_URL to a PostgreSQL server.',
    );
  }
  return openPglite(config.dataDir, options);
}

export function openPostgres(
  url: string,
  poolSize: number,
  options: OpenDatabaseOptions = {},
): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 3000,
    // A statement that outlives any request budget means the server is gone (a network cut sends
    // no reset): give the connection up instead of holding it forever.
    query_timeout: 30_000,
    idleTimeoutMillis: 30_000,
    // Keeps a dead server from hanging a request forever after a network cut.
    keepAlive: true,
  });
  pool.on('error', (err) => options.onPoolError?.(err));
  // pg-pool listens for errors only on idle clients. A checked-out client between two statements
  // (inside a transaction, or between acquire and query) that hears "terminating connection"
  // emits 'error' with no listener, and that crashes the process. The holder learns of it from
  // its next statement (a connection error, so 503) and the pool drops the client on release.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    prepareStatementsOn(client);
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const listeners = new Set<() => Promise<void>>();
  return {
    db,
    kind: 'postgres',
    pool,
    listen: async (channel, onPayload, onState) => {
      const stop = listenOnPostgres(url, channel, onPayload, onState);
      listeners.add(stop);
      return async () => {
        listeners.delete(stop);
        await stop();
      };
    },
    close: async () => {
      await Promise.all([...listeners].map((stop) => stop()));
      await db.destroy();
    },
  };
}

/** A dedicated connection that LISTENs and reconnects (with backoff) when it is lost. */
function listenOnPostgres(
  url: string,
  channel: string,
  onPayload: (payload: string) => void,
  onState: (live: boolean) => void,
): () => Promise<void> {
  let stopped = false;
  let client: pg.Client | null = null;
  let retry: NodeJS.Timeout | null = null;
  let delay = 250;
  const connect = async () => {
    if (stopped) return;
    const c = new pg.Client({ connectionString: url, keepAlive: true, connectionTimeoutMillis: 3000 });
    const lost = () => {
      if (client !== c) return;
      client = null;
      onState(false);
      c.end().catch(() => undefined);
      if (!stopped) retry = setTimeout(() => void connect(), delay);
      delay = Math.min(delay * 2, 5000);
    };
    c.on('error', lost);
    c.on('end', lost);
    c.on('notification', (msg) => {
      if (msg.channel === channel) onPayload(msg.payload ?? '');
    });
    client = c;
    try {
      await c.connect();
      await c.query(`LISTEN ${c.escapeIdentifier(channel)}`);
      delay = 250;
      if (!stopped && client === c) onState(true);
    } catch {
      lost();
    }
  };
  void connect();
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    const c = client;
    client = null;
    await c?.end().catch(() => undefined);
  };
}

async function openPglite(dataDir: string, options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  let instance = options.pglite;
  let release: (() => void) | null = null;
  if (!instance) {
    const dir = resolve(dataDir);
    mkdirSync(dir, { recursive: true });
    release = takeDataDirLock(dir);
    try {
      const { PGlite } = await import('@electric-sql/pglite');
      instance = await PGlite.create(join(dir, 'pgdata'));
    } catch (err) {
      release();
      throw err;
    }
  }
  const owned = !options.pglite;
  const pglite = instance;
  const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1 } as pg.PoolConfig);
  pool.on('error', (err) => options.onPoolError?.(err));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    kind: 'pglite',
    pool,
    // One process owns the embedded database, so its notifications are never missed.
    listen: async (channel, onPayload, onState) => {
      const unlisten = await pglite.listen(channel, onPayload);
      onState(true);
      return async () => {
        await unlisten();
      };
    },
    close: async () => {
      await db.destroy();
      if (owned) await pglite.close();
      release?.();
    },
  };
}

/**
 * PGlite is single-process: two processes on one data directory corrupt it. A lock file holding
 * the owner's pid refuses the second one with a clear message; a lock left by a dead process is taken over.
 */
export function takeDataDirLock(dir: string): () => void {
  const lockPath = join(dir, 'purser.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        try {
          if (readFileSync(lockPath, 'utf8') === String(process.pid)) rmSync(lockPath);
        } catch {
          // already gone
        }
      };
      process.once('exit', release);
      return release;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSync(lockPath, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
        throw new Error(
          `The embedded database at ${dir} is in use by another Purser process (pid ${owner}). ` +
            'Stop that process, point PURSER_DATA_DIR at another directory, or set DATABASE_URL to use PostgreSQL.',
        );
      }
      rmSync(lockPath, { force: true });
    }
  }
  throw new Error(`Could not take the lock file ${lockPath}.`);
}

/**
 * Holds the named lock until the caller's transaction ends, in every process sharing the database
 * (a PostgreSQL transaction-level advisory lock on the name's 64-bit hash).
 */
export async function lockUntilCommit(tx: DbExecutor, name: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${name}, 0))`.execute(tx);
}

/** What runs once a transaction has committed, and the database it ran on, by transaction. */
const openTransactions = new WeakMap<object, { db: Db; committed: (() => void)[] }>();

export interface TransactionOptions {
  isolation?: 'read committed' | 'repeatable read' | 'serializable';
  readOnly?: boolean;
}

/**
 * Runs `fn` in one transaction: committed when it returns, rolled back when it throws. What `fn`
 * handed to `afterCommit` runs once the commit is done, and never when it rolled back.
 */
export async function withTransaction<T>(
  db: Db,
  fn: (tx: Tx) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  let begin = db.transaction();
  if (options.isolation) begin = begin.setIsolationLevel(options.isolation);
  if (options.readOnly) begin = begin.setAccessMode('read only');
  const committed: (() => void)[] = [];
  const result = await begin.execute((tx) => {
    openTransactions.set(tx, { db, committed });
    return fn(tx);
  });
  for (const job of committed) {
    try {
      job();
    } catch {
      // Committed already: what reports the commit never turns it into a failure.
    }
  }
  return result;
}

/**
 * Runs `job` once the work done through `executor` is committed: after the commit of the
 * transaction `withTransaction` opened, or at once when `executor` is not in a transaction (its
 * statements have committed when they return). What `job` throws is dropped.
 */
export function afterCommit(executor: DbExecutor, job: () => void): void {
  const open = openTransactions.get(executor);
  if (open) {
    open.committed.push(job);
    return;
  }
  try {
    job();
  } catch {
    // Committed already (see withTransaction).
  }
}

/** The database `executor` works on: itself, or the one its transaction was opened on. */
export function databaseOf(executor: DbExecutor): Db {
  return openTransactions.get(executor)?.db ?? executor;
}

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
]);

/** True when an error means the database is unreachable rather than that a statement failed. */
export function isDatabaseUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
    const message = (e as { message?: unknown }).message;
    if (
      typeof message === 'string' &&
      /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|terminating connection/i.test(
        message,
      )
    ) {
      return true;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
