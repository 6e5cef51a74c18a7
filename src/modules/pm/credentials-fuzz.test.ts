// Venue-credential intake under random bodies, and its races on PostgreSQL.
//
// Fuzz: bodies mixing well-formed and malformed values of every field (and fields of the other
// venue, and unknown ones) against the CLOB and Kalshi fakes. Every answer is 201 or a clean
// refusal with the error body; nothing is stored unless 201; no answer ever contains a secret the
// body carried.
//
// Races (PostgreSQL only; PGlite runs one transaction at a time): parallel uses of one credential
// are each counted once and raise one burst alert; parallel revocations revoke once.

import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { checkErrorShape } from '../../../test/support/error-body.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import { createPmVenuePorts } from '../../adapters/pm-venue/index.ts';
import { testConfig } from '../../config.ts';
import { systemClock } from '../../core/clock.ts';
import { startClobFake, type ClobFake } from '../../devnet/fakes/clob.ts';
import { startKalshiFake, type KalshiFake } from '../../devnet/fakes/kalshi.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
let t: TestApp;
let clob: ClobFake;
let kalshi: KalshiFake;

const kalshiKeyId = randomUUID();
const kalshiPem = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

beforeAll(async () => {
  clob = await startClobFake();
  kalshi = await startKalshiFake();
  const config = testConfig();
  config.pm = { ...config.pm, watch: { burstMinPerMinute: 20, burstFactor: 10 } };
  t = await createTestApp({
    config,
    poolSize: 12,
    deps: {
      pmVenues: createPmVenuePorts({
        polymarketClobUrl: clob.url,
        kalshiApiUrl: kalshi.baseUrl,
        timeoutMs: 5_000,
        clock: systemClock,
      }),
    },
  });
});
afterAll(async () => {
  await t?.close();
  await clob?.stop();
  await kalshi?.stop();
});

const hex = (bytes: number) =>
  fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => `0x${Buffer.from(b).toString('hex')}`);
const garbage = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.integer(),
  fc.constant(null),
  fc.boolean(),
  fc.array(fc.string(), { maxLength: 3 }),
);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });

const bodies = fc.record(
  {
    venue: fc.oneof(fc.constantFrom('polymarket', 'kalshi'), fc.string({ maxLength: 12 })),
    label: maybe(fc.oneof(fc.string({ maxLength: 120 }), fc.constant(null))),
    signature_type: maybe(fc.oneof(fc.constantFrom(0, 1, 2, 3, -1), fc.integer(), garbage)),
    funder: maybe(fc.oneof(hex(20), garbage)),
    signer_address: maybe(fc.oneof(hex(20), garbage)),
    signer_key: maybe(fc.oneof(hex(32), hex(31), fc.constant(`0x${'0'.repeat(64)}`), garbage)),
    api_key: maybe(fc.oneof(fc.uuid(), garbage)),
    api_secret: maybe(
      fc.oneof(
        fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('base64')),
        garbage,
      ),
    ),
    api_passphrase: maybe(
      fc.oneof(
        hex(32).map((h) => h.slice(2)),
        garbage,
      ),
    ),
    api_nonce: maybe(fc.oneof(fc.nat(), fc.integer({ min: -5, max: -1 }), garbage)),
    private_key_pem: maybe(
      fc.oneof(fc.constant(kalshiPem), fc.string({ minLength: 100, maxLength: 300 }), garbage),
    ),
    extra: maybe(fc.stringMatching(/^[a-z_]{3,12}$/)),
  },
  { requiredKeys: ['venue'] },
);

/** The values of a body a user would call secret: none may appear in the answer. */
function secretsOf(body: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const field of ['signer_key', 'api_secret', 'api_passphrase', 'api_key']) {
    const v = body[field];
    if (typeof v === 'string' && v.length >= 16)
      out.push(field === 'signer_key' ? v.slice(2).toLowerCase() : v);
  }
  if (typeof body.private_key_pem === 'string') {
    out.push(...body.private_key_pem.split('\n').filter((l) => l.length >= 40));
  }
  return out;
}

