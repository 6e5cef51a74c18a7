// GET /v1/statements and GET /v1/statements/exports/{content_hash}: what a wallet's statement
// includes (checked against entries booked with the ledger's own functions), byte-for-byte
// determinism, the CSV balance table (answered itself with format=csv), invalid periods (fuzzed)
// storing nothing, and tenancy.

import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../core/canonical-json.ts';
import { ManualClock, type Clock } from '../../core/clock.ts';
import { withTransaction } from '../../core/db/database.ts';
import { newId } from '../../core/ids.ts';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import {
  bearer,
  createAccountWithSession,
  createKey,
  randomAddress,
  type AccountWithSession,
} from '../../../test/support/identity.ts';
import { creditPrepaid, debitFee } from '../billing/index.ts';
import {
  erc20Asset,
  externalAccount,
  nativeAsset,
  postGroup,
  prepaidAccount,
  readGroup,
  reverseGroup,
  transfer,
  venueAccount,
  walletAccount,
  type LedgerEntryInput,
} from '../ledger/index.ts';
import { buildTokenRegistry } from '../registry/index.ts';
import { assetMetadata } from '../registry/index.ts';
import {
  renderStatementCsv,
  STATEMENT_JSON_HEAD,
  statementJsonTail,
  type StatementSummary,
} from './content.ts';
import {
  CSV_EXPORT,
  CSV_EXPORT_PARAMS,
  STATEMENT_ANSWER,
  STATEMENT_EXAMPLE_ENTRY,
} from './openapi-examples.ts';
import { StatementResponse } from './schemas.ts';

const clock = new ManualClock('2026-03-15T12:00:00.000Z');
const USDC = erc20Asset(8453, '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913');
const ETH = nativeAsset(8453, 60);
const SEPOLIA_ETH = nativeAsset(84532, 60);

let t: TestApp;
let a: AccountWithSession;
let b: AccountWithSession;
let wallet: string;
let otherWallet: string;

const db = () => t.db.db;
const at = (iso: string): Clock => ({ now: () => new Date(iso) });

async function book(
  accountId: string | null,
  when: string,
  entries: LedgerEntryInput[],
  settlementId = `test:${newId('s')}`,
): Promise<void> {
  const res = await withTransaction(db(), (tx) =>
    postGroup(tx, at(when), { settlementId, accountId, kind: 'deposit', entries }),
  );
  expect(res.ok).toBe(true);
}

/** A settlement id that JSON must escape: the exported document has to stay canonical. */
const AWKWARD_SETTLEMENT = `tx:"quoted"\\back\nline\ttab\u0001\u007f é €😀 \u2028 ${newId('s')}`;

async function fee(
  accountId: string,
  when: string,
  micro: bigint,
  feeWallet: string | null,
): Promise<string> {
  const res = await withTransaction(db(), (tx) =>
    debitFee(tx, at(when), {
      accountId,
      feeMicroUsd: micro,
      product: 'conversion_intent',
      settlementId: `fee:${newId('r')}`,
      wallet: feeWallet,
    }),
  );
  if (!res.ok) throw new Error(`fee refused: ${res.reason}`);
  return res.groupId;
}

const deposit = (w: string, asset: string, amount: bigint, chain = 8453) =>
  transfer(walletAccount(chain, w), externalAccount(chain), asset, amount);

interface StatementBody {
  statement: StatementSummary;
  content_hash: string;
  export: {
    format: string;
    key: string;
    bytes: number;
    content_type: string;
    bucket_bound: boolean;
    download_path: string;
  };
}

async function getStatement(token: string, query: Record<string, string>) {
  return t.app.fastify.inject({ method: 'GET', url: '/v1/statements', query, headers: bearer(token) });
}

async function statementOf(query: Record<string, string>, token = a.sessionToken): Promise<StatementBody> {
  const res = await getStatement(token, query);
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json<StatementBody>();
  // Every answer matches the schema the OpenAPI document publishes.
  expect(Value.Check(StatementResponse, body), res.body).toBe(true);
  return body;
}

