// Two-phase holds: pending → posted (fully or partly), voided or expired by the clock, each at
// most once; a cap counts pending plus posted; a prepaid hold reserves the balance.

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.ts';
import { withTransaction } from '../../core/db/database.ts';
import { newId } from '../../core/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { createAccount, randomAddress } from '../../../test/support/identity.ts';
import { creditPrepaid, debitFee, readPrepaidBalance } from '../billing/index.ts';
import {
  balanceOf,
  erc20Asset,
  expireHolds,
  FEE_REVENUE,
  placeHold,
  postHold,
  prepaidAccount,
  readGroup,
  readHold,
  USD,
  venueAccount,
  voidHold,
  walletAccount,
  type PlaceHoldParameters,
} from './index.ts';

const MINUTE = 60_000;
const USDC = erc20Asset(8453, '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913');
let database: TestDatabase;
let accountId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ accountId } = await createAccount(database.handle.db));
});
afterAll(async () => {
  await database?.drop();
});

const tx = <T>(fn: Parameters<typeof withTransaction<T>>[1]) => withTransaction(database.handle.db, fn);

function exposure(
  clock: ManualClock,
  wallet: string,
  amount: bigint,
  extra: Partial<PlaceHoldParameters> = {},
) {
  return {
    holdId: newId('hld'),
    accountId,
    kind: 'exposure',
    debit: venueAccount('devnet-amm', 8453),
    credit: walletAccount(8453, wallet),
    asset: USDC,
    amount,
    expiresAt: new Date(clock.now().getTime() + 10 * MINUTE),
    ...extra,
  } satisfies PlaceHoldParameters;
}

