// Secrets at rest: AES-256-GCM under a keyring of operator keys that carry ids, so keys rotate.
// Every sealed value names the key that sealed it, and its additional data (the context) binds it
// to its owner (an account, a venue and a credential id): a ciphertext copied to another row does
// not open. A re-seal job moves old ciphertexts onto the newest key (docs/operations.md,
// "Sealing keys").
//
// Formats:
//   s2.<key id>.<iv>.<tag>.<ciphertext>   (base64url parts; the key id is also in the additional data)
//   v1.<iv>.<tag>.<ciphertext>            (the webhook secrets of before the keyring: opened by
//                                          trying each key, then re-sealed by the job)
//
// Without operator keys (development only: production refuses to start without one) the keyring
// holds one key derived from a public label, `dev-public`. It hides nothing: webhook secrets of a
// development service use it, and venue credentials are refused (503) rather than sealed with it.

import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export interface SealingKey {
  id: string;
  key: Buffer;
}

export const PUBLIC_DEV_KEY_ID = 'dev-public';
const PUBLIC_DEV_KEY_LABEL = 'purser development webhook sealing key (not secret)';
const FORMAT = 's2';
const LEGACY_FORMAT = 'v1';
export const SEALING_KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

/** 32 bytes from 64 hex characters (0x optional) or base64; null when it is neither. */
export function parseKeyMaterial(raw: string): Buffer | null {
  if (/^(0x)?[0-9a-fA-F]{64}$/.test(raw)) return Buffer.from(raw.replace(/^0x/, ''), 'hex');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw)) return null;
  const key = Buffer.from(raw, 'base64');
  return key.length === 32 ? key : null;
}

export class SealingKeyring {
  private readonly byId: Map<string, Buffer>;

  /** `keys` newest first: the first seals, every one opens. */
  constructor(readonly keys: readonly SealingKey[]) {
    if (keys.length === 0) throw new Error('a sealing keyring needs at least one key');
    this.byId = new Map(keys.map((k) => [k.id, k.key]));
    if (this.byId.size !== keys.length) throw new Error('sealing key ids must be unique');
  }

  /** The keyring of a development service without operator keys. */
  static publicDevelopmentKeyring(): SealingKeyring {
    return new SealingKeyring([
      { id: PUBLIC_DEV_KEY_ID, key: createHash('sha256').update(PUBLIC_DEV_KEY_LABEL).digest() },
    ]);
  }

  /** The id of the key that seals. */
  get currentId(): string {
    return this.keys[0]!.id;
  }

  /** False when the only key is the public development key (it hides nothing). */
  get confidential(): boolean {
    return this.currentId !== PUBLIC_DEV_KEY_ID;
  }

  seal(context: string, plaintext: string): string {
    const { id, key } = this.keys[0]!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(additionalData(id, context));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [FORMAT, id, b64(iv), b64(cipher.getAuthTag()), b64(ct)].join('.');
  }

  /** Opens a sealed value for `context`; throws when no key of the ring opens it for that context. */
  open(context: string, sealed: string): string {
    const parts = sealed.split('.');
    if (parts[0] === FORMAT && parts.length === 5) {
      const [, id, iv, tag, ct] = parts as [string, string, string, string, string];
      const key = this.byId.get(id);
      if (!key) throw new Error(`sealed with key "${id}", which the keyring does not hold`);
      return decrypt(key, additionalData(id, context), iv, tag, ct);
    }
    if (parts[0] === LEGACY_FORMAT && parts.length === 4) {
      const [, iv, tag, ct] = parts as [string, string, string, string];
      const legacy = legacyAdditionalData(context);
      const candidates = [...this.keys.map((k) => k.key)];
      if (!this.byId.has(PUBLIC_DEV_KEY_ID)) {
        candidates.push(SealingKeyring.publicDevelopmentKeyring().keys[0]!.key);
      }
      for (const key of candidates) {
        try {
          return decrypt(key, legacy, iv, tag, ct);
        } catch {
          // not this key
        }
      }
      throw new Error('no key of the keyring opens this sealed value');
    }
    throw new Error('unknown sealed value format');
  }

  /** The id of the key that sealed `sealed` (`legacy` for the format of before the keyring). */
  static keyIdOf(sealed: string): string {
    const parts = sealed.split('.');
    return parts[0] === FORMAT ? (parts[1] ?? 'unknown') : 'legacy';
  }

  /** Whether `sealed` should move to the current key. */
  isStale(sealed: string): boolean {
    return SealingKeyring.keyIdOf(sealed) !== this.currentId;
  }

  /** How every value sealed with the current key starts (for the re-seal job's scan). */
  currentPrefix(): string {
    return `${FORMAT}.${this.currentId}.`;
  }

  /** `sealed` opened and sealed again with the current key; null when no key of the ring opens it. */
  reseal(context: string, sealed: string): string | null {
    let plaintext: string;
    try {
      plaintext = this.open(context, sealed);
    } catch {
      return null;
    }
    return this.seal(context, plaintext);
  }
}

/** What one re-seal pass over a kind of sealed value did. */
export interface ResealCount {
  resealed: number;
  /** Values no key of the ring opens (left untouched). */
  unopenable: number;
}

const rings = new WeakMap<object, SealingKeyring>();

/**
 * The keyring of configured keys (`config.sealingKeys`, newest first), built once per array; the
 * public development keyring when there are none.
 */
export function keyringOf(keys: ReadonlyArray<{ id: string; key: string }>): SealingKeyring {
  let ring = rings.get(keys);
  if (!ring) {
    ring =
      keys.length === 0
        ? SealingKeyring.publicDevelopmentKeyring()
        : new SealingKeyring(
            keys.map((k) => {
              const key = parseKeyMaterial(k.key);
              if (!key) throw new Error(`sealing key "${k.id}" is not 32 bytes`);
              return { id: k.id, key };
            }),
          );
    rings.set(keys, ring);
  }
  return ring;
}

function additionalData(keyId: string, context: string): Buffer {
  return Buffer.from(`purser:${keyId}:${context}`, 'utf8');
}

/** The v1 webhook secrets were bound to `purser:webhook-secret:<account id>`. */
function legacyAdditionalData(context: string): Buffer {
  return Buffer.from(`purser:${context}`, 'utf8');
}

function decrypt(key: Buffer, aad: Buffer, iv: string, tag: string, ct: string): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(aad);
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}

function b64(buf: Buffer): string {
  return buf.toString('base64url');
}

/** The context of an account's webhook secret. */
export function webhookSecretContext(accountId: string): string {
  return `webhook-secret:${accountId}`;
}

/** The context of a venue credential: bound to tenant, venue and credential id. */
export function venueCredentialContext(accountId: string, venue: string, credentialId: string): string {
  return `venue-credential:${accountId}:${venue}:${credentialId}`;
}