describe('POST /v1/pm/credentials under random bodies', () => {
  it('answers 201 or a clean refusal, stores nothing on refusal, and never echoes a secret', async () => {
    const { accountId, sessionToken } = await createAccountWithSession(t.db.db);
    kalshi.registerKey(
      kalshiKeyId,
      generateKeyPairSync('rsa', { modulusLength: 2048 })
        .publicKey.export({ type: 'spki', format: 'pem' })
        .toString(),
    );
    const count = async () =>
      Number(
        (
          await t.db.db
            .selectFrom('venue_credentials')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('account_id', '=', accountId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(bodies, async (raw) => {
        const body: Record<string, unknown> = { ...raw };
        if (raw.extra !== undefined) body[raw.extra] = 'x';
        delete body.extra;
        for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
        const before = await count();
        const res = await t.app.fastify.inject({
          method: 'POST',
          url: '/v1/pm/credentials',
          headers: bearer(sessionToken),
          payload: body,
        });
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        expect([201, 400, 403, 503]).toContain(res.statusCode);
        for (const secret of secretsOf(body))
          expect(res.body.toLowerCase()).not.toContain(secret.toLowerCase());
        if (res.statusCode === 201) {
          expect(await count()).toBe(before + 1);
        } else {
          const code = { 400: 'INVALID_REQUEST', 403: 'EXECUTION_DISABLED', 503: 'UNAVAILABLE' }[
            res.statusCode
          ]!;
          checkErrorShape(res.json(), res.headers['x-request-id'], code);
          expect(await count()).toBe(before);
        }
      }),
      { numRuns: 150, seed },
    );
    // The generator reaches both outcomes (seed in the failure message if not).
    expect(statuses.get(400), `seed ${seed}`).toBeGreaterThan(10);
  });

  it('accepts the well-formed bodies it generates: a hosted EOA with a random key', async () => {
    const { sessionToken } = await createAccountWithSession(t.db.db);
    await fc.assert(
      fc.asyncProperty(fc.constant(null), async () => {
        const res = await t.app.fastify.inject({
          method: 'POST',
          url: '/v1/pm/credentials',
          headers: bearer(sessionToken),
          payload: { venue: 'polymarket', signature_type: 0, signer_key: generatePrivateKey() },
        });
        expect(res.statusCode).toBe(201);
      }),
      { numRuns: 5, seed },
    );
  });
});

/** A new account with one hosted Polymarket credential. */
async function storedHostedCredential(): Promise<{ headers: { authorization: string }; id: string }> {
  const { sessionToken } = await createAccountWithSession(t.db.db);
  const headers = bearer(sessionToken);
  const stored = await t.app.fastify.inject({
    method: 'POST',
    url: '/v1/pm/credentials',
    headers,
    payload: { venue: 'polymarket', signature_type: 0, signer_key: generatePrivateKey() },
  });
  return { headers, id: stored.json().id as string };
}

describe.skipIf(!onPostgres)('races on PostgreSQL', () => {
  it('parallel uses are each counted once and raise exactly one burst alert', async () => {
    const { headers, id } = await storedHostedCredential();
    const answers = await Promise.all(
      Array.from({ length: 30 }, () =>
        t.app.fastify.inject({ method: 'POST', url: `/v1/pm/credentials/${id}/verify`, headers }),
      ),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(Array(30).fill(200));
    const uses = await t.db.db
      .selectFrom('venue_credential_usage')
      .select((eb) => eb.fn.sum<string>('uses').as('n'))
      .where('credential_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(Number(uses.n)).toBe(31);
    const audit = await t.db.db
      .selectFrom('audit_log')
      .select('seq')
      .where('subject', '=', id)
      .where('action', '=', 'venue_credential.use')
      .execute();
    expect(audit).toHaveLength(31);
    const alerts = await t.db.db
      .selectFrom('events')
      .select('payload')
      .where('subject', '=', id)
      .where('kind', '=', 'security.alert')
      .execute();
    // 31 uses may straddle a minute boundary; a burst needs 20 in one minute, and alerts once.
    expect(alerts.length).toBeLessThanOrEqual(1);
    const perMinute = await t.db.db
      .selectFrom('venue_credential_usage')
      .select('uses')
      .where('credential_id', '=', id)
      .execute();
    if (perMinute.some((m) => m.uses >= 20)) expect(alerts).toHaveLength(1);
  });

  it('parallel revocations of one credential: one 200, the rest 404, the ciphertext gone', async () => {
    const { headers, id } = await storedHostedCredential();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        t.app.fastify.inject({
          method: 'DELETE',
          url: `/v1/pm/credentials/${id}`,
          headers: { ...headers, 'idempotency-key': randomBytes(8).toString('hex') },
        }),
      ),
    );
    const codes = answers.map((a) => a.statusCode).sort();
    expect(codes).toEqual([200, ...Array(9).fill(404)]);
    const row = await t.db.db
      .selectFrom('venue_credentials')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.sealed).toBeNull();
    const revokes = await t.db.db
      .selectFrom('audit_log')
      .select('seq')
      .where('subject', '=', id)
      .where('action', '=', 'venue_credential.revoke')
      .execute();
    expect(revokes).toHaveLength(1);
  });
});
