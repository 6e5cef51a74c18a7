// The Kalshi adapter against the loopback Kalshi fake: a key Kalshi knows is accepted, anything
// else is refused, and a Kalshi that cannot answer is VenueUnavailable. The fake's own signature
// check is pinned with requests signed here by hand (salt length, padding, query string, units).

import { constants, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../core/clock.ts';
import { KALSHI_BAD_SIGNATURE_DETAILS, startKalshiFake, type KalshiFake } from '../../devnet/fakes/kalshi.ts';
import { createKalshiAdapter, validateKalshiKeyId, validateKalshiPrivateKey } from './kalshi.ts';
import { VenueUnavailable, type KalshiApiKey } from './port.ts';

interface TestKey {
  keyId: string;
  privateKey: KeyObject;
  pkcs1: string;
  pkcs8: string;
  publicPem: string;
}

function rsaKey(bits = 2048): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  return {
    keyId: randomUUID(),
    privateKey,
    pkcs1: privateKey.export({ type: 'pkcs1', format: 'pem' }) as string,
    pkcs8: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }) as string,
  };
}

/** The PEM's base64 body, which no error or reason may contain any line of. */
const pemLines = (pem: string) => pem.split('\n').filter((l) => l !== '' && !l.startsWith('-----'));

let fake: KalshiFake;
let alice: TestKey;
let mallory: TestKey;
const TIMEOUT_MS = 400;

beforeAll(async () => {
  alice = rsaKey();
  mallory = rsaKey();
  fake = await startKalshiFake({
    keys: [{ keyId: alice.keyId, publicKeyPem: alice.publicPem, balanceCents: 12_345 }],
  });
});

afterAll(async () => {
  await fake.stop();
});

afterEach(() => {
  fake.reset();
  fake.requests.length = 0;
});

const adapter = (extra: { clock?: ManualClock; fetch?: typeof fetch } = {}) =>
  createKalshiAdapter({ baseUrl: fake.baseUrl, timeoutMs: TIMEOUT_MS, ...extra });

const aliceKey = (pem = alice.pkcs1): KalshiApiKey => ({ keyId: alice.keyId, privateKeyPem: pem });

async function unavailable(promise: Promise<unknown>): Promise<VenueUnavailable> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VenueUnavailable);
  return err as VenueUnavailable;
}

