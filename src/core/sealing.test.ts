import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import {
  keyringOf,
  PUBLIC_DEV_KEY_ID,
  SealingKeyring,
  venueCredentialContext,
  webhookSecretContext,
} from './sealing.ts';

const hex = () => randomBytes(32).toString('hex');

describe('the sealing keyring', () => {
  it('seals under the newest key, names it, and opens only for the same context', () => {
    const ring = keyringOf([
      { id: 'k2', key: hex() },
      { id: 'k1', key: randomBytes(32).toString('base64') },
    ]);
    const context = venueCredentialContext('acc_1', 'polymarket', '6f1c1e9e-0000-4000-8000-000000000001');
    const sealed = ring.seal(context, 'the secret');
    expect(sealed.startsWith('s2.k2.')).toBe(true);
    expect(sealed).not.toContain('the secret');
    expect(ring.open(context, sealed)).toBe('the secret');
    // Bound to tenant, venue and credential id: any other context fails authentication.
    for (const other of [
      venueCredentialContext('acc_2', 'polymarket', '6f1c1e9e-0000-4000-8000-000000000001'),
      venueCredentialContext('acc_1', 'kalshi', '6f1c1e9e-0000-4000-8000-000000000001'),
      venueCredentialContext('acc_1', 'polymarket', '6f1c1e9e-0000-4000-8000-000000000002'),
    ]) {
      expect(() => ring.open(other, sealed)).toThrow();
    }
    // Two seals of the same plaintext differ (fresh IV).
    expect(ring.seal(context, 'the secret')).not.toBe(sealed);
  });

  it('rotates: a ring with a newer key still opens the old ciphertexts and calls them stale', () => {
    const k1 = { id: 'k1', key: hex() };
    const before = keyringOf([k1]);
    const sealed = before.seal('ctx', 'v');
    const after = keyringOf([{ id: 'k2', key: hex() }, k1]);
    expect(after.open('ctx', sealed)).toBe('v');
    expect(after.isStale(sealed)).toBe(true);
    const resealed = after.seal('ctx', after.open('ctx', sealed));
    expect(after.isStale(resealed)).toBe(false);
    expect(resealed.startsWith(after.currentPrefix())).toBe(true);
    // Once the old key is dropped from the ring, its ciphertexts no longer open, and the error
    // names the key id, never key material.
    const dropped = keyringOf([{ id: 'k2', key: hex() }]);
    expect(() => dropped.open('ctx', sealed)).toThrow(/key "k1"/);
  });

  it('rejects a tampered ciphertext', () => {
    const ring = keyringOf([{ id: 'k1', key: hex() }]);
    const sealed = ring.seal('ctx', 'value');
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[4]!, 'base64url');
    ct[0] = ct[0]! ^ 1;
    parts[4] = ct.toString('base64url');
    expect(() => ring.open('ctx', parts.join('.'))).toThrow();
    expect(() => ring.open('ctx', 'garbage')).toThrow(/format/);
  });

  it('opens the webhook secrets sealed before the keyring (format v1) with the key of that time', () => {
    const legacyKey = randomBytes(32);
    const accountId = 'acc_legacy';
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', legacyKey, iv);
    cipher.setAAD(Buffer.from(`purser:webhook-secret:${accountId}`));
    const ct = Buffer.concat([cipher.update('whsec_old', 'utf8'), cipher.final()]);
    const v1 = ['v1', iv, cipher.getAuthTag(), ct].map((p) =>
      typeof p === 'string' ? p : p.toString('base64url'),
    );
    const sealed = v1.join('.');
    const ring = keyringOf([
      { id: 'new', key: hex() },
      { id: 'default', key: legacyKey.toString('hex') },
    ]);
    expect(SealingKeyring.keyIdOf(sealed)).toBe('legacy');
    expect(ring.isStale(sealed)).toBe(true);
    expect(ring.open(webhookSecretContext(accountId), sealed)).toBe('whsec_old');
    expect(() => ring.open(webhookSecretContext('acc_other'), sealed)).toThrow();

    // A development service's v1 secrets were sealed with the public development key.
    const devKey = createHash('sha256')
      .update('purser development webhook sealing key (not secret)')
      .digest();
    const devCipher = createCipheriv('aes-256-gcm', devKey, iv);
    devCipher.setAAD(Buffer.from(`purser:webhook-secret:${accountId}`));
    const devCt = Buffer.concat([devCipher.update('whsec_dev', 'utf8'), devCipher.final()]);
    const devSealed = [
      'v1',
      iv.toString('base64url'),
      devCipher.getAuthTag().toString('base64url'),
      devCt.toString('base64url'),
    ].join('.');
    expect(ring.open(webhookSecretContext(accountId), devSealed)).toBe('whsec_dev');
  });

  it('is the public development keyring without operator keys, and says it is not confidential', () => {
    const ring = keyringOf([]);
    expect(ring.currentId).toBe(PUBLIC_DEV_KEY_ID);
    expect(ring.confidential).toBe(false);
    expect(keyringOf([{ id: 'k1', key: hex() }]).confidential).toBe(true);
  });
});

describe('sealing keys in config', () => {
  it('reads PURSER_SEALING_KEYS newest first, with PURSER_SEALING_KEY last as "default"', () => {
    const a = hex();
    const b = randomBytes(32).toString('base64');
    const c = hex();
    const config = loadConfig({
      DEVNET: 'false',
      PURSER_SEALING_KEYS: `k3:${a}, k2:${b}`,
      PURSER_SEALING_KEY: c,
    });
    expect(config.sealingKeys.map((k) => k.id)).toEqual(['k3', 'k2', 'default']);
    expect(keyringOf(config.sealingKeys).currentId).toBe('k3');
  });

  it('refuses malformed entries without echoing key material', () => {
    const secretish = 'f'.repeat(60);
    let message = '';
    try {
      loadConfig({
        DEVNET: 'false',
        PURSER_SEALING_KEYS: `bad id:${hex()},k1:${secretish},k2:${hex()},k2:${hex()},${PUBLIC_DEV_KEY_ID}:${hex()}`,
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('PURSER_SEALING_KEYS entry 1');
    expect(message).toContain('key "k1" must be 32 bytes');
    expect(message).toContain('"k2" is reserved or used twice');
    expect(message).toContain(`"${PUBLIC_DEV_KEY_ID}" is reserved`);
    expect(message).not.toContain(secretish);
  });
});
