// The Safe Transaction Service fake, against the shared devnet's Safes: the service's formats,
// pagination, the checksum rule and the knobs; and Safe's own client (@safe-global/api-kit 4.2.0)
// using it unchanged.

import { getAddress, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { devnetChain, POLYGON_CHAIN_ID } from '../devnet.ts';
import { createDevnetSafe } from '../safes.ts';
import {
  checksumErrorBody,
  isChecksumAddress,
  pageLimit,
  pageOffset,
  startSafeTxServiceFake,
  type SafeTxServiceFake,
} from './safe-tx-service.ts';

const devnet = inject('devnet');
const polygon = devnetChain(devnet, POLYGON_CHAIN_ID);

const newAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address;

let fake: SafeTxServiceFake;
let keyed: SafeTxServiceFake;
const owner = newAddress();
const coOwner = newAddress();
let safes: Address[];

beforeAll(async () => {
  const options = { rpcUrl: polygon.rpcUrl, proxyFactories: [polygon.contracts.safeProxyFactory!] };
  fake = await startSafeTxServiceFake(options);
  keyed = await startSafeTxServiceFake({ ...options, apiKey: 'devnet-key' });
  safes = [];
  // Three Safes of `owner`, in order: 1-of-1, a 2-of-2 with coOwner, another 1-of-1 (a Safe, not SafeL2).
  safes.push((await createDevnetSafe(polygon, { owners: [owner], threshold: 1 })).address);
  safes.push((await createDevnetSafe(polygon, { owners: [coOwner, owner], threshold: 2 })).address);
  safes.push((await createDevnetSafe(polygon, { owners: [owner], threshold: 1, singleton: 'l1' })).address);
});

afterAll(async () => {
  await fake?.stop();
  await keyed?.stop();
});

async function get(path: string, init?: RequestInit, base = fake.url) {
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body };
}

describe('GET /api/v1/owners/{address}/safes/', () => {
  it('lists the Safes an address owns, in creation order', async () => {
    expect(await get(`/api/v1/owners/${owner}/safes/`)).toMatchObject({ status: 200, body: { safes } });
    expect((await get(`/api/v1/owners/${coOwner}/safes/`)).body).toEqual({ safes: [safes[1]] });
    expect((await get(`/api/v1/owners/${newAddress()}/safes/`)).body).toEqual({ safes: [] });
  });

  it('refuses an address that is not EIP-55 checksummed with the service’s 422', async () => {
    const lower = owner.toLowerCase();
    for (const version of ['v1', 'v2']) {
      const res = await get(`/api/${version}/owners/${lower}/safes/`);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        code: 1,
        message: 'Checksum address validation failed',
        arguments: [lower],
      });
    }
    expect((await get('/api/v1/owners/0x1234/safes/')).body).toEqual(checksumErrorBody('0x1234'));
    expect(isChecksumAddress(owner)).toBe(true);
    expect(isChecksumAddress(owner.toUpperCase().replace('0X', '0x'))).toBe(false);
  });
});

describe('GET /api/v2/owners/{address}/safes/', () => {
  it('answers the Safes’ last status, paginated', async () => {
    const res = await get(`/api/v2/owners/${owner}/safes/`);
    expect(res.status).toBe(200);
    const common = {
      nonce: 0,
      fallback_handler: polygon.contracts.safeFallbackHandler,
      guard: null,
      module_guard: null,
      enabled_modules: [],
    };
    expect(res.body).toEqual({
      count: 3,
      next: null,
      previous: null,
      results: [
        {
          address: safes[0],
          owners: [owner],
          threshold: 1,
          master_copy: polygon.contracts.safeL2Singleton,
          ...common,
        },
        {
          address: safes[1],
          owners: [coOwner, owner],
          threshold: 2,
          master_copy: polygon.contracts.safeL2Singleton,
          ...common,
        },
        {
          address: safes[2],
          owners: [owner],
          threshold: 1,
          master_copy: polygon.contracts.safeSingleton,
          ...common,
        },
      ],
    });
    expect((await get(`/api/v2/owners/${newAddress()}/safes/`)).body).toEqual({
      count: 0,
      next: null,
      previous: null,
      results: [],
    });
  });

  it('pages with limit and offset as Django REST framework does', async () => {
    const path = `/api/v2/owners/${owner}/safes/`;
    const abs = `${fake.url}${path}`;
    const page = async (query: string) => (await get(`${path}${query}`)).body as Record<string, unknown>;
    const addresses = (p: Record<string, unknown>) =>
      (p.results as { address: string }[]).map((r) => r.address);

    const first = await page('?limit=2');
    expect([first.count, first.next, first.previous]).toEqual([3, `${abs}?limit=2&offset=2`, null]);
    expect(addresses(first)).toEqual(safes.slice(0, 2));
    const second = await page('?limit=2&offset=2');
    expect([second.next, second.previous]).toEqual([null, `${abs}?limit=2`]);
    expect(addresses(second)).toEqual(safes.slice(2));
    const middle = await page('?offset=2&limit=1');
    expect([middle.next, middle.previous]).toEqual([null, `${abs}?limit=1&offset=1`]);
    // Other parameters stay, the query sorted; a bad limit is the default (100), a limit over 200 is 200.
    const other = await page('?offset=1&limit=1&foo=bar');
    expect(other.next).toBe(`${abs}?foo=bar&limit=1&offset=2`);
    expect((await page('?limit=0&offset=1')).previous).toBe(`${abs}?limit=100`);
    expect((await page('?limit=500&offset=5')).previous).toBe(`${abs}?limit=200`);
    expect(addresses(await page('?limit=500&offset=5'))).toEqual([]);
    expect(addresses(await page('?offset=-3'))).toEqual(safes);

    expect([pageLimit(undefined), pageLimit('abc'), pageLimit('-2'), pageLimit('0'), pageLimit('7')]).toEqual(
      [100, 100, 100, 100, 7],
    );
    expect([
      pageLimit('201'),
      pageLimit(' 1_0 '),
      pageOffset('x'),
      pageOffset('-1'),
      pageOffset('+4'),
    ]).toEqual([200, 10, 0, 0, 4]);
  });
});

