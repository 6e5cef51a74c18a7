// Revocation across processes: two app instances share one PostgreSQL database, each with its own
// credential cache. A key revoked through one must stop working on the other, whose cache had it.

import { buildTokenRegistry } from '../src/modules/registry/index.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../src/config.ts';
import { buildApp, type App } from '../src/app.ts';
import { systemClock } from '../src/core/clock.ts';
import { openPostgres, type DatabaseHandle } from '../src/core/db/database.ts';
import { createLogger } from '../src/core/log.ts';
import { createAuthenticator } from '../src/modules/auth/authenticator.ts';
import { startCredentialCache } from '../src/modules/auth/credential-cache.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { bearer, createAccountWithSession, createKey } from './support/identity.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);
if (!onPostgres)
  console.info('credential-revocation: skipped, it needs two processes on PostgreSQL (DATABASE_URL)');

describe.skipIf(!onPostgres)('revocation reaches every process', () => {
  let first: TestApp;
  let secondHandle: DatabaseHandle;
  let second: App;
  let stopSecondCache: () => Promise<void>;

  beforeAll(async () => {
    first = await createTestApp();
    // A second "process": its own pool, its own cache and listener, the same database.
    secondHandle = openPostgres(first.database.url!, 3);
    const { cache, stop } = await startCredentialCache(secondHandle);
    stopSecondCache = stop;
    const config = testConfig();
    const log = createLogger('silent');
    second = await buildApp({
      config,
      tokenRegistry: buildTokenRegistry(config.env),
      db: secondHandle.db,
      dbKind: 'postgres',
      clock: systemClock,
      log,
      authenticator: createAuthenticator({ db: secondHandle.db, clock: systemClock, config, log, cache }),
      credentialCache: cache,
    });
  });
  afterAll(async () => {
    await second?.fastify.close();
    await stopSecondCache?.();
    await secondHandle?.close();
    await first?.close();
  });

  it('a key revoked on one instance is refused by the other, whose cache held it', async () => {
    const owner = await createAccountWithSession(first.db.db);
    const key = await createKey(first.db.db, owner.accountId, { scopes: ['read'] });
    const whoAmI = (app: App) =>
      app.fastify.inject({ method: 'GET', url: '/v1/auth/session', headers: bearer(key.token) });

    // Warm the second instance's cache (wait for its listener to be live first).
    await expect.poll(async () => (await whoAmI(second)).statusCode).toBe(200);
    expect((await whoAmI(second)).statusCode).toBe(200);

    const revoked = await first.app.fastify.inject({
      method: 'DELETE',
      url: `/v1/keys/${key.id}`,
      headers: bearer(owner.sessionToken),
    });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect((await whoAmI(first.app)).statusCode).toBe(401);
    // The other instance hears the NOTIFY within milliseconds of the commit.
    await expect
      .poll(async () => (await whoAmI(second)).statusCode, { timeout: 1000, interval: 5 })
      .toBe(401);
  });

  it('refuses to serve from its cache while its listening connection is down', async () => {
    const owner = await createAccountWithSession(first.db.db);
    const key = await createKey(first.db.db, owner.accountId, { scopes: ['read'] });
    const headers = bearer(key.token);
    await expect
      .poll(
        async () =>
          (await second.fastify.inject({ method: 'GET', url: '/v1/auth/session', headers })).statusCode,
      )
      .toBe(200);
    // Cut the second instance's LISTEN connection, then revoke: the notification is lost, so the
    // cache must not be trusted; the next request reads the database and sees the revocation.
    await first.db.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()`,
    );
    await first.db.db
      .updateTable('api_keys')
      .set({ revoked_at: new Date() })
      .where('id', '=', key.id)
      .execute();
    await expect
      .poll(
        async () =>
          (await second.fastify.inject({ method: 'GET', url: '/v1/auth/session', headers })).statusCode,
        {
          timeout: 2000,
          interval: 5,
        },
      )
      .toBe(401);
  });
});
