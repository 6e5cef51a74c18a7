// API keys over HTTP: create, list, enroll and revoke, the guard's IP pin, events and audit facts,
// and Idempotency-Key replays that never carry a token.

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../core/clock.ts';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import {
  bearer,
  createAccountWithSession,
  createKey,
  randomAddress,
  type AccountWithSession,
} from '../../../test/support/identity.ts';
import { hashToken } from '../auth/tokens.ts';

const DAY_MS = 86_400_000;
const clock = new ManualClock('2026-03-01T00:00:00.000Z');
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ clock });
});
afterAll(async () => {
  await t?.close();
});

interface Created {
  id: string;
  token: string | null;
  name: string | null;
  scopes: string[];
  created_at: string;
  expires_at: string;
  allowed_ips: string[] | null;
  wallets: string[] | null;
  remediation?: string;
}
interface Listed {
  id: string;
  status: string;
  revoked_at: string | null;
  [field: string]: unknown;
}

const CREATE_FIELDS = ['allowed_ips', 'created_at', 'expires_at', 'id', 'name', 'scopes', 'token', 'wallets'];
const LIST_FIELDS = [
  'allowed_ips',
  'created_at',
  'created_by',
  'expires_at',
  'id',
  'last_used_at',
  'name',
  'revoked_at',
  'rotated_from',
  'rotated_to',
  'scopes',
  'status',
  'wallets',
];

interface CallOptions {
  body?: unknown;
  headers?: Record<string, string>;
  remoteAddress?: string;
}

function call(method: 'GET' | 'POST' | 'DELETE', url: string, token: string, options: CallOptions = {}) {
  return t.app.fastify.inject({
    method,
    url,
    headers: { ...bearer(token), 'user-agent': 'keys-test/1.0', ...options.headers },
    ...(options.body !== undefined ? { payload: options.body as object } : {}),
    ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
  });
}

const newAccount = () => createAccountWithSession(t.db.db, { now: clock.now() });
const keyOf = (accountId: string, options: Parameters<typeof createKey>[2] = {}) =>
  createKey(t.db.db, accountId, { now: clock.now(), ...options });

