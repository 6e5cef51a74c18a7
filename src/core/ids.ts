import { randomFillSync, randomUUID } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

// CSPRNG bytes drawn 4 KiB at a time: one system call serves many ids (a fee request makes five).
const pool = Buffer.alloc(4096);
let next = pool.length;

function randomByte(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  const b = pool[next]!;
  next += 1;
  return b;
}

/** A prefixed random id such as `evt_4k2j…`: 20 base-36 characters from a CSPRNG (~103 bits, unbiased). */
export function newId(prefix: string): string {
  let out = '';
  while (out.length < 20) {
    const b = randomByte();
    // 252 = 7 * 36: rejecting the top values keeps every character equally likely.
    if (b < 252) out += ALPHABET[b % 36];
  }
  return `${prefix}_${out}`;
}

export function newUuid(): string {
  return randomUUID();
}
