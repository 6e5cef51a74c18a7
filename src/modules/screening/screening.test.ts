// Screening as a client and an operator meet it: `purser screening sync` replacing the stored
// SDN addresses, and POST /v1/screenings answering hits, misses and bad requests.

import { buildTokenRegistry } from '../registry/index.ts';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../app.ts';
import { testConfig, type Config } from '../../config.ts';
import { refuseAllAuthenticator } from '../../../test/support/refuse-all-authenticator.ts';
import { ManualClock } from '../../core/clock.ts';
import { unavailable } from '../../core/errors/app-error.ts';
import { createLogger } from '../../core/log.ts';
import type { AppDeps } from '../../deps.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import { downloadSdnXml, SDN_LIST, syncSdnList, type ScreeningProvider } from './index.ts';
import { getList, listAddresses } from './store.ts';

const FIXTURE = readFileSync(new URL('./fixtures/sdn-sample.xml', import.meta.url), 'utf8');
const log = createLogger('silent');

/** Fixture addresses as stored: EVM lowercased, others verbatim, one row per (address, asset). */
const FIXTURE_ROWS = [
  { address: '0x7987fffd095501f3a5d57eca0dfdc19ef1157eab', asset: 'ETH', entryUid: '90002' },
  { address: '0xbf7f4bb976f5f5369fe03c550906df7c2662b5e7', asset: 'ETH', entryUid: '90003' },
  { address: '0xbf7f4bb976f5f5369fe03c550906df7c2662b5e7', asset: 'USDT', entryUid: '90003' },
  { address: '0xcbb2f6e7e0ad70bdab8fd391a8419d2ae866d342', asset: 'ETH', entryUid: '90002' },
  { address: '0xe429c70ff681b441e6131f8d6fde93d5352eef72', asset: 'ETH', entryUid: '90004' },
  { address: '193XcBCxcRJ94V7WU9ve5KQ7E4DLSxyK23', asset: 'XBT', entryUid: '90002' },
  {
    address:
      '43tuu7YC112JHt63Qsijs5knQUP8JaBSHDPWVDJWxZbdDauEQU8qV8CJL2bEe6RR326LvfsahX3dXt2Si9QBndYhuaUu3pF',
    asset: 'XMR',
    entryUid: '90003',
  },
  { address: 'TypkPBybKPvbE6anXiRqSVqeFDGxRMhcwy', asset: 'TRX', entryUid: '90003' },
];
const LISTED = '0xcbB2f6E7E0aD70BdaB8Fd391a8419D2AE866d342';
const CLEAN = '0xDF52369ae6439923401375C65aF13eBB867872e1';

/** A one-entry list in the real format. */
function smallList(publishDate: string, addresses: { asset: string; address: string }[]): string {
  const ids = addresses
    .map(
      (a, i) =>
        `<id><uid>${800 + i}</uid><idType>Digital Currency Address - ${a.asset}</idType><idNumber>${a.address}</idNumber></id>`,
    )
    .join('');
  return (
    '<?xml version="1.0" standalone="yes"?>\n' +
    '<sdnList xmlns="https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/XML">' +
    `<publshInformation><Publish_Date>${publishDate}</Publish_Date><Record_Count>1</Record_Count></publshInformation>` +
    `<sdnEntry><uid>777</uid><lastName>LATER ENTRY</lastName><sdnType>Entity</sdnType><idList>${ids}</idList></sdnEntry>` +
    '</sdnList>'
  );
}

let database: TestDatabase;
const clock = new ManualClock('2026-03-15T08:00:00.000Z');
const apps: App[] = [];

async function makeApp(config: Partial<Config>, screeningProviders?: ScreeningProvider[]): Promise<App> {
  const deps: AppDeps = {
    config: testConfig(config),
    tokenRegistry: buildTokenRegistry('development'),
    db: database.handle.db,
    dbKind: database.kind,
    clock,
    log,
    authenticator: refuseAllAuthenticator,
    ...(screeningProviders ? { screeningProviders } : {}),
  };
  const app = await buildApp(deps);
  apps.push(app);
  return app;
}

const sync = (xml: string, source?: string) =>
  syncSdnList({
    db: database.handle.db,
    clock,
    log,
    fetchXml: async () => xml,
    ...(source ? { source } : {}),
  });

const screen = (app: App, payload: unknown) =>
  app.fastify.inject({ method: 'POST', url: '/v1/screenings', payload: payload as object });

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(apps.map((a) => a.fastify.close()));
  await database?.drop();
});

