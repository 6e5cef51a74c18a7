// POST /v1/keys/rotate: grants copied server-side, the old key retired at once or after the
// overlap (never past its own expiry), all or nothing, and one winner among concurrent rotations.

import pg from 'pg';
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
} from '../../../test/support/identity.ts';

const DAY_MS = 86_400_000;
const clock = new ManualClock('2026-04-01T00:00:00.000Z');
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ clock, poolSize: 12 });
});
afterAll(async () => {
  await t?.close();
});

interface NewKey {
  id: string;
  token: string | null;
  name: string | null;
  scopes: string[];
  created_at: string;
  expires_at: string;
  allowed_ips: string[] | null;
  wallets: string[] | null;
}
interface Rotated {
  old_id: string;
  old_expires_at: string;
  new: NewKey;
}

function rotate(token: string, body: unknown, remoteAddress?: string) {
  return t.app.fastify.inject({
    method: 'POST',
    url: '/v1/keys/rotate',
    headers: bearer(token),
    payload: body as object,
    ...(remoteAddress ? { remoteAddress } : {}),
  });
}
/** A supervisor-scoped request any unpinned key with supervisor or admin can make. */
const probe = (token: string) =>
  t.app.fastify.inject({ method: 'GET', url: '/v1/keys', headers: bearer(token) });
const at = (ms: number) => new Date(clock.now().getTime() + ms);
const newAccount = () => createAccountWithSession(t.db.db, { now: clock.now() });
const row = (id: string) =>
  t.db.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

