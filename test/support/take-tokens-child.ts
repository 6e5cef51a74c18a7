// One process hammering a rate lane, for the cross-process test (src/modules/ratelanes/ratelanes.test.ts):
// `node --import tsx take-tokens-child.ts <database url> <lane> <capacity> <refill/s> <takes> <instant>`.
// It opens its pool, prints "ready", waits for "go" on stdin, then sends every take at once with
// its clock frozen at <instant>, and prints one JSON line: the remaining counts of its granted
// takes and the number refused.

import { createInterface } from 'node:readline';
import { sql } from 'kysely';
import { ManualClock } from '../../src/core/clock.ts';
import { openPostgres } from '../../src/core/db/database.ts';
import { takeTokens } from '../../src/modules/ratelanes/index.ts';

const [url, lane, capacity, refillPerSecond, takes, instant] = process.argv.slice(2);
if (!url || !lane || !capacity || !refillPerSecond || !takes || !instant) {
  throw new Error(
    'usage: take-tokens-child.ts <database url> <lane> <capacity> <refill/s> <takes> <instant>',
  );
}

const POOL = 8;
const handle = openPostgres(url, POOL);
// Open every connection before the start, so the takes race each other and not the connects.
await Promise.all(Array.from({ length: POOL }, () => sql`SELECT pg_sleep(0.05)`.execute(handle.db)));
process.stdout.write('ready\n');
const input = createInterface({ input: process.stdin });
await new Promise<void>((resolve) => input.on('line', (line) => line.trim() === 'go' && resolve()));
input.close();

const clock = new ManualClock(instant);
const config = { capacity: Number(capacity), refillPerSecond: Number(refillPerSecond) };
const results = await Promise.all(
  Array.from({ length: Number(takes) }, () => takeTokens(handle.db, clock, lane, config)),
);
const granted = results.flatMap((r) => (r.ok ? [r.remaining] : []));
process.stdout.write(`${JSON.stringify({ granted, refused: results.length - granted.length })}\n`);
await handle.close();
