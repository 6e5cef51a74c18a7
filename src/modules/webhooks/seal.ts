// The webhook secret at rest: AES-256-GCM under the operator's sealing key, with the account id
// as additional data so a sealed secret copied to another account's row does not open. Without
// a sealing key (development only: production refuses to start without one) a fixed key derived
// from a public label is used; it hides nothing and is documented as such.

import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const DEV_KEY_LABEL = 'purser development webhook sealing key (not secret)';
const FORMAT = 'v1';

export function sealingKeyBytes(sealingKey: string | null): Buffer {
  if (sealingKey === null) return createHash('sha256').update(DEV_KEY_LABEL).digest();
  if (/^(0x)?[0-9a-fA-F]{64}$/.test(sealingKey)) return Buffer.from(sealingKey.replace(/^0x/, ''), 'hex');
  const key = Buffer.from(sealingKey, 'base64');
  if (key.length !== 32) throw new Error('The sealing key must be 32 bytes (hex or base64).');
  return key;
}

function aad(accountId: string): Buffer {
  return Buffer.from(`purser:webhook-secret:${accountId}`, 'utf8');
}

export function sealSecret(key: Buffer, accountId: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad(accountId));
  const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [FORMAT, iv.toString('base64url'), tag.toString('base64url'), ct.toString('base64url')].join('.');
}

export function openSecret(key: Buffer, accountId: string, sealed: string): string {
  const [format, iv, tag, ct] = sealed.split('.');
  if (format !== FORMAT || !iv || !tag || ct === undefined) throw new Error('Unknown sealed secret format.');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(aad(accountId));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
