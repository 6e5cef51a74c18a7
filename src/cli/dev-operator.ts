// Operator commands while a development server runs on the embedded database.
//
// The embedded database belongs to one process (its lock file), so `purser ops` cannot open it
// while `purser serve` runs. In development on the embedded database, with no
// PURSER_OPERATOR_TOKEN set, the server makes a random operator token for this run, opens /v1/ops/
// with it, and writes the token and its URL to `<data dir>/operator.json` (mode 0600, removed at
// stop); `purser ops` finds the database locked and sends the command to that server instead.
// Never in production: production refuses the embedded database and needs its own token.

import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config.ts';

export interface DevOperatorAccess {
  url: string;
  token: string;
  pid: number;
}

export function devOperatorFile(dataDir: string): string {
  return join(resolve(dataDir), 'operator.json');
}

const generated = new WeakSet<Config>();

/**
 * Development on the embedded database without PURSER_OPERATOR_TOKEN: sets a random operator
 * token for this run in `config` (before the app is built, so /v1/ops/ accepts it).
 */
export function prepareDevOperatorToken(config: Config, dbKind: 'pglite' | 'postgres'): void {
  if (config.env !== 'development' || dbKind !== 'pglite' || config.operatorToken) return;
  config.operatorToken = `pdo_${randomBytes(32).toString('base64url')}`;
  generated.add(config);
}

/**
 * Once the server listens: writes the token made by prepareDevOperatorToken and the server's URL
 * to `<data dir>/operator.json`, readable by its owner only. Returns the stop that removes it, or
 * null when this run has no such token.
 */
export function publishDevOperatorAccess(config: Config, url: string): (() => Promise<void>) | null {
  if (!generated.has(config) || config.env !== 'development' || !config.operatorToken) return null;
  const path = devOperatorFile(config.dataDir);
  const access: DevOperatorAccess = { url, token: config.operatorToken, pid: process.pid };
  rmSync(path, { force: true });
  writeFileSync(path, `${JSON.stringify(access)}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return async () => {
    try {
      const current = JSON.parse(readFileSync(path, 'utf8')) as Partial<DevOperatorAccess>;
      if (current.pid === process.pid) rmSync(path, { force: true });
    } catch {
      // already gone
    }
  };
}

/** Whether this run published operator access (for the start banner). */
export function hasDevOperatorAccess(config: Config): boolean {
  return generated.has(config);
}

/** The pid of the live process holding the embedded database's lock file, or null. */
export function embeddedDatabaseHolder(dataDir: string): number | null {
  const lock = join(resolve(dataDir), 'purser.lock');
  if (!existsSync(lock)) return null;
  const pid = Number(readFileSync(lock, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : null;
  }
}

/** The operator access the server holding the embedded database published, if it is that server's. */
export function readDevOperatorAccess(dataDir: string, holderPid: number): DevOperatorAccess | null {
  try {
    const parsed = JSON.parse(readFileSync(devOperatorFile(dataDir), 'utf8')) as Partial<DevOperatorAccess>;
    if (
      parsed.pid === holderPid &&
      typeof parsed.url === 'string' &&
      typeof parsed.token === 'string' &&
      parsed.token.length > 0
    ) {
      return { url: parsed.url, token: parsed.token, pid: parsed.pid };
    }
  } catch {
    // no file, or not one of ours
  }
  return null;
}