describe('checkApiKey', () => {
  it('accepts a registered key, in PKCS#1 and in PKCS#8, with one signed GET of the balance', async () => {
    expect(await adapter().checkApiKey(aliceKey(alice.pkcs1))).toEqual({ ok: true });
    expect(await adapter().checkApiKey(aliceKey(alice.pkcs8))).toEqual({ ok: true });
    expect(fake.requests).toHaveLength(2);
    const [req] = fake.requests;
    expect(req?.method).toBe('GET');
    expect(req?.path).toBe('/trade-api/v2/portfolio/balance');
    expect(req?.headers['kalshi-access-key']).toBe(alice.keyId);
    expect(req?.headers['kalshi-access-timestamp']).toMatch(/^\d{13}$/);
    expect(req?.headers['kalshi-access-signature']).toMatch(/^[A-Za-z0-9+/]{342}==$/); // 256 bytes
  });

  it('is refused for a key id Kalshi does not know, with Kalshi’s reason', async () => {
    const result = await adapter().checkApiKey({ keyId: randomUUID(), privateKeyPem: alice.pkcs1 });
    expect(result).toEqual({
      ok: false,
      reason: expect.stringMatching(/HTTP 401, authentication_error: API key not found/),
    });
  });

  it('is refused when the request is signed with another private key', async () => {
    const result = await adapter().checkApiKey({ keyId: alice.keyId, privateKeyPem: mallory.pkcs8 });
    expect(result).toEqual({
      ok: false,
      reason: `Kalshi refused the API key (HTTP 401, authentication_error: ${KALSHI_BAD_SIGNATURE_DETAILS})`,
    });
  });

  it('is refused once the key is revoked', async () => {
    const bob = rsaKey();
    fake.registerKey(bob.keyId, bob.publicPem);
    expect(await adapter().checkApiKey({ keyId: bob.keyId, privateKeyPem: bob.pkcs1 })).toEqual({ ok: true });
    fake.revokeKey(bob.keyId);
    expect(await adapter().checkApiKey({ keyId: bob.keyId, privateKeyPem: bob.pkcs1 })).toMatchObject({
      ok: false,
    });
  });

  it('is refused when its timestamp is stale, by the fake’s clock or by the adapter’s', async () => {
    fake.knobs.clockOffsetMs = 120_000;
    expect(await adapter().checkApiKey(aliceKey())).toEqual({
      ok: false,
      reason: expect.stringMatching(/HTTP 401.*outside the accepted window/),
    });
    fake.reset();
    const behind = new ManualClock(new Date(systemClock.now().getTime() - 120_000));
    expect(await adapter({ clock: behind }).checkApiKey(aliceKey())).toMatchObject({ ok: false });
    behind.advance(120_000);
    expect(await adapter({ clock: behind }).checkApiKey(aliceKey())).toEqual({ ok: true });
  });

  it('treats a 403 as a refusal too', async () => {
    const forbidden: typeof fetch = async () =>
      new Response(JSON.stringify({ error: { code: 'forbidden', message: 'key lacks read scope' } }), {
        status: 403,
      });
    expect(await adapter({ fetch: forbidden }).checkApiKey(aliceKey())).toEqual({
      ok: false,
      reason: 'Kalshi refused the API key (HTTP 403, forbidden: key lacks read scope)',
    });
  });

  it('is VenueUnavailable on a 429, with Retry-After when Kalshi sends one', async () => {
    fake.knobs.rateLimited = true;
    const plain = await unavailable(adapter().checkApiKey(aliceKey()));
    expect(plain.message).toMatch(/429/);
    expect(plain.retryAfterMs).toBeNull();
    fake.reset();
    fake.knobs.rateLimitRetryAfter = '7';
    expect((await unavailable(adapter().checkApiKey(aliceKey()))).retryAfterMs).toBe(7_000);
  });

  it('is VenueUnavailable on a 5xx, a body not in Kalshi’s format, and a 404', async () => {
    fake.knobs.serverError = 503;
    expect((await unavailable(adapter().checkApiKey(aliceKey()))).message).toMatch(/HTTP 503/);
    fake.reset();
    fake.knobs.malformedJson = true;
    expect((await unavailable(adapter().checkApiKey(aliceKey()))).message).toMatch(/not JSON/);
    const wrongShape: typeof fetch = async () =>
      new Response(JSON.stringify({ balance: '12.34' }), { status: 200 });
    expect((await unavailable(adapter({ fetch: wrongShape }).checkApiKey(aliceKey()))).message).toMatch(
      /format/,
    );
    const elsewhere = createKalshiAdapter({ baseUrl: `${fake.url}/trade-api/v1`, timeoutMs: TIMEOUT_MS });
    expect((await unavailable(elsewhere.checkApiKey(aliceKey()))).message).toMatch(/HTTP 404/);
  });

  it('is VenueUnavailable when Kalshi does not answer in time', async () => {
    fake.knobs.hang = true;
    const started = performance.now();
    const err = await unavailable(adapter().checkApiKey(aliceKey()));
    expect(err.message).toBe(`Kalshi did not answer within ${TIMEOUT_MS} ms`);
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 2_000);
  });

  it('is VenueUnavailable when nothing listens', async () => {
    const gone = await startKalshiFake();
    await gone.stop();
    const err = await unavailable(
      createKalshiAdapter({ baseUrl: gone.baseUrl, timeoutMs: TIMEOUT_MS }).checkApiKey(aliceKey()),
    );
    expect(err.message).toMatch(/could not be reached/);
  });

  it('refuses a malformed key id or private key without asking Kalshi', async () => {
    expect(await adapter().checkApiKey({ keyId: 'not-a-uuid', privateKeyPem: alice.pkcs1 })).toMatchObject({
      ok: false,
    });
    expect(await adapter().checkApiKey({ keyId: alice.keyId, privateKeyPem: alice.publicPem })).toEqual({
      ok: false,
      reason: 'this is a public key; requests are signed with the private key',
    });
    expect(fake.requests).toHaveLength(0);
  });

  it('never puts key material in a reason or an error', async () => {
    const texts: string[] = [];
    const collect = async (p: Promise<unknown>) => {
      try {
        texts.push(JSON.stringify(await p));
      } catch (err) {
        texts.push(`${String(err)}\n${(err as Error).stack ?? ''}`);
      }
    };
    await collect(adapter().checkApiKey({ keyId: alice.keyId, privateKeyPem: mallory.pkcs1 }));
    await collect(
      adapter().checkApiKey({ keyId: alice.keyId, privateKeyPem: mallory.pkcs1.replace('MII', 'XII') }),
    );
    await collect(
      adapter().checkApiKey({ keyId: alice.keyId, privateKeyPem: `${mallory.pkcs1}\n${mallory.pkcs8}` }),
    );
    fake.knobs.serverError = 500;
    await collect(adapter().checkApiKey({ keyId: alice.keyId, privateKeyPem: mallory.pkcs8 }));
    expect(texts).toHaveLength(4);
    for (const line of [...pemLines(mallory.pkcs1), ...pemLines(mallory.pkcs8)]) {
      for (const text of texts) expect(text).not.toContain(line);
    }
  });
});