/** GET /v1/statements?format=csv: the CSV table itself, with its hash and location in headers. */
async function csvOf(query: Record<string, string>, token = a.sessionToken) {
  const res = await getStatement(token, { ...query, format: 'csv' });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
  const hash = String(res.headers['x-content-hash']);
  expect(hash).toMatch(/^sha256:[0-9a-f]{64}$/);
  // The header is the hash of the bytes answered.
  expect(`sha256:${createHash('sha256').update(res.rawPayload).digest('hex')}`).toBe(hash);
  expect(res.headers['content-location']).toBe(`/v1/statements/exports/${hash}`);
  expect(res.headers['etag']).toBe(`"${hash.slice(7)}"`);
  return {
    res,
    text: res.body,
    bytes: res.rawPayload,
    hash,
    location: String(res.headers['content-location']),
  };
}

async function download(path: string, token = a.sessionToken) {
  return t.app.fastify.inject({ method: 'GET', url: path, headers: bearer(token) });
}

async function exportRows(accountId: string) {
  return db().selectFrom('statement_exports').selectAll().where('account_id', '=', accountId).execute();
}

/** Object files under the app's statements directory (staging area excluded). */
function storedObjects(): string[] {
  const root = t.deps.config.statements.dir;
  const found: string[] = [];
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === '.staging') continue;
      if (entry.isDirectory()) walk(join(dir, entry.name), `${prefix}${entry.name}/`);
      else found.push(`${prefix}${entry.name}`);
    }
  };
  try {
    walk(root, '');
  } catch {
    return [];
  }
  return found;
}

beforeAll(async () => {
  t = await createTestApp({ clock });
  a = await createAccountWithSession(db());
  b = await createAccountWithSession(db());
  wallet = randomAddress();
  otherWallet = randomAddress();

  const w = wallet;
  await withTransaction(db(), (tx) =>
    creditPrepaid(tx, at('2026-02-01T10:00:00Z'), {
      accountId: a.accountId,
      amountMicroUsd: 10_000_000n,
      settlementId: `topup:${newId('n')}`,
    }),
  );
  // Before March: the opening balances.
  await book(a.accountId, '2026-02-10T08:00:00Z', deposit(w, USDC, 1_000_000_000n));
  await fee(a.accountId, '2026-02-20T08:00:00Z', 30_000n, w);
  // March.
  await book(a.accountId, '2026-03-02T09:00:00Z', deposit(w, USDC, 500_000_000n), AWKWARD_SETTLEMENT);
  await book(a.accountId, '2026-03-03T10:00:00Z', [
    ...transfer(venueAccount('aerodrome', 8453), walletAccount(8453, w), USDC, 200_000_000n),
    ...transfer(walletAccount(8453, w), venueAccount('aerodrome', 8453), ETH, 100_000_000_000_000_000n),
  ]);
  await fee(a.accountId, '2026-03-04T10:00:00Z', 50_000n, w.toUpperCase().replace('0X', '0x'));
  const refunded = await fee(a.accountId, '2026-03-04T11:00:00Z', 20_000n, w);
  await fee(a.accountId, '2026-03-04T12:00:00Z', 10_000n, otherWallet); // another wallet's fee
  await fee(a.accountId, '2026-03-04T13:00:00Z', 40_000n, null); // a fee naming no wallet
  await book(a.accountId, '2026-03-05T10:00:00Z', deposit(w, SEPOLIA_ETH, 7n, 84532));
  const refund = await withTransaction(db(), (tx) =>
    reverseGroup(tx, at('2026-03-06T10:00:00Z'), {
      groupId: refunded,
      accountId: a.accountId,
      reason: 'refund',
    }),
  );
  expect(refund.ok).toBe(true);
  await book(a.accountId, '2026-03-31T23:59:59.999Z', deposit(w, USDC, 1n));
  // Outside the statement: April, another account's group, a platform group, another wallet.
  await book(a.accountId, '2026-04-01T00:00:00.000Z', deposit(w, USDC, 2n));
  await book(b.accountId, '2026-03-02T09:30:00Z', deposit(w, USDC, 999n));
  await book(null, '2026-03-02T09:40:00Z', deposit(w, USDC, 998n));
  await book(a.accountId, '2026-03-02T09:50:00Z', deposit(otherWallet, USDC, 997n));
});
afterAll(async () => {
  await t?.close();
});

