// Verified credentials cached in memory, so the guard costs a hash and a map lookup instead of a
// database round trip. Correctness rests on invalidation, not on expiry: every revocation or
// rotation runs pg_notify('purser_credentials', <credential or account id>) in its own
// transaction, every process LISTENs, and a process whose listening connection is down (so it
// may have missed a notification) does not use its cache at all until it is back.

import type { DatabaseHandle, DbExecutor } from '../../core/db/database.ts';
import type { Scope } from '../../core/http/route-table.ts';
import { sql } from 'kysely';

/** What the guard needs to know about a credential; cached by token hash when a cache is given. */
export interface VerifiedCredential {
  credentialId: string;
  kind: 'session' | 'key';
  accountId: string;
  address: string;
  scopes: Scope[];
  wallets: string[] | null;
  allowedIps: string[] | null;
  expiresAt: Date;
}

/**
 * A cache of verified credentials. Whatever implements it must never serve a credential after
 * its revocation or rotation has committed anywhere (see InvalidatedCredentialCache below).
 */
export interface CredentialCache {
  get(tokenHash: string): VerifiedCredential | undefined;
  /** A counter that moves on every invalidation; read it before loading from the database. */
  version(): number;
  set(tokenHash: string, credential: VerifiedCredential, versionBeforeLoad: number): void;
}

export const CREDENTIALS_CHANNEL = 'purser_credentials';

/** Tells every process that a credential (ses_/key_ id) or all of an account's (acc_ id) changed. */
export async function notifyCredentialChanged(tx: DbExecutor, id: string): Promise<void> {
  await sql`SELECT pg_notify(${CREDENTIALS_CHANNEL}, ${id})`.execute(tx);
}

export class InvalidatedCredentialCache implements CredentialCache {
  private readonly byHash = new Map<string, VerifiedCredential>();
  private live = false;
  private generation = 0;

  constructor(private readonly maxEntries = 50_000) {}

  get(tokenHash: string): VerifiedCredential | undefined {
    return this.live ? this.byHash.get(tokenHash) : undefined;
  }

  version(): number {
    return this.generation;
  }

  /**
   * Stores a credential read from the database, unless an invalidation arrived since the read
   * began (`versionBeforeLoad`): the row read may predate the revocation that invalidated it.
   */
  set(tokenHash: string, credential: VerifiedCredential, versionBeforeLoad: number): void {
    if (!this.live || versionBeforeLoad !== this.generation) return;
    if (this.byHash.size >= this.maxEntries) this.byHash.clear();
    this.byHash.set(tokenHash, credential);
  }

  invalidate(id: string): void {
    this.generation++;
    for (const [hash, credential] of this.byHash) {
      if (credential.credentialId === id || credential.accountId === id) this.byHash.delete(hash);
    }
  }

  /** While notifications may be missed, nothing is served from or stored in the cache. */
  setLive(live: boolean): void {
    this.generation++;
    this.byHash.clear();
    this.live = live;
  }

  get size(): number {
    return this.byHash.size;
  }
}

/** A cache kept correct by LISTEN on the credentials channel; `stop` unsubscribes. */
export async function startCredentialCache(
  handle: Pick<DatabaseHandle, 'listen'>,
): Promise<{ cache: InvalidatedCredentialCache; stop: () => Promise<void> }> {
  const cache = new InvalidatedCredentialCache();
  const stop = await handle.listen(
    CREDENTIALS_CHANNEL,
    (id) => cache.invalidate(id),
    (live) => cache.setLive(live),
  );
  return { cache, stop };
}