async function snapshot(accountId: string): Promise<string> {
  const rows = await t.db.db
    .selectFrom('api_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
  const events = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM events WHERE account_id = ${accountId}`.execute(t.db.db);
  return JSON.stringify({ rows, events: events.rows[0]?.n });
}

describe('POST /v1/keys/rotate', () => {
  it('replaces each key by one with the same name, scopes and pins, and the same lifetime from now', async () => {
    const acct = await newAccount();
    const wallets = [randomAddress(), randomAddress()];
    const a = await createKey(t.db.db, acct.accountId, {
      name: 'agent',
      scopes: ['write', 'supervisor'],
      wallets,
      allowedIps: ['203.0.113.0/24', '2001:db8::1'],
      now: at(-10 * DAY_MS),
      expiresAt: at(20 * DAY_MS),
    });
    const b = await createKey(t.db.db, acct.accountId, {
      scopes: ['admin'],
      now: at(-DAY_MS),
      expiresAt: at(400 * DAY_MS),
    });
    const res = await rotate(acct.sessionToken, { key_ids: [a.id, b.id] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const { rotated } = res.json() as { rotated: Rotated[] };
    expect(Object.keys(res.json() as object)).toEqual(['rotated']);
    expect(rotated.map((r) => r.old_id)).toEqual([a.id, b.id]);
    const [ra, rb] = rotated;
    expect(Object.keys(ra ?? {}).sort()).toEqual(['new', 'old_expires_at', 'old_id']);
    expect(Object.keys(ra?.new ?? {}).sort()).toEqual([
      'allowed_ips',
      'created_at',
      'expires_at',
      'id',
      'name',
      'scopes',
      'token',
      'wallets',
    ]);
    expect(ra?.new).toMatchObject({
      name: 'agent',
      scopes: ['write', 'supervisor'],
      wallets,
      allowed_ips: ['203.0.113.0/24', '2001:db8::1'],
      created_at: clock.now().toISOString(),
      // The old key lived 30 days; so does its successor, from now.
      expires_at: at(30 * DAY_MS).toISOString(),
    });
    expect(ra?.new.token).toMatch(/^psk_[A-Za-z0-9_-]{43}$/);
    // A 401-day lifetime is capped at 365 days.
    expect(rb?.new).toMatchObject({ scopes: ['admin'], wallets: null, allowed_ips: null });
    expect(rb?.new.expires_at).toBe(at(365 * DAY_MS).toISOString());
    // Overlap 0: both old keys are retired now.
    expect(ra?.old_expires_at).toBe(clock.now().toISOString());
    for (const r of rotated) {
      const old = await row(r.old_id);
      expect(old.revoked_at?.toISOString()).toBe(clock.now().toISOString());
      expect(old.rotated_to).toBe(r.new.id);
      expect((await row(r.new.id)).rotated_from).toBe(r.old_id);
    }
    expectErrorBody(await probe(b.token), 401, 'UNAUTHORIZED');
    expect((await probe(rb?.new.token ?? '')).statusCode).toBe(200);
  });

  it('keeps the old key working through the overlap and refuses it after', async () => {
    const acct = await newAccount();
    const old = await createKey(t.db.db, acct.accountId, { scopes: ['supervisor'], now: clock.now() });
    const res = await rotate(acct.sessionToken, { key_ids: [old.id], overlap_seconds: 3600 });
    expect(res.statusCode, res.body).toBe(200);
    const [r] = (res.json() as { rotated: Rotated[] }).rotated;
    expect(r?.old_expires_at).toBe(at(3600_000).toISOString());
    const fresh = r?.new.token ?? '';
    const listed = (await probe(fresh)).json() as {
      keys: { id: string; status: string; rotated_to: string | null }[];
    };
    expect(listed.keys.find((k) => k.id === old.id)).toMatchObject({
      status: 'active',
      rotated_to: r?.new.id,
    });
    clock.advance(3599_000);
    expect((await probe(old.token)).statusCode).toBe(200);
    clock.advance(1000);
    expectErrorBody(await probe(old.token), 401, 'UNAUTHORIZED');
    expect((await probe(fresh)).statusCode).toBe(200);
  });

  it('never extends the old key past its own expiry', async () => {
    const acct = await newAccount();
    const old = await createKey(t.db.db, acct.accountId, {
      scopes: ['supervisor'],
      now: at(-DAY_MS),
      expiresAt: at(600_000),
    });
    const res = await rotate(acct.sessionToken, { key_ids: [old.id], overlap_seconds: 604_800 });
    expect(res.statusCode, res.body).toBe(200);
    const [r] = (res.json() as { rotated: Rotated[] }).rotated;
    expect(r?.old_expires_at).toBe(at(600_000).toISOString());
    expect((await row(old.id)).expires_at.toISOString()).toBe(at(600_000).toISOString());
    clock.advance(599_000);
    expect((await probe(old.token)).statusCode).toBe(200);
    clock.advance(1000);
    expectErrorBody(await probe(old.token), 401, 'UNAUTHORIZED');
  });

  it('answers 404 and changes nothing when any id is unknown, foreign, revoked, expired or already rotated', async () => {
    const acct = await newAccount();
    const other = await newAccount();
    const good = await createKey(t.db.db, acct.accountId, { scopes: ['supervisor'], now: clock.now() });
    const foreign = await createKey(t.db.db, other.accountId, { now: clock.now() });
    const revoked = await createKey(t.db.db, acct.accountId, { now: clock.now(), revokedAt: clock.now() });
    const expired = await createKey(t.db.db, acct.accountId, {
      now: at(-2 * DAY_MS),
      expiresAt: clock.now(),
    });
    const retiring = await createKey(t.db.db, acct.accountId, { now: clock.now(), rotatedTo: good.id });
    const before = await snapshot(acct.accountId);
    const otherBefore = await snapshot(other.accountId);
    for (const bad of ['key_unknown', foreign.id, revoked.id, expired.id, retiring.id]) {
      const res = await rotate(acct.sessionToken, { key_ids: [good.id, bad], overlap_seconds: 60 });
      const err = expectErrorBody(res, 404, 'NOT_FOUND');
      expect(err.message).toContain(bad);
      expect(err.message).not.toContain(good.id);
    }
    const all = await rotate(acct.sessionToken, { key_ids: [revoked.id, good.id, expired.id] });
    expect(expectErrorBody(all, 404, 'NOT_FOUND').message).toMatch(
      new RegExp(`${revoked.id}, ${expired.id}`),
    );
    expect(await snapshot(acct.accountId)).toBe(before);
    expect(await snapshot(other.accountId)).toBe(otherBefore);
    expect((await probe(good.token)).statusCode).toBe(200);
  });

  it.each([
    ['no ids', { key_ids: [] }, 'key_ids'],
    ['a repeated id', { key_ids: ['key_a', 'key_a'] }, 'key_ids'],
    ['101 ids', { key_ids: Array.from({ length: 101 }, (_, i) => `key_${i}`) }, 'key_ids'],
    ['a negative overlap', { key_ids: ['key_a'], overlap_seconds: -1 }, 'overlap_seconds'],
    ['an overlap over 7 days', { key_ids: ['key_a'], overlap_seconds: 604_801 }, 'overlap_seconds'],
    ['a fractional overlap', { key_ids: ['key_a'], overlap_seconds: 1.5 }, 'overlap_seconds'],
    ['an unknown field', { key_ids: ['key_a'], overlap: 5 }, 'unknown field overlap'],
    ['no key_ids', {}, 'key_ids is required'],
  ])('refuses %s with 400', async (_what, body, field) => {
    const acct = await newAccount();
    expect(expectErrorBody(await rotate(acct.sessionToken, body), 400, 'INVALID_REQUEST').message).toContain(
      field,
    );
  });

  it('lets a key rotate only keys within itself, and only with admin scope', async () => {
    const acct = await newAccount();
    const from = '203.0.113.5';
    const admin = await createKey(t.db.db, acct.accountId, {
      scopes: ['admin'],
      allowedIps: ['203.0.113.0/24'],
      now: clock.now(),
    });
    const inside = await createKey(t.db.db, acct.accountId, {
      allowedIps: ['203.0.113.8/29'],
      now: clock.now(),
    });
    const anywhere = await createKey(t.db.db, acct.accountId, { now: clock.now() });
    const before = await snapshot(acct.accountId);
    const refused = await rotate(admin.token, { key_ids: [inside.id, anywhere.id] }, from);
    expect(expectErrorBody(refused, 403, 'FORBIDDEN').message).toContain(anywhere.id);
    expect(await snapshot(acct.accountId)).toBe(before);
    const ok = await rotate(admin.token, { key_ids: [inside.id] }, from);
    expect(ok.statusCode, ok.body).toBe(200);
    expect((ok.json() as { rotated: Rotated[] }).rotated[0]?.new.allowed_ips).toEqual(['203.0.113.8/29']);
    // An admin key may rotate itself; the successor keeps its IP pin.
    const self = await rotate(admin.token, { key_ids: [admin.id] }, from);
    expect(self.statusCode, self.body).toBe(200);
    expectErrorBody(await probe(admin.token), 401, 'UNAUTHORIZED');

    for (const scopes of [['supervisor'], ['write'], ['read']] as const) {
      const k = await createKey(t.db.db, acct.accountId, { scopes: [...scopes], now: clock.now() });
      expectErrorBody(await rotate(k.token, { key_ids: [k.id] }), 403, 'FORBIDDEN');
    }
  });

  it('sends the credential-changed notification on rotation and revocation (PostgreSQL)', async (ctx) => {
    if (t.database.kind !== 'postgres' || !t.database.url) return ctx.skip();
    const listener = new pg.Client({ connectionString: t.database.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => {
      if (n.channel === 'purser_credentials' && n.payload) heard.push(n.payload);
    });
    try {
      await listener.query('LISTEN purser_credentials');
      const acct = await newAccount();
      const a = await createKey(t.db.db, acct.accountId, { now: clock.now() });
      const b = await createKey(t.db.db, acct.accountId, { now: clock.now() });
      expect((await rotate(acct.sessionToken, { key_ids: [a.id], overlap_seconds: 30 })).statusCode).toBe(
        200,
      );
      const del = await t.app.fastify.inject({
        method: 'DELETE',
        url: `/v1/keys/${b.id}`,
        headers: bearer(acct.sessionToken),
      });
      expect(del.statusCode).toBe(200);
      // A refused change rolls back, and its notification is never delivered.
      expect((await rotate(acct.sessionToken, { key_ids: [b.id] })).statusCode).toBe(404);
      await vi.waitFor(() => expect(heard).toEqual([a.id, b.id]));
    } finally {
      await listener.end();
    }
  });

  it('lets exactly one of 10 concurrent rotations of a key win (PostgreSQL)', async (ctx) => {
    if (t.database.kind !== 'postgres') return ctx.skip();
    for (const overlap of [0, 300]) {
      const acct = await newAccount();
      const old = await createKey(t.db.db, acct.accountId, { scopes: ['write'], now: clock.now() });
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          rotate(acct.sessionToken, { key_ids: [old.id], overlap_seconds: overlap }),
        ),
      );
      const statuses = results.map((r) => r.statusCode).sort();
      expect(statuses, results.map((r) => r.body).join('\n')).toEqual([
        200, 404, 404, 404, 404, 404, 404, 404, 404, 404,
      ]);
      const successors = await t.db.db
        .selectFrom('api_keys')
        .select('id')
        .where('rotated_from', '=', old.id)
        .execute();
      expect(successors).toHaveLength(1);
      expect((await row(old.id)).rotated_to).toBe(successors[0]?.id);
      const events = await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM events WHERE subject = ${old.id}`.execute(t.db.db);
      expect(events.rows[0]?.n).toBe(1);
    }
  });
});
