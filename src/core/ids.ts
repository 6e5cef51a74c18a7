import { randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** A prefixed random id such as `evt_4k2j…`: 20 base-36 characters from a CSPRNG (~103 bits, unbiased). */
export function newId(prefix: string): string {
  let out = '';
  while (out.length < 20) {
    for (const b of randomBytes(24)) {
      // 252 = 7 * 36: rejecting the top values keeps every character equally likely.
      if (b < 252 && out.length < 20) out += ALPHABET[b % 36];
    }
  }
  return `${prefix}_${out}`;
}

export function newUuid(): string {
  return randomUUID();
}