async function countKeys(accountId: string): Promise<number> {
  const r = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM api_keys WHERE account_id = ${accountId}`.execute(t.db.db);
  return r.rows[0]?.n ?? 0;
}

async function listKeys(token: string): Promise<Listed[]> {
  const res = await call('GET', '/v1/keys', token);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { keys: Listed[] }).keys;
}

describe('POST /v1/keys', () => {
  it('creates a key with every field of the create response and stores only its hash', async () => {
    const acct = await newAccount();
    const wallet = randomAddress();
    const res = await call('POST', '/v1/keys', acct.sessionToken, {
      body: {
        name: 'ci deployer',
        scopes: ['write', 'supervisor'],
        expires_in_days: 30,
        allowed_ips: [' 203.0.113.0/24', '2001:db8::/32', '198.51.100.7'],
        wallets: [wallet.toUpperCase().replace('0X', '0x')],
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const key = res.json() as Created;
    expect(Object.keys(key).sort()).toEqual(CREATE_FIELDS);
    expect(key.id).toMatch(/^key_[0-9a-z]{20}$/);
    expect(key.token).toMatch(/^psk_[A-Za-z0-9_-]{43}$/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(key.name).toBe('ci deployer');
    expect(key.scopes).toEqual(['write', 'supervisor']);
    expect(key.created_at).toBe(clock.now().toISOString());
    expect(key.expires_at).toBe(new Date(clock.now().getTime() + 30 * DAY_MS).toISOString());
    expect(key.allowed_ips).toEqual(['203.0.113.0/24', '2001:db8::/32', '198.51.100.7']);
    expect(key.wallets).toEqual([wallet]);

    const row = await t.db.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(hashToken(key.token ?? ''));
    expect(JSON.stringify(row)).not.toContain(key.token);
    expect(Object.keys(row)).not.toContain('token_prefix');
    expect(row.created_by).toBe(`session:${acct.sessionId}`);
    expect(row.account_id).toBe(acct.accountId);
  });

  it('applies the defaults to an empty object: read scope, 90 days, no name and no pins', async () => {
    const acct = await newAccount();
    const res = await call('POST', '/v1/keys', acct.sessionToken, { body: {} });
    expect(res.statusCode, res.body).toBe(201);
    const key = res.json() as Created;
    expect(key).toMatchObject({ name: null, scopes: ['read'], allowed_ips: null, wallets: null });
    expect(key.expires_at).toBe(new Date(clock.now().getTime() + 90 * DAY_MS).toISOString());
    // Every field is optional, but the body is not: a POST without one is refused like any other.
    const bare = await call('POST', '/v1/keys', acct.sessionToken);
    expect(expectErrorBody(bare, 400, 'INVALID_REQUEST').message).toContain('body must be an object');
    expect(await countKeys(acct.accountId)).toBe(1);
  });

  it('lets an admin key create keys, recorded as made by that key, and the new token works', async () => {
    const acct = await newAccount();
    const admin = await keyOf(acct.accountId, { scopes: ['admin'] });
    const res = await call('POST', '/v1/keys', admin.token, { body: { scopes: ['supervisor'] } });
    expect(res.statusCode, res.body).toBe(201);
    const key = res.json() as Created;
    const row = await t.db.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    expect(row.created_by).toBe(`key:${admin.id}`);
    const listed = await listKeys(key.token ?? '');
    expect(listed.map((k) => k.id)).toContain(key.id);
  });

  it.each([
    ['an unknown scope', { scopes: ['root'] }, 'scopes[0]'],
    ['no scope', { scopes: [] }, 'scopes'],
    ['a repeated scope', { scopes: ['read', 'read'] }, 'scopes'],
    ['a malformed address', { allowed_ips: ['10.0.0.300'] }, 'allowed_ips[0]'],
    ['an IPv4 prefix of 33', { allowed_ips: ['10.0.0.0/24', '10.0.0.0/33'] }, 'allowed_ips[1]'],
    ['an IPv6 prefix of 129', { allowed_ips: ['2001:db8::/129'] }, 'allowed_ips[0]'],
    ['an IPv6 zone', { allowed_ips: ['fe80::1%eth0'] }, 'allowed_ips[0]'],
    ['a repeated IP rule', { allowed_ips: ['10.0.0.1', ' 10.0.0.1'] }, 'allowed_ips[1]'],
    ['no IP rule', { allowed_ips: [] }, 'allowed_ips'],
    ['a bad wallet', { wallets: ['0x1234'] }, 'wallets[0]'],
    [
      'a wallet repeated in another case',
      {
        wallets: ['0x00000000000000000000000000000000000000aa', '0x00000000000000000000000000000000000000AA'],
      },
      'wallets[1]',
    ],
    ['no wallet', { wallets: [] }, 'wallets'],
    ['expires_in_days 0', { expires_in_days: 0 }, 'expires_in_days'],
    ['expires_in_days 366', { expires_in_days: 366 }, 'expires_in_days'],
    ['a fractional expires_in_days', { expires_in_days: 1.5 }, 'expires_in_days'],
    ['an empty name', { name: '' }, 'name'],
    ['a name of 101 characters', { name: 'n'.repeat(101) }, 'name'],
    ['a name with a control character', { name: 'line\nbreak' }, 'name'],
    ['an unknown field', { scope: ['read'] }, 'unknown field scope'],
    ['a wallet pin with admin', { scopes: ['read', 'admin'], wallets: [randomAddress()] }, 'admin'],
  ])('refuses %s with 400 naming the field, creating nothing', async (_what, body, field) => {
    const acct = await newAccount();
    const res = await call('POST', '/v1/keys', acct.sessionToken, { body });
    const err = expectErrorBody(res, 400, 'INVALID_REQUEST');
    expect(err.message).toContain(field);
    expect(await countKeys(acct.accountId)).toBe(0);
  });

  it('refuses a read, write or supervisor key (403), and a pinned key at the guard', async () => {
    const acct = await newAccount();
    for (const scopes of [['read'], ['write'], ['supervisor']] as const) {
      const k = await keyOf(acct.accountId, { scopes: [...scopes] });
      expectErrorBody(await call('POST', '/v1/keys', k.token, { body: {} }), 403, 'FORBIDDEN');
    }
    // An admin key with a wallet pin cannot be made through the API; a row like it is still refused.
    const pinned = await keyOf(acct.accountId, { scopes: ['admin'], wallets: [randomAddress()] });
    const wallets = (
      await t.db.db
        .selectFrom('api_keys')
        .select('wallets')
        .where('id', '=', pinned.id)
        .executeTakeFirstOrThrow()
    ).wallets;
    for (const body of [{}, { wallets }]) {
      expectErrorBody(await call('POST', '/v1/keys', pinned.token, { body }), 403, 'FORBIDDEN');
    }
    expect(await countKeys(acct.accountId)).toBe(4);
  });

  describe('an IP-pinned admin key makes keys within its IP pin', () => {
    let acct: AccountWithSession;
    let admin: { id: string; token: string };
    const from = { remoteAddress: '203.0.113.10' };
    beforeAll(async () => {
      acct = await newAccount();
      admin = await keyOf(acct.accountId, {
        scopes: ['admin'],
        allowedIps: ['203.0.113.0/24', '2001:db8::/48'],
      });
    });

    it('passes its pin on when allowed_ips is omitted', async () => {
      const res = await call('POST', '/v1/keys', admin.token, { ...from, body: { scopes: ['write'] } });
      expect(res.statusCode, res.body).toBe(201);
      expect((res.json() as Created).allowed_ips).toEqual(['203.0.113.0/24', '2001:db8::/48']);
    });

    it('accepts narrower addresses and blocks', async () => {
      const body = { allowed_ips: ['203.0.113.128/25', '203.0.113.7', '2001:db8:0:1::/64'] };
      const res = await call('POST', '/v1/keys', admin.token, { ...from, body });
      expect(res.statusCode, res.body).toBe(201);
      expect((res.json() as Created).allowed_ips).toEqual(body.allowed_ips);
    });

    it.each([['203.0.112.0/23'], ['198.51.100.1'], ['2001:db8::/47'], ['0.0.0.0/0']])(
      'refuses %s, which reaches outside it (403, nothing created)',
      async (rule) => {
        const before = await countKeys(acct.accountId);
        const res = await call('POST', '/v1/keys', admin.token, { ...from, body: { allowed_ips: [rule] } });
        expect(expectErrorBody(res, 403, 'FORBIDDEN').message).toContain('allowed_ips');
        expect(await countKeys(acct.accountId)).toBe(before);
      },
    );
  });
});

describe('GET /v1/keys', () => {
  it('lists every key newest first, revoked and expired included, without token material', async () => {
    const acct = await newAccount();
    const tokens: string[] = [acct.sessionToken];
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      const res = await call('POST', '/v1/keys', acct.sessionToken, {
        body: { name: `key ${i}`, scopes: ['read'] },
      });
      const key = res.json() as Created;
      made.push(key.id);
      tokens.push(key.token ?? '');
    }
    const expired = await keyOf(acct.accountId, {
      now: new Date(clock.now().getTime() - 10 * DAY_MS),
      expiresAt: new Date(clock.now().getTime() - DAY_MS),
    });
    tokens.push(expired.token);
    expect((await call('DELETE', `/v1/keys/${made[1]}`, acct.sessionToken)).statusCode).toBe(200);
    const supervisor = await keyOf(acct.accountId, {
      scopes: ['supervisor'],
      now: new Date(clock.now().getTime() + 1),
    });
    tokens.push(supervisor.token);
    const other = await newAccount();
    await keyOf(other.accountId);

    const res = await call('GET', '/v1/keys', supervisor.token);
    expect(res.statusCode).toBe(200);
    for (const token of tokens) {
      expect(res.body).not.toContain(token);
      expect(res.body).not.toContain(hashToken(token));
    }
    expect(res.body).not.toMatch(/token_hash|"token"/);
    const keys = (res.json() as { keys: Listed[] }).keys;
    expect(keys.map((k) => k.id)).toEqual([supervisor.id, made[2], made[1], made[0], expired.id]);
    for (const key of keys) expect(Object.keys(key).sort()).toEqual(LIST_FIELDS);
    expect(keys.map((k) => k.status)).toEqual(['active', 'active', 'revoked', 'active', 'expired']);
    expect(keys[2]?.revoked_at).toBe(clock.now().toISOString());
    expect(keys[1]).toMatchObject({
      name: 'key 2',
      scopes: ['read'],
      wallets: null,
      allowed_ips: null,
      rotated_from: null,
      rotated_to: null,
      created_by: `session:${acct.sessionId}`,
      last_used_at: null,
    });
    // The supervisor key's own use is recorded (at most once a minute), and shows.
    await vi.waitFor(async () => {
      const again = (await listKeys(supervisor.token)).find((k) => k.id === supervisor.id);
      expect(again?.last_used_at).toBe(clock.now().toISOString());
    });
  });

  it('admits sessions, admin and supervisor keys only; never a pinned key', async () => {
    const acct = await newAccount();
    for (const scopes of [['admin'], ['supervisor'], ['read', 'supervisor']] as const) {
      const k = await keyOf(acct.accountId, { scopes: [...scopes] });
      expect((await call('GET', '/v1/keys', k.token)).statusCode).toBe(200);
    }
    for (const scopes of [['read'], ['write'], ['read', 'write']] as const) {
      const k = await keyOf(acct.accountId, { scopes: [...scopes] });
      expectErrorBody(await call('GET', '/v1/keys', k.token), 403, 'FORBIDDEN');
    }
    const pinned = await keyOf(acct.accountId, { scopes: ['supervisor'], wallets: [randomAddress()] });
    expectErrorBody(await call('GET', '/v1/keys', pinned.token), 403, 'FORBIDDEN');
    const res = await t.app.fastify.inject({ method: 'GET', url: '/v1/keys' });
    expectErrorBody(res, 401, 'UNAUTHORIZED');
  });
});

describe('POST /v1/keys/enroll', () => {
  it('mints one key per agent, pinned to exactly its wallet, in request order', async () => {
    const acct = await newAccount();
    const wallets = [randomAddress(), randomAddress(), randomAddress()];
    const res = await call('POST', '/v1/keys/enroll', acct.sessionToken, {
      body: {
        agents: [
          { wallet: wallets[0]?.toUpperCase().replace('0X', '0x'), name: 'agent a', scopes: ['write'] },
          { wallet: wallets[1], expires_in_days: 7 },
          { wallet: wallets[2], scopes: ['read', 'supervisor'], name: 'agent c', expires_in_days: 365 },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const keys = (res.json() as { keys: Created[] }).keys;
    expect(keys).toHaveLength(3);
    for (const key of keys) {
      expect(Object.keys(key).sort()).toEqual(CREATE_FIELDS);
      expect(key.token).toMatch(/^psk_/);
      expect(key.created_at).toBe(clock.now().toISOString());
      expect(key.allowed_ips).toBeNull();
    }
    expect(new Set(keys.map((k) => k.token)).size).toBe(3);
    expect(keys.map((k) => k.wallets)).toEqual(wallets.map((w) => [w]));
    expect(keys.map((k) => k.name)).toEqual(['agent a', null, 'agent c']);
    expect(keys.map((k) => k.scopes)).toEqual([['write'], ['read'], ['read', 'supervisor']]);
    const now = clock.now().getTime();
    expect(keys.map((k) => k.expires_at)).toEqual(
      [90, 7, 365].map((d) => new Date(now + d * DAY_MS).toISOString()),
    );
    expect(await countKeys(acct.accountId)).toBe(3);
  });

  it.each([
    [
      'duplicate wallets (in another case)',
      (w: string) => [{ wallet: w }, { wallet: w.toUpperCase().replace('0X', '0x') }],
      'agents[1].wallet',
    ],
    [
      'one bad scope',
      (w: string) => [{ wallet: w }, { wallet: randomAddress(), scopes: ['god'] }],
      'agents[1].scopes[0]',
    ],
    ['one bad wallet', (w: string) => [{ wallet: w }, { wallet: '0xzz' }], 'agents[1].wallet'],
    [
      'one agent with admin',
      (w: string) => [{ wallet: w }, { wallet: randomAddress(), scopes: ['admin'] }],
      'admin',
    ],
    ['an unknown item field', (w: string) => [{ wallet: w, allowed_ips: ['10.0.0.1'] }], 'allowed_ips'],
    [
      'expires_in_days 366',
      (w: string) => [{ wallet: w, expires_in_days: 366 }],
      'agents[0].expires_in_days',
    ],
    ['no agents', () => [], 'agents'],
    ['101 agents', () => Array.from({ length: 101 }, () => ({ wallet: randomAddress() })), 'agents'],
  ])('refuses %s with 400 and creates nothing', async (_what, agents, field) => {
    const acct = await newAccount();
    const res = await call('POST', '/v1/keys/enroll', acct.sessionToken, {
      body: { agents: agents(randomAddress()) },
    });
    expect(expectErrorBody(res, 400, 'INVALID_REQUEST').message).toContain(field);
    expect(await countKeys(acct.accountId)).toBe(0);
  });

  it('makes all keys or none when the caller exceeds itself on one agent', async () => {
    const acct = await newAccount();
    const admin = await keyOf(acct.accountId, { scopes: ['admin'], allowedIps: ['192.0.2.0/24'] });
    const res = await call('POST', '/v1/keys/enroll', admin.token, {
      remoteAddress: '192.0.2.1',
      body: { agents: [{ wallet: randomAddress() }, { wallet: randomAddress() }] },
    });
    expect(res.statusCode, res.body).toBe(201);
    // Enrolled keys inherit the IP pin of the admin key that made them.
    for (const key of (res.json() as { keys: Created[] }).keys)
      expect(key.allowed_ips).toEqual(['192.0.2.0/24']);
    const supervisor = await keyOf(acct.accountId, { scopes: ['supervisor'] });
    expectErrorBody(
      await call('POST', '/v1/keys/enroll', supervisor.token, {
        body: { agents: [{ wallet: randomAddress() }] },
      }),
      403,
      'FORBIDDEN',
    );
    expect(await countKeys(acct.accountId)).toBe(4);
  });

  it('accepts 100 agents in one request', async () => {
    const acct = await newAccount();
    const agents = Array.from({ length: 100 }, () => ({ wallet: randomAddress() }));
    const res = await call('POST', '/v1/keys/enroll', acct.sessionToken, { body: { agents } });
    expect(res.statusCode, res.body).toBe(201);
    expect((res.json() as { keys: Created[] }).keys.map((k) => k.wallets?.[0])).toEqual(
      agents.map((a) => a.wallet),
    );
    expect(await countKeys(acct.accountId)).toBe(100);
  });
});

describe('DELETE /v1/keys/{id}', () => {
  it('revokes at once: 200, then the key is refused with 401', async () => {
    const acct = await newAccount();
    const victim = await keyOf(acct.accountId, { scopes: ['supervisor'] });
    expect((await call('GET', '/v1/keys', victim.token)).statusCode).toBe(200);
    const res = await call('DELETE', `/v1/keys/${victim.id}`, acct.sessionToken);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ id: victim.id, revoked: true });
    expectErrorBody(await call('GET', '/v1/keys', victim.token), 401, 'UNAUTHORIZED');
    const row = await t.db.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', victim.id)
      .executeTakeFirstOrThrow();
    expect(row.revoked_at?.toISOString()).toBe(clock.now().toISOString());
  });

  it('lets a supervisor key revoke any key of the account, itself included', async () => {
    const acct = await newAccount();
    const supervisor = await keyOf(acct.accountId, { scopes: ['supervisor'] });
    const admin = await keyOf(acct.accountId, { scopes: ['admin'] });
    const pinned = await keyOf(acct.accountId, { scopes: ['write'], wallets: [randomAddress()] });
    for (const id of [admin.id, pinned.id, supervisor.id]) {
      const res = await call('DELETE', `/v1/keys/${id}`, supervisor.token);
      expect(res.statusCode, res.body).toBe(200);
    }
    expectErrorBody(await call('GET', '/v1/keys', supervisor.token), 401, 'UNAUTHORIZED');
  });

  it('answers 404 for an unknown, foreign, revoked or expired key, changing nothing', async () => {
    const acct = await newAccount();
    const other = await newAccount();
    const foreign = await keyOf(other.accountId, { scopes: ['supervisor'] });
    const revoked = await keyOf(acct.accountId, { revokedAt: clock.now() });
    const expired = await keyOf(acct.accountId, {
      now: new Date(clock.now().getTime() - 2 * DAY_MS),
      expiresAt: clock.now(),
    });
    for (const id of ['key_doesnotexist', foreign.id, revoked.id, expired.id]) {
      expectErrorBody(await call('DELETE', `/v1/keys/${id}`, acct.sessionToken), 404, 'NOT_FOUND');
    }
    expect((await call('GET', '/v1/keys', foreign.token)).statusCode).toBe(200);
  });

  it('refuses read and write keys, and a wallet-pinned supervisor key (its pin cannot cover the target)', async () => {
    const acct = await newAccount();
    const wallet = randomAddress();
    const target = await keyOf(acct.accountId, { scopes: ['write'], wallets: [wallet] });
    for (const scopes of [['read'], ['write']] as const) {
      const k = await keyOf(acct.accountId, { scopes: [...scopes] });
      expectErrorBody(await call('DELETE', `/v1/keys/${target.id}`, k.token), 403, 'FORBIDDEN');
    }
    const pinnedSupervisor = await keyOf(acct.accountId, {
      scopes: ['supervisor'],
      wallets: [randomAddress()],
    });
    expectErrorBody(await call('DELETE', `/v1/keys/${target.id}`, pinnedSupervisor.token), 403, 'FORBIDDEN');
    const row = await t.db.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', target.id)
      .executeTakeFirstOrThrow();
    expect(row.revoked_at).toBeNull();
  });
});

describe('the guard and IP pins', () => {
  it('admits matching IPv4, IPv6, IPv4-mapped and CIDR addresses and refuses others with 403', async () => {
    const acct = await newAccount();
    const made = await call('POST', '/v1/keys', acct.sessionToken, {
      body: {
        scopes: ['supervisor'],
        allowed_ips: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7', '::1'],
      },
    });
    const token = (made.json() as Created).token ?? '';
    for (const ip of [
      '203.0.113.1',
      '203.0.113.255',
      '198.51.100.7',
      '2001:db8::5',
      '2001:db8:ffff::1',
      '::1',
      '::ffff:203.0.113.9',
    ]) {
      const res = await call('GET', '/v1/keys', token, { remoteAddress: ip });
      expect(res.statusCode, `${ip}: ${res.body}`).toBe(200);
    }
    for (const ip of ['203.0.114.1', '198.51.100.8', '2001:db9::1', '10.0.0.1', '::2', '127.0.0.1']) {
      const res = await call('GET', '/v1/keys', token, { remoteAddress: ip });
      expect(expectErrorBody(res, 403, 'FORBIDDEN').message, ip).toMatch(/IP/);
    }
  });

  it('refuses an expired key with 401', async () => {
    const acct = await newAccount();
    const k = await keyOf(acct.accountId, {
      scopes: ['admin'],
      expiresAt: new Date(clock.now().getTime() + 1000),
    });
    expect((await call('GET', '/v1/keys', k.token)).statusCode).toBe(200);
    clock.advance(1000);
    expectErrorBody(await call('GET', '/v1/keys', k.token), 401, 'UNAUTHORIZED');
  });
});

describe('events and audit facts', () => {
  it('records key.created, key.rotated and key.revoked with the network context and no token', async () => {
    const acct = await newAccount();
    const created = await call('POST', '/v1/keys', acct.sessionToken, {
      remoteAddress: '192.0.2.44',
      body: { scopes: ['read'] },
    });
    const key = created.json() as Created;
    const enrolled = await call('POST', '/v1/keys/enroll', acct.sessionToken, {
      body: { agents: [{ wallet: randomAddress() }] },
    });
    const agent = (enrolled.json() as { keys: Created[] }).keys[0];
    const rotated = await call('POST', '/v1/keys/rotate', acct.sessionToken, { body: { key_ids: [key.id] } });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const successor = (rotated.json() as { rotated: { new: Created }[] }).rotated[0]?.new;
    expect((await call('DELETE', `/v1/keys/${agent?.id}`, acct.sessionToken)).statusCode).toBe(200);

    const events = await t.db.db
      .selectFrom('events')
      .selectAll()
      .where('account_id', '=', acct.accountId)
      .orderBy('seq')
      .execute();
    expect(events.map((e) => [e.kind, e.subject])).toEqual([
      ['key.created', key.id],
      ['key.created', agent?.id],
      ['key.rotated', key.id],
      ['key.revoked', agent?.id],
    ]);
    expect(events[0]?.payload).toMatchObject({ key_id: key.id, via: 'create', scopes: ['read'] });
    expect(events[1]?.payload).toMatchObject({ via: 'enroll', wallets: agent?.wallets });
    expect(events[2]?.payload).toMatchObject({
      old_key_id: key.id,
      new_key_id: successor?.id,
      overlap_seconds: 0,
    });
    expect(events[3]?.payload).toMatchObject({ key_id: agent?.id, revoked_by: `session:${acct.sessionId}` });

    const audit = await t.db.db
      .selectFrom('audit_log')
      .leftJoin('network_context', 'network_context.audit_id', 'audit_log.id')
      .select([
        'audit_log.action',
        'audit_log.subject',
        'audit_log.actor',
        'audit_log.details',
        'network_context.client_ip',
        'network_context.user_agent',
      ])
      .where('audit_log.account_id', '=', acct.accountId)
      .orderBy('audit_log.seq')
      .execute();
    expect(audit.map((a) => [a.action, a.subject])).toEqual([
      ['key.created', key.id],
      ['key.created', agent?.id],
      ['key.rotated', key.id],
      ['key.revoked', agent?.id],
    ]);
    for (const a of audit) {
      expect(a.actor).toBe(`session:${acct.sessionId}`);
      expect(a.user_agent).toBe('keys-test/1.0');
    }
    expect(audit[0]?.client_ip).toBe('192.0.2.44');
    const everything = JSON.stringify([events, audit]);
    for (const token of [key.token, agent?.token, successor?.token]) {
      expect(everything).not.toContain(token);
      expect(everything).not.toContain(hashToken(token ?? ''));
    }
  });

  it('writes no event or audit fact when a change is refused', async () => {
    const acct = await newAccount();
    await call('POST', '/v1/keys', acct.sessionToken, { body: { scopes: ['nope'] } });
    await call('POST', '/v1/keys/rotate', acct.sessionToken, { body: { key_ids: ['key_unknown'] } });
    await call('DELETE', '/v1/keys/key_unknown', acct.sessionToken);
    const n = await sql<{
      n: number;
    }>`SELECT (SELECT count(*) FROM events WHERE account_id = ${acct.accountId})
      + (SELECT count(*) FROM audit_log WHERE account_id = ${acct.accountId}) AS n`.execute(t.db.db);
    expect(Number(n.rows[0]?.n)).toBe(0);
  });
});

describe('Idempotency-Key replays', () => {
  it('replays a create with token null and a remediation, making one key', async () => {
    const acct = await newAccount();
    const headers = { 'idempotency-key': 'create-once-1' };
    const body = { name: 'once', scopes: ['write'] };
    const first = await call('POST', '/v1/keys', acct.sessionToken, { body, headers });
    expect(first.statusCode, first.body).toBe(201);
    const original = first.json() as Created;
    expect(original.token).toMatch(/^psk_/);
    expect(original).not.toHaveProperty('remediation');
    const second = await call('POST', '/v1/keys', acct.sessionToken, { body, headers });
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    const replayed = second.json() as Created;
    expect(second.body).not.toContain(original.token);
    expect(replayed).toEqual({ ...original, token: null, remediation: expect.stringMatching(/rotate/) });
    expect(await countKeys(acct.accountId)).toBe(1);
    const stored = await t.db.db.selectFrom('idempotency_keys').select('response_body').execute();
    expect(JSON.stringify(stored)).not.toContain(original.token);
  });

  it('replays enroll, rotate and revoke without tokens and without repeating them', async () => {
    const acct = await newAccount();
    const agents = [{ wallet: randomAddress() }, { wallet: randomAddress() }];
    const enroll = () =>
      call('POST', '/v1/keys/enroll', acct.sessionToken, {
        body: { agents },
        headers: { 'idempotency-key': 'enroll-1' },
      });
    const first = (await enroll()).json() as { keys: Created[] };
    const again = await enroll();
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual({
      keys: first.keys.map((k) => ({ ...k, token: null })),
      remediation: expect.any(String),
    });
    expect(await countKeys(acct.accountId)).toBe(2);

    const ids = first.keys.map((k) => k.id);
    const rotate = () =>
      call('POST', '/v1/keys/rotate', acct.sessionToken, {
        body: { key_ids: ids, overlap_seconds: 60 },
        headers: { 'idempotency-key': 'rotate-1' },
      });
    const r1 = (await rotate()).json() as {
      rotated: { old_id: string; old_expires_at: string; new: Created }[];
    };
    const r2 = await rotate();
    expect(r2.statusCode).toBe(200);
    expect(r2.json()).toEqual({
      rotated: r1.rotated.map((r) => ({ ...r, new: { ...r.new, token: null } })),
      remediation: expect.any(String),
    });
    expect(await countKeys(acct.accountId)).toBe(4);

    const target = r1.rotated[0]?.new.id ?? '';
    const revoke = () =>
      call('DELETE', `/v1/keys/${target}`, acct.sessionToken, { headers: { 'idempotency-key': 'rev-1' } });
    expect((await revoke()).json()).toEqual({ id: target, revoked: true });
    const replay = await revoke();
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });
});

describe('no token material beyond the type prefix', () => {
  /** Every run of 6 characters of a token's secret part (after `psk_`/`pss_`). */
  function secretWindows(token: string): string[] {
    const secret = token.slice(4);
    expect(secret).toHaveLength(43);
    return Array.from({ length: secret.length - 5 }, (_, i) => secret.slice(i, i + 6));
  }
  function expectNoTokenMaterial(what: string, text: string, tokens: readonly string[]): void {
    for (const token of tokens) {
      const found = secretWindows(token).find((w) => text.includes(w));
      expect(found, `${what} contains characters of a token`).toBeUndefined();
    }
  }
  /** A body without the `token` fields that return the new keys' tokens once, by design. */
  const withoutNewTokens = (body: unknown): string =>
    JSON.stringify(body, (field, value: unknown) => (field === 'token' ? undefined : value));

  it('shows none in the list, enroll and rotate answers, their replays, and the export', async () => {
    const acct = await newAccount();
    const tokens: string[] = [acct.sessionToken];
    const created = await call('POST', '/v1/keys', acct.sessionToken, { body: { name: 'made' } });
    tokens.push((created.json() as Created).token ?? '');
    tokens.push((await keyOf(acct.accountId, { name: 'stored' })).token);

    const agents = [{ wallet: randomAddress() }, { wallet: randomAddress() }];
    const enrollOnce = () =>
      call('POST', '/v1/keys/enroll', acct.sessionToken, {
        body: { agents },
        headers: { 'idempotency-key': 'enroll-material' },
      });
    const enrolled = await enrollOnce();
    expect(enrolled.statusCode, enrolled.body).toBe(201);
    const enrolledKeys = (enrolled.json() as { keys: Created[] }).keys;
    tokens.push(...enrolledKeys.map((k) => k.token ?? ''));

    const rotateOnce = () =>
      call('POST', '/v1/keys/rotate', acct.sessionToken, {
        body: { key_ids: enrolledKeys.map((k) => k.id), overlap_seconds: 60 },
        headers: { 'idempotency-key': 'rotate-material' },
      });
    const rotated = await rotateOnce();
    expect(rotated.statusCode, rotated.body).toBe(200);
    const rotatedItems = (rotated.json() as { rotated: { new: Created }[] }).rotated;
    tokens.push(...rotatedItems.map((r) => r.new.token ?? ''));

    // Each new token appears once, in its own `token` field, and nowhere else.
    for (const [i, key] of enrolledKeys.entries()) {
      const others = tokens.filter((tk) => tk !== key.token);
      expectNoTokenMaterial(`enroll item ${i}`, JSON.stringify({ ...key, token: null }), others);
    }
    expectNoTokenMaterial('enroll answer', withoutNewTokens(enrolled.json()), tokens);
    expectNoTokenMaterial('rotate answer', withoutNewTokens(rotated.json()), tokens);
    for (const [what, replay] of [
      ['enroll replay', await enrollOnce()],
      ['rotate replay', await rotateOnce()],
    ] as const) {
      expect(replay.headers['idempotent-replayed'], `${what}: ${replay.statusCode} ${replay.body}`).toBe(
        'true',
      );
      expectNoTokenMaterial(what, replay.body, tokens);
    }

    const list = await call('GET', '/v1/keys', acct.sessionToken);
    expect(list.statusCode).toBe(200);
    expect((list.json() as { keys: Listed[] }).keys).toHaveLength(6);
    expectNoTokenMaterial('the key list', list.body, tokens);

    const exported = await call('GET', '/v1/account/export', acct.sessionToken);
    expect(exported.statusCode, exported.body).toBe(200);
    expect((exported.json() as { api_keys: unknown[] }).api_keys).toHaveLength(6);
    expectNoTokenMaterial('the account export', exported.body, tokens);
  });
});