describe('what a statement includes', () => {
  it('tags a fee with its wallet, lowercase, in the group memo', async () => {
    const groupId = await fee(a.accountId, '2026-02-21T08:00:00Z', 1n, `0x${'AB'.repeat(20)}`);
    const group = await readGroup(db(), groupId, a.accountId);
    expect(group?.memo).toEqual({ product: 'conversion_intent', wallet: `0x${'ab'.repeat(20)}` });
  });

  it("is the balance table of the wallet's ledger accounts and of its fees, for the UTC month", async () => {
    const body = await statementOf({ wallet: wallet.toUpperCase().replace('0X', '0x'), period: '2026-03' });
    const s = body.statement;
    expect(s.wallet).toBe(wallet);
    expect(s.period).toEqual({
      label: '2026-03',
      start: '2026-03-01T00:00:00.000Z',
      end: '2026-04-01T00:00:00.000Z',
    });
    expect(
      s.balances.map((r) => [
        r.ledger_account,
        r.asset,
        r.opening,
        r.debits,
        r.credits,
        r.closing,
        r.entry_count,
      ]),
    ).toEqual([
      [prepaidAccount(a.accountId), 'USD', '30000', '70000', '20000', '80000', 3],
      [walletAccount(84532, wallet), SEPOLIA_ETH, '0', '7', '0', '7', 1],
      [walletAccount(8453, wallet), USDC, '1000000000', '500000001', '200000000', '1300000001', 3],
      [walletAccount(8453, wallet), ETH, '0', '100000000000000000', '0', '100000000000000000', 1],
    ]);
    // Format version 2: each row names its token's symbol and decimals.
    expect(s.format_version).toBe(2);
    expect(s.balances.map((r) => [r.asset, r.symbol, r.decimals])).toEqual([
      ['USD', 'USD', 6],
      [SEPOLIA_ETH, 'ETH', 18],
      [USDC, 'USDC', 6],
      [ETH, 'ETH', 18],
    ]);
    expect(s.entry_count).toBe(8);
    expect(s.fees_usd).toBe('0.050000');
    const firsts = s.balances.map((r) => r.first_seq!);
    const lasts = s.balances.map((r) => r.last_seq!);
    expect(s.ledger_range).toEqual({ first_seq: Math.min(...firsts), last_seq: Math.max(...lasts) });
    expect(body.content_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(body.export).toEqual({
      format: 'json',
      key: `statements/${a.accountId}/${body.content_hash.slice(7)}.json`,
      bytes: expect.any(Number),
      content_type: 'application/json; charset=utf-8',
      bucket_bound: false,
      download_path: `/v1/statements/exports/${body.content_hash}`,
    });
  });

  it('covers one UTC day with its opening balances', async () => {
    const s = (await statementOf({ wallet, period: '2026-03-04' })).statement;
    expect(s.period).toEqual({
      label: '2026-03-04',
      start: '2026-03-04T00:00:00.000Z',
      end: '2026-03-05T00:00:00.000Z',
    });
    expect(
      s.balances.map((r) => [r.ledger_account, r.asset, r.opening, r.debits, r.credits, r.entry_count]),
    ).toEqual([
      [prepaidAccount(a.accountId), 'USD', '30000', '70000', '0', 2],
      [walletAccount(8453, wallet), USDC, '1300000000', '0', '0', 0],
      [walletAccount(8453, wallet), ETH, '100000000000000000', '0', '0', 0],
    ]);
    expect(s.fees_usd).toBe('0.070000');
    expect(s.entry_count).toBe(2);
  });

  it('is empty, not an error, for a wallet without entries', async () => {
    const empty = randomAddress();
    const csv = await csvOf({ wallet: empty, period: '2026-02' });
    expect(csv.text).toBe(
      'wallet,period,period_start,period_end,ledger_account,asset,symbol,decimals,opening,debits,credits,' +
        'closing,entry_count,first_seq,last_seq\r\n',
    );
    expect((await download(csv.location)).body).toBe(csv.text);
    const json = await statementOf({ wallet: empty, period: '2026-02' });
    expect(json.statement).toMatchObject({
      balances: [],
      entry_count: 0,
      fees_usd: '0.000000',
      ledger_range: { first_seq: null, last_seq: null },
    });
    expect((await download(json.export.download_path)).body).toBe(
      `{"entries":[],"statement":${canonicalJson(json.statement)},"version":2}`,
    );
  });
});

describe('the exported content', () => {
  it('JSON: one canonical document, the summary and every included entry in seq order', async () => {
    const body = await statementOf({ wallet, period: '2026-03' });
    const res = await download(body.export.download_path);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['etag']).toBe(`"${body.content_hash.slice(7)}"`);
    const text = res.body;
    expect(Buffer.byteLength(text)).toBe(body.export.bytes);
    expect(`sha256:${createHash('sha256').update(text).digest('hex')}`).toBe(body.content_hash);
    const doc = JSON.parse(text) as {
      entries: Record<string, unknown>[];
      statement: unknown;
      version: number;
    };
    expect(canonicalJson(doc)).toBe(text);
    expect(doc.version).toBe(2);
    expect(doc.statement).toEqual(body.statement);
    expect(doc.entries).toHaveLength(8);
    const seqs = doc.entries.map((e) => e['seq'] as number);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs[0]).toBe(body.statement.ledger_range.first_seq);
    expect(seqs.at(-1)).toBe(body.statement.ledger_range.last_seq);
    // The entries add up to each row's movement.
    for (const row of body.statement.balances) {
      const sum = doc.entries
        .filter((e) => e['ledger_account'] === row.ledger_account && e['asset'] === row.asset)
        .reduce((acc, e) => acc + BigInt(e['amount'] as string), 0n);
      expect(sum, `${row.ledger_account} ${row.asset}`).toBe(BigInt(row.debits) - BigInt(row.credits));
    }
    expect(Object.keys(doc.entries[0]!).sort()).toEqual([
      'amount',
      'asset',
      'created_at',
      'group_id',
      'kind',
      'ledger_account',
      'policy_hash',
      'reverses',
      'seq',
      'settlement_id',
    ]);
    expect(doc.entries.map((e) => e['settlement_id'])).toContain(AWKWARD_SETTLEMENT);
    expect(doc.entries[0]!['created_at']).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const refund = doc.entries.find((e) => e['kind'] === 'reversal');
    expect(refund).toMatchObject({ ledger_account: prepaidAccount(a.accountId), amount: '-20000' });
    expect(refund?.['reverses']).toMatch(/^lgr_/);
  });

  it('CSV: the answer is the balance table itself, the stored export byte for byte', async () => {
    const csv = await csvOf({ wallet, period: '2026-03' });
    const lines = csv.text.split('\r\n');
    expect(lines.pop()).toBe('');
    // The rows are the summary's balances, the same as format=json reports.
    const s = (await statementOf({ wallet, period: '2026-03' })).statement;
    const rows = s.balances.map((r) =>
      [
        wallet,
        '2026-03',
        '2026-03-01T00:00:00.000Z',
        '2026-04-01T00:00:00.000Z',
        r.ledger_account,
        r.asset,
        r.symbol,
        r.decimals,
        r.opening,
        r.debits,
        r.credits,
        r.closing,
        r.entry_count,
        r.first_seq,
        r.last_seq,
      ].join(','),
    );
    expect(lines).toEqual([
      'wallet,period,period_start,period_end,ledger_account,asset,symbol,decimals,opening,debits,credits,' +
        'closing,entry_count,first_seq,last_seq',
      ...rows,
    ]);
    expect(lines[1]).toContain(`,${prepaidAccount(a.accountId)},USD,USD,6,30000,70000,20000,80000,3,`);
    expect(lines[2]).toContain(`,${walletAccount(84532, wallet)},${SEPOLIA_ETH},ETH,18,0,7,0,7,1,`);
    expect(lines[3]).toContain(
      `,${walletAccount(8453, wallet)},${USDC},USDC,6,1000000000,500000001,200000000,1300000001,3,`,
    );

    // Each wallet row is what the ledger holds: A's entries of that ledger account and asset.
    const march = { start: new Date('2026-03-01T00:00:00Z'), end: new Date('2026-04-01T00:00:00Z') };
    for (const line of lines.slice(1)) {
      const [, , , , account, asset, , , opening, debits, credits, closing, count, first, last] =
        line.split(',');
      if (!account!.startsWith('wallet:')) continue;
      const entries = await db()
        .selectFrom('ledger_entries as e')
        .innerJoin('ledger_groups as g', 'g.id', 'e.group_id')
        .select(['e.seq', 'e.amount', 'g.created_at'])
        .where('g.account_id', '=', a.accountId)
        .where('e.ledger_account', '=', account!)
        .where('e.asset', '=', asset!)
        .where('g.created_at', '<', march.end)
        .orderBy('e.seq')
        .execute();
      const before = entries.filter((e) => new Date(e.created_at) < march.start);
      const during = entries.filter((e) => new Date(e.created_at) >= march.start);
      const sum = (xs: bigint[]) => xs.reduce((x, y) => x + y, 0n);
      const amounts = during.map((e) => BigInt(e.amount));
      expect(opening).toBe(String(sum(before.map((e) => BigInt(e.amount)))));
      expect(debits).toBe(String(sum(amounts.filter((x) => x > 0n))));
      expect(credits).toBe(String(-sum(amounts.filter((x) => x < 0n))));
      expect(closing).toBe(String(sum(entries.map((e) => BigInt(e.amount)))));
      expect(Number(count)).toBe(during.length);
      expect(first).toBe(during[0] ? String(during[0].seq) : '');
      expect(last).toBe(during.at(-1) ? String(during.at(-1)!.seq) : '');
    }

    // The hash header names the stored export: its row, its object and its download.
    const row = (await exportRows(a.accountId)).find((r) => r.content_hash === csv.hash);
    expect(row).toMatchObject({
      format: 'csv',
      wallet,
      period: '2026-03',
      object_key: `statements/${a.accountId}/${csv.hash.slice(7)}.csv`,
    });
    expect(Number(row?.bytes)).toBe(csv.bytes.length);
    expect(storedObjects()).toContain(row?.object_key);
    const stored = await download(csv.location);
    expect(stored.statusCode).toBe(200);
    expect(stored.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(Buffer.compare(stored.rawPayload, csv.bytes)).toBe(0);
  });

  it('is listed in the account export manifest', async () => {
    const res = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/account/export',
      headers: bearer(a.sessionToken),
    });
    expect(res.statusCode).toBe(200);
    const manifest = res.json<{ statements_manifest: { bucket_bound: boolean; keys: string[] } }>()
      .statements_manifest;
    expect(manifest.bucket_bound).toBe(false);
    const keys = (await exportRows(a.accountId)).map((r) => r.object_key);
    expect(keys.length).toBeGreaterThanOrEqual(4);
    expect([...manifest.keys].sort()).toEqual([...keys].sort());
    for (const key of manifest.keys) expect(storedObjects()).toContain(key);
  });
});

