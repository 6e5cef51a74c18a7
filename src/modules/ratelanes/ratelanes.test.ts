// Platform rate lanes: refill by the clock (never a sleep), the capacity cap, costs above one,
// exact Retry-After, independent lanes, clock skew between processes, refunds, the PM_RATE_LANES
// parser; and, on PostgreSQL, exactly `capacity` grants out of 200 parallel takes, in one process
// and across three.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.ts';
import { withTransaction } from '../../core/db/database.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import {
  parsePmRateLanes,
  peekTokens,
  POLYMARKET_RATE_LANES,
  rateLaneName,
  returnTokens,
  takeTokens,
  type RateLaneConfig,
} from './index.ts';

const T0 = '2026-03-01T10:00:00.000Z';
let database: TestDatabase;
let laneCounter = 0;
/** A lane of its own for each test: the table outlives the tests of this file. */
const freshLane = (kind = 'orders') => `test${++laneCounter}:${kind}`;

beforeAll(async () => {
  database = await createTestDatabase({ poolSize: 10 });
});
afterAll(async () => {
  await database?.drop();
});

const db = () => database.handle.db;

/** Takes `n` single tokens one after the other; returns how many were granted. */
async function drain(clock: ManualClock, lane: string, config: RateLaneConfig, n: number): Promise<number> {
  let granted = 0;
  for (let i = 0; i < n; i++) if ((await takeTokens(db(), clock, lane, config)).ok) granted += 1;
  return granted;
}

