import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Session tokens and API keys carry different prefixes, so a leaked one is recognisable. */
export const SESSION_TOKEN_PREFIX = 'pss_';
export const API_KEY_PREFIX = 'psk_';

const TOKEN_PATTERN = /^(pss|psk)_[A-Za-z0-9_-]{43}$/;

/** A new bearer token: the prefix and 32 random bytes (base64url). Shown once, stored only as a hash. */
export function newToken(prefix: typeof SESSION_TOKEN_PREFIX | typeof API_KEY_PREFIX): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function tokenKind(token: string): 'session' | 'key' | null {
  if (!TOKEN_PATTERN.test(token)) return null;
  return token.startsWith(SESSION_TOKEN_PREFIX) ? 'session' : 'key';
}

/** Constant-time comparison of two hex hashes. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A cryptographically random SIWE nonce: alphanumeric, 24 characters (~143 bits). */
export function newSiweNonce(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  while (out.length < 24) {
    for (const b of randomBytes(32)) {
      // 248 = 4 * 62: rejecting the top values keeps every character equally likely.
      if (b < 248 && out.length < 24) out += alphabet[b % 62];
    }
  }
  return out;
}
