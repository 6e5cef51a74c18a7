// Batched bookings (group commit): several groups in one statement keep their own outcomes, a
// statement that fails as a whole is retried booking by booking, and concurrent debits through
// the batcher never take a prepaid balance below zero.

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.ts';
import { withTransaction } from '../../core/db/database.ts';
import { newId } from '../../core/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { createAccount } from '../../../test/support/identity.ts';
import { eventCall } from '../events/index.ts';
import {
  balanceOf,
  FEE_REVENUE,
  GroupBatcher,
  LedgerError,
  postGroup,
  postGroups,
  prepaidAccount,
  transfer,
  TREASURY,
  USD,
  type PostGroupParameters,
} from './index.ts';

const USD_1 = 1_000_000n;
const clock = new ManualClock('2026-04-01T09:00:00Z');
let database: TestDatabase;
const db = () => database.handle.db;

beforeAll(async () => {
  database = await createTestDatabase({ poolSize: 10 });
});
afterAll(async () => {
  await database?.drop();
});

function credit(accountId: string, amount: bigint): PostGroupParameters {
  return {
    settlementId: `topup:${newId('n')}`,
    accountId,
    kind: 'topup',
    entries: transfer(TREASURY, prepaidAccount(accountId), USD, amount),
  };
}

/** A $1 fee whose booking also records a `balance.debited` event (a `then` call). */
function fee(accountId: string, settlementId = `fee:${newId('r')}`): PostGroupParameters {
  const groupId = newId('lgr');
  return {
    settlementId,
    accountId,
    kind: 'fee.feedback',
    groupId,
    entries: transfer(prepaidAccount(accountId), FEE_REVENUE, USD, USD_1),
    then: [
      eventCall(clock, {
        accountId,
        kind: 'balance.debited',
        subject: groupId,
        payload: { group_id: groupId },
      }).call,
    ],
  };
}

async function funded(amount: bigint): Promise<string> {
  const { accountId } = await createAccount(db());
  if (amount > 0n) await withTransaction(db(), (tx) => postGroup(tx, clock, credit(accountId, amount)));
  return accountId;
}

async function balance(accountId: string): Promise<bigint> {
  return -(await balanceOf(db(), prepaidAccount(accountId), USD));
}

async function debitedEvents(accountId: string): Promise<number> {
  const row = await sql<{ n: string }>`
    SELECT count(*)::text AS n FROM events WHERE account_id = ${accountId} AND kind = 'balance.debited'`.execute(
    db(),
  );
  return Number(row.rows[0]?.n ?? 0);
}

describe('postGroups', () => {
  it('books each group of one statement with its own outcome, its calls only when newly booked', async () => {
    const a = await funded(2n * USD_1);
    const b = await funded(0n);
    const booked = fee(a);
    await withTransaction(db(), (tx) => postGroup(tx, clock, booked));

    const replay = { ...booked, groupId: newId('lgr') };
    const conflict = {
      ...fee(a, booked.settlementId),
      entries: transfer(prepaidAccount(a), FEE_REVENUE, USD, 2n * USD_1),
    };
    const results = await postGroups(db(), [
      { params: fee(a), at: clock.now() }, // $1 left: ok, balance 0
      { params: fee(a), at: clock.now() }, // nothing left: insufficient
      { params: replay, at: clock.now() },
      { params: conflict, at: clock.now() },
      { params: fee(b), at: clock.now() }, // never funded
      { params: credit(b, 3n * USD_1), at: clock.now() },
      { params: fee(b), at: clock.now() }, // after the credit in the same statement: ok
    ]);
    expect(results.map((r) => (r.ok ? (r.replayed ? 'replayed' : 'ok') : r.reason))).toEqual([
      'ok',
      'insufficient',
      'replayed',
      'conflict',
      'insufficient',
      'ok',
      'ok',
    ]);
    expect(results[0]).toMatchObject({ ok: true, prepaid: { accountId: a, balanceMicro: 0n } });
    expect(results[1]).toMatchObject({ ok: false, reason: 'insufficient', availableMicro: 0n });
    expect(results[6]).toMatchObject({ ok: true, prepaid: { accountId: b, balanceMicro: 2n * USD_1 } });
    expect(await balance(a)).toBe(0n);
    expect(await balance(b)).toBe(2n * USD_1);
    // One event per newly booked fee: the first booking, result 0 and result 6.
    expect(await debitedEvents(a)).toBe(2);
    expect(await debitedEvents(b)).toBe(1);
  });

  it('writes nothing of any group when the statement fails', async () => {
    const a = await funded(5n * USD_1);
    const failing = { ...fee(a), then: [sql`(SELECT 1 / 0)`] };
    await expect(
      postGroups(db(), [
        { params: fee(a), at: clock.now() },
        { params: failing, at: clock.now() },
      ]),
    ).rejects.toThrow(/division by zero/);
    expect(await balance(a)).toBe(5n * USD_1);
    expect(await debitedEvents(a)).toBe(0);
  });
});

