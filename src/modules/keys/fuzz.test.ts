// Random bodies to create, enroll and rotate: never a 5xx, every refusal is the spec's error body
// and leaves the account's keys, events and audit facts exactly as they were. A body that happens
// to be valid must answer 2xx with exactly the keys it reports.

import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.ts';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { checkErrorShape } from '../../../test/support/error-body.ts';
import {
  bearer,
  createAccountWithSession,
  createKey,
  randomAddress,
  type AccountWithSession,
} from '../../../test/support/identity.ts';

const RUNS = 120;
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const clock = new ManualClock('2026-05-01T00:00:00.000Z');
let t: TestApp;
let acct: AccountWithSession;
/** Placeholders in generated key_ids, replaced by real ids: two rotatable keys and three that are not. */
const ids: Record<string, string> = {};
const liveKey = async () =>
  (await createKey(t.db.db, acct.accountId, { scopes: ['write'], now: clock.now() })).id;

beforeAll(async () => {
  t = await createTestApp({ clock });
  acct = await createAccountWithSession(t.db.db, { now: clock.now() });
  const other = await createAccountWithSession(t.db.db, { now: clock.now() });
  ids['LIVE'] = await liveKey();
  ids['LIVE2'] = await liveKey();
  ids['FOREIGN'] = (await createKey(t.db.db, other.accountId, { now: clock.now() })).id;
  ids['REVOKED'] = (
    await createKey(t.db.db, acct.accountId, { now: clock.now(), revokedAt: clock.now() })
  ).id;
  ids['EXPIRED'] = (
    await createKey(t.db.db, acct.accountId, {
      now: new Date(clock.now().getTime() - 1000),
      expiresAt: clock.now(),
    })
  ).id;
});
afterAll(async () => {
  await t?.close();
});

async function state(): Promise<{ text: string; keys: number }> {
  const keys = await t.db.db
    .selectFrom('api_keys')
    .selectAll()
    .where('account_id', '=', acct.accountId)
    .orderBy('id')
    .execute();
  const counts = await sql<{ events: number; audit: number }>`
    SELECT (SELECT count(*)::int FROM events WHERE account_id = ${acct.accountId}) AS events,
           (SELECT count(*)::int FROM audit_log WHERE account_id = ${acct.accountId}) AS audit`.execute(
    t.db.db,
  );
  return { text: JSON.stringify({ keys, counts: counts.rows[0] }), keys: keys.length };
}

const WALLETS = [randomAddress(), randomAddress(), randomAddress()];
const anyJson = fc.jsonValue({ maxDepth: 2 });
const address = fc.stringMatching(/^0x[0-9a-f]{40}$/);
const upper = (w: string) => `0x${w.slice(2).toUpperCase()}`;
const SCOPES = ['read', 'write', 'admin', 'supervisor'] as const;

// Valid parts, so that most attempts get past the schema and reach the service's own checks.
const goodName = fc.stringMatching(/^[a-z0-9 ._-]{1,100}$/);
const goodScopes = fc.uniqueArray(fc.constantFrom(...SCOPES), { minLength: 1, maxLength: 4 });
const goodDays = fc.integer({ min: 1, max: 365 });
const goodIp = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 32 })).map(([a, p]) => `${a}/${p}`),
  fc.tuple(fc.ipV6(), fc.integer({ min: 0, max: 128 })).map(([a, p]) => `${a}/${p}`),
);
const goodIps = fc.uniqueArray(goodIp, { minLength: 1, maxLength: 5 });
const goodWallets = fc.uniqueArray(fc.oneof(fc.constantFrom(...WALLETS), address), {
  minLength: 1,
  maxLength: 3,
});

// Bad parts: each names one way a field can be wrong.
const badIp = fc.oneof(
  fc.constantFrom(
    '10.0.0.0/33',
    '2001:db8::/129',
    'fe80::1%lo',
    '1.2.3',
    '010.0.0.1',
    '10.0.0.1/',
    '',
    '1.2.3.4/8/8',
  ),
  fc.string({ maxLength: 70 }),
);
const badWallet = fc.oneof(fc.stringMatching(/^0x[0-9a-fA-F]{0,39}$/), fc.string({ maxLength: 50 }), anyJson);
const badScope = fc.oneof(fc.constantFrom('READ', 'root', '', 'admin '), fc.string(), anyJson);
const badDays = fc.oneof(
  fc.constantFrom(0, 366, -1, 1.5, '30', null, Number.MAX_SAFE_INTEGER + 2),
  fc.integer({ min: 366, max: 10_000 }),
  fc.double({ noNaN: true }).filter((d) => !Number.isInteger(d)),
);
const badName = fc.oneof(fc.constantFrom('', 'x'.repeat(101), 'tab\there', 42, null), anyJson);
const unknownField = fc.tuple(fc.constantFrom('scope', 'wallet', 'expires', 'extra', 'ip', 'token'), anyJson);

