// Spend reservations against the caps of the active policy: per transaction, per UTC day
// (refilling at midnight by the clock), per rolling hour; settle, release and expire each at most
// once; and, on PostgreSQL, exactly the admitted number under 50 parallel reservations.

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.ts';
import { withTransaction } from '../../core/db/database.ts';
import { newId } from '../../core/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { createAccount, randomAddress } from '../../../test/support/identity.ts';
import { buildTokenRegistry } from '../registry/index.ts';
import { fillDefaults, policyHash, type PolicyDocumentInput } from './document.ts';
import {
  expireReservations,
  readSpendUsage,
  releaseReservation,
  reserveSpend,
  settleReservation,
} from './reservations.ts';
import { insertPolicy } from './store.ts';

const USD = 1_000_000n;
const MINUTE = 60_000;
const registry = buildTokenRegistry('development');
let database: TestDatabase;
let accountId: string;

beforeAll(async () => {
  database = await createTestDatabase({ poolSize: 20 });
  ({ accountId } = await createAccount(database.handle.db));
});
afterAll(async () => {
  await database?.drop();
});

async function publish(
  wallet: string,
  spend: NonNullable<PolicyDocumentInput['spend']>,
  version = 1,
): Promise<void> {
  const { document, defaulted } = fillDefaults({ version: 1, wallet, chain_id: 8453, spend }, registry);
  await insertPolicy(database.handle.db, {
    account_id: accountId,
    wallet,
    version,
    hash: policyHash(document),
    document,
    defaulted,
    created_at: new Date('2026-01-01T00:00:00Z'),
  });
}

function reserver(clock: ManualClock, wallet: string) {
  return (amountUsd: bigint, reservationId = newId('res'), ttlMs = 10 * MINUTE) =>
    withTransaction(database.handle.db, (tx) =>
      reserveSpend(tx, clock, {
        accountId,
        wallet,
        amountMicroUsd: amountUsd * USD,
        reservationId,
        expiresAt: new Date(clock.now().getTime() + ttlMs),
      }),
    );
}