describe('takeTokens', () => {
  const config = { capacity: 5, refillPerSecond: 10 };

  it('starts full, gives one token per take down to zero, then refuses and takes nothing', async () => {
    const clock = new ManualClock(T0);
    const lane = freshLane();
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await takeTokens(db(), clock, lane, config);
      expect(r.ok).toBe(true);
      if (r.ok) remaining.push(r.remaining);
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    // Empty at 10 per second: one token is 100 ms away.
    expect(await takeTokens(db(), clock, lane, config)).toEqual({ ok: false, retryAfterMs: 100 });
    expect(await takeTokens(db(), clock, lane, config)).toEqual({ ok: false, retryAfterMs: 100 });
    expect(await peekTokens(db(), clock, lane, config)).toEqual({
      tokens: 0,
      capacity: 5,
      refilledAt: new Date(T0),
      lastTakeOk: false,
    });
  });

  it('refills continuously with the clock: 250 ms at 10 per second is 2.5 tokens', async () => {
    const clock = new ManualClock(T0);
    const lane = freshLane();
    expect(await drain(clock, lane, config, 5)).toBe(5);
    clock.advance(250);
    expect((await peekTokens(db(), clock, lane, config)).tokens).toBe(2.5);
    expect(await takeTokens(db(), clock, lane, config, 2)).toEqual({ ok: true, remaining: 0.5 });
    // Half a token is there: the other half takes 50 ms.
    expect(await takeTokens(db(), clock, lane, config)).toEqual({ ok: false, retryAfterMs: 50 });
    clock.advance(49);
    expect(await takeTokens(db(), clock, lane, config)).toEqual({ ok: false, retryAfterMs: 1 });
    clock.advance(1);
    expect(await takeTokens(db(), clock, lane, config)).toEqual({ ok: true, remaining: 0 });
  });

  it('never fills above the capacity, however long the lane rests', async () => {
    const clock = new ManualClock(T0);
    const lane = freshLane();
    expect(await drain(clock, lane, config, 3)).toBe(3);
    clock.advance(24 * 3600 * 1000);
    expect((await peekTokens(db(), clock, lane, config)).tokens).toBe(5);
    expect(await takeTokens(db(), clock, lane, config)).toEqual({ ok: true, remaining: 4 });
    expect(await drain(clock, lane, config, 10)).toBe(4);
  });

  it('takes a cost above one whole or not at all, and says when the whole cost will be there', async () => {
    const clock = new ManualClock(T0);
    const lane = freshLane();
    const slow = { capacity: 10, refillPerSecond: 2 };
    expect(await takeTokens(db(), clock, lane, slow, 4)).toEqual({ ok: true, remaining: 6 });
    expect(await takeTokens(db(), clock, lane, slow, 4)).toEqual({ ok: true, remaining: 2 });
    // 2 there, 4 wanted: 2 more at 2 per second is one second. Nothing is taken meanwhile.
    expect(await takeTokens(db(), clock, lane, slow, 4)).toEqual({ ok: false, retryAfterMs: 1000 });
    expect(await takeTokens(db(), clock, lane, slow, 2)).toEqual({ ok: true, remaining: 0 });
    expect(await takeTokens(db(), clock, lane, slow, 10)).toEqual({ ok: false, retryAfterMs: 5000 });
    clock.advance(5000);
    expect(await takeTokens(db(), clock, lane, slow, 10)).toEqual({ ok: true, remaining: 0 });
    // A cost the lane can never hold is a programming error, not a wait.
    await expect(takeTokens(db(), clock, lane, slow, 11)).rejects.toThrow(RangeError);
    await expect(takeTokens(db(), clock, lane, slow, 0)).rejects.toThrow(RangeError);
  });

  it('gives retryAfterMs exactly: refused one millisecond before it, granted at it', async () => {
    const clock = new ManualClock(T0);
    // 3 per second: a token every 333⅓ ms, so the wait rounds up to the next millisecond.
    const thirds = { capacity: 2, refillPerSecond: 3 };
    const lane = freshLane();
    expect(await drain(clock, lane, thirds, 2)).toBe(2);
    clock.advance(100); // 0.3 there
    const refused = await takeTokens(db(), clock, lane, thirds);
    expect(refused).toEqual({ ok: false, retryAfterMs: 234 }); // 0.7 / 3 s = 233.33 ms
    clock.advance(233);
    expect(await takeTokens(db(), clock, lane, thirds)).toEqual({ ok: false, retryAfterMs: 1 });
    clock.advance(1);
    const granted = await takeTokens(db(), clock, lane, thirds);
    expect(granted.ok).toBe(true);
    if (granted.ok) expect(granted.remaining).toBeCloseTo(0.002, 12); // 1.002 − 1

    // Decimal rates and millisecond steps add up exactly (numeric, not floating point): a hundred
    // refills of 10 ms at 1 per second are one token, not 0.9999999999999999.
    const unit = { capacity: 1, refillPerSecond: 1 };
    const lane2 = freshLane();
    expect(await drain(clock, lane2, unit, 1)).toBe(1);
    for (let i = 1; i < 100; i++) {
      clock.advance(10);
      expect(await takeTokens(db(), clock, lane2, unit)).toEqual({ ok: false, retryAfterMs: 1000 - 10 * i });
    }
    clock.advance(10);
    expect(await takeTokens(db(), clock, lane2, unit)).toEqual({ ok: true, remaining: 0 });
  });

  it('keeps lanes independent: spent orders leave reads and cancels full', async () => {
    const clock = new ManualClock(T0);
    const venue = `venue${++laneCounter}`;
    const orders = rateLaneName(venue, 'orders');
    expect(orders).toBe(`${venue}:orders`);
    expect(await drain(clock, orders, POLYMARKET_RATE_LANES.orders, 60)).toBe(50);
    expect(await takeTokens(db(), clock, orders, POLYMARKET_RATE_LANES.orders)).toEqual({
      ok: false,
      retryAfterMs: 100,
    });
    expect(
      await takeTokens(db(), clock, rateLaneName(venue, 'cancels'), POLYMARKET_RATE_LANES.cancels),
    ).toEqual({ ok: true, remaining: 99 });
    expect(await peekTokens(db(), clock, rateLaneName(venue, 'reads'), POLYMARKET_RATE_LANES.reads)).toEqual({
      tokens: 100,
      capacity: 100,
      refilledAt: null,
      lastTakeOk: null,
    });
    // The same kind at another venue is another lane.
    expect(await takeTokens(db(), clock, `other${venue}:orders`, POLYMARKET_RATE_LANES.orders)).toEqual({
      ok: true,
      remaining: 49,
    });
  });

  it('applies a changed configuration at the next take: a lower capacity caps what is there', async () => {
    const clock = new ManualClock(T0);
    const lane = freshLane();
    expect(await takeTokens(db(), clock, lane, { capacity: 100, refillPerSecond: 1 })).toEqual({
      ok: true,
      remaining: 99,
    });
    expect(await takeTokens(db(), clock, lane, { capacity: 10, refillPerSecond: 1 })).toEqual({
      ok: true,
      remaining: 9,
    });
  });

  it('under clock skew between processes, moves the refill point only forward and adds no tokens', async () => {
    const cfg = { capacity: 10, refillPerSecond: 1 };
    const lane = freshLane();
    const accurate = new ManualClock(T0);
    const lagging = new ManualClock(new Date(Date.parse(T0) - 5000)); // 5 s behind
    const leading = new ManualClock(new Date(Date.parse(T0) + 3000)); // 3 s ahead
    expect(await drain(accurate, lane, cfg, 10)).toBe(10);

    // The lagging process sees no time passed: no refill, no negative tokens, refill point kept.
    expect(await takeTokens(db(), lagging, lane, cfg)).toEqual({ ok: false, retryAfterMs: 1000 });
    expect((await peekTokens(db(), accurate, lane, cfg)).refilledAt).toEqual(new Date(T0));

    // The leading process refills its 3 s early, once...
    expect(await takeTokens(db(), leading, lane, cfg)).toEqual({ ok: true, remaining: 2 });
    // ...and the accurate one gets no refill until its own clock passes that point.
    accurate.advance(1000);
    expect(await drain(accurate, lane, cfg, 5)).toBe(2);
    accurate.advance(2000);
    expect(await takeTokens(db(), accurate, lane, cfg)).toEqual({ ok: false, retryAfterMs: 1000 });
    accurate.advance(1000);
    expect(await takeTokens(db(), accurate, lane, cfg)).toEqual({ ok: true, remaining: 0 });
    // From T0 to T0 + 4 s: 10 (the burst) + 4 (four seconds of refill) granted, skew or not.
  });

  it('refuses to run inside a transaction, which would hold the lane for everyone', async () => {
    const clock = new ManualClock(T0);
    await expect(
      withTransaction(db(), (tx) => takeTokens(tx, clock, freshLane(), POLYMARKET_RATE_LANES.orders)),
    ).rejects.toThrow(/not inside a transaction/);
  });

  it('refuses lane names and configurations it cannot store', async () => {
    const clock = new ManualClock(T0);
    await expect(takeTokens(db(), clock, 'Polymarket Orders', config)).rejects.toThrow(RangeError);
    await expect(takeTokens(db(), clock, freshLane(), { capacity: 5, refillPerSecond: 0 })).rejects.toThrow(
      RangeError,
    );
    await expect(takeTokens(db(), clock, freshLane(), { capacity: -1, refillPerSecond: 1 })).rejects.toThrow(
      RangeError,
    );
  });
});