describe('holds', () => {
  it('posts partly, once; voids once; the post books one group', async () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z');
    const wallet = randomAddress();
    const hold = exposure(clock, wallet, 100n);
    expect(await tx((t) => placeHold(t, clock, hold))).toEqual({
      ok: true,
      holdId: hold.holdId,
      replayed: false,
    });
    expect(await tx((t) => placeHold(t, clock, hold))).toMatchObject({ ok: true, replayed: true });
    expect(await tx((t) => placeHold(t, clock, { ...hold, amount: 101n }))).toEqual({
      ok: false,
      reason: 'conflict',
    });
    expect(await tx((t) => postHold(t, clock, { holdId: hold.holdId, accountId, amount: 101n }))).toEqual({
      ok: false,
      reason: 'exceeds_held',
    });
    const posted = await tx((t) => postHold(t, clock, { holdId: hold.holdId, accountId, amount: 60n }));
    expect(posted).toMatchObject({ ok: true, state: 'posted' });
    expect(await tx((t) => postHold(t, clock, { holdId: hold.holdId, accountId }))).toMatchObject({
      ok: false,
      reason: 'closed',
      state: 'posted',
    });
    expect(await tx((t) => voidHold(t, clock, { holdId: hold.holdId, accountId }))).toMatchObject({
      ok: false,
      reason: 'closed',
    });
    expect(await balanceOf(database.handle.db, walletAccount(8453, wallet), USDC)).toBe(-60n);
    if (!posted.ok || !posted.groupId) throw new Error('no group');
    expect(await readGroup(database.handle.db, posted.groupId, accountId)).toMatchObject({
      settlementId: `hold:${hold.holdId}`,
      kind: 'exposure',
    });
    expect(await readHold(database.handle.db, hold.holdId, accountId)).toMatchObject({
      state: 'posted',
      postedAmount: 60n,
    });

    const other = exposure(clock, wallet, 5n);
    await tx((t) => placeHold(t, clock, other));
    expect(await tx((t) => voidHold(t, clock, { holdId: other.holdId, accountId }))).toMatchObject({
      ok: true,
      state: 'voided',
    });
    expect(await tx((t) => postHold(t, clock, { holdId: other.holdId, accountId }))).toMatchObject({
      ok: false,
      reason: 'closed',
      state: 'voided',
    });
    expect(await tx((t) => voidHold(t, clock, { holdId: other.holdId, accountId: null }))).toEqual({
      ok: false,
      reason: 'not_found',
    });
  });

  it('expires by the clock: no post after expiry, the sweep closes it once', async () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z');
    const hold = exposure(clock, randomAddress(), 7n);
    await tx((t) => placeHold(t, clock, hold));
    clock.advance(10 * MINUTE);
    expect(await tx((t) => postHold(t, clock, { holdId: hold.holdId, accountId }))).toEqual({
      ok: false,
      reason: 'expired',
    });
    const expired = await tx((t) => expireHolds(t, clock));
    expect(expired).toContain(hold.holdId);
    expect(await tx((t) => expireHolds(t, clock))).not.toContain(hold.holdId);
    expect(await readHold(database.handle.db, hold.holdId, accountId)).toMatchObject({ state: 'expired' });
  });

  it('a cap counts pending (unexpired) plus posted amounts', async () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z');
    const wallet = randomAddress();
    const cap = { key: `exposure:${accountId}:${wallet}`, limit: 100n };
    const a = exposure(clock, wallet, 60n, { cap });
    const b = exposure(clock, wallet, 50n, { cap, expiresAt: new Date(clock.now().getTime() + MINUTE) });
    expect((await tx((t) => placeHold(t, clock, a))).ok).toBe(true);
    expect(await tx((t) => placeHold(t, clock, b))).toEqual({
      ok: false,
      reason: 'cap_exceeded',
      used: 60n,
      limit: 100n,
    });
    await tx((t) => postHold(t, clock, { holdId: a.holdId, accountId, amount: 30n }));
    expect((await tx((t) => placeHold(t, clock, b))).ok).toBe(true);
    const c = exposure(clock, wallet, 30n, { cap });
    expect(await tx((t) => placeHold(t, clock, c))).toMatchObject({ reason: 'cap_exceeded', used: 80n });
    clock.advance(MINUTE); // b expires by the clock: it stops counting before any sweep
    expect((await tx((t) => placeHold(t, clock, c))).ok).toBe(true);
  });

  it('a prepaid fee hold reserves the balance until posted or voided', async () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z');
    const { accountId: acc } = await createAccount(database.handle.db);
    await tx((t) =>
      creditPrepaid(t, clock, { accountId: acc, amountMicroUsd: 3_000_000n, settlementId: newId('s') }),
    );
    const hold = {
      holdId: newId('hld'),
      accountId: acc,
      kind: 'fee.pm_order',
      debit: prepaidAccount(acc),
      credit: FEE_REVENUE,
      asset: USD,
      amount: 2_000_000n,
      expiresAt: new Date(clock.now().getTime() + MINUTE),
    };
    expect((await tx((t) => placeHold(t, clock, hold))).ok).toBe(true);
    expect(await tx((t) => placeHold(t, clock, { ...hold, holdId: newId('hld') }))).toEqual({
      ok: false,
      reason: 'insufficient',
      availableMicro: 1_000_000n,
    });
    const fee = (n: bigint) =>
      tx((t) =>
        debitFee(t, clock, { accountId: acc, feeMicroUsd: n, product: 'feedback', settlementId: newId('f') }),
      );
    expect(await fee(1_500_000n)).toMatchObject({
      ok: false,
      reason: 'insufficient',
      availableMicro: 1_000_000n,
    });
    expect(
      await tx((t) => postHold(t, clock, { holdId: hold.holdId, accountId: acc, amount: 1_200_000n })),
    ).toMatchObject({
      ok: true,
    });
    expect(await readPrepaidBalance(database.handle.db, acc)).toEqual({
      balanceMicro: 1_800_000n,
      heldMicro: 0n,
    });
    expect(-(await balanceOf(database.handle.db, prepaidAccount(acc), USD))).toBe(1_800_000n);
    expect((await fee(1_500_000n)).ok).toBe(true);

    const second = { ...hold, holdId: newId('hld'), amount: 300_000n };
    await tx((t) => placeHold(t, clock, second));
    clock.advance(MINUTE);
    await tx((t) => expireHolds(t, clock));
    expect(await readPrepaidBalance(database.handle.db, acc)).toEqual({
      balanceMicro: 300_000n,
      heldMicro: 0n,
    });
  });

  it('the database refuses edits of a closed hold and any delete', async () => {
    const clock = new ManualClock('2026-03-01T10:00:00Z');
    const hold = exposure(clock, randomAddress(), 9n);
    await tx((t) => placeHold(t, clock, hold));
    await tx((t) => voidHold(t, clock, { holdId: hold.holdId, accountId }));
    const db = database.handle.db;
    await expect(
      sql`UPDATE ledger_holds SET state = 'pending' WHERE id = ${hold.holdId}`.execute(db),
    ).rejects.toThrow(/refused/);
    await expect(sql`DELETE FROM ledger_holds WHERE id = ${hold.holdId}`.execute(db)).rejects.toThrow(
      /never deleted/,
    );
  });
});
