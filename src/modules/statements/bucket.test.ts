// A service whose statement store is an S3 bucket (a fake S3 on loopback that checks every
// request's signature): GET /v1/statements stores the export in the bucket and says
// `bucket_bound: true`, the download serves the bucket's bytes, and the account export's
// statements manifest says the same.

import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { startFakeS3, type FakeS3 } from '../../../test/support/fake-s3.ts';
import { bearer, createAccountWithSession, randomAddress } from '../../../test/support/identity.ts';
import { createS3ObjectStore } from '../../adapters/object-store/index.ts';
import { withTransaction } from '../../core/db/database.ts';
import { erc20Asset, externalAccount, postGroup, transfer, walletAccount } from '../ledger/index.ts';

const BUCKET = {
  bucket: 'purser-statements',
  region: 'us-east-1',
  accessKeyId: 'AKIDBUCKETTEST',
  secretAccessKey: 'bucket/test+secret',
};
const USDC = erc20Asset(8453, '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913');

let fake: FakeS3;
let staging: string;
let t: TestApp;

beforeAll(async () => {
  fake = await startFakeS3(BUCKET);
  staging = await mkdtemp(join(tmpdir(), 'purser-bucket-test-'));
  t = await createTestApp({
    deps: { objectStore: createS3ObjectStore({ endpoint: fake.endpoint, stagingDir: staging, ...BUCKET }) },
  });
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
  await rm(staging, { recursive: true, force: true });
});

describe('statements stored in an S3 bucket', () => {
  it('are bucket-bound in the answer and in the account export, and download byte for byte', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const wallet = randomAddress();
    const booked = await withTransaction(t.db.db, (tx) =>
      postGroup(
        tx,
        { now: () => new Date('2026-03-10T08:00:00Z') },
        {
          settlementId: `test:bucket:${wallet}`,
          accountId: acc.accountId,
          kind: 'deposit',
          entries: transfer(walletAccount(8453, wallet), externalAccount(8453), USDC, 25_000_000n),
        },
      ),
    );
    expect(booked.ok).toBe(true);

    const res = await t.app.fastify.inject({
      method: 'GET',
      url: `/v1/statements?wallet=${wallet}&period=2026-03`,
      headers: bearer(acc.sessionToken),
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{
      content_hash: string;
      export: { key: string; bucket_bound: boolean; download_path: string };
    }>();
    expect(body.export.bucket_bound).toBe(true);
    const stored = fake.objects.get(body.export.key);
    expect(stored, `the bucket holds ${[...fake.objects.keys()].join(', ')}`).toBeDefined();
    expect(`sha256:${createHash('sha256').update(stored!.body).digest('hex')}`).toBe(body.content_hash);

    const download = await t.app.fastify.inject({
      method: 'GET',
      url: body.export.download_path,
      headers: bearer(acc.sessionToken),
    });
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.equals(stored!.body)).toBe(true);

    const exported = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/account/export',
      headers: bearer(acc.sessionToken),
    });
    expect(exported.statusCode).toBe(200);
    expect(exported.json().statements_manifest).toEqual({ bucket_bound: true, keys: [body.export.key] });
  });
});