describe('returnTokens', () => {
  const config = { capacity: 3, refillPerSecond: 1 };

  it('gives back tokens taken for a request refused before it was sent, up to the capacity', async () => {
    const clock = new ManualClock(T0);
    const lane = freshLane();
    expect(await drain(clock, lane, config, 3)).toBe(3);
    expect(await returnTokens(db(), clock, lane, config)).toBe(1);
    expect(await takeTokens(db(), clock, lane, config)).toEqual({ ok: true, remaining: 0 });
    clock.advance(500);
    expect(await returnTokens(db(), clock, lane, config, 2)).toBe(2.5);
    expect(await returnTokens(db(), clock, lane, config, 2)).toBe(3);
    expect((await peekTokens(db(), clock, lane, config)).tokens).toBe(3);
  });

  it('leaves a lane no take has touched alone: it is full', async () => {
    const clock = new ManualClock(T0);
    const lane = freshLane();
    expect(await returnTokens(db(), clock, lane, config)).toBe(3);
    expect((await peekTokens(db(), clock, lane, config)).refilledAt).toBeNull();
  });
});

describe('parsePmRateLanes', () => {
  it('is the documented defaults when unset or empty', () => {
    expect(POLYMARKET_RATE_LANES).toEqual({
      orders: { capacity: 50, refillPerSecond: 10 },
      reads: { capacity: 100, refillPerSecond: 20 },
      cancels: { capacity: 100, refillPerSecond: 20 },
    });
    expect(parsePmRateLanes(undefined)).toEqual({ lanes: POLYMARKET_RATE_LANES, problems: [] });
    expect(parsePmRateLanes('  ')).toEqual({ lanes: POLYMARKET_RATE_LANES, problems: [] });
  });

  it('overrides the lanes and fields given and keeps the defaults of the rest', () => {
    const parsed = parsePmRateLanes(
      '{"orders":{"capacity":20,"refill_per_second":2.5},"reads":{"refill_per_second":40}}',
    );
    expect(parsed).toEqual({
      lanes: {
        orders: { capacity: 20, refillPerSecond: 2.5 },
        reads: { capacity: 100, refillPerSecond: 40 },
        cancels: { capacity: 100, refillPerSecond: 20 },
      },
      problems: [],
    });
    // The defaults themselves are never changed by a parse.
    expect(POLYMARKET_RATE_LANES.orders).toEqual({ capacity: 50, refillPerSecond: 10 });
  });

  it('names every mistake, with the setting it came from', () => {
    expect(parsePmRateLanes('{orders', 'PM_RATE_LANES').problems).toEqual([
      'PM_RATE_LANES must be a JSON object such as {"orders":{"capacity":50,"refill_per_second":10}}',
    ]);
    expect(parsePmRateLanes('[1]').problems).toEqual([
      'PM_RATE_LANES must be a JSON object of lanes (orders, reads, cancels)',
    ]);
    const parsed = parsePmRateLanes(
      JSON.stringify({
        orders: { capacity: 0, refill_per_second: 0 },
        reads: { capacity: 2.5, refillPerSecond: 3 },
        cancels: 7,
        fills: { capacity: 1, refill_per_second: 1 },
      }),
    );
    expect(parsed.problems).toEqual([
      'PM_RATE_LANES.orders.capacity must be a whole number from 1 to 1000000 (got 0)',
      'PM_RATE_LANES.orders.refill_per_second must be a number from 0.001 to 1000000 (got 0)',
      'PM_RATE_LANES.reads.capacity must be a whole number from 1 to 1000000 (got 2.5)',
      'PM_RATE_LANES.reads: unknown field "refillPerSecond" (the fields are capacity, refill_per_second)',
      'PM_RATE_LANES.cancels must be an object with capacity and refill_per_second',
      'PM_RATE_LANES: unknown lane "fills" (the lanes are orders, reads, cancels)',
    ]);
    expect(parsed.lanes).toEqual(POLYMARKET_RATE_LANES);
    expect(parsePmRateLanes('{"orders":{"capacity":"50"}}', 'X').problems).toEqual([
      'X.orders.capacity must be a whole number from 1 to 1000000 (got "50")',
    ]);
  });
});