describe('what the fake answers otherwise', () => {
  it('404 for other paths, 405 for other methods', async () => {
    expect(await get('/api/v1/safes/')).toMatchObject({ status: 404, body: { detail: 'Not found.' } });
    expect(await get(`/api/v1/owners/${owner}/safes`)).toMatchObject({ status: 404 });
    expect(await get(`/api/v1/owners/${owner}/safes/`, { method: 'POST' })).toMatchObject({
      status: 405,
      body: { detail: 'Method "POST" not allowed.' },
    });
  });

  it('answers as the knobs say: 5xx, 429, malformed JSON, latency, a hang, a lagging index', async () => {
    const path = `/api/v2/owners/${owner}/safes/`;
    try {
      fake.knobs.serverError = 502;
      const failed = await get(path);
      expect(failed.status).toBe(502);
      expect(failed.headers.get('content-type')).toMatch(/text\/html/);
      fake.reset();

      fake.knobs.rateLimitRetryAfter = '7';
      const limited = await get(path);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('7');
      expect(limited.body).toEqual({ detail: 'Request was throttled. Expected available in 7 seconds.' });
      fake.reset();

      fake.knobs.malformedJson = true;
      const malformed = await get(path);
      expect(malformed.status).toBe(200);
      expect(typeof malformed.body).toBe('string');
      fake.reset();

      fake.knobs.latencyMs = 150;
      const started = performance.now();
      expect((await get(path)).status).toBe(200);
      expect(performance.now() - started).toBeGreaterThanOrEqual(140);
      fake.reset();

      fake.knobs.hang = true;
      await expect(fetch(`${fake.url}${path}`, { signal: AbortSignal.timeout(200) })).rejects.toThrow();
      fake.reset();

      // Read far behind the head: before the factory existed, so no Safes yet.
      fake.knobs.lagBlocks = 1_000_000;
      expect((await get(path)).body).toMatchObject({ count: 0, results: [] });
      expect((await get(`/api/v1/owners/${owner}/safes/`)).body).toEqual({ safes: [] });
    } finally {
      fake.reset();
    }
    expect((await get(path)).body).toMatchObject({ count: 3 });
  });

  it('with an API key, refuses requests without it', async () => {
    const path = `/api/v1/owners/${owner}/safes/`;
    expect(await get(path, {}, keyed.url)).toMatchObject({ status: 401 });
    expect(await get(path, { headers: { authorization: 'Bearer wrong' } }, keyed.url)).toMatchObject({
      status: 401,
    });
    expect(await get(path, { headers: { authorization: 'Bearer devnet-key' } }, keyed.url)).toMatchObject({
      status: 200,
      body: { safes },
    });
  });

  it('is the devnet’s, for Polygon, answering live', async () => {
    const res = await fetch(`${polygon.safeTxServiceUrl}/api/v1/owners/${owner}/safes/`);
    expect(await res.json()).toEqual({ safes });
  });
});

// Safe's own client. Loaded by a module name TypeScript does not resolve: its type declarations
// widen viem's Address to string for the whole program (a `declare module 'abitype'`
// augmentation), so only what is used is typed, here.
interface SafeApiKitInstance {
  getSafesByOwner(owner: string): Promise<{ safes: string[] }>;
}
type SafeApiKitClass = new (config: {
  chainId: bigint;
  txServiceUrl?: string;
  apiKey?: string;
}) => SafeApiKitInstance;
const API_KIT: string = '@safe-global/api-kit';

describe('@safe-global/api-kit against the fake', () => {
  let SafeApiKit: SafeApiKitClass;
  beforeAll(async () => {
    SafeApiKit = ((await import(API_KIT)) as { default: SafeApiKitClass }).default;
  });

  it('getSafesByOwner works unchanged', async () => {
    const kit = new SafeApiKit({ chainId: 137n, txServiceUrl: `${fake.url}/api` });
    expect(await kit.getSafesByOwner(owner)).toEqual({ safes });
    expect(await kit.getSafesByOwner(coOwner)).toEqual({ safes: [safes[1]] });
    expect(await kit.getSafesByOwner(newAddress())).toEqual({ safes: [] });
    // The EIP-3770 form (prefix:address) the client accepts is sent as the bare address.
    expect(await kit.getSafesByOwner(`matic:${owner}`)).toEqual({ safes });
    expect(fake.requests.at(-1)?.path).toBe(`/api/v1/owners/${owner}/safes/`);
  });

  it('reports the service’s 422 for a lowercase address, and sends the API key', async () => {
    const kit = new SafeApiKit({ chainId: 137n, txServiceUrl: `${fake.url}/api` });
    await expect(kit.getSafesByOwner(owner.toLowerCase())).rejects.toMatchObject({
      name: 'HttpError',
      statusCode: 422,
      message: 'Checksum address validation failed',
    });
    const withKey = new SafeApiKit({ chainId: 137n, txServiceUrl: `${keyed.url}/api`, apiKey: 'devnet-key' });
    expect(await withKey.getSafesByOwner(getAddress(owner))).toEqual({ safes });
    await expect(
      new SafeApiKit({ chainId: 137n, txServiceUrl: `${keyed.url}/api` }).getSafesByOwner(owner),
    ).rejects.toMatchObject({ statusCode: 401 });
  });
});
