// GET /v1/account/export: every top-level field of the spec, only the caller's rows, bounded
// arrays named in `truncated`, and no secret of the account anywhere in the raw text.

import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/support/app.ts';
import { expectErrorBody } from '../../test/support/error-body.ts';
import {
  bearer,
  createAccountWithSession,
  createKey,
  createSession,
  randomAddress,
  type AccountWithSession,
} from '../../test/support/identity.ts';
import { ManualClock } from '../core/clock.ts';
import { hashToken } from '../modules/auth/tokens.ts';
import { emitEvent } from '../modules/events/index.ts';
import { buildAccountExport } from './export.ts';

const SPEC_FIELDS = [
  'account',
  'api_keys',
  'audit_log',
  'auto_topup',
  'balance',
  'delegations',
  'events',
  'export_version',
  'generated_at',
  'intents',
  'ledger_entries',
  'payment_credits',
  'pm_orders',
  'pm_positions',
  'policies',
  'sessions',
  'statements_manifest',
  'truncated',
  'venue_credentials',
  'watched_wallets',
  'webhooks',
];

const clock = new ManualClock('2026-03-01T12:00:00.000Z');
let t: TestApp;

interface Seeded {
  who: AccountWithSession;
  wallet: string;
  delegationId: string;
  intentId: string;
  secrets: Record<string, string>;
  keyIds: string[];
}

async function call(method: 'GET' | 'POST' | 'PUT', url: string, token: string, payload?: object) {
  return t.app.fastify.inject({
    method,
    url,
    headers: bearer(token),
    ...(payload ? { payload } : {}),
  });
}

/** An account with a session, keys, a policy, events, a webhook secret and a delegation. */
async function seed(): Promise<Seeded> {
  const db = t.db.db;
  const who = await createAccountWithSession(db, { now: clock.now() });
  const token = who.sessionToken;

  const created = await call('POST', '/v1/keys', token, { name: 'exporter', scopes: ['admin'] });
  expect(created.statusCode, created.body).toBe(201);
  const apiKey = created.json<{ id: string; token: string }>();
  const readKey = await createKey(db, who.accountId, { scopes: ['read'], now: clock.now() });

  const wallet = randomAddress();
  const policy = await call('PUT', '/v1/policies', token, { version: 1, wallet, chain_id: 8453 });
  expect(policy.statusCode, policy.body).toBe(201);

  const secretRes = await call('GET', '/v1/webhooks/secret', token);
  expect(secretRes.statusCode, secretRes.body).toBe(200);
  const webhookSecret = secretRes.json<{ secret: string }>().secret;
  const endpoint = await db
    .selectFrom('webhook_endpoints')
    .select('secret_sealed')
    .where('account_id', '=', who.accountId)
    .executeTakeFirstOrThrow();

  await db
    .transaction()
    .execute((tx) =>
      emitEvent(tx, clock, { accountId: who.accountId, kind: 'test.happened', payload: { n: 1 } }),
    );

  const delegationId = randomUUID();
  const enableSig = `0x${randomBytes(65).toString('hex')}`;
  await db
    .insertInto('delegations')
    .values({
      id: delegationId,
      account_id: who.accountId,
      wallet,
      chain_id: 8453,
      status: 'active',
      permission_id: `0x${randomBytes(4).toString('hex')}`,
      validation_id: `0x${randomBytes(21).toString('hex')}`,
      kernel_version: '0.3.1',
      domain_version: '0.3.1',
      enable_data: `0x${randomBytes(32).toString('hex')}`,
      selector_data: `0x${randomBytes(32).toString('hex')}`,
      kernel_nonce: 0,
      digest: `0x${randomBytes(32).toString('hex')}`,
      session_key: randomAddress(),
      modules: JSON.stringify({}),
      scope: JSON.stringify({ calls: [], valid_after: 0, valid_until: 2_000_000_000, rate_limit: null }),
      valid_after: 0,
      valid_until: 2_000_000_000,
      account_deployed: true,
      policy_version: 1,
      renewed_from: null,
      enable_sig: enableSig,
      owner: who.address,
      created_at: clock.now(),
      confirmed_at: clock.now(),
      revoked_at: null,
      expired_at: null,
    })
    .execute();

  const intentId = randomUUID();
  await db
    .insertInto('intents')
    .values({
      id: intentId,
      account_id: who.accountId,
      wallet,
      chain_id: 8453,
      kind: 'conversion',
      status: 'planned',
      policy_version: 1,
      policy_hash: randomBytes(32).toString('hex'),
      params: JSON.stringify({ chain_id: 8453, sell_amount: '25000000', value_usd: '25' }),
      report: JSON.stringify({}),
      value_micro_usd: '25000000',
      reservation_id: intentId,
      fee_group_id: null,
      fee_micro_usd: '100000',
      created_at: clock.now(),
      updated_at: clock.now(),
    })
    .execute();

  const sealed = endpoint.secret_sealed ?? '';
  expect(sealed.length).toBeGreaterThan(0);
  return {
    who,
    wallet,
    delegationId,
    intentId,
    keyIds: [apiKey.id, readKey.id],
    secrets: {
      sessionToken: token,
      sessionHash: hashToken(token),
      apiKeyToken: apiKey.token,
      apiKeyHash: hashToken(apiKey.token),
      readKeyToken: readKey.token,
      readKeyHash: hashToken(readKey.token),
      webhookSecret,
      sealedSecret: sealed,
      enableSig,
    },
  };
}

