// generateStatement on a big wallet: 20,000 entries booked in ten 2,000-entry groups are
// streamed in keyset batches (never more than one batch read at a time) and the bytes do not
// depend on the batch size; a failing store or an expired deadline stores nothing; a statement
// stored in an S3 bucket (the fake on loopback) reads back byte for byte.

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFilesystemObjectStore } from '../../adapters/object-store/filesystem.ts';
import { ObjectStoreError, type ObjectStore } from '../../adapters/object-store/port.ts';
import { createS3ObjectStore } from '../../adapters/object-store/s3.ts';
import { ManualClock } from '../../core/clock.ts';
import { withTransaction } from '../../core/db/database.ts';
import { AppError } from '../../core/errors/app-error.ts';
import { Deadline } from '../../core/http/deadline.ts';
import { newId } from '../../core/ids.ts';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { startFakeS3, type FakeS3 } from '../../../test/support/fake-s3.ts';
import { createAccount, randomAddress } from '../../../test/support/identity.ts';
import { erc20Asset, externalAccount, postGroup, walletAccount } from '../ledger/index.ts';
import { openStatementExport, readStreamText } from './download.ts';
import { generateStatement, type GenerateStatementDeps } from './generate.ts';

const clock = new ManualClock('2026-05-20T00:00:00.000Z');
const USDC = erc20Asset(8453, '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913');
const GROUPS = 10;
const PER_GROUP = 2_000;

let t: TestApp;
let accountId: string;
let wallet: string;
let deps: GenerateStatementDeps;
let expectedClosing = 0n;

beforeAll(async () => {
  t = await createTestApp({ clock });
  ({ accountId } = await createAccount(t.db.db));
  wallet = randomAddress();
  deps = { db: t.db.db, clock, objectStore: t.deps.objectStore!, tokenRegistry: t.deps.tokenRegistry };
  for (let g = 0; g < GROUPS; g++) {
    const amounts = Array.from({ length: PER_GROUP }, (_, i) => BigInt(g * PER_GROUP + i + 1));
    const total = amounts.reduce((x, y) => x + y, 0n);
    expectedClosing += total;
    const when = new Date(Date.UTC(2026, 3, 1 + g, 12));
    const res = await withTransaction(t.db.db, (tx) =>
      postGroup(
        tx,
        { now: () => when },
        {
          settlementId: `bulk:${newId('s')}`,
          accountId,
          kind: 'deposit',
          entries: [
            ...amounts.map((amount) => ({ account: walletAccount(8453, wallet), asset: USDC, amount })),
            { account: externalAccount(8453), asset: USDC, amount: -total },
          ],
        },
      ),
    );
    expect(res.ok).toBe(true);
  }
});
afterAll(async () => {
  await t?.close();
});

const params = (format: 'json' | 'csv' = 'json') => ({ accountId, wallet, period: '2026-04', format });

describe('streaming a big statement', () => {
  it('reads 20,000 entries in keyset batches of the injected size', async () => {
    const batches: number[] = [];
    const result = await generateStatement(deps, params(), {
      batchSize: 1_000,
      onBatch: (n) => batches.push(n),
    });
    expect(result.statement.entry_count).toBe(GROUPS * PER_GROUP);
    expect(batches).toHaveLength(20);
    expect(Math.max(...batches)).toBeLessThanOrEqual(1_000);
    expect(batches.reduce((x, y) => x + y, 0)).toBe(GROUPS * PER_GROUP);
    expect(result.statement.balances).toEqual([
      expect.objectContaining({
        ledger_account: walletAccount(8453, wallet),
        opening: '0',
        debits: expectedClosing.toString(),
        closing: expectedClosing.toString(),
        entry_count: GROUPS * PER_GROUP,
      }),
    ]);

    const text = readFileSync(join(t.deps.config.statements.dir, ...result.export.key.split('/')), 'utf8');
    expect(`sha256:${createHash('sha256').update(text).digest('hex')}`).toBe(result.contentHash);
    const doc = JSON.parse(text) as { entries: { seq: number; amount: string }[] };
    expect(doc.entries).toHaveLength(GROUPS * PER_GROUP);
    for (let i = 1; i < doc.entries.length; i++) {
      expect(doc.entries[i]!.seq).toBeGreaterThan(doc.entries[i - 1]!.seq);
    }
    expect(doc.entries.reduce((sum, e) => sum + BigInt(e.amount), 0n)).toBe(expectedClosing);
  });

  it('writes the same bytes whatever the batch size', async () => {
    const small = await generateStatement(deps, params(), { batchSize: 777 });
    const standard = await generateStatement(deps, params());
    const one = await generateStatement(deps, params(), { batchSize: 20_000 });
    expect(standard.contentHash).toBe(small.contentHash);
    expect(one.contentHash).toBe(small.contentHash);
    expect(standard.created).toBe(false);
  });

  it('writes the balance table alone for csv, without reading the entries', async () => {
    const batches: number[] = [];
    const result = await generateStatement(deps, params('csv'), { onBatch: (n) => batches.push(n) });
    expect(batches).toEqual([]);
    expect(result.statement.entry_count).toBe(GROUPS * PER_GROUP);
    expect(result.export.bytes).toBeLessThan(1_000);
  });
});