describe('determinism', () => {
  it('gives byte-identical content and the same hash for the same ledger range', async () => {
    const first = await statementOf({ wallet, period: '2026-03' });
    const rowsBefore = (await exportRows(a.accountId)).length;
    const second = await statementOf({ wallet, period: '2026-03' });
    expect(second).toEqual(first);
    expect((await exportRows(a.accountId)).length).toBe(rowsBefore);
    const bytes1 = (await download(first.export.download_path)).rawPayload;
    const bytes2 = (await download(second.export.download_path)).rawPayload;
    expect(Buffer.compare(bytes1, bytes2)).toBe(0);
  });

  it('CSV: two requests answer byte-identical tables with the same hash, stored once', async () => {
    const first = await csvOf({ wallet, period: '2026-03' });
    const rowsBefore = (await exportRows(a.accountId)).length;
    const objectsBefore = storedObjects();
    const second = await csvOf({ wallet: wallet.toUpperCase().replace('0X', '0x'), period: '2026-03' });
    expect(Buffer.compare(first.bytes, second.bytes)).toBe(0);
    expect(second.hash).toBe(first.hash);
    expect(second.location).toBe(first.location);
    expect((await exportRows(a.accountId)).length).toBe(rowsBefore);
    expect(storedObjects()).toEqual(objectsBefore);
  });

  it('ignores what the statement does not cover, and changes with a new entry in the period', async () => {
    const before = await statementOf({ wallet, period: '2026-03' });
    const beforeCsv = await csvOf({ wallet, period: '2026-03' });
    // Another account's entry, an entry outside the period, another wallet's entry and fee.
    await book(b.accountId, '2026-03-10T10:00:00Z', deposit(wallet, USDC, 5n));
    await book(a.accountId, '2026-04-02T10:00:00Z', deposit(wallet, USDC, 5n));
    await book(a.accountId, '2026-02-28T10:00:00Z', deposit(otherWallet, USDC, 5n));
    await fee(a.accountId, '2026-03-10T10:00:00Z', 5n, otherWallet);
    await fee(a.accountId, '2026-03-10T10:00:00Z', 5n, null);
    const unchanged = await statementOf({ wallet, period: '2026-03' });
    expect(unchanged.content_hash).toBe(before.content_hash);
    expect((await csvOf({ wallet, period: '2026-03' })).hash).toBe(beforeCsv.hash);

    await book(a.accountId, '2026-03-10T10:00:00Z', deposit(wallet, USDC, 5n));
    const changed = await statementOf({ wallet, period: '2026-03' });
    expect(changed.content_hash).not.toBe(before.content_hash);
    expect(changed.statement.entry_count).toBe(before.statement.entry_count + 1);
    const changedCsv = await csvOf({ wallet, period: '2026-03' });
    expect(changedCsv.hash).not.toBe(beforeCsv.hash);
    expect(changedCsv.text).not.toBe(beforeCsv.text);
    // Both versions stay downloadable: exports are immutable.
    expect((await download(before.export.download_path)).statusCode).toBe(200);
    expect((await download(changed.export.download_path)).statusCode).toBe(200);
  });
});