let mine: Seeded;
let theirs: Seeded;

beforeAll(async () => {
  t = await createTestApp({ clock });
  mine = await seed();
  theirs = await seed();
});
afterAll(async () => {
  await t?.close();
});

describe('GET /v1/account/export', () => {
  it('returns every top-level field of the spec for the caller', async () => {
    const res = await call('GET', '/v1/account/export', mine.who.sessionToken);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<Record<string, unknown>>();
    expect(Object.keys(body).sort()).toEqual(SPEC_FIELDS);
    expect(body['export_version']).toBe(1);
    expect(body['generated_at']).toBe(clock.now().toISOString());
    expect(body['truncated']).toEqual([]);
    expect(body['account']).toEqual({
      address: mine.who.address,
      contact: null,
      kind: 'agent',
      created_at: clock.now().toISOString(),
      offboarded_at: null,
    });
    expect((body['api_keys'] as { id: string }[]).map((k) => k.id).sort()).toEqual([...mine.keyIds].sort());
    expect(body['sessions']).toEqual([
      {
        id: mine.who.sessionId,
        created_at: clock.now().toISOString(),
        expires_at: expect.any(String),
        revoked_at: null,
      },
    ]);
    expect(body['policies']).toEqual([expect.objectContaining({ wallet: mine.wallet, version: 1 })]);
    expect(body['delegations']).toEqual([
      expect.objectContaining({ id: mine.delegationId, status: 'active' }),
    ]);
    expect((body['delegations'] as object[])[0]).not.toHaveProperty('enable_sig');
    const kinds = (body['events'] as { kind: string }[]).map((e) => e.kind);
    expect(kinds).toContain('test.happened');
    expect(kinds).toContain('key.created');
    expect(body['webhooks']).toEqual({ secret_configured: true, failures: [] });
    expect((body['audit_log'] as unknown[]).length).toBeGreaterThan(0);
    expect(body['intents']).toEqual([
      expect.objectContaining({
        id: mine.intentId,
        wallet: mine.wallet,
        kind: 'conversion',
        status: 'planned',
        params: expect.objectContaining({ sell_amount: '25000000' }),
        value_usd: '25',
        fee_usd: '0.1',
      }),
    ]);
    expect(body['ledger_entries']).toEqual([]);
    expect(body['payment_credits']).toEqual([]);
    expect(body['balance']).toBeNull();
    expect(body['auto_topup']).toBeNull();
    expect(body['venue_credentials']).toEqual([]);
    expect(body['pm_orders']).toEqual([]);
    expect(body['pm_positions']).toEqual([]);
    expect(body['statements_manifest']).toEqual({ bucket_bound: false, keys: [] });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('never contains another account’s rows', async () => {
    const res = await call('GET', '/v1/account/export', mine.who.sessionToken);
    const raw = res.body;
    for (const foreign of [
      theirs.who.accountId,
      theirs.who.address,
      theirs.who.sessionId,
      theirs.wallet,
      theirs.delegationId,
      theirs.intentId,
      ...theirs.keyIds,
    ]) {
      expect(raw, foreign).not.toContain(foreign);
    }
  });

  it('contains none of the account’s secrets: tokens, their hashes, the webhook secret, sealed bytes, signatures', async () => {
    const extra = await createSession(t.db.db, mine.who.accountId, { now: clock.now() });
    const res = await call('GET', '/v1/account/export', mine.secrets['apiKeyToken']!);
    expect(res.statusCode, res.body).toBe(200);
    const raw = res.body.toLowerCase();
    const secrets = { ...mine.secrets, extraSession: extra.token, extraHash: hashToken(extra.token) };
    for (const [name, secret] of Object.entries(secrets)) {
      expect(secret.length, name).toBeGreaterThan(16);
      expect(raw.includes(secret.toLowerCase()), name).toBe(false);
      // Sealed material may be stored with a prefix: its payload must not appear either.
      const tail = secret.split(':').at(-1) ?? secret;
      if (tail.length >= 16) expect(raw.includes(tail.toLowerCase()), `${name} (tail)`).toBe(false);
    }
  });

  it('refuses an API key without the admin scope with 403', async () => {
    const res = await call('GET', '/v1/account/export', mine.secrets['readKeyToken']!);
    expectErrorBody(res, 403, 'FORBIDDEN');
  });

  it('cuts arrays beyond the bound, keeping the newest, and names them in truncated', async () => {
    const who = await createAccountWithSession(t.db.db, { now: clock.now() });
    clock.advance(1000);
    const newer = await createSession(t.db.db, who.accountId, { now: clock.now() });
    const result = await buildAccountExport(t.db.db, clock, who.accountId, 1);
    expect(result.truncated).toEqual(['sessions']);
    expect(result.sessions.map((s) => s['id'])).toEqual([newer.id]);
  });
});
