// One Idempotency-Key, one effect, however the path is spelled: the router accepts a path with
// any character percent-escaped (hex digits in either case), so the key's record follows the route
// that matched and its decoded parameters, not the raw URL. A retry spelled differently replays.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotencyPath } from '../src/core/http/idempotency.ts';
import { creditPrepaid, readPrepaidBalance } from '../src/modules/billing/index.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { bearer, createAccountWithSession, createKey, type AccountWithSession } from './support/identity.ts';

const RUNS = 60;
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const USD = 1_000_000n;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** `%XX` for each UTF-8 byte of `char`, each hex digit in the case `upper` picks. */
function escape(char: string, upper: (i: number) => boolean): string {
  return [...Buffer.from(char, 'utf8')]
    .map((byte, i) => {
      const hex = byte.toString(16).padStart(2, '0');
      return `%${upper(i) ? hex.toUpperCase() : hex.toLowerCase()}`;
    })
    .join('');
}

/**
 * Another spelling of a plainly spelled path: every character but `/` may be escaped (a
 * character that must be escaped stays escaped), and every escape gets hex digits in random case.
 */
function respell(path: string, flips: boolean[]): string {
  let n = 0;
  const flip = () => flips[n++ % flips.length] ?? false;
  return path
    .split('/')
    .map((segment) =>
      [...decodeURIComponent(segment)]
        .map((char) => {
          const mustEscape = encodeURIComponent(char) !== char;
          return mustEscape || flip() ? escape(char, flip) : char;
        })
        .join(''),
    )
    .join('/');
}

const flipsArb = fc.array(fc.boolean(), { minLength: 1, maxLength: 64 });
/** Path parameter values: mostly id-like, sometimes with characters that must be escaped. */
const paramArb = fc.oneof(
  fc.stringMatching(/^[a-z]{3}_[0-9a-z]{20}$/),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter((s) => !s.includes('\u0000')),
);