describe('the fake’s signature check', () => {
  const balancePath = '/trade-api/v2/portfolio/balance';

  async function get(
    path: string,
    opts: {
      timestamp?: string;
      signed?: string;
      padding?: number;
      saltLength?: number;
      key?: KeyObject;
    } = {},
  ): Promise<{ status: number; body: unknown }> {
    const timestamp = opts.timestamp ?? String(systemClock.now().getTime());
    const message = `${timestamp}GET${opts.signed ?? path}`;
    const signature = sign('sha256', Buffer.from(message), {
      key: opts.key ?? alice.privateKey,
      padding: opts.padding ?? constants.RSA_PKCS1_PSS_PADDING,
      saltLength: opts.saltLength ?? constants.RSA_PSS_SALTLEN_DIGEST,
    }).toString('base64');
    const res = await fetch(`${fake.url}${path}`, {
      headers: {
        'KALSHI-ACCESS-KEY': alice.keyId,
        'KALSHI-ACCESS-TIMESTAMP': timestamp,
        'KALSHI-ACCESS-SIGNATURE': signature,
      },
    });
    return { status: res.status, body: await res.json() };
  }

  it('answers Kalshi’s balance shape to a correctly signed request', async () => {
    const { status, body } = await get(balancePath);
    expect(status).toBe(200);
    expect(body).toEqual({
      balance: 12_345,
      balance_dollars: '123.4500',
      portfolio_value: 0,
      updated_ts: expect.any(Number),
    });
  });

  it('signs the path without the query string', async () => {
    expect((await get(`${balancePath}?subaccount=0`, { signed: balancePath })).status).toBe(200);
    expect((await get(`${balancePath}?subaccount=0`, { signed: `${balancePath}?subaccount=0` })).status).toBe(
      401,
    );
  });

  it('wants the /trade-api/v2 prefix in the signed path', async () => {
    expect((await get(balancePath, { signed: '/portfolio/balance' })).status).toBe(401);
  });

  it('wants PSS with a digest-length salt: a maximum-length salt or PKCS#1 v1.5 is refused', async () => {
    expect((await get(balancePath, { saltLength: constants.RSA_PSS_SALTLEN_MAX_SIGN })).status).toBe(401);
    expect((await get(balancePath, { padding: constants.RSA_PKCS1_PADDING })).status).toBe(401);
  });

  it('wants milliseconds: a timestamp in seconds is outside the window', async () => {
    const seconds = String(Math.floor(systemClock.now().getTime() / 1000));
    expect(await get(balancePath, { timestamp: seconds })).toEqual({
      status: 401,
      body: {
        error: {
          code: 'authentication_error',
          message: 'authentication_error',
          details: expect.stringMatching(/window/),
        },
      },
    });
  });

  it('answers 401 in Kalshi’s error envelope when the headers are missing', async () => {
    const res = await fetch(`${fake.url}${balancePath}`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      error: { code: 'authentication_error', message: 'authentication_error', details: expect.any(String) },
    });
  });
});