describe('rate lanes under concurrency (PostgreSQL)', () => {
  const onPostgres = process.env.DATABASE_URL !== undefined;
  if (!onPostgres) {
    console.log(
      'Skipping the rate lane concurrency tests: DATABASE_URL is not set, and PGlite runs one session ' +
        'at a time (locks are always granted), so a race on it proves nothing.',
    );
  }
  // No refill: every take sees the same frozen instant, so exactly the capacity can be granted.
  const config = { capacity: 50, refillPerSecond: 10 };

  it.skipIf(!onPostgres)('grants exactly 50 of 200 parallel takes on a lane of capacity 50', async () => {
    const clock = new ManualClock(T0);
    const lane = freshLane();
    const results = await Promise.all(
      Array.from({ length: 200 }, () => takeTokens(db(), clock, lane, config)),
    );
    const granted = results.flatMap((r) => (r.ok ? [r.remaining] : []));
    expect(granted).toHaveLength(50);
    // Each token was given once: the counts left after the grants are 49 down to 0, each once.
    expect([...granted].sort((a, b) => b - a)).toEqual(Array.from({ length: 50 }, (_, i) => 49 - i));
    for (const r of results) if (!r.ok) expect(r.retryAfterMs).toBe(100);
    expect((await peekTokens(db(), clock, lane, config)).tokens).toBe(0);
  });

  it.skipIf(!onPostgres)(
    'grants exactly 50 in total when two child processes and this one hammer the same lane',
    async () => {
      const lane = freshLane();
      const children = [startChild(lane, 150), startChild(lane, 150)];
      try {
        await Promise.all(children.map((c) => c.ready));
        for (const c of children) c.go();
        const clock = new ManualClock(T0);
        const here = await Promise.all(
          Array.from({ length: 100 }, () => takeTokens(db(), clock, lane, config)),
        );
        const mine = here.flatMap((r) => (r.ok ? [r.remaining] : []));
        const theirs = await Promise.all(children.map((c) => c.result));
        for (const t of theirs) expect(t.granted.length + t.refused).toBe(150);
        const all = [...mine, ...theirs.flatMap((t) => t.granted)];
        console.log(
          `Cross-process grants: this process ${mine.length}, children ${theirs.map((t) => t.granted.length).join(' and ')}.`,
        );
        expect(all).toHaveLength(50);
        expect(all.sort((a, b) => b - a)).toEqual(Array.from({ length: 50 }, (_, i) => 49 - i));
        expect((await peekTokens(db(), clock, lane, config)).tokens).toBe(0);
      } finally {
        for (const c of children) c.kill();
      }
    },
  );

  interface ChildRun {
    ready: Promise<void>;
    go(): void;
    result: Promise<{ granted: number[]; refused: number }>;
    kill(): void;
  }

  function startChild(lane: string, takes: number): ChildRun {
    const script = fileURLToPath(new URL('../../../test/support/take-tokens-child.ts', import.meta.url));
    const child: ChildProcessWithoutNullStreams = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        script,
        database.url ?? '',
        lane,
        String(config.capacity),
        String(config.refillPerSecond),
        String(takes),
        T0,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const lines: string[] = [];
    let stderr = '';
    let buffer = '';
    const waiters: Array<() => void> = [];
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      lines.push(...parts.filter((l) => l.trim() !== ''));
      for (const w of waiters.splice(0)) w();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const line = (match: (l: string) => boolean, what: string) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`the child never printed ${what}: ${stderr}`)),
          30_000,
        );
        const check = () => {
          const found = lines.find(match);
          if (found !== undefined) {
            clearTimeout(timer);
            resolve(found);
          } else waiters.push(check);
        };
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`the child exited (${code}) before printing ${what}: ${stderr}`));
        });
        check();
      });
    return {
      ready: line((l) => l === 'ready', '"ready"').then(() => undefined),
      go: () => child.stdin.write('go\n'),
      result: line((l) => l.startsWith('{'), 'its result').then(
        (l) => JSON.parse(l) as { granted: number[]; refused: number },
      ),
      kill: () => {
        if (child.exitCode === null) child.kill('SIGKILL');
      },
    };
  }
});
