// Purser's Polymarket CLOB adapter against the loopback CLOB fake (which the real client accepts,
// see src/devnet/fakes/clob.test.ts), and its header builders against the real client's own.

import { ClobClient, createL1Headers, createL2Headers } from '@polymarket/clob-client-v2';
import { createWalletClient, custom, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.ts';
import { startClobFake, type ClobFake } from '../../devnet/fakes/clob.ts';
import {
  buildClobL1Headers,
  buildClobL2Headers,
  clobHmacSignature,
  createPolymarketClob,
} from './polymarket.ts';
import { VenueRejected, VenueUnavailable, type PolymarketClobPort } from './port.ts';

let fake: ClobFake;
let clob: PolymarketClobPort;

beforeAll(async () => {
  fake = await startClobFake();
  clob = createPolymarketClob({ baseUrl: fake.url, chainId: 137, timeoutMs: 2_000 });
});
afterAll(async () => {
  await fake.stop();
});
beforeEach(() => {
  fake.reset();
});

function walletClient(key: Hex) {
  return createWalletClient({
    account: privateKeyToAccount(key),
    transport: custom({
      request: async () => {
        throw new Error('no RPC in these tests');
      },
    }),
  });
}

/** The error a promise rejects with. */
async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('Polymarket CLOB headers', () => {
  it('builds the L1 headers the real client builds (same signature for the same time and nonce)', async () => {
    const key = generatePrivateKey();
    const timestamp = 1_780_000_000;
    for (const nonce of [0, 42]) {
      const ours = await buildClobL1Headers({
        account: privateKeyToAccount(key),
        chainId: 137,
        timestamp,
        nonce,
      });
      const theirs = await createL1Headers(walletClient(key), 137, nonce, timestamp);
      expect(ours).toEqual(theirs);
    }
  });

  it('builds the L2 headers the real client builds, HMAC included', async () => {
    const key = generatePrivateKey();
    const secret = Buffer.from('a 32-byte secret for the test!!!').toString('base64url') + '=';
    const creds = { apiKey: '4f3f0c43-94b1-4e44-8a8b-1f3f5f0f0a11', secret, passphrase: 'ab'.repeat(32) };
    const address = privateKeyToAccount(key).address;
    const cases = [
      { method: 'GET' as const, requestPath: '/auth/api-keys' },
      {
        method: 'POST' as const,
        requestPath: '/order',
        body: JSON.stringify({ order: { salt: 1 }, owner: 'x' }),
      },
      { method: 'DELETE' as const, requestPath: '/orders', body: '["0x01"]' },
    ];
    for (const c of cases) {
      const ours = buildClobL2Headers({ address, creds, timestamp: 1_780_000_123, ...c });
      const theirs = await createL2Headers(
        walletClient(key),
        { key: creds.apiKey, secret: creds.secret, passphrase: creds.passphrase },
        c,
        1_780_000_123,
      );
      expect(ours).toEqual(theirs);
    }
    // URL-safe base64 with the padding kept.
    expect(clobHmacSignature(secret, 1, 'GET', '/x')).toMatch(/^[A-Za-z0-9_-]{43}=$/);
  });
});

describe('createPolymarketClob: deriveApiCredentials', () => {
  it('derives, falls back to create when the CLOB has none, and derives the same key after', async () => {
    const key = generatePrivateKey();
    const address = privateKeyToAccount(key).address;
    const seen = fake.requests.length;
    const creds = await clob.deriveApiCredentials(key);
    expect(fake.requests.slice(seen).map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /auth/derive-api-key',
      'POST /auth/api-key',
    ]);
    expect(fake.apiKeys(address)).toEqual([creds.apiKey]);
    expect(await clob.deriveApiCredentials(key)).toEqual(creds);

    const other = await clob.deriveApiCredentials(key, 3);
    expect(other.apiKey).not.toBe(creds.apiKey);
    expect(fake.apiKeys(address).sort()).toEqual([creds.apiKey, other.apiKey].sort());

    // The real client accepts what the adapter derived.
    const client = new ClobClient({
      host: fake.url,
      chain: 137,
      signer: walletClient(key),
      creds: { key: creds.apiKey, secret: creds.secret, passphrase: creds.passphrase },
    });
    const listed = (await client.getApiKeys()) as unknown as { apiKeys: string[] };
    expect(listed.apiKeys.sort()).toEqual([creds.apiKey, other.apiKey].sort());
  });

  it('is a VenueRejected when the CLOB refuses the L1 headers, and names no secret', async () => {
    const key = generatePrivateKey();
    const late = createPolymarketClob({
      baseUrl: fake.url,
      chainId: 137,
      timeoutMs: 2_000,
      clock: new ManualClock('2020-01-01T00:00:00Z'),
    });
    const err = await rejection(late.deriveApiCredentials(key));
    expect(err).toBeInstanceOf(VenueRejected);
    expect((err as VenueRejected).status).toBe(401);
    expect(err.message).toContain('Invalid L1 Request headers');
    expect(err.message).not.toContain(key.slice(2));

    const wrongChain = createPolymarketClob({ baseUrl: fake.url, chainId: 80002, timeoutMs: 2_000 });
    expect(await rejection(wrongChain.deriveApiCredentials(key))).toBeInstanceOf(VenueRejected);
  });

  it('is a VenueUnavailable on a 429 (with Retry-After), a 5xx, a non-JSON answer or no answer', async () => {
    const key = generatePrivateKey();
    fake.knobs.rateLimitRetryAfter = '7';
    let err = await rejection(clob.deriveApiCredentials(key));
    expect(err).toBeInstanceOf(VenueUnavailable);
    expect((err as VenueUnavailable).retryAfterMs).toBe(7_000);
    fake.reset();

    fake.knobs.serverError = 503;
    expect(await rejection(clob.deriveApiCredentials(key))).toBeInstanceOf(VenueUnavailable);
    fake.reset();

    fake.knobs.malformedJson = true;
    err = await rejection(clob.deriveApiCredentials(key));
    expect(err).toBeInstanceOf(VenueUnavailable);
    expect(err.message).toContain('not JSON');
    fake.reset();

    fake.knobs.hang = true;
    const impatient = createPolymarketClob({ baseUrl: fake.url, chainId: 137, timeoutMs: 150 });
    err = await rejection(impatient.deriveApiCredentials(key));
    expect(err).toBeInstanceOf(VenueUnavailable);
    expect(err.message).toContain('timed out');
    fake.reset();

    const nowhere = createPolymarketClob({ baseUrl: 'http://127.0.0.1:9', chainId: 137, timeoutMs: 2_000 });
    expect(await rejection(nowhere.deriveApiCredentials(key))).toBeInstanceOf(VenueUnavailable);
  });
});