describe('the idempotency record follows the route, not the spelling of the URL', () => {
  it('every spelling of every mutation route that the router accepts maps to the same record', () => {
    const mutations = t.app.routes.routes.filter((r) => r.idempotent ?? r.method !== 'GET');
    expect(mutations.length).toBeGreaterThan(20);
    for (const route of mutations) {
      const names = [...route.url.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
      fc.assert(
        fc.property(
          fc.array(paramArb, { minLength: names.length, maxLength: names.length }),
          flipsArb,
          (values, flips) => {
            const params = Object.fromEntries(names.map((name, i) => [name, values[i]]));
            const canonical = idempotencyPath(route.url, params);
            const spelled = respell(canonical, flips);
            const plain = t.app.fastify.findRoute({ method: route.method, url: canonical });
            const other = t.app.fastify.findRoute({ method: route.method, url: spelled });
            // Both spellings reach this route (a fixed sibling may win a value like `enroll`).
            fc.pre(plain !== null && plain.handler === findHandler(route.method, route.url));
            expect(other?.handler, `${route.method} ${spelled}`).toBe(plain.handler);
            expect(other?.params).toEqual(params);
            expect(idempotencyPath(route.url, other?.params)).toBe(canonical);
          },
        ),
        { numRuns: RUNS, seed },
      );
    }
  });
});

/** The handler the router holds for a route pattern (its own canonical spelling with plain values). */
function findHandler(method: string, pattern: string): unknown {
  const url = pattern.replace(/\{(\w+)\}/g, 'x1x');
  return t.app.fastify.findRoute({ method: method as 'GET', url })?.handler;
}

describe('a retry spelled differently replays over HTTP', () => {
  let acct: AccountWithSession;
  beforeAll(async () => {
    acct = await createAccountWithSession(t.db.db);
  });

  const countKeys = async (accountId: string) =>
    (await t.db.db.selectFrom('api_keys').select('id').where('account_id', '=', accountId).execute()).length;

  it('POST /v1/feedback then POST /v1/f%65edback with one key: replayed, the fee debited once', async () => {
    const payer = await createAccountWithSession(t.db.db);
    await t.db.db.transaction().execute((tx) =>
      creditPrepaid(tx, t.deps.clock, {
        accountId: payer.accountId,
        amountMicroUsd: 5n * USD,
        settlementId: `test:fund:${payer.accountId}`,
      }),
    );
    const send = (url: string) =>
      t.app.fastify.inject({
        method: 'POST',
        url,
        headers: { ...bearer(payer.sessionToken), 'idempotency-key': 'feedback-once' },
        payload: { title: 'Spell it any way', body: 'One key, one feature request, one fee.' },
      });
    const first = await send('/v1/feedback');
    expect(first.statusCode, first.body).toBe(201);
    const again = await send('/v1/f%65edback');
    expect(again.statusCode, again.body).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect((await readPrepaidBalance(t.db.db, payer.accountId)).balanceMicro).toBe(4n * USD);
    const requests = await t.db.db
      .selectFrom('feature_requests')
      .select('id')
      .where('account_id', '=', payer.accountId)
      .execute();
    expect(requests).toHaveLength(1);
  });

  it('POST /v1/keys then POST /v1/k%65ys with one key: one key exists', async () => {
    const owner = await createAccountWithSession(t.db.db);
    const send = (url: string) =>
      t.app.fastify.inject({
        method: 'POST',
        url,
        headers: { ...bearer(owner.sessionToken), 'idempotency-key': 'keys-once' },
        payload: { name: 'spelled', scopes: ['read'] },
      });
    const first = await send('/v1/keys');
    expect(first.statusCode, first.body).toBe(201);
    for (const url of ['/v1/k%65ys', '/v1/%6Beys', '/v1/%6beys']) {
      const again = await send(url);
      expect(again.statusCode, `${url}: ${again.body}`).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
    }
    expect(await countKeys(owner.accountId)).toBe(1);
  });

  it('random spellings of POST /v1/keys and DELETE /v1/keys/{id} replay the first answer', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(flipsArb, { minLength: 1, maxLength: 4 }), async (spellings) => {
        n += 1;
        const key = `spelling-${n}`;
        const headers = { ...bearer(acct.sessionToken), 'idempotency-key': key };
        const before = await countKeys(acct.accountId);
        const create = (url: string) =>
          t.app.fastify.inject({ method: 'POST', url, headers, payload: { name: `k${n}` } });
        const created = await create('/v1/keys');
        expect(created.statusCode, created.body).toBe(201);
        const { id } = created.json() as { id: string };
        for (const flips of spellings) {
          const again = await create(respell('/v1/keys', flips));
          expect(again.headers['idempotent-replayed']).toBe('true');
          expect(again.json()).toMatchObject({ id, token: null });
        }
        expect(await countKeys(acct.accountId)).toBe(before + 1);

        const revoke = (url: string) => t.app.fastify.inject({ method: 'DELETE', url, headers });
        const revoked = await revoke(`/v1/keys/${id}`);
        expect(revoked.statusCode, revoked.body).toBe(200);
        for (const flips of spellings) {
          const again = await revoke(respell(`/v1/keys/${id}`, flips));
          expect(again.statusCode, again.body).toBe(200);
          expect(again.headers['idempotent-replayed']).toBe('true');
        }
      }),
      { numRuns: 15, seed },
    );
  });

  it('a different key id under one Idempotency-Key is still a different request', async () => {
    const a = await createKey(t.db.db, acct.accountId, { scopes: ['read'] });
    const b = await createKey(t.db.db, acct.accountId, { scopes: ['read'] });
    const headers = { ...bearer(acct.sessionToken), 'idempotency-key': 'two-ids' };
    const first = await t.app.fastify.inject({ method: 'DELETE', url: `/v1/keys/${a.id}`, headers });
    const second = await t.app.fastify.inject({ method: 'DELETE', url: `/v1/keys/${b.id}`, headers });
    expect(first.statusCode).toBe(200);
    expect(second.statusCode, second.body).toBe(200);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.json()).toMatchObject({ id: b.id, revoked: true });
  });
});
