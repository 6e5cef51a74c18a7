// The account's life cycle across modules: every table holding an account's rows is some
// module's part (src/lifecycle/parts.ts), once, with an export section or a reason for none; the
// test-account sweep deletes a development fixture account with everything it owns and leaves a
// normal account of the same age alone. Time moves with a ManualClock, never by sleeping.

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/support/app.ts';
import {
  bearer,
  createAccountWithSession,
  createKey,
  randomAddress,
  type AccountWithSession,
} from '../../test/support/identity.ts';
import { ManualClock } from '../core/clock.ts';
import { withTransaction } from '../core/db/database.ts';
import type { Job } from '../core/jobs/index.ts';
import { jobHandlers } from '../jobs.ts';
import { recordAudit } from '../modules/audit/index.ts';
import { recordCredentialUse } from '../modules/auth/store.ts';
import { emitEvent } from '../modules/events/index.ts';
import { postGroup, prepaidAccount, transfer, TREASURY, USD } from '../modules/ledger/index.ts';
import { upsertEndpointUrl } from '../modules/webhooks/store.ts';
import { EXPORT_SECTIONS } from './export.ts';
import { accountParts } from './parts.ts';
import { purgeTestAccounts } from './purge.ts';

const DAY_MS = 86_400_000;
const clock = new ManualClock('2026-06-01T00:00:00.000Z');
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ clock });
});
afterAll(async () => {
  await t?.close();
});

const runJob = (name: string) =>
  jobHandlers(t.deps)[name]!({} as Job, {
    attempt: 1,
    workerId: 'test',
    signal: new AbortController().signal,
  });

const network = { clientIp: '203.0.113.7', userAgent: 'lifecycle-test' };
const tables = accountParts().flatMap((part) =>
  part.tables.map((table) => ({ ...table, module: part.module })),
);

async function countWhere(table: string, column: string, value: string): Promise<number> {
  const r = await sql<{ n: string }>`
    SELECT count(*) AS n FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ${value}`.execute(t.db.db);
  return Number(r.rows[0]?.n ?? 0);
}

/** Rows the account owns in every module's tables, plus its ledger entries. */
async function footprint(accountId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const { table, column } of tables) counts[table] = await countWhere(table, column, accountId);
  counts['ledger_entries'] = await countWhere('ledger_entries', 'ledger_account', prepaidAccount(accountId));
  return counts;
}

describe("the modules' parts", () => {
  it('cover every table with an account_id column, each table once', async () => {
    const r = await sql<{ table_name: string }>`
      SELECT DISTINCT table_name FROM information_schema.columns
      WHERE column_name = 'account_id' AND table_schema = current_schema()`.execute(t.db.db);
    const declared = tables.map((x) => x.table);
    expect(new Set(declared).size).toBe(declared.length);
    expect(r.rows.map((row) => row.table_name).filter((name) => !declared.includes(name))).toEqual([]);
    expect(declared).toContain('accounts');
    expect(declared).toContain('idempotency_keys');
  });

  it('name only sections the export has, or say why a table is not exported', () => {
    const named = tables.flatMap((x) => (typeof x.exported === 'string' ? [x.exported.split('.')[0]!] : []));
    expect(named.filter((name) => !(EXPORT_SECTIONS as readonly string[]).includes(name))).toEqual([]);
    for (const x of tables)
      if (typeof x.exported !== 'string') expect(x.exported.omitted.length, x.table).toBeGreaterThan(20);
  });
});

describe('development test accounts', () => {
  /** An account with a session, a key, a policy (its event, audit fact and stored idempotent
   * response), an event, an audit fact with network context, a credential use, a webhook
   * endpoint and delivery, and a ledger group with its prepaid balance. */
  async function populated(isTestFixture: boolean): Promise<AccountWithSession> {
    const account = await createAccountWithSession(t.db.db, { now: clock.now(), isTestFixture });
    const { accountId } = account;
    const key = await createKey(t.db.db, accountId, { now: clock.now(), scopes: ['write'] });
    await recordCredentialUse(t.db.db, {
      credentialId: key.id,
      accountId,
      clientIp: network.clientIp,
      userAgent: network.userAgent,
      at: clock.now(),
    });
    await upsertEndpointUrl(t.db.db, accountId, 'https://receiver.example/hook', clock.now());
    const res = await t.app.fastify.inject({
      method: 'PUT',
      url: '/v1/policies',
      headers: { ...bearer(account.sessionToken), 'idempotency-key': `policy-${accountId}` },
      payload: { version: 1, wallet: randomAddress(), chain_id: 8453 },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    await withTransaction(t.db.db, async (tx) => {
      await emitEvent(tx, clock, { accountId, kind: 'test.created', payload: {} });
      await recordAudit(tx, clock, { accountId, actor: 'system', action: 'test.created', network });
      const booked = await postGroup(tx, clock, {
        settlementId: `topup:${accountId}`,
        accountId,
        kind: 'topup',
        entries: transfer(TREASURY, prepaidAccount(accountId), USD, 5_000_000n),
      });
      expect(booked.ok).toBe(true);
    });
    return account;
  }

  it('deletes fixture accounts older than 7 days with everything they own, nothing else', async () => {
    const fixture = await populated(true);
    const normal = await populated(false);
    clock.advance(DAY_MS);
    const youngFixture = await populated(true);

    const before = await footprint(fixture.accountId);
    for (const table of [
      'sessions',
      'api_keys',
      'policies',
      'events',
      'audit_log',
      'network_context',
      'credential_uses',
      'idempotency_keys',
      'webhook_endpoints',
      'webhook_deliveries',
      'ledger_groups',
      'ledger_entries',
      'prepaid_balances',
      'accounts',
    ])
      expect(before[table], table).toBeGreaterThan(0);
    const normalBefore = await footprint(normal.accountId);
    const youngBefore = await footprint(youngFixture.accountId);

    // Not yet 7 days old: nothing goes.
    clock.advance(6 * DAY_MS - 1);
    expect(await purgeTestAccounts(t.db.db, clock, 'development')).toEqual([]);

    clock.advance(2);
    // Never outside development.
    expect(await purgeTestAccounts(t.db.db, clock, 'production')).toEqual([]);
    expect(await footprint(fixture.accountId)).toEqual(before);

    expect(await purgeTestAccounts(t.db.db, clock, 'development')).toEqual([fixture.accountId]);
    const after = await footprint(fixture.accountId);
    expect(Object.entries(after).filter(([, n]) => n > 0)).toEqual([]);
    expect(await footprint(normal.accountId)).toEqual(normalBefore);
    expect(await footprint(youngFixture.accountId)).toEqual(youngBefore);

    // The append-only guards are back in force outside the sweep's transaction.
    await expect(
      sql`DELETE FROM events WHERE account_id = ${normal.accountId}`.execute(t.db.db),
    ).rejects.toThrow(/append-only/);

    // Running again is harmless.
    expect(await purgeTestAccounts(t.db.db, clock, 'development')).toEqual([]);
    await runJob('housekeeping.test_accounts');
    expect(await footprint(normal.accountId)).toEqual(normalBefore);
    expect(await footprint(youngFixture.accountId)).toEqual(youngBefore);

    // The younger fixture goes once it is 7 days old, through the scheduled job.
    clock.advance(DAY_MS);
    await runJob('housekeeping.test_accounts');
    expect((await footprint(youngFixture.accountId))['accounts']).toBe(0);
    expect(await footprint(normal.accountId)).toEqual(normalBefore);
  });
});
