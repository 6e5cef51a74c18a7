// The ledger: balanced groups only (refused in the same transaction, nothing written), settlement
// identity (replay books once, other amounts conflict), append-only rows, reversals, and the
// policy hash stamp.

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.ts';
import { withTransaction } from '../../core/db/database.ts';
import { newId } from '../../core/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { createAccount, randomAddress } from '../../../test/support/identity.ts';
import {
  balanceOf,
  erc1155Asset,
  erc20Asset,
  externalAccount,
  FEE_REVENUE,
  LedgerError,
  parseAsset,
  postGroup,
  prepaidAccount,
  readGroup,
  reverseGroup,
  transfer,
  TREASURY,
  USD,
  venueAccount,
  walletAccount,
  type PostGroupParameters,
} from './index.ts';

const USDC = erc20Asset(8453, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913');
const POLICY_HASH = `sha256:${'ab'.repeat(32)}`;
let database: TestDatabase;
let accountId: string;
const clock = new ManualClock('2026-03-01T10:00:00Z');

beforeAll(async () => {
  database = await createTestDatabase();
  ({ accountId } = await createAccount(database.handle.db));
});
afterAll(async () => {
  await database?.drop();
});

function post(params: PostGroupParameters) {
  return withTransaction(database.handle.db, (tx) => postGroup(tx, clock, params));
}

async function groupCount(): Promise<number> {
  const row = await database.handle.db
    .selectFrom('ledger_groups')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('chart', () => {
  it('builds and parses asset identifiers', () => {
    expect(USDC).toBe('eip155:8453/erc20:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913');
    expect(parseAsset(USDC)).toEqual({
      kind: 'erc20',
      chainId: 8453,
      token: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
    });
    const share = erc1155Asset(137, '0x4D97DCd97eC945f40cF65F87097ACe5EA0476045', 12345678901234567890n);
    expect(parseAsset(share)).toMatchObject({ kind: 'erc1155', tokenId: 12345678901234567890n });
    expect(parseAsset(USD)).toEqual({ kind: 'usd' });
    expect(parseAsset('eip155:1/erc20:0xABC')).toBeNull();
    expect(() => walletAccount(0, randomAddress())).toThrow(RangeError);
  });
});

describe('postGroup', () => {
  it('books a balanced group and derives balances from entries', async () => {
    const wallet = walletAccount(8453, randomAddress());
    const res = await post({
      settlementId: `tx:${newId('t')}:0`,
      accountId,
      kind: 'deposit',
      entries: transfer(wallet, externalAccount(8453), USDC, 5_000_000n),
      policyHash: POLICY_HASH,
    });
    expect(res).toMatchObject({ ok: true, replayed: false, prepaid: null });
    if (!res.ok) return;
    expect(await balanceOf(database.handle.db, wallet, USDC)).toBe(5_000_000n);
    const group = await readGroup(database.handle.db, res.groupId, accountId);
    expect(group?.policyHash).toBe(POLICY_HASH);
    expect(group?.entries).toHaveLength(2);
    expect(await readGroup(database.handle.db, res.groupId, null)).toBeNull();
  });

  it('refuses a group that does not balance per asset, and writes nothing', async () => {
    const before = await groupCount();
    const wallet = walletAccount(8453, randomAddress());
    const unbalanced: PostGroupParameters = {
      settlementId: newId('s'),
      accountId,
      kind: 'deposit',
      entries: [
        { account: wallet, asset: USDC, amount: 10n },
        { account: externalAccount(8453), asset: USDC, amount: -9n },
      ],
    };
    await expect(post(unbalanced)).rejects.toThrow(LedgerError);
    // Balanced in total but not per asset.
    await expect(
      post({
        ...unbalanced,
        entries: [
          { account: wallet, asset: USDC, amount: 10n },
          { account: externalAccount(8453), asset: USD, amount: -10n },
        ],
      }),
    ).rejects.toThrow(/do not balance/);
    await expect(post({ ...unbalanced, entries: [] })).rejects.toThrow(LedgerError);
    await expect(
      post({ ...unbalanced, entries: transfer('platform:nowhere', wallet, USDC, 1n) }),
    ).rejects.toThrow(/unknown ledger account/);
    expect(await groupCount()).toBe(before);
  });

  it('the database refuses unbalanced entries written around the module, with the whole transaction', async () => {
    const before = await groupCount();
    const groupId = newId('lgr');
    const attempt = withTransaction(database.handle.db, async (tx) => {
      await tx
        .insertInto('ledger_groups')
        .values({
          id: groupId,
          settlement_id: newId('s'),
          fingerprint: 'x',
          account_id: accountId,
          kind: 'deposit',
          policy_hash: null,
          reverses: null,
          memo: '{}',
          created_at: clock.now(),
        })
        .execute();
      await tx
        .insertInto('ledger_entries')
        .values([
          { group_id: groupId, ledger_account: TREASURY, asset: USD, amount: '5' },
          { group_id: groupId, ledger_account: FEE_REVENUE, asset: USD, amount: '-4' },
        ])
        .execute();
    });
    await expect(attempt).rejects.toThrow(/does not balance/);
    expect(await groupCount()).toBe(before);

    // One more entry for a booked, balanced group, in a later statement: refused too.
    const booked = await post({
      settlementId: newId('s'),
      accountId,
      kind: 'deposit',
      entries: transfer(TREASURY, FEE_REVENUE, USD, 7n),
    });
    if (!booked.ok) throw new Error('booking failed');
    await expect(
      database.handle.db
        .insertInto('ledger_entries')
        .values({ group_id: booked.groupId, ledger_account: TREASURY, asset: USD, amount: '1' })
        .execute(),
    ).rejects.toThrow(/does not balance/);
    expect((await readGroup(database.handle.db, booked.groupId, accountId))?.entries).toHaveLength(2);
  });

  it('books a settlement identity once; other amounts are a conflict', async () => {
    const settlementId = `fill:${newId('f')}`;
    const wallet = walletAccount(137, randomAddress());
    const venue = venueAccount('polymarket', 137);
    const params: PostGroupParameters = {
      settlementId,
      accountId,
      kind: 'fill',
      entries: transfer(wallet, venue, USDC, 700n),
    };
    const first = await post(params);
    const again = await post(params);
    expect(first.ok && again.ok).toBe(true);
    if (!first.ok || !again.ok) return;
    expect(again).toMatchObject({ replayed: true, groupId: first.groupId, seq: first.seq });
    expect(await balanceOf(database.handle.db, wallet, USDC)).toBe(700n);
    expect(await post({ ...params, entries: transfer(wallet, venue, USDC, 701n) })).toEqual({
      ok: false,
      reason: 'conflict',
      groupId: first.groupId,
    });
    expect(await post({ ...params, accountId: null })).toMatchObject({ ok: false, reason: 'conflict' });
    expect(await balanceOf(database.handle.db, wallet, USDC)).toBe(700n);
  });

  it('books concurrent duplicates of one settlement once', async () => {
    const settlementId = `fill:${newId('f')}`;
    const wallet = walletAccount(8453, randomAddress());
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        post({
          settlementId,
          accountId,
          kind: 'fill',
          entries: transfer(wallet, externalAccount(8453), USDC, 3n),
        }),
      ),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(results.filter((r) => r.ok && !r.replayed)).toHaveLength(1);
    expect(await balanceOf(database.handle.db, wallet, USDC)).toBe(3n);
  });

  it('refuses UPDATE, DELETE and TRUNCATE of ledger rows; the retention sweep alone deletes', async () => {
    const res = await post({
      settlementId: newId('s'),
      accountId,
      kind: 'deposit',
      entries: transfer(walletAccount(8453, randomAddress()), externalAccount(8453), USDC, 1n),
    });
    if (!res.ok) throw new Error('not booked');
    const db = database.handle.db;
    await expect(
      sql`UPDATE ledger_entries SET amount = amount * 2 WHERE group_id = ${res.groupId}`.execute(db),
    ).rejects.toThrow(/append-only/);
    await expect(sql`DELETE FROM ledger_entries WHERE group_id = ${res.groupId}`.execute(db)).rejects.toThrow(
      /append-only/,
    );
    await expect(
      sql`UPDATE ledger_groups SET kind = 'x' WHERE id = ${res.groupId}`.execute(db),
    ).rejects.toThrow(/append-only/);
    await expect(sql`DELETE FROM ledger_groups WHERE id = ${res.groupId}`.execute(db)).rejects.toThrow(
      /append-only/,
    );
    await expect(sql`TRUNCATE ledger_entries`.execute(db)).rejects.toThrow(/append-only/);
    // The housekeeping sweep deletes a test-fixture account with its ledger.
    const fixture = await createAccount(db, { isTestFixture: true });
    await post({
      settlementId: newId('s'),
      accountId: fixture.accountId,
      kind: 'deposit',
      entries: transfer(walletAccount(8453, randomAddress()), externalAccount(8453), USDC, 1n),
    });
    // Retention deletes; it never edits or truncates.
    for (const change of [
      sql`UPDATE ledger_entries SET amount = amount * 2 WHERE group_id = ${res.groupId}`,
      sql`UPDATE ledger_groups SET kind = 'x' WHERE id = ${res.groupId}`,
      sql`TRUNCATE ledger_entries`,
    ]) {
      await expect(
        withTransaction(db, async (tx) => {
          await sql`SET LOCAL purser.retention = 'on'`.execute(tx);
          await change.execute(tx);
        }),
      ).rejects.toThrow(/append-only/);
    }
    expect((await readGroup(db, res.groupId, accountId))?.entries.map((e) => e.amount)).toEqual([1n, -1n]);
    await withTransaction(db, async (tx) => {
      await sql`SET LOCAL purser.retention = 'on'`.execute(tx);
      await tx.deleteFrom('accounts').where('id', '=', fixture.accountId).execute();
    });
    const left = await db
      .selectFrom('ledger_groups')
      .select('id')
      .where('account_id', '=', fixture.accountId)
      .execute();
    expect(left).toEqual([]);
  });
});

describe('reverseGroup', () => {
  it('books the opposite entries once, pointing at the original', async () => {
    const wallet = walletAccount(8453, randomAddress());
    const original = await post({
      settlementId: newId('s'),
      accountId,
      kind: 'deposit',
      entries: transfer(wallet, externalAccount(8453), USDC, 42n),
      policyHash: POLICY_HASH,
    });
    if (!original.ok) throw new Error('not booked');
    const reverse = () =>
      withTransaction(database.handle.db, (tx) =>
        reverseGroup(tx, clock, { groupId: original.groupId, accountId, reason: 'correction' }),
      );
    const first = await reverse();
    expect(first).toMatchObject({ ok: true, replayed: false });
    expect(await reverse()).toMatchObject({ ok: true, replayed: true });
    expect(await balanceOf(database.handle.db, wallet, USDC)).toBe(0n);
    if (!first.ok) return;
    const group = await readGroup(database.handle.db, first.groupId, accountId);
    expect(group).toMatchObject({ kind: 'reversal', reverses: original.groupId, policyHash: POLICY_HASH });
    // A second reversal under another identity is refused.
    const other = await withTransaction(database.handle.db, (tx) =>
      reverseGroup(tx, clock, {
        groupId: original.groupId,
        accountId,
        reason: 'again',
        settlementId: newId('s'),
      }),
    );
    expect(other).toMatchObject({ ok: false, reason: 'conflict', groupId: first.groupId });
    // Another account's group is not found.
    const stranger = await createAccount(database.handle.db);
    expect(
      await withTransaction(database.handle.db, (tx) =>
        reverseGroup(tx, clock, { groupId: original.groupId, accountId: stranger.accountId, reason: 'x' }),
      ),
    ).toEqual({ ok: false, reason: 'not_found' });
  });

  it('refunds a fee back into the prepaid balance', async () => {
    const prepaid = prepaidAccount(accountId);
    const topup = await post({
      settlementId: newId('s'),
      accountId,
      kind: 'topup',
      entries: transfer(TREASURY, prepaid, USD, 5_000_000n),
    });
    const fee = await post({
      settlementId: newId('s'),
      accountId,
      kind: 'fee.feedback',
      entries: transfer(prepaid, FEE_REVENUE, USD, 1_000_000n),
    });
    expect(topup.ok && fee.ok).toBe(true);
    if (!fee.ok) return;
    expect(fee.prepaid).toEqual({ accountId, balanceMicro: 4_000_000n });
    const refund = await withTransaction(database.handle.db, (tx) =>
      reverseGroup(tx, clock, { groupId: fee.groupId, accountId, reason: 'refund' }),
    );
    expect(refund).toMatchObject({ ok: true, prepaid: { accountId, balanceMicro: 5_000_000n } });
  });
});