describe('invalid periods', () => {
  /** A real month or day from 1970 on that has begun by the clock (Date's parser as the oracle). */
  function admitted(label: string): boolean {
    if (!/^\d{4}-\d{2}(-\d{2})?$/.test(label) || Number(label.slice(0, 4)) < 1970) return false;
    const day = label.length === 7 ? `${label}-01` : label;
    const start = new Date(`${day}T00:00:00.000Z`);
    return (
      !Number.isNaN(start.getTime()) &&
      start.toISOString().slice(0, 10) === day &&
      start.getTime() <= clock.now().getTime()
    );
  }

  it('answers 400 INVALID_REQUEST naming period, and stores nothing', async () => {
    const fresh = await createAccountWithSession(db());
    const objectsBefore = storedObjects();
    const pad = (n: number, w: number) => String(n).padStart(w, '0');
    const invalid = fc
      .oneof(
        fc.string({ maxLength: 14 }),
        fc
          .tuple(fc.integer({ min: 1900, max: 2100 }), fc.integer({ min: 0, max: 13 }))
          .map(([y, m]) => `${pad(y, 4)}-${pad(m, 2)}`),
        fc
          .tuple(
            fc.integer({ min: 1965, max: 2030 }),
            fc.integer({ min: 0, max: 13 }),
            fc.integer({ min: 0, max: 32 }),
          )
          .map(([y, m, d]) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`),
        fc.constantFrom('2025-02-29', '2026-04', '2026-03-16', '1969-12', '2026-3', '2026-03-01T00:00Z'),
      )
      .filter((label) => !admitted(label));
    await fc.assert(
      fc.asyncProperty(invalid, async (period) => {
        const res = await getStatement(fresh.sessionToken, { wallet, period });
        const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
        expect(body.message).toMatch(/period/);
      }),
      { numRuns: 60 },
    );
    expect(await exportRows(fresh.accountId)).toEqual([]);
    expect(storedObjects()).toEqual(objectsBefore);
    const staging = join(t.deps.config.statements.dir, '.staging');
    expect(readdirSync(staging)).toEqual([]);
  });

  it('also refuses a missing period, a bad wallet and an unknown format', async () => {
    for (const query of [
      { wallet },
      { wallet: 'nope', period: '2026-03' },
      { wallet, period: '2026-03', format: 'xml' },
      { wallet, period: '2026-03', extra: '1' },
    ]) {
      expectErrorBody(await getStatement(a.sessionToken, query), 400, 'INVALID_REQUEST');
    }
    for (const format of ['CSV', 'text/csv', '', 'csv,json']) {
      const res = await getStatement(a.sessionToken, { wallet, period: '2026-03', format });
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(expectErrorBody(res, 400, 'INVALID_REQUEST').message).toContain(
        'format must be one of json, csv',
      );
    }
  });
});

describe('token metadata (format version 2)', () => {
  const registry = buildTokenRegistry('production');

  it('names ERC-20s from the registry, USD, native coins and shares; nulls for the unknown', () => {
    const cases: [string, string | null, number | null][] = [
      [USDC, 'USDC', 6],
      [erc20Asset(8453, '0x4200000000000000000000000000000000000006'), 'WETH', 18],
      [erc20Asset(137, '0x2791bca1f2de4661ed88a30c99a7a9449aa84174'), 'USDC.E', 6],
      ['USD', 'USD', 6],
      [ETH, 'ETH', 18],
      [SEPOLIA_ETH, 'ETH', 18],
      [nativeAsset(137, 60), 'POL', 18],
      [nativeAsset(137, 966), 'POL', 18],
      // A prediction-market outcome share: no symbol, micro shares.
      [`eip155:137/erc1155:0x4d97dcd97ec945f40cf65f87097ace5ea0476045/${12345678901234567890n}`, null, 6],
      // Unknown to the registry: a token it does not list, a chain it does not serve, another coin.
      [erc20Asset(8453, `0x${'12'.repeat(20)}`), null, null],
      [erc20Asset(1, '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48'), null, null],
      [nativeAsset(1, 60), null, null],
      [nativeAsset(8453, 0), null, null],
      ['not-an-asset', null, null],
    ];
    for (const [asset, symbol, decimals] of cases) {
      expect(assetMetadata(registry, asset), asset).toEqual({ symbol, decimals });
    }
  });

  it('writes an unknown asset as empty CSV fields and JSON nulls', () => {
    const unknown = erc20Asset(8453, `0x${'12'.repeat(20)}`);
    const summary: StatementSummary = {
      ...STATEMENT_ANSWER.statement,
      balances: [
        { ...STATEMENT_ANSWER.statement.balances[0]!, asset: unknown, symbol: null, decimals: null },
      ],
    };
    expect(renderStatementCsv(summary).split('\r\n')[1]).toContain(`,${unknown},,,0,1000000000,`);
    expect(statementJsonTail(summary)).toContain('"decimals":null');
    expect(statementJsonTail(summary)).toContain('"symbol":null');
  });

  it("the OpenAPI examples are the exports of the example's summary, hashes and sizes included", () => {
    const csv = renderStatementCsv(STATEMENT_ANSWER.statement);
    expect(csv).toBe(CSV_EXPORT);
    expect(CSV_EXPORT_PARAMS.content_hash).toBe(`sha256:${createHash('sha256').update(csv).digest('hex')}`);
    const doc =
      STATEMENT_JSON_HEAD +
      canonicalJson(STATEMENT_EXAMPLE_ENTRY) +
      statementJsonTail(STATEMENT_ANSWER.statement);
    expect(JSON.parse(doc)).toMatchObject({ version: 2, statement: { format_version: 2 } });
    expect(STATEMENT_ANSWER.content_hash).toBe(`sha256:${createHash('sha256').update(doc).digest('hex')}`);
    expect(STATEMENT_ANSWER.export.bytes).toBe(Buffer.byteLength(doc));
    expect(Value.Check(StatementResponse, STATEMENT_ANSWER)).toBe(true);
  });
});

describe('the OpenAPI document', () => {
  it('declares the JSON answer and the text/csv one, with the hash and location headers', async () => {
    const res = await t.app.fastify.inject({ method: 'GET', url: '/v1/openapi.json' });
    const doc = res.json();
    const ok = doc.paths['/v1/statements'].get.responses['200'];
    expect(Object.keys(ok.content).sort()).toEqual(['application/json', 'text/csv']);
    expect(ok.content['text/csv'].schema).toMatchObject({ type: 'string' });
    // The JSON answer is the spec's Statement resource, a named component.
    expect(ok.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Statement' });
    expect(doc.components.schemas.Statement).toMatchObject({ type: 'object' });
    expect(Object.keys(ok.headers).sort()).toEqual([
      'content-location',
      'etag',
      'x-content-hash',
      'x-request-id',
    ]);
  });
});

describe('downloads and tenancy', () => {
  it("serves an export only to the account that generated it: another account's is 404", async () => {
    const body = await statementOf({ wallet, period: '2026-03' });
    expectErrorBody(await download(body.export.download_path, b.sessionToken), 404, 'NOT_FOUND');
    // B generating its own statement of the same wallet sees only its own groups.
    const mine = await statementOf({ wallet, period: '2026-03' }, b.sessionToken);
    expect(mine.content_hash).not.toBe(body.content_hash);
    expect(mine.statement.balances.map((r) => r.ledger_account)).toEqual([walletAccount(8453, wallet)]);
    expectErrorBody(await download(mine.export.download_path, a.sessionToken), 404, 'NOT_FOUND');
    expect((await download(mine.export.download_path, b.sessionToken)).statusCode).toBe(200);
  });

  it('answers 404 for an unknown hash and 400 for a malformed one; accepts an encoded colon', async () => {
    expectErrorBody(await download(`/v1/statements/exports/sha256:${'0'.repeat(64)}`), 404, 'NOT_FOUND');
    expectErrorBody(await download('/v1/statements/exports/sha256:xyz'), 400, 'INVALID_REQUEST');
    const body = await statementOf({ wallet, period: '2026-03' });
    const encoded = body.export.download_path.replace('sha256:', 'sha256%3A');
    expect((await download(encoded)).statusCode).toBe(200);
  });

  it("admits a key pinned to the statement's wallet and refuses one pinned elsewhere", async () => {
    const pinned = await createKey(db(), a.accountId, { scopes: ['read'], wallets: [wallet] });
    const elsewhere = await createKey(db(), a.accountId, { scopes: ['read'], wallets: [otherWallet] });
    const body = await statementOf({ wallet, period: '2026-03' }, pinned.token);
    expect((await download(body.export.download_path, pinned.token)).statusCode).toBe(200);
    expectErrorBody(await getStatement(elsewhere.token, { wallet, period: '2026-03' }), 403, 'FORBIDDEN');
    expectErrorBody(await download(body.export.download_path, elsewhere.token), 403, 'FORBIDDEN');
  });

  it('answers 401 without a credential', async () => {
    expectErrorBody(
      await t.app.fastify.inject({
        method: 'GET',
        url: '/v1/statements',
        query: { wallet, period: '2026-03' },
      }),
      401,
      'UNAUTHORIZED',
    );
  });
});