describe('createPolymarketClob: checkApiCredentials', () => {
  it('accepts a working credential and refuses a wrong or deleted one without quoting a secret', async () => {
    const key = generatePrivateKey();
    const address = privateKeyToAccount(key).address;
    const creds = await clob.deriveApiCredentials(key);
    expect(await clob.checkApiCredentials(address, creds)).toEqual({ ok: true });

    const wrongPassphrase = { ...creds, passphrase: 'c'.repeat(64) };
    const refused = await clob.checkApiCredentials(address, wrongPassphrase);
    expect(refused).toEqual({
      ok: false,
      reason: 'Polymarket refused the API credential (HTTP 401: Unauthorized/Invalid api key)',
    });
    const wrongSecret = await clob.checkApiCredentials(address, {
      ...creds,
      secret: Buffer.alloc(32, 1).toString('base64url'),
    });
    expect(wrongSecret.ok).toBe(false);
    const otherAddress = privateKeyToAccount(generatePrivateKey()).address;
    expect((await clob.checkApiCredentials(otherAddress, creds)).ok).toBe(false);

    // Deleted at the venue (with the real client): refused from then on.
    const client = new ClobClient({
      host: fake.url,
      chain: 137,
      signer: walletClient(key),
      creds: { key: creds.apiKey, secret: creds.secret, passphrase: creds.passphrase },
    });
    await client.deleteApiKey();
    const deleted = await clob.checkApiCredentials(address, creds);
    expect(deleted.ok).toBe(false);
    if (!deleted.ok) {
      for (const secret of [creds.secret, creds.passphrase]) expect(deleted.reason).not.toContain(secret);
    }
  });

  it('signs the exact path it asks, with the L2 headers', async () => {
    const key = generatePrivateKey();
    const creds = await clob.deriveApiCredentials(key);
    const seen = fake.requests.length;
    await clob.checkApiCredentials(privateKeyToAccount(key).address, creds);
    const [request] = fake.requests.slice(seen);
    expect(request).toMatchObject({ method: 'GET', path: '/auth/api-keys' });
    expect(request?.headers.poly_api_key).toBe(creds.apiKey);
    expect(request?.headers.poly_address).toBe(privateKeyToAccount(key).address);
  });

  it('is a VenueUnavailable on a 429 (retryAfterMs), a 5xx or an answer not in the format', async () => {
    const key = generatePrivateKey();
    const address = privateKeyToAccount(key).address;
    const creds = await clob.deriveApiCredentials(key);

    fake.knobs.rateLimitRetryAfter = '12';
    const limited = await rejection(clob.checkApiCredentials(address, creds));
    expect(limited).toBeInstanceOf(VenueUnavailable);
    expect((limited as VenueUnavailable).retryAfterMs).toBe(12_000);
    fake.reset();

    fake.knobs.serverError = 500;
    expect(await rejection(clob.checkApiCredentials(address, creds))).toBeInstanceOf(VenueUnavailable);
    fake.reset();

    const odd = createPolymarketClob({
      baseUrl: fake.url,
      chainId: 137,
      timeoutMs: 2_000,
      fetch: async () => new Response(JSON.stringify({ keys: [] }), { status: 200 }),
    });
    const err = await rejection(odd.checkApiCredentials(address, creds));
    expect(err).toBeInstanceOf(VenueUnavailable);
    for (const secret of [creds.secret, creds.passphrase]) expect(err.message).not.toContain(secret);
  });
});