/** Forgets every stored list (the cascade takes the addresses). */
async function clearLists(): Promise<void> {
  await database.handle.db.deleteFrom('screening_lists').execute();
}

describe('syncSdnList', () => {
  beforeEach(clearLists);

  it('stores every digital-currency address of the list, EVM ones lowercased, with the list facts', async () => {
    const result = await sync(FIXTURE, 'https://example.test/SDN.XML');
    expect(result).toEqual({
      list: 'OFAC SDN',
      publishDate: '2026-03-14',
      entryCount: 5,
      addressCount: 8,
      previousAddressCount: 0,
      source: 'https://example.test/SDN.XML',
    });
    expect(await listAddresses(database.handle.db, SDN_LIST)).toEqual(FIXTURE_ROWS);
    expect(await getList(database.handle.db, SDN_LIST)).toEqual({
      list: 'OFAC SDN',
      publishDate: '2026-03-14',
      recordCount: 5,
      addressCount: 8,
      source: 'https://example.test/SDN.XML',
      syncedAt: clock.now(),
    });
  });

  it('replaces the whole set: a re-sync with a smaller list removes the addresses it no longer names', async () => {
    await sync(FIXTURE);
    const later = smallList('03/21/2026', [
      { asset: 'ETH', address: '0xBF7f4bb976F5f5369Fe03C550906DF7C2662B5E7' },
      { asset: 'ETH', address: CLEAN },
    ]);
    const result = await sync(later);
    expect(result.addressCount).toBe(2);
    expect(result.previousAddressCount).toBe(8);
    expect(await listAddresses(database.handle.db, SDN_LIST)).toEqual([
      { address: '0xbf7f4bb976f5f5369fe03c550906df7c2662b5e7', asset: 'ETH', entryUid: '777' },
      { address: CLEAN.toLowerCase(), asset: 'ETH', entryUid: '777' },
    ]);
    expect((await getList(database.handle.db, SDN_LIST))?.publishDate).toBe('2026-03-21');
  });

  it('keeps the stored set when the new file is damaged, empty of addresses, or fails while being stored', async () => {
    await sync(FIXTURE);
    const before = await listAddresses(database.handle.db, SDN_LIST);
    await expect(sync(FIXTURE.slice(0, FIXTURE.length / 2))).rejects.toThrow(/truncated|ends inside/);
    await expect(sync(smallList('03/21/2026', []))).rejects.toThrow(/holds no digital-currency address/);
    // The first rows insert fine, then an address longer than any real one breaks the insert
    // after the old rows were deleted: the transaction must take the delete back too.
    await expect(
      sync(
        smallList('03/21/2026', [
          { asset: 'ETH', address: CLEAN },
          { asset: 'XBT', address: `1${'a'.repeat(300)}` },
        ]),
      ),
    ).rejects.toThrow();
    expect(await listAddresses(database.handle.db, SDN_LIST)).toEqual(before);
    expect((await getList(database.handle.db, SDN_LIST))?.publishDate).toBe('2026-03-14');
  });

  it('downloads the list in chunks from an HTTP server (the real source)', async () => {
    const server: Server = createServer((req, res) => {
      if (req.url !== '/SDN.XML') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/xml' });
      const bytes = Buffer.from(FIXTURE);
      for (let i = 0; i < bytes.length; i += 100) res.write(bytes.subarray(i, i + 100));
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const result = await syncSdnList({
        db: database.handle.db,
        clock,
        log,
        fetchXml: async () => downloadSdnXml(`${base}/SDN.XML`),
        source: `${base}/SDN.XML`,
      });
      expect(result.addressCount).toBe(8);
      await expect(
        syncSdnList({
          db: database.handle.db,
          clock,
          log,
          fetchXml: async () => downloadSdnXml(`${base}/missing`),
        }),
      ).rejects.toThrow(/HTTP 404/);
      expect(await listAddresses(database.handle.db, SDN_LIST)).toEqual(FIXTURE_ROWS);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('POST /v1/screenings', () => {
  let production: App;

  beforeAll(async () => {
    production = await makeApp({ env: 'production' });
  });

  it('answers 503 in production while the SDN list was never loaded, instead of calling anyone clean', async () => {
    await clearLists();
    const res = await screen(production, { address: CLEAN });
    const body = expectErrorBody(res, 503, 'UNAVAILABLE');
    expect(body.remediation).toContain('purser screening sync');
  });

  it('seeds the bundled fixture in development when no list was ever loaded', async () => {
    await clearLists();
    const development = await makeApp({ env: 'development' });
    const res = await screen(development, { address: LISTED });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ address: LISTED, sanctioned: true, lists: ['OFAC SDN'], provider_count: 1 });
    expect((await getList(database.handle.db, SDN_LIST))?.source).toBe('fixture:sdn-sample.xml');
    // A list synced for real is never overwritten by the fixture.
    await sync(smallList('03/21/2026', [{ asset: 'ETH', address: CLEAN }]));
    const after = await screen(development, { address: LISTED });
    expect(after.json()).toMatchObject({ sanctioned: false, lists: [] });
  });

  describe('with the fixture list stored', () => {
    beforeAll(async () => {
      await clearLists();
      await sync(FIXTURE);
    });

    it.each([
      ['checksummed', LISTED],
      ['lowercase', LISTED.toLowerCase()],
      ['uppercase hex', `0x${LISTED.slice(2).toUpperCase()}`],
      ['a USDT-listed address', '0xbf7f4bb976f5f5369fe03c550906df7c2662b5e7'],
      ['an address the file wrote in lowercase', '0xE429C70FF681B441E6131F8D6FDE93D5352EEF72'],
    ])('finds a listed address written %s', async (_how, address) => {
      const res = await screen(production, { address });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ address, sanctioned: true, lists: ['OFAC SDN'], provider_count: 1 });
    });

    it('answers a miss', async () => {
      const res = await screen(production, { address: CLEAN });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ address: CLEAN, sanctioned: false, lists: [], provider_count: 1 });
    });

    it.each([
      ['too short', '0x1234'],
      ['without 0x', LISTED.slice(2)],
      ['41 hex characters', `${LISTED}a`],
      ['not hex', `0x${'g'.repeat(40)}`],
      ['a bitcoin address', '193XcBCxcRJ94V7WU9ve5KQ7E4DLSxyK23'],
      ['a number', 42],
    ])('refuses an address that is %s with the error body', async (_how, address) => {
      const res = await screen(production, { address });
      const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
      expect(body.message).toContain('address');
    });

    it('refuses a missing address and an unknown field, naming them', async () => {
      const missing = expectErrorBody(await screen(production, {}), 400, 'INVALID_REQUEST');
      expect(missing.message).toContain('address is required');
      const unknown = expectErrorBody(
        await screen(production, { address: CLEAN, chain_id: 8453 }),
        400,
        'INVALID_REQUEST',
      );
      expect(unknown.message).toContain('unknown field chain_id');
    });

    it('asks every configured provider and fails closed when one cannot answer', async () => {
      const other: ScreeningProvider = {
        name: 'other',
        screen: async (address) => (address.toLowerCase() === CLEAN.toLowerCase() ? ['OTHER LIST'] : []),
      };
      const withOther = await makeApp({ env: 'production' }, [other]);
      expect((await screen(withOther, { address: CLEAN })).json()).toEqual({
        address: CLEAN,
        sanctioned: true,
        lists: ['OTHER LIST'],
        provider_count: 2,
      });
      expect((await screen(withOther, { address: LISTED })).json()).toMatchObject({
        lists: ['OFAC SDN'],
        provider_count: 2,
      });
      const down: ScreeningProvider = {
        name: 'down',
        screen: async () => {
          throw unavailable('The other screening provider is unreachable.');
        },
      };
      const withDown = await makeApp({ env: 'production' }, [down]);
      expectErrorBody(await screen(withDown, { address: CLEAN }), 503, 'UNAVAILABLE');
    });

    it('honours Idempotency-Key: the same key replays the first answer, another payload conflicts', async () => {
      const headers = { 'idempotency-key': 'screen-1' };
      const first = await production.fastify.inject({
        method: 'POST',
        url: '/v1/screenings',
        headers,
        payload: { address: CLEAN },
      });
      const second = await production.fastify.inject({
        method: 'POST',
        url: '/v1/screenings',
        headers,
        payload: { address: CLEAN },
      });
      const conflicting = await production.fastify.inject({
        method: 'POST',
        url: '/v1/screenings',
        headers,
        payload: { address: LISTED },
      });
      expect(first.json()).toMatchObject({ sanctioned: false });
      expect(second.body).toBe(first.body);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expectErrorBody(conflicting, 422, 'IDEMPOTENCY_CONFLICT');
    });
  });
});
