// Property: random sequences of bookings (balanced and unbalanced groups, replays, conflicting
// replays, reversals, fee debits, top-ups, prepaid holds posted, voided and expired) keep every
// group balanced per asset, every balance equal to the sum of its entries (and to a model kept
// here), and every prepaid balance row equal to minus its account's entries, never negative.

import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.ts';
import { withTransaction } from '../../core/db/database.ts';
import { newId } from '../../core/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { createAccount, randomAddress } from '../../../test/support/identity.ts';
import { creditPrepaid, debitFee } from '../billing/index.ts';
import {
  balanceOf,
  erc1155Asset,
  erc20Asset,
  expireHolds,
  externalAccount,
  FEE_REVENUE,
  LedgerError,
  placeHold,
  postGroup,
  postHold,
  prepaidAccount,
  reverseGroup,
  TREASURY,
  USD,
  venueAccount,
  voidHold,
  walletAccount,
  type LedgerEntryInput,
  type PostGroupParameters,
} from './index.ts';

const MINUTE = 60_000;
const TOKENS = [
  erc20Asset(8453, '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913'),
  erc1155Asset(137, '0x4d97dcd97ec945f40cf65f87097ace5ea0476045', 7n),
];
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

type Op =
  | { op: 'group'; asset: number; legs: { to: number; amount: bigint }[]; unbalanced: boolean }
  | { op: 'replay'; pick: number; conflicting: boolean }
  | { op: 'reverse'; pick: number }
  | { op: 'credit'; tenant: number; amount: bigint }
  | { op: 'debit'; tenant: number; amount: bigint }
  | { op: 'hold'; tenant: number; amount: bigint; ttl: number }
  | { op: 'close'; pick: number; how: 'post' | 'void'; part: number }
  | { op: 'tick'; minutes: number };

const amount = fc.bigInt({ min: 1n, max: 5_000_000n });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    op: fc.constant('group' as const),
    asset: fc.nat({ max: TOKENS.length }),
    legs: fc.array(
      fc.record({ to: fc.nat({ max: 5 }), amount: fc.bigInt({ min: -9_000_000n, max: 9_000_000n }) }),
      {
        minLength: 1,
        maxLength: 3,
      },
    ),
    unbalanced: fc.boolean(),
  }),
  fc.record({ op: fc.constant('replay' as const), pick: fc.nat(), conflicting: fc.boolean() }),
  fc.record({ op: fc.constant('reverse' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('credit' as const), tenant: fc.nat({ max: 1 }), amount }),
  fc.record({ op: fc.constant('debit' as const), tenant: fc.nat({ max: 1 }), amount }),
  fc.record({
    op: fc.constant('hold' as const),
    tenant: fc.nat({ max: 1 }),
    amount,
    ttl: fc.integer({ min: 1, max: 5 }),
  }),
  fc.record({
    op: fc.constant('close' as const),
    pick: fc.nat(),
    how: fc.constantFrom('post' as const, 'void' as const),
    part: fc.integer({ min: 1, max: 100 }),
  }),
  fc.record({ op: fc.constant('tick' as const), minutes: fc.integer({ min: 1, max: 3 }) }),
);

