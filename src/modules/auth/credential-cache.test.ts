import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import {
  InvalidatedCredentialCache,
  notifyCredentialChanged,
  startCredentialCache,
  type VerifiedCredential,
} from './credential-cache.ts';

const credential = (id: string, accountId = 'acc_1'): VerifiedCredential => ({
  credentialId: id,
  kind: 'key',
  accountId,
  address: '0x0000000000000000000000000000000000000001',
  scopes: ['read'],
  wallets: null,
  allowedIps: null,
  expiresAt: new Date('2030-01-01T00:00:00Z'),
});

describe('credential cache', () => {
  it('serves nothing until live, and drops everything when it may have missed a notification', () => {
    const cache = new InvalidatedCredentialCache();
    cache.set('h1', credential('key_1'), cache.version());
    expect(cache.get('h1')).toBeUndefined();
    cache.setLive(true);
    cache.set('h1', credential('key_1'), cache.version());
    expect(cache.get('h1')?.credentialId).toBe('key_1');
    cache.setLive(false);
    expect(cache.get('h1')).toBeUndefined();
  });

  it('never stores a row read before an invalidation that raced it', () => {
    const cache = new InvalidatedCredentialCache();
    cache.setLive(true);
    const before = cache.version();
    cache.invalidate('key_1'); // the revocation's notification arrives while the row is being read
    cache.set('h1', credential('key_1'), before);
    expect(cache.get('h1')).toBeUndefined();
  });

  it('invalidates one credential, or every credential of an account', () => {
    const cache = new InvalidatedCredentialCache();
    cache.setLive(true);
    cache.set('h1', credential('key_1', 'acc_a'), cache.version());
    cache.set('h2', credential('key_2', 'acc_a'), cache.version());
    cache.set('h3', credential('key_3', 'acc_b'), cache.version());
    cache.invalidate('key_1');
    expect([cache.get('h1'), cache.get('h2')?.credentialId]).toEqual([undefined, 'key_2']);
    cache.invalidate('acc_a');
    expect([cache.get('h2'), cache.get('h3')?.credentialId]).toEqual([undefined, 'key_3']);
  });
});

describe('credential cache over the database', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase();
  });
  afterAll(async () => {
    await tdb.drop();
  });

  it('is invalidated by a committed notification, and not by a rolled-back one', async () => {
    const { cache, stop } = await startCredentialCache(tdb.handle);
    try {
      await expect.poll(() => cache.get('none') === undefined && cache.size === 0).toBe(true);
      // Wait until the listener is live: a stored entry then becomes visible.
      await expect
        .poll(() => {
          cache.set('h1', credential('key_1'), cache.version());
          return cache.get('h1')?.credentialId;
        })
        .toBe('key_1');

      await expect(
        tdb.handle.db.transaction().execute(async (tx) => {
          await notifyCredentialChanged(tx, 'key_1');
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      await new Promise((r) => setTimeout(r, 200));
      expect(cache.get('h1')?.credentialId).toBe('key_1');

      await tdb.handle.db.transaction().execute((tx) => notifyCredentialChanged(tx, 'key_1'));
      await expect.poll(() => cache.get('h1'), { timeout: 5000 }).toBeUndefined();
    } finally {
      await stop();
    }
  });
});
