// The S3 object store against a fake S3 server on loopback that recomputes every request's
// Signature V4 on its own, and the signer against AWS's published example.

import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeS3, type FakeS3 } from '../../../test/support/fake-s3.ts';
import { readStreamText } from '../../modules/statements/download.ts';
import { ObjectStoreError, type ObjectStore } from './port.ts';
import { createS3ObjectStore } from './s3.ts';
import { EMPTY_PAYLOAD_SHA256, signRequestV4, uriEncode } from './sigv4.ts';

const CREDENTIALS = {
  bucket: 'purser-statements',
  region: 'eu-central-1',
  accessKeyId: 'AKIDPURSERTEST',
  secretAccessKey: 'kTq1+very/secret+KEY/not-in-any-message',
};

let fake: FakeS3;
let staging: string;
let store: ObjectStore;

beforeAll(async () => {
  fake = await startFakeS3(CREDENTIALS);
  staging = await mkdtemp(join(tmpdir(), 'purser-s3-staging-'));
  store = createS3ObjectStore({ endpoint: fake.endpoint, stagingDir: staging, ...CREDENTIALS });
});
afterAll(async () => {
  await fake?.close();
  await rm(staging, { recursive: true, force: true });
});

async function put(target: ObjectStore, key: string, text: string, contentType = 'text/plain') {
  const staged = await target.stage();
  // Several writes: the object is streamed to the staging file, not built in memory.
  for (const part of text.match(/[\s\S]{1,7}/g) ?? []) await staged.write(part);
  const sealed = await staged.seal();
  const committed = await staged.commit(key, contentType);
  return { ...sealed, ...committed };
}

describe('signRequestV4', () => {
  it("reproduces AWS's published example (GET /test.txt with a Range header)", () => {
    const signed = signRequestV4({
      method: 'GET',
      path: '/test.txt',
      headers: { Host: 'examplebucket.s3.amazonaws.com', Range: 'bytes=0-9' },
      payloadSha256Hex: EMPTY_PAYLOAD_SHA256,
      region: 'us-east-1',
      service: 's3',
      accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      date: new Date('2013-05-24T00:00:00Z'),
    });
    expect(signed.headers['authorization']).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, ' +
        'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, ' +
        'Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
    expect(signed.canonicalRequest).not.toContain('wJalrXUtnFEMI');
  });

  it('encodes path segments as RFC 3986 wants', () => {
    expect(uriEncode("a b+c/d*e'(f)!~._-")).toBe('a%20b%2Bc%2Fd%2Ae%27%28f%29%21~._-');
  });
});

describe('S3 object store', () => {
  it('PUTs a staged object with a signed payload hash, then HEADs and GETs it back', async () => {
    const text = '{"entries":[],"statement":{},"version":1}';
    const key = 'statements/acc_test/abc.json';
    const result = await put(store, key, text, 'application/json');
    expect(result).toMatchObject({ created: true, bytes: Buffer.byteLength(text) });
    expect(result.sha256Hex).toBe(createHash('sha256').update(text).digest('hex'));
    expect(fake.objects.get(key)?.body.toString()).toBe(text);
    expect(fake.objects.get(key)?.contentType).toBe('application/json');
    expect(await store.head(key)).toEqual({ bytes: Buffer.byteLength(text) });
    const got = await store.get(key);
    expect(got?.bytes).toBe(Buffer.byteLength(text));
    expect(await readStreamText(got!.body)).toBe(text);
    // The staging file is gone once the object is uploaded.
    expect(readdirSync(staging)).toEqual([]);
  });

  it('leaves an existing key as it is: the second write is a HEAD, not a PUT', async () => {
    const key = 'statements/acc_test/same.csv';
    expect((await put(store, key, 'a,b\r\n1,2\r\n')).created).toBe(true);
    const before = fake.log.length;
    expect((await put(store, key, 'a,b\r\n1,2\r\n')).created).toBe(false);
    expect(fake.log.slice(before)).toEqual([`HEAD ${key} 200`]);
  });

  it('answers null for a missing key and deletes idempotently', async () => {
    expect(await store.head('statements/none.json')).toBeNull();
    expect(await store.get('statements/none.json')).toBeNull();
    await put(store, 'statements/gone.json', '{}');
    await store.delete('statements/gone.json');
    await store.delete('statements/gone.json');
    expect(fake.objects.has('statements/gone.json')).toBe(false);
  });

  it('streams an object bigger than one write buffer', async () => {
    const line = `${'x'.repeat(1023)}\n`;
    const staged = await store.stage();
    for (let i = 0; i < 2048; i++) await staged.write(line); // 2 MiB
    const { bytes } = await staged.seal();
    expect((await staged.commit('statements/big.txt', 'text/plain')).created).toBe(true);
    expect(bytes).toBe(2 * 1024 * 1024);
    expect(fake.objects.get('statements/big.txt')?.body.length).toBe(bytes);
  });

  it('fails with the status and S3 code, never the secret, when the signature is wrong', async () => {
    const wrong = createS3ObjectStore({
      endpoint: fake.endpoint,
      stagingDir: staging,
      ...CREDENTIALS,
      secretAccessKey: 'not-the-secret-at-all',
    });
    const error = await wrong.get('statements/x.json').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ObjectStoreError);
    expect((error as ObjectStoreError).details).toEqual({ status: 403, code: 'SignatureDoesNotMatch' });
    expect((error as ObjectStoreError).message).toMatch(/GET answered 403 SignatureDoesNotMatch/);
    const staged = await wrong.stage();
    await staged.write('hello');
    await staged.seal();
    const putError = await staged.commit('statements/y.json', 'text/plain').catch((err: unknown) => err);
    expect(putError).toBeInstanceOf(ObjectStoreError);
    expect((putError as ObjectStoreError).details.status).toBe(403);
    for (const err of [error, putError]) {
      expect(JSON.stringify(err)).not.toContain('not-the-secret-at-all');
      expect(String((err as Error).message)).not.toContain('not-the-secret-at-all');
    }
    expect(fake.objects.has('statements/y.json')).toBe(false);
    expect(readdirSync(staging)).toEqual([]);
  });

  it('keeps the secret out of the store object', () => {
    expect(JSON.stringify(store)).not.toContain(CREDENTIALS.secretAccessKey);
    expect(Object.values(store).map(String).join(' ')).not.toContain(CREDENTIALS.secretAccessKey);
  });

  it('reports a bucket that does not answer as a store error', async () => {
    const dead = createS3ObjectStore({
      endpoint: 'http://127.0.0.1:9', // discard port: nothing listens
      stagingDir: staging,
      ...CREDENTIALS,
      timeoutMs: 2000,
    });
    await expect(dead.head('statements/x.json')).rejects.toBeInstanceOf(ObjectStoreError);
  });

  it('refuses keys that could escape their prefix', async () => {
    for (const key of ['../x', 'statements/../x', '/abs', 'a//b', '.staging/x', 'a/b?c']) {
      await expect(store.head(key), key).rejects.toThrow(RangeError);
    }
  });
});