async function run(ops: Op[]): Promise<void> {
  const db = database.handle.db;
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const tenants = [(await createAccount(db)).accountId, (await createAccount(db)).accountId];
  const wallets = [walletAccount(8453, randomAddress()), walletAccount(137, randomAddress())];
  const tokenAccounts = [
    ...wallets,
    venueAccount('devnet-amm', 8453),
    externalAccount(8453),
    externalAccount(137),
  ];
  const booked: { params: PostGroupParameters; groupId: string }[] = [];
  const holds: { holdId: string; accountId: string; amount: bigint }[] = [];
  // The model: balance changes by (ledger account, asset) since the run began.
  const model = new Map<string, bigint>();
  const baseline = new Map<string, bigint>();
  const key = (account: string, asset: string) => `${account}|${asset}`;
  const apply = (entries: LedgerEntryInput[]) => {
    for (const e of entries)
      model.set(key(e.account, e.asset), (model.get(key(e.account, e.asset)) ?? 0n) + e.amount);
  };
  const usdAccounts = [...tenants.map((a) => prepaidAccount(a)), TREASURY, FEE_REVENUE];
  for (const account of usdAccounts) baseline.set(key(account, USD), await balanceOf(db, account, USD));
  for (const account of tokenAccounts) {
    for (const asset of TOKENS) baseline.set(key(account, asset), await balanceOf(db, account, asset));
  }
  const tx = <T>(fn: Parameters<typeof withTransaction<T>>[1]) => withTransaction(db, fn);

  for (const step of ops) {
    switch (step.op) {
      case 'group': {
        const tenant = tenants[0] ?? '';
        const asset = TOKENS[step.asset] ?? USD;
        const pool = asset === USD ? [prepaidAccount(tenant), TREASURY, FEE_REVENUE] : tokenAccounts;
        const entries: LedgerEntryInput[] = step.legs
          .filter((l) => l.amount !== 0n)
          .map((l) => ({ account: pool[l.to % pool.length] ?? TREASURY, asset, amount: l.amount }));
        const sum = entries.reduce((s, e) => s + e.amount, 0n);
        if (sum !== 0n)
          entries.push({ account: asset === USD ? TREASURY : (tokenAccounts[4] ?? ''), asset, amount: -sum });
        if (step.unbalanced && entries[0]) entries[0] = { ...entries[0], amount: entries[0].amount + 1n };
        const params = { settlementId: newId('s'), accountId: tenant, kind: 'test', entries };
        const balanced = entries.reduce((s, e) => s + e.amount, 0n) === 0n;
        if (!balanced || entries.length < 2 || entries.some((e) => e.amount === 0n)) {
          await expect(tx((t) => postGroup(t, clock, params))).rejects.toThrow(LedgerError);
          break;
        }
        const res = await tx((t) => postGroup(t, clock, params));
        if (res.ok) {
          booked.push({ params, groupId: res.groupId });
          apply(entries);
        } else {
          expect(res.reason).toBe('insufficient');
        }
        break;
      }
      case 'replay': {
        const prior = booked[step.pick % Math.max(booked.length, 1)];
        if (!prior) break;
        const first = prior.params.entries[0];
        const entries =
          step.conflicting && first
            ? prior.params.entries.map((e) => ({ ...e, amount: e.amount * 2n }))
            : prior.params.entries;
        const res = await tx((t) => postGroup(t, clock, { ...prior.params, entries }));
        if (step.conflicting) expect(res).toMatchObject({ ok: false, reason: 'conflict' });
        else expect(res).toMatchObject({ ok: true, replayed: true, groupId: prior.groupId });
        break;
      }
      case 'reverse': {
        const prior = booked[step.pick % Math.max(booked.length, 1)];
        if (!prior) break;
        const res = await tx((t) =>
          reverseGroup(t, clock, {
            groupId: prior.groupId,
            accountId: prior.params.accountId,
            reason: 'property',
          }),
        );
        if (res.ok && !res.replayed) apply(prior.params.entries.map((e) => ({ ...e, amount: -e.amount })));
        break;
      }
      case 'credit': {
        const accountId = tenants[step.tenant] ?? '';
        const res = await tx((t) =>
          creditPrepaid(t, clock, { accountId, amountMicroUsd: step.amount, settlementId: newId('s') }),
        );
        expect(res.ok).toBe(true);
        apply([
          { account: TREASURY, asset: USD, amount: step.amount },
          { account: prepaidAccount(accountId), asset: USD, amount: -step.amount },
        ]);
        break;
      }
      case 'debit': {
        const accountId = tenants[step.tenant] ?? '';
        const res = await tx((t) =>
          debitFee(t, clock, {
            accountId,
            feeMicroUsd: step.amount,
            product: 'test',
            settlementId: newId('s'),
          }),
        );
        if (res.ok) {
          apply([
            { account: prepaidAccount(accountId), asset: USD, amount: step.amount },
            { account: FEE_REVENUE, asset: USD, amount: -step.amount },
          ]);
        }
        break;
      }
      case 'hold': {
        const accountId = tenants[step.tenant] ?? '';
        const holdId = newId('hld');
        const res = await tx((t) =>
          placeHold(t, clock, {
            holdId,
            accountId,
            kind: 'fee.test',
            debit: prepaidAccount(accountId),
            credit: FEE_REVENUE,
            asset: USD,
            amount: step.amount,
            expiresAt: new Date(clock.now().getTime() + step.ttl * MINUTE),
          }),
        );
        if (res.ok) holds.push({ holdId, accountId, amount: step.amount });
        break;
      }
      case 'close': {
        const hold = holds[step.pick % Math.max(holds.length, 1)];
        if (!hold) break;
        if (step.how === 'void') {
          await tx((t) => voidHold(t, clock, hold));
          break;
        }
        const part = (hold.amount * BigInt(step.part)) / 100n || 1n;
        const res = await tx((t) => postHold(t, clock, { ...hold, amount: part }));
        if (res.ok) {
          apply([
            { account: prepaidAccount(hold.accountId), asset: USD, amount: part },
            { account: FEE_REVENUE, asset: USD, amount: -part },
          ]);
        }
        break;
      }
      case 'tick': {
        clock.advance(step.minutes * MINUTE);
        await tx((t) => expireHolds(t, clock));
        break;
      }
    }
  }

  // Every balance is its baseline plus the model's changes, and the sum of its entries.
  for (const [k, change] of model) {
    const [account = '', asset = ''] = k.split('|');
    expect(await balanceOf(db, account, asset), k).toBe((baseline.get(k) ?? 0n) + change);
  }
  // Every group balances per asset.
  const unbalanced = await sql`
    SELECT group_id, asset FROM ledger_entries GROUP BY group_id, asset HAVING sum(amount) <> 0`.execute(db);
  expect(unbalanced.rows).toEqual([]);
  // Every prepaid row is minus its entries; held amounts are those of the pending holds.
  const drift = await sql`
    SELECT b.account_id, b.balance_micro, b.held_micro FROM prepaid_balances b
    WHERE b.balance_micro <> -(SELECT coalesce(sum(e.amount), 0) FROM ledger_entries e
                               WHERE e.ledger_account = 'account:' || b.account_id || ':prepaid')
       OR b.held_micro <> (SELECT coalesce(sum(h.amount), 0) FROM ledger_holds h
                           WHERE h.debit_account = 'account:' || b.account_id || ':prepaid' AND h.state = 'pending')
       OR b.balance_micro < 0 OR b.held_micro > b.balance_micro`.execute(db);
  expect(drift.rows).toEqual([]);
}

describe('ledger properties', () => {
  it('random operation sequences keep groups balanced and balances equal to their entries', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), (ops) => run(ops)),
      { numRuns: 15 },
    );
  });
});