describe('failures store nothing', () => {
  async function rowsAndStaging() {
    const rows = await t.db.db
      .selectFrom('statement_exports')
      .select('object_key')
      .where('account_id', '=', accountId)
      .execute();
    return { rows: rows.length, staging: readdirSync(join(t.deps.config.statements.dir, '.staging')) };
  }

  it('an expired deadline stops before the next batch: DEADLINE_EXCEEDED', async () => {
    const fresh = randomAddress();
    await withTransaction(t.db.db, (tx) =>
      postGroup(
        tx,
        { now: () => new Date('2026-04-03T00:00:00Z') },
        {
          settlementId: `one:${newId('s')}`,
          accountId,
          kind: 'deposit',
          entries: [
            { account: walletAccount(8453, fresh), asset: USDC, amount: 5n },
            { account: externalAccount(8453), asset: USDC, amount: -5n },
          ],
        },
      ),
    );
    const before = await rowsAndStaging();
    const error = await generateStatement(
      deps,
      { ...params(), wallet: fresh },
      { deadline: new Deadline(0) },
    ).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('DEADLINE_EXCEEDED');
    expect(await rowsAndStaging()).toEqual(before);
  });

  it('a store that fails answers UNAVAILABLE and records no export', async () => {
    const inner = t.deps.objectStore!;
    const failing: ObjectStore = {
      ...inner,
      stage: async () => {
        const staged = await inner.stage();
        return {
          ...staged,
          commit: async () => {
            await staged.discard();
            throw new ObjectStoreError('statement bucket: PUT answered 500 InternalError', { status: 500 });
          },
        };
      },
    };
    const before = await rowsAndStaging();
    const error = await generateStatement(
      { ...deps, objectStore: failing },
      { ...params(), period: '2026-04-02' },
    ).catch((err: unknown) => err);
    expect((error as AppError).code).toBe('UNAVAILABLE');
    expect((error as AppError).message).toMatch(/Nothing was stored/);
    expect(await rowsAndStaging()).toEqual(before);
  });
});

describe('in an S3 bucket', () => {
  let fake: FakeS3;
  let staging: string;
  const credentials = {
    bucket: 'statements',
    region: 'us-east-1',
    accessKeyId: 'AKIDTEST',
    secretAccessKey: 'shh/this+is+secret',
  };

  beforeAll(async () => {
    fake = await startFakeS3(credentials);
    staging = await mkdtemp(join(tmpdir(), 'purser-s3-gen-'));
  });
  afterAll(async () => {
    await fake?.close();
    await rm(staging, { recursive: true, force: true });
  });

  it('stores the export in the bucket, reports bucket_bound and reads it back', async () => {
    const s3 = createS3ObjectStore({ endpoint: fake.endpoint, stagingDir: staging, ...credentials });
    const result = await generateStatement({ ...deps, objectStore: s3 }, params());
    expect(result.export.bucketBound).toBe(true);
    const stored = fake.objects.get(result.export.key);
    expect(stored?.contentType).toBe('application/json; charset=utf-8');
    expect(`sha256:${createHash('sha256').update(stored!.body).digest('hex')}`).toBe(result.contentHash);
    // Same bytes as the directory store wrote for the same statement.
    const local = await generateStatement(deps, params());
    expect(local.contentHash).toBe(result.contentHash);
    const opened = await openStatementExport({ db: t.db.db, objectStore: s3 }, accountId, result.contentHash);
    expect(await readStreamText(opened.body)).toBe(stored!.body.toString('utf8'));
    expect(readdirSync(staging)).toEqual([]);
    // A directory store of another root does not have it: the record points at the bucket's object.
    const elsewhere = createFilesystemObjectStore({ root: staging });
    await expect(
      openStatementExport({ db: t.db.db, objectStore: elsewhere }, accountId, result.contentHash),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
