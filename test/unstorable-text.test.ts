// Text PostgreSQL cannot store (NUL, unpaired UTF-16 surrogates) in a body field, a query
// parameter or a path parameter is `400 INVALID_REQUEST` naming the field, and changes nothing.
// Each case here answered 500 INTERNAL when the text reached a statement.

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditPrepaid, readPrepaidBalance } from '../src/modules/billing/index.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { expectErrorBody } from './support/error-body.ts';
import { bearer, createAccountWithSession, createKey, type AccountWithSession } from './support/identity.ts';

const USD = 1_000_000n;
let t: TestApp;
let acct: AccountWithSession;
let keyId: string;

beforeAll(async () => {
  t = await createTestApp();
  acct = await createAccountWithSession(t.db.db);
  keyId = (await createKey(t.db.db, acct.accountId, { scopes: ['write'] })).id;
  await t.db.db.transaction().execute((tx) =>
    creditPrepaid(tx, t.deps.clock, {
      accountId: acct.accountId,
      amountMicroUsd: 5n * USD,
      settlementId: `test:fund:${acct.accountId}`,
    }),
  );
});
afterAll(async () => {
  await t?.close();
});

/** Everything of the account a refused request could have changed. */
async function state(): Promise<string> {
  const counts = await sql<Record<string, number>>`
    SELECT (SELECT count(*)::int FROM api_keys WHERE account_id = ${acct.accountId}) AS keys,
           (SELECT count(*)::int FROM api_keys WHERE account_id = ${acct.accountId} AND revoked_at IS NOT NULL) AS revoked,
           (SELECT count(*)::int FROM feature_requests WHERE account_id = ${acct.accountId}) AS requests,
           (SELECT count(*)::int FROM events WHERE account_id = ${acct.accountId}) AS events,
           (SELECT count(*)::int FROM audit_log WHERE account_id = ${acct.accountId}) AS audit,
           (SELECT count(*)::int FROM idempotency_keys) AS idempotency,
           (SELECT count(*)::int FROM accounts WHERE id = ${acct.accountId} AND offboarded_at IS NOT NULL) AS offboarded`.execute(
    t.db.db,
  );
  const balance = (await readPrepaidBalance(t.db.db, acct.accountId)).balanceMicro;
  return JSON.stringify({ ...counts.rows[0], balance: String(balance) });
}

function send(method: 'POST' | 'DELETE' | 'GET', url: string, payload?: string) {
  return t.app.fastify.inject({
    method,
    url,
    headers: {
      ...bearer(acct.sessionToken),
      'idempotency-key': `unstorable-${Math.random()}`,
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(payload === undefined ? {} : { payload }),
  });
}

// Bodies are JSON text, so `\\u0000` and `\\ud800` below reach the server as JSON escapes.
const cases: {
  name: string;
  method: 'POST' | 'DELETE' | 'GET';
  url: string;
  payload?: string;
  field: string;
}[] = [
  {
    name: 'a NUL in the feedback title',
    method: 'POST',
    url: '/v1/feedback',
    payload: '{"title":"Polygon\\u0000 please","body":"Please add Polygon rebalances to the treasury."}',
    field: 'body.title',
  },
  {
    name: 'an unpaired surrogate in the feedback body',
    method: 'POST',
    url: '/v1/feedback',
    payload: '{"title":"Polygon please","body":"Please add Polygon \\ud800 rebalances to the treasury."}',
    field: 'body.body',
  },
  {
    name: 'a NUL in the panic reason',
    method: 'POST',
    url: '/v1/account/panic',
    payload: '{"reason":"stop\\u0000"}',
    field: 'body.reason',
  },
  {
    name: 'an unpaired surrogate in a key name',
    method: 'POST',
    url: '/v1/keys',
    payload: '{"name":"agent \\udc00"}',
    field: 'body.name',
  },
  {
    name: 'an unpaired surrogate in an enrolled agent name',
    method: 'POST',
    url: '/v1/keys/enroll',
    payload: '{"agents":[{"wallet":"0x1111111111111111111111111111111111111111","name":"agent \\ud800"}]}',
    field: 'body.agents[0].name',
  },
  {
    name: 'a NUL in a rotated key id',
    method: 'POST',
    url: '/v1/keys/rotate',
    payload: '{"key_ids":["key_\\u0000"]}',
    field: 'body.key_ids[0]',
  },
  {
    name: 'a NUL in the offboarding reason',
    method: 'POST',
    url: '/v1/account/offboard',
    payload: '', // filled in below with the account's own address
    field: 'body.reason',
  },
  { name: 'a NUL in a path parameter', method: 'DELETE', url: '/v1/keys/a%00b', field: 'params.id' },
  {
    name: 'a NUL in a query parameter',
    method: 'GET',
    url: '/v1/events?cursor=a%00b',
    field: 'query.cursor',
  },
  {
    name: 'a NUL in an object key',
    method: 'POST',
    url: '/v1/keys',
    payload: '{"name":"agent","x\\u0000":1}',
    field: 'a field name in body',
  },
];

describe('text the database cannot store is a 400 naming the field', () => {
  for (const c of cases) {
    it(`${c.name}: 400 naming ${c.field}, nothing changed`, async () => {
      const payload =
        c.url === '/v1/account/offboard'
          ? JSON.stringify({ confirm_wallet_address: acct.address, reason: 'closing\u0000' })
          : c.payload;
      const before = await state();
      const res = await send(c.method, c.url, payload);
      const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
      expect(body.message).toContain(c.field);
      expect(await state()).toBe(before);
    });
  }

  it('the same requests with storable text do reach the service (the refusals above mean something)', async () => {
    const before = await state();
    const res = await send(
      'POST',
      '/v1/feedback',
      '{"title":"Polygon please","body":"Please add Polygon rebalances to the treasury."}',
    );
    expect(res.statusCode, res.body).toBe(201);
    const revoked = await send('DELETE', `/v1/keys/${keyId}`);
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(await state()).not.toBe(before);
  });

  it('a surrogate pair (an emoji) is storable text, not refused', async () => {
    const res = await send('POST', '/v1/keys', '{"name":"agent \\ud83d\\ude80"}');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ name: 'agent \u{1F680}' });
  });
});