describe('reserveSpend', () => {
  it('refuses without a policy, and names each cap it refuses by', async () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z');
    const wallet = randomAddress();
    const reserve = reserver(clock, wallet);
    expect(await reserve(1n)).toEqual({ ok: false, refused: 'no_policy' });
    await publish(wallet, { per_tx_usd: '100', daily_usd: '250', velocity_per_hour: 100 });
    expect(await reserve(101n)).toMatchObject({ ok: false, refused: 'spend.per_tx_usd', limit: 100n * USD });
    expect((await reserve(100n)).ok).toBe(true);
    expect((await reserve(100n)).ok).toBe(true);
    expect(await reserve(51n)).toMatchObject({
      ok: false,
      refused: 'spend.daily_usd',
      limit: 250n * USD,
      wouldUse: 251n * USD,
    });
    expect((await reserve(50n)).ok).toBe(true);
  });

  it('refills the daily cap at UTC midnight', async () => {
    const clock = new ManualClock('2026-03-01T23:50:00Z');
    const wallet = randomAddress();
    const reserve = reserver(clock, wallet);
    await publish(wallet, { per_tx_usd: '100', daily_usd: '100', velocity_per_hour: 100 });
    expect((await reserve(100n, newId('res'), 60 * MINUTE)).ok).toBe(true);
    expect(await reserve(1n)).toMatchObject({ refused: 'spend.daily_usd' });
    clock.set('2026-03-02T00:00:00Z');
    expect((await reserve(100n)).ok).toBe(true);
  });

  it('counts actions in a rolling hour for velocity_per_hour', async () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z');
    const wallet = randomAddress();
    const reserve = reserver(clock, wallet);
    await publish(wallet, { per_tx_usd: '100', daily_usd: '100000', velocity_per_hour: 3 });
    for (let i = 0; i < 3; i++) {
      expect((await reserve(1n, newId('res'), 24 * 60 * MINUTE)).ok).toBe(true);
      clock.advance(10 * MINUTE);
    }
    expect(await reserve(1n)).toMatchObject({ refused: 'spend.velocity_per_hour', limit: 3n, wouldUse: 4n });
    clock.set('2026-03-01T11:00:00.001Z'); // the first action left the hour
    expect((await reserve(1n)).ok).toBe(true);
  });

  it('settles fully or partly, releases and expires, each at most once', async () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z');
    const wallet = randomAddress();
    const reserve = reserver(clock, wallet);
    await publish(wallet, { per_tx_usd: '100', daily_usd: '100', velocity_per_hour: 100 });
    const tx = database.handle.db;
    expect((await reserve(100n, 'res_a')).ok).toBe(true);
    expect(await reserve(1n)).toMatchObject({ refused: 'spend.daily_usd' });

    expect(
      await settleReservation(tx, clock, { accountId, reservationId: 'res_a', settledMicroUsd: 101n * USD }),
    ).toEqual({ ok: false, reason: 'exceeds_reserved', reservedMicroUsd: 100n * USD });
    expect(
      await settleReservation(tx, clock, { accountId, reservationId: 'res_a', settledMicroUsd: 40n * USD }),
    ).toEqual({
      ok: true,
    });
    expect(
      await settleReservation(tx, clock, { accountId, reservationId: 'res_a', settledMicroUsd: 40n * USD }),
    ).toEqual({
      ok: false,
      reason: 'closed',
      state: 'settled',
    });
    expect(await releaseReservation(tx, clock, { accountId, reservationId: 'res_a' })).toMatchObject({
      reason: 'closed',
    });
    expect(await readSpendUsage(tx, clock, accountId, wallet)).toEqual({
      dayMicroUsd: 40n * USD,
      hourCount: 1,
    });

    expect((await reserve(60n, 'res_b')).ok).toBe(true);
    expect(await releaseReservation(tx, clock, { accountId, reservationId: 'res_b' })).toEqual({ ok: true });
    expect(await releaseReservation(tx, clock, { accountId, reservationId: 'res_b' })).toMatchObject({
      reason: 'closed',
    });
    expect(await releaseReservation(tx, clock, { accountId: 'acc_other', reservationId: 'res_b' })).toEqual({
      ok: false,
      reason: 'not_found',
    });

    expect((await reserve(60n, 'res_c', 5 * MINUTE)).ok).toBe(true);
    clock.advance(5 * MINUTE); // past expiry: stops counting at once, before the sweep
    expect(
      await settleReservation(tx, clock, { accountId, reservationId: 'res_c', settledMicroUsd: 1n }),
    ).toEqual({
      ok: false,
      reason: 'expired',
    });
    expect((await readSpendUsage(tx, clock, accountId, wallet)).dayMicroUsd).toBe(40n * USD);
    const expired = await expireReservations(tx, clock);
    expect(expired).toContain('res_c');
    expect(await expireReservations(tx, clock)).not.toContain('res_c');
    const states = await tx
      .selectFrom('spend_reservations')
      .select(['id', 'state'])
      .where('id', 'in', ['res_a', 'res_b', 'res_c'])
      .orderBy('id')
      .execute();
    expect(states).toEqual([
      { id: 'res_a', state: 'settled' },
      { id: 'res_b', state: 'released' },
      { id: 'res_c', state: 'expired' },
    ]);
  });

  it('replays the same reservation id and refuses it for another amount', async () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z');
    const wallet = randomAddress();
    const reserve = reserver(clock, wallet);
    await publish(wallet, { per_tx_usd: '100', daily_usd: '100', velocity_per_hour: 100 });
    expect(await reserve(10n, 'res_same')).toMatchObject({ ok: true, replayed: false });
    expect(await reserve(10n, 'res_same')).toMatchObject({ ok: true, replayed: true });
    expect(await reserve(11n, 'res_same')).toEqual({ ok: false, refused: 'conflict' });
  });

  it('refuses illegal transitions in the database itself', async () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z');
    const wallet = randomAddress();
    await publish(wallet, { per_tx_usd: '100', daily_usd: '100', velocity_per_hour: 100 });
    expect((await reserver(clock, wallet)(10n, 'res_guard')).ok).toBe(true);
    await expect(
      sql`UPDATE spend_reservations SET amount_micro_usd = 1 WHERE id = 'res_guard'`.execute(
        database.handle.db,
      ),
    ).rejects.toThrow(/refused/);
    await releaseReservation(database.handle.db, clock, { accountId, reservationId: 'res_guard' });
    await expect(
      sql`UPDATE spend_reservations SET state = 'settled' WHERE id = 'res_guard'`.execute(database.handle.db),
    ).rejects.toThrow(/refused/);
    await expect(
      sql`DELETE FROM spend_reservations WHERE id = 'res_guard'`.execute(database.handle.db),
    ).rejects.toThrow(/never deleted/);
  });

  it('rolls back with the caller: a hold in a failed transaction never counts', async () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z');
    const wallet = randomAddress();
    await publish(wallet, { per_tx_usd: '100', daily_usd: '100', velocity_per_hour: 100 });
    await expect(
      withTransaction(database.handle.db, async (tx) => {
        const r = await reserveSpend(tx, clock, {
          accountId,
          wallet,
          amountMicroUsd: 100n * USD,
          reservationId: newId('res'),
          expiresAt: new Date(clock.now().getTime() + MINUTE),
        });
        expect(r.ok).toBe(true);
        throw new Error('the caller failed');
      }),
    ).rejects.toThrow('the caller failed');
    expect((await reserver(clock, wallet)(100n)).ok).toBe(true);
  });
});

describe('reserveSpend under concurrency (PostgreSQL)', () => {
  const onPostgres = process.env.DATABASE_URL !== undefined;
  if (!onPostgres) {
    console.log(
      'Skipping the concurrency test: DATABASE_URL is not set, and PGlite runs one session at a time ' +
        '(locks are always granted), so a race on it proves nothing.',
    );
  }

  it.skipIf(!onPostgres)(
    'admits exactly 10 of 50 parallel reservations when the cap fits 10, every time',
    async () => {
      for (const [round, spend] of [
        { per_tx_usd: '100', daily_usd: '1000', velocity_per_hour: 1000 }, // the daily cap fits 10
        { per_tx_usd: '100', daily_usd: '100000', velocity_per_hour: 10 }, // the velocity cap fits 10
        { per_tx_usd: '100', daily_usd: '1000', velocity_per_hour: 10 }, // both
      ].entries()) {
        const clock = new ManualClock('2026-03-01T10:00:00Z');
        const wallet = randomAddress();
        await publish(wallet, spend);
        const reserve = reserver(clock, wallet);
        const results = await Promise.all(Array.from({ length: 50 }, () => reserve(100n)));
        const ok = results.filter((r) => r.ok).length;
        expect(ok, `round ${round}`).toBe(10);
        const stored = await database.handle.db
          .selectFrom('spend_reservations')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('wallet', '=', wallet)
          .executeTakeFirstOrThrow();
        expect(Number(stored.n)).toBe(10);
      }
    },
  );
});