type Body = Record<string, unknown>;
type Corruption = (body: Body) => unknown;
const insertAt = <T>(list: T[], item: T, index: number) => [
  ...list.slice(0, index % (list.length + 1)),
  item,
  ...list.slice(index % (list.length + 1)),
];
const pos = fc.nat({ max: 10 });

const createValid = fc.record(
  {
    name: goodName,
    scopes: goodScopes,
    expires_in_days: goodDays,
    allowed_ips: goodIps,
    wallets: goodWallets,
  },
  { requiredKeys: [] },
);
const createCorruption: fc.Arbitrary<Corruption> = fc.oneof(
  fc
    .tuple(badScope, pos)
    .map(([bad, i]) => (b: Body) => ({ ...b, scopes: insertAt((b['scopes'] as string[]) ?? [], bad, i) })),
  fc.constant((b: Body) => ({ ...b, scopes: [] })),
  fc.constant((b: Body) => ({ ...b, scopes: ['read', 'write', 'read'] })),
  fc.tuple(badIp, pos).map(([bad, i]) => (b: Body) => ({
    ...b,
    allowed_ips: insertAt((b['allowed_ips'] as string[]) ?? [], bad, i),
  })),
  fc.tuple(goodIp, pos).map(([ip, i]) => (b: Body) => ({ ...b, allowed_ips: insertAt([ip], ` ${ip}`, i) })),
  fc.array(goodIp, { minLength: 33, maxLength: 34 }).map((ips) => (b: Body) => ({ ...b, allowed_ips: ips })),
  fc.constant((b: Body) => ({ ...b, allowed_ips: [] })),
  fc
    .tuple(badWallet, pos)
    .map(([bad, i]) => (b: Body) => ({ ...b, wallets: insertAt((b['wallets'] as unknown[]) ?? [], bad, i) })),
  fc
    .tuple(fc.constantFrom(...WALLETS), pos)
    .map(([w, i]) => (b: Body) => ({ ...b, wallets: insertAt([w], upper(w), i) })),
  fc.constant((b: Body) => ({ ...b, wallets: [] })),
  badDays.map((d) => (b: Body) => ({ ...b, expires_in_days: d })),
  badName.map((n) => (b: Body) => ({ ...b, name: n })),
  fc.constant((b: Body) => ({ ...b, scopes: ['admin'], wallets: b['wallets'] ?? [WALLETS[0]] })),
  unknownField.map(([k, v]) => (b: Body) => ({ ...b, [k]: v })),
  anyJson.map((v) => () => v),
);

const agentValid = fc.record(
  {
    wallet: fc.oneof(address, fc.constantFrom(...WALLETS)),
    name: goodName,
    scopes: fc.uniqueArray(fc.constantFrom('read', 'write', 'supervisor'), { minLength: 1, maxLength: 3 }),
    expires_in_days: goodDays,
  },
  { requiredKeys: ['wallet'] },
);
const enrollValid = fc.record({ agents: fc.array(agentValid, { minLength: 1, maxLength: 4 }) });
const onAgent = (i: number, change: (agent: Body) => unknown) => (b: Body) => {
  const agents = [...(b['agents'] as Body[])];
  const at = i % agents.length;
  agents[at] = change(agents[at] ?? {}) as Body;
  return { ...b, agents };
};
const enrollCorruption: fc.Arbitrary<Corruption> = fc.oneof(
  fc.tuple(pos, pos).map(([i, j]) => (b: Body) => {
    const agents = b['agents'] as Body[];
    const copy = agents[i % agents.length] ?? {};
    return { ...b, agents: insertAt(agents, { wallet: upper(String(copy['wallet'])) }, j) };
  }),
  fc.tuple(pos, badWallet).map(([i, w]) => onAgent(i, (a) => ({ ...a, wallet: w }))),
  fc.tuple(pos, badScope).map(([i, s]) => onAgent(i, (a) => ({ ...a, scopes: [s] }))),
  pos.map((i) => onAgent(i, (a) => ({ ...a, scopes: ['read', 'admin'] }))),
  fc.tuple(pos, badDays).map(([i, d]) => onAgent(i, (a) => ({ ...a, expires_in_days: d }))),
  fc.tuple(pos, badName).map(([i, n]) => onAgent(i, (a) => ({ ...a, name: n }))),
  fc.tuple(pos, unknownField).map(([i, [k, v]]) => onAgent(i, (a) => ({ ...a, [k]: v }))),
  pos.map((i) => onAgent(i, (a) => ({ name: a['name'] ?? 'no wallet' }))),
  fc.array(agentValid, { minLength: 101, maxLength: 101 }).map((agents) => () => ({ agents })),
  fc.constant(() => ({ agents: [] })),
  unknownField.map(([k, v]) => (b: Body) => ({ ...b, [k]: v })),
  anyJson.map((v) => () => v),
);

