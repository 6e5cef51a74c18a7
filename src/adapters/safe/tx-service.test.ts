// The Safe Transaction Service adapter against the devnet's fake (src/devnet/fakes/safe-tx-service.ts)
// on the shared devnet's Safes: every page read, the owner checksummed, the API key sent, and each
// way the service can fail reported as SafeServiceUnavailable.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../../core/clock.ts';
import { devnetChain, POLYGON_CHAIN_ID } from '../../devnet/devnet.ts';
import { startSafeTxServiceFake, type SafeTxServiceFake } from '../../devnet/fakes/safe-tx-service.ts';
import { createDevnetSafe } from '../../devnet/safes.ts';
import { createSafeTxServiceAdapter, SafeServiceUnavailable } from './tx-service.ts';

const devnet = inject('devnet');
const polygon = devnetChain(devnet, POLYGON_CHAIN_ID);
const newAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address;

let fake: SafeTxServiceFake;
let keyed: SafeTxServiceFake;
const owner = newAddress();
const other = newAddress();
const safes: Address[] = [];

beforeAll(async () => {
  const options = { rpcUrl: polygon.rpcUrl, proxyFactories: [polygon.contracts.safeProxyFactory!] };
  fake = await startSafeTxServiceFake(options);
  keyed = await startSafeTxServiceFake({ ...options, apiKey: 'k-123' });
  for (let i = 0; i < 3; i++) {
    const owners = i === 1 ? [other, owner] : [owner];
    safes.push((await createDevnetSafe(polygon, { owners, threshold: owners.length })).address);
  }
});

afterAll(async () => {
  await fake?.stop();
  await keyed?.stop();
});

/** Expects SafeServiceUnavailable, with these fields. */
async function unavailable(p: Promise<unknown>, fields: Record<string, unknown> = {}) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SafeServiceUnavailable);
  expect(err).toMatchObject(fields);
  return err as SafeServiceUnavailable;
}

describe('safesOfOwner', () => {
  it('reads every page of v2, in the service’s order', async () => {
    const port = createSafeTxServiceAdapter({ urls: { 137: fake.url }, pageSize: 2 });
    const before = fake.requests.length;
    expect(await port.safesOfOwner(137, owner)).toEqual(safes);
    expect(fake.requests.slice(before).map((r) => [r.path, r.query])).toEqual([
      [`/api/v2/owners/${owner}/safes/`, { limit: '2', offset: '0' }],
      [`/api/v2/owners/${owner}/safes/`, { limit: '2', offset: '2' }],
    ]);
    expect(await port.safesOfOwner(137, other)).toEqual([safes[1]]);
    expect(await port.safesOfOwner(137, newAddress())).toEqual([]);
  });

  it('sends the owner checksummed, whatever its case, and gives owners and threshold', async () => {
    const port = createSafeTxServiceAdapter({ urls: { 137: `${fake.url}/` } });
    expect(await port.safesOfOwner(137, owner.toLowerCase() as Address)).toEqual(safes);
    expect(fake.requests.at(-1)?.path).toBe(`/api/v2/owners/${owner}/safes/`);
    expect(await port.ownedSafes(137, other)).toEqual([
      { address: safes[1], owners: [other, owner], threshold: 2, nonce: 0 },
    ]);
  });

  it('sends the API key as a bearer token', async () => {
    const port = createSafeTxServiceAdapter({ urls: { 137: keyed.url }, apiKey: 'k-123' });
    expect(await port.safesOfOwner(137, owner)).toEqual(safes);
    expect(keyed.requests.at(-1)?.headers.authorization).toBe('Bearer k-123');
    await unavailable(createSafeTxServiceAdapter({ urls: { 137: keyed.url } }).safesOfOwner(137, owner), {
      status: 401,
    });
  });
});

describe('when the service fails', () => {
  const port = () => createSafeTxServiceAdapter({ urls: { 137: fake.url }, timeoutMs: 300 });

  it('5xx, 429 (with Retry-After), malformed JSON and a hang are SafeServiceUnavailable', async () => {
    try {
      fake.knobs.serverError = 503;
      await unavailable(port().safesOfOwner(137, owner), { status: 503 });
      fake.reset();

      fake.knobs.rateLimitRetryAfter = '7';
      await unavailable(port().safesOfOwner(137, owner), { status: 429, retryAfterMs: 7_000 });
      const clock = new ManualClock('2026-05-01T10:00:00Z');
      fake.knobs.rateLimitRetryAfter = 'Fri, 01 May 2026 10:00:30 GMT';
      await unavailable(
        createSafeTxServiceAdapter({ urls: { 137: fake.url }, clock }).safesOfOwner(137, owner),
        { status: 429, retryAfterMs: 30_000 },
      );
      fake.reset();

      fake.knobs.malformedJson = true;
      await unavailable(port().safesOfOwner(137, owner), {
        message: expect.stringMatching(/other than JSON/),
      });
      fake.reset();

      fake.knobs.hang = true;
      await unavailable(port().safesOfOwner(137, owner), {
        message: expect.stringMatching(/did not answer/),
      });
    } finally {
      fake.reset();
    }
  });

  it('a chain without a URL, a closed port, and answers not in the format are SafeServiceUnavailable', async () => {
    await unavailable(port().safesOfOwner(8453, owner), { message: expect.stringMatching(/chain 8453/) });
    const closed = await startSafeTxServiceFake({ rpcUrl: polygon.rpcUrl, proxyFactories: [] });
    await closed.stop();
    await unavailable(createSafeTxServiceAdapter({ urls: { 137: closed.url } }).safesOfOwner(137, owner));

    const bodies: unknown[] = [
      { safes: [] },
      {
        count: 1,
        next: null,
        previous: null,
        results: [{ address: 'nope', owners: [], threshold: 1, nonce: 0 }],
      },
      { count: '1', results: [] },
      { count: 1, results: [{ address: owner, owners: [owner], threshold: '1', nonce: 0 }] },
      null,
    ];
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(bodies.shift()));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const stub = createSafeTxServiceAdapter({ urls: { 137: url } });
      for (let i = 0; i < 5; i++) {
        await unavailable(stub.safesOfOwner(137, owner), {
          message: expect.stringMatching(/not in its format/),
        });
      }
    } finally {
      server.close();
    }
  });

  it('stops past maxPages', async () => {
    const limited = createSafeTxServiceAdapter({ urls: { 137: fake.url }, pageSize: 1, maxPages: 2 });
    await unavailable(limited.safesOfOwner(137, owner), {
      message: expect.stringMatching(/more than 2 pages/),
    });
  });
});