describe('validateKalshiPrivateKey', () => {
  it('accepts an unencrypted RSA key of 2048 bits in PKCS#1 or PKCS#8', () => {
    expect(validateKalshiPrivateKey(alice.pkcs1)).toEqual({ ok: true, format: 'pkcs1', modulusBits: 2048 });
    expect(validateKalshiPrivateKey(`\n${alice.pkcs8}\n\n`)).toEqual({
      ok: true,
      format: 'pkcs8',
      modulusBits: 2048,
    });
    expect(validateKalshiPrivateKey(alice.pkcs1.replace(/\n/g, '\r\n'))).toMatchObject({ ok: true });
  });

  it('refuses a key shorter than 2048 bits', () => {
    const small = rsaKey(1024);
    expect(validateKalshiPrivateKey(small.pkcs8)).toEqual({
      ok: false,
      reason: 'the private key is a 1024-bit RSA key; at least 2048 bits are needed',
    });
  });

  it('refuses other kinds of keys and PEM', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ecPkcs8 = ec.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const ecSec1 = ec.privateKey.export({ type: 'sec1', format: 'pem' }) as string;
    const encrypted = alice.privateKey.export({
      type: 'pkcs8',
      format: 'pem',
      cipher: 'aes-256-cbc',
      passphrase: 'secret',
    }) as string;
    const cases: [unknown, RegExp][] = [
      [ecPkcs8, /an ec key; Kalshi keys are RSA/],
      [ecSec1, /"EC PRIVATE KEY" block is not an RSA private key/],
      [encrypted, /encrypted/],
      [alice.publicPem, /public key/],
      [`${alice.pkcs1}${mallory.pkcs1}`, /exactly one PEM block/],
      [`my key:\n${alice.pkcs1}`, /exactly one PEM block/],
      [alice.pkcs1.replace(/MII/, 'AAA'), /not hold a readable private key/],
      ['', /not PEM/],
      [42, /PEM text/],
    ];
    for (const [pem, reason] of cases) {
      const result = validateKalshiPrivateKey(pem);
      expect(result).toMatchObject({ ok: false, reason: expect.stringMatching(reason) });
      if (typeof pem === 'string') {
        for (const line of pemLines(pem)) expect(JSON.stringify(result)).not.toContain(line);
      }
    }
  });
});

describe('validateKalshiKeyId', () => {
  it.each([
    ['a952bcbe-ec3b-4b5b-b8f9-11dae589608c', true],
    ['A952BCBE-EC3B-4B5B-B8F9-11DAE589608C', true],
    ['a952bcbe-ec3b-4b5b-b8f9-11dae589608', false],
    ['a952bcbeec3b4b5bb8f911dae589608c', false],
    ['a952bcbe-ec3b-4b5b-b8f9-11dae589608c\r\nX-Injected: 1', false],
    ['', false],
  ])('%j → %s', (keyId, ok) => {
    expect(validateKalshiKeyId(keyId).ok).toBe(ok);
  });
});