describe('GroupBatcher', () => {
  it('retries a failed batch booking by booking: only the bad booking fails', async () => {
    const a = await funded(10n * USD_1);
    const batcher = new GroupBatcher(db(), { maxBatch: 64, maxInFlight: 1 });
    const first = batcher.post(clock, fee(a)); // goes at once, alone
    // These wait for the first and go together as one statement, which fails on the bad call.
    const bad = batcher.post(clock, { ...fee(a), then: [sql`(SELECT 1 / 0)`] });
    const rest = [batcher.post(clock, fee(a)), batcher.post(clock, fee(a))];
    await expect(bad).rejects.toThrow(/division by zero/);
    expect((await first).ok).toBe(true);
    for (const r of await Promise.all(rest)) expect(r.ok).toBe(true);
    expect(batcher.stats).toMatchObject({ batches: 2, bookings: 4, fallbacks: 1, largest: 3 });
    expect(await balance(a)).toBe(7n * USD_1);
    expect(await debitedEvents(a)).toBe(3);
  });

  it('runs a guard before its booking: a guard that raises refuses only its own booking', async () => {
    const a = await funded(10n * USD_1);
    const batcher = new GroupBatcher(db(), { maxBatch: 64, maxInFlight: 1 });
    const marker = (accountId: string, kind: string) =>
      eventCall(clock, { accountId, kind, subject: kind, payload: {} }).call;
    const first = batcher.post(clock, fee(a)); // goes at once, alone
    // The guard's `before` call runs ahead of the booking and decides whether it happens at all.
    const refused = batcher.post(clock, fee(a), {
      before: () => sql`(SELECT 1 / 0 = 1)`,
      unlessBooked: marker(a, 'test.unbooked'),
    });
    const guarded = batcher.post(clock, fee(a), {
      before: () => sql`(${marker(a, 'test.before')}) IS NOT NULL`,
      unlessBooked: marker(a, 'test.unbooked'),
    });
    await expect(refused).rejects.toThrow(/division by zero/);
    expect((await first).ok).toBe(true);
    expect((await guarded).ok).toBe(true);
    expect(await balance(a)).toBe(8n * USD_1);
    expect(await debitedEvents(a)).toBe(2);
    const kinds = await sql<{ kind: string }>`
      SELECT kind FROM events WHERE account_id = ${a} AND kind LIKE 'test.%' ORDER BY created_at`.execute(
      db(),
    );
    expect(kinds.rows.map((r) => r.kind)).toEqual(['test.before']); // booked: no unlessBooked call
  });

  it("makes a guard's unlessBooked call when its booking is refused, and only then", async () => {
    const a = await funded(1n * USD_1);
    const guard = (n: number) => ({
      before: () => sql`true`,
      unlessBooked: eventCall(clock, {
        accountId: a,
        kind: 'test.unbooked',
        subject: `s${n}`,
        payload: { n },
      }).call,
    });
    const results = await postGroups(db(), [
      { params: fee(a), at: clock.now(), guard: guard(1) },
      { params: fee(a), at: clock.now(), guard: guard(2) }, // the balance is spent by then
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, false]);
    const unbooked = await sql<{ subject: string }>`
      SELECT subject FROM events WHERE account_id = ${a} AND kind = 'test.unbooked'`.execute(db());
    expect(unbooked.rows.map((r) => r.subject)).toEqual(['s2']);
    expect(await balance(a)).toBe(0n);
  });

  it('tries a booking that lost a deadlock again, up to three times in all', async () => {
    const a = await funded(5n * USD_1);
    // A guard that fails like a deadlock victim while its sequence is below `n` (a sequence
    // advances even in a statement that fails, so each attempt is counted).
    await sql`CREATE SEQUENCE IF NOT EXISTS test_victim_once`.execute(db());
    await sql`CREATE SEQUENCE IF NOT EXISTS test_victim_always`.execute(db());
    await sql`
      CREATE OR REPLACE FUNCTION test_victim(p_seq text, p_until bigint) RETURNS boolean
      LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval(p_seq) < p_until THEN
          RAISE EXCEPTION 'deadlock detected (simulated)' USING ERRCODE = '40P01';
        END IF;
        RETURN true;
      END $$`.execute(db());
    const victim = (seq: string, until: number) => ({
      before: () => sql`test_victim(${seq}, ${until})`,
      unlessBooked: sql`NULL`,
    });
    const batcher = new GroupBatcher(db());
    const once = await batcher.post(clock, fee(a), victim('test_victim_once', 2));
    expect(once.ok).toBe(true);
    await expect(batcher.post(clock, fee(a), victim('test_victim_always', 1_000))).rejects.toThrow(
      /deadlock/,
    );
    const calls = await sql<{ once: string; always: string }>`
      SELECT (SELECT last_value FROM test_victim_once)::text AS once,
             (SELECT last_value FROM test_victim_always)::text AS always`.execute(db());
    expect(calls.rows[0]).toEqual({ once: '2', always: '3' });
    expect(await balance(a)).toBe(4n * USD_1);
    expect(await debitedEvents(a)).toBe(1);
  });

  it('refuses a malformed group before queueing it', async () => {
    const a = await funded(0n);
    const batcher = new GroupBatcher(db());
    const unbalanced = { ...fee(a), entries: [{ account: prepaidAccount(a), asset: USD, amount: USD_1 }] };
    await expect(batcher.post(clock, unbalanced)).rejects.toBeInstanceOf(LedgerError);
    expect(batcher.stats.bookings).toBe(0);
  });

  it('lets 60 concurrent $1 debits of two accounts spend exactly what each holds', async () => {
    const a = await funded(25n * USD_1);
    const b = await funded(10n * USD_1);
    const batcher = new GroupBatcher(db(), { maxBatch: 16, maxInFlight: 2 });
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => batcher.post(clock, fee(i % 2 === 0 ? a : b))),
    );
    const okFor = (acc: string) => results.filter((r) => r.ok && r.prepaid?.accountId === acc).length;
    expect(okFor(a)).toBe(25);
    expect(okFor(b)).toBe(10);
    expect(results.filter((r) => !r.ok && r.reason === 'insufficient')).toHaveLength(25);
    expect(await balance(a)).toBe(0n);
    expect(await balance(b)).toBe(0n);
    expect(await debitedEvents(a)).toBe(25);
    // Batched: far fewer statements than bookings, none of them failed.
    expect(batcher.stats.bookings).toBe(60);
    expect(batcher.stats.batches).toBeLessThan(60);
    expect(batcher.stats.fallbacks).toBe(0);
    const rows = await database.handle.db
      .selectFrom('prepaid_balances')
      .select(['account_id', 'balance_micro'])
      .where('account_id', 'in', [a, b])
      .execute();
    expect(rows.map((r) => BigInt(r.balance_micro))).toEqual([0n, 0n]);
  });
});