const rotateValid = fc.record(
  {
    key_ids: fc.uniqueArray(fc.constantFrom('LIVE', 'LIVE2'), { minLength: 1, maxLength: 2 }),
    overlap_seconds: fc.integer({ min: 0, max: 604_800 }),
  },
  { requiredKeys: ['key_ids'] },
);
const rotateCorruption: fc.Arbitrary<Corruption> = fc.oneof(
  fc
    .tuple(fc.constantFrom('key_unknown', 'FOREIGN', 'REVOKED', 'EXPIRED', ''), pos)
    .map(([id, i]) => (b: Body) => ({ ...b, key_ids: insertAt(b['key_ids'] as string[], id, i) })),
  fc
    .tuple(fc.oneof(fc.string({ maxLength: 120 }), anyJson), pos)
    .map(([id, i]) => (b: Body) => ({ ...b, key_ids: insertAt(b['key_ids'] as unknown[], id, i) })),
  fc.constant((b: Body) => ({ ...b, key_ids: [...(b['key_ids'] as string[]), 'LIVE'] })),
  fc.constant((b: Body) => ({ ...b, key_ids: [] })),
  fc
    .oneof(
      fc.integer({ min: -100, max: -1 }),
      fc.integer({ min: 604_801, max: 10_000_000 }),
      fc.double({ noNaN: true }).filter((d) => !Number.isInteger(d)),
      anyJson,
    )
    .map((o) => (b: Body) => ({ ...b, overlap_seconds: o })),
  unknownField.map(([k, v]) => (b: Body) => ({ ...b, [k]: v })),
  anyJson.map((v) => () => v),
);

/** Mostly one corruption of a valid body; sometimes the valid body itself. */
const corrupt = (valid: fc.Arbitrary<Body>, corruption: fc.Arbitrary<Corruption>) =>
  fc.tuple(valid, fc.option(corruption, { freq: 6 })).map(([body, change]) => (change ? change(body) : body));

const createBody = corrupt(createValid, createCorruption);
const enrollBody = corrupt(enrollValid, enrollCorruption);
const rotateBody = corrupt(rotateValid, rotateCorruption);

/** Sends one body and checks the outcome against the state before; returns keys it reported. */
async function attempt(url: string, body: unknown): Promise<void> {
  const before = await state();
  const res = await t.app.fastify.inject({
    method: 'POST',
    url,
    headers: { ...bearer(acct.sessionToken), 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  expect(res.statusCode, res.body).toBeLessThan(500);
  const parsed = JSON.parse(res.body) as Record<string, unknown>;
  if (res.statusCode >= 400) {
    checkErrorShape(parsed, res.headers['x-request-id'], String(parsed['code']));
    expect([400, 404]).toContain(res.statusCode);
    expect((await state()).text).toBe(before.text);
    return;
  }
  // A body that happened to be valid: exactly the keys it reports were made.
  const made =
    url === '/v1/keys'
      ? 1
      : url === '/v1/keys/enroll'
        ? (parsed['keys'] as unknown[]).length
        : (parsed['rotated'] as unknown[]).length;
  expect((await state()).keys).toBe(before.keys + made);
  if (url === '/v1/keys/rotate') {
    ids['LIVE'] = await liveKey();
    ids['LIVE2'] = await liveKey();
  }
}

describe(`fuzzed key requests (FUZZ_SEED=${seed})`, () => {
  it('create: never a 5xx, refusals change nothing', async () => {
    await fc.assert(
      fc.asyncProperty(createBody, (body) => attempt('/v1/keys', body)),
      { numRuns: RUNS, seed },
    );
  });

  it('enroll: never a 5xx, refusals change nothing', async () => {
    await fc.assert(
      fc.asyncProperty(enrollBody, (body) => attempt('/v1/keys/enroll', body)),
      { numRuns: RUNS, seed },
    );
  });

  it('rotate: never a 5xx, refusals change nothing', async () => {
    await fc.assert(
      fc.asyncProperty(rotateBody, (body) => {
        const keyIds = body && typeof body === 'object' ? (body as { key_ids?: unknown }).key_ids : undefined;
        const resolved = Array.isArray(keyIds)
          ? { ...(body as Body), key_ids: keyIds.map((id) => (typeof id === 'string' && ids[id]) || id) }
          : body;
        return attempt('/v1/keys/rotate', resolved);
      }),
      { numRuns: RUNS, seed },
    );
  });
});
