// The jurisdiction gate, rule by rule, against a GeoIP database built by the test (City layout).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cityRecord, countryRecord, writeMmdb } from '../../../test/support/mmdb.ts';
import {
  createJurisdictionGate,
  DEFAULT_RESTRICTED_COUNTRIES,
  DEFAULT_RESTRICTED_REGIONS,
  fixedCountryLookup,
  GeoDatabaseUnavailable,
  openJurisdictionGate,
  type JurisdictionGate,
  type JurisdictionGateOptions,
  type JurisdictionRequest,
} from './index.ts';
import { COUNTRY_CODES } from './countries.ts';

// Documentation ranges only. CH and JP are allowed, US, IR and GB restricted.
const CH_CLIENT = '203.0.113.10';
const US_CLIENT = '198.51.100.20';
const GB_REGISTERED_CLIENT = '192.0.2.30'; // no `country`, registered in GB
const IR_CLIENT_V6 = '2001:db8:1::5';
const CH_CLIENT_V6 = '2001:db8:2::5';
const UNLISTED_CLIENT = '192.0.2.200';
const EDGE = '10.20.30.40'; // inside the trusted 10.0.0.0/8
const EDGE_V6 = '2001:db8:ffff:1::9'; // inside the trusted 2001:db8:ffff::/48
const INNER_PROXY = '172.16.0.2'; // trusted single address

let dir: string;
let dbPath: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'purser-geo-'));
  dbPath = writeMmdb(
    join(dir, 'city.mmdb'),
    [
      { network: '203.0.113.0/24', data: cityRecord('CH') },
      { network: '198.51.100.0/24', data: cityRecord('US') },
      { network: '192.0.2.0/25', data: cityRecord(null, 'GB') },
      { network: '2001:db8:1::/48', data: cityRecord('IR') },
      { network: '2001:db8:2::/48', data: cityRecord('CH') },
    ],
    { databaseType: 'GeoLite2-City' },
  );
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function options(overrides: Partial<JurisdictionGateOptions> = {}): JurisdictionGateOptions {
  return {
    restrictedCountries: ['US', 'IR', 'GB'],
    trustedProxies: ['10.0.0.0/8', '2001:db8:ffff::/48', INNER_PROXY],
    maxmindDbPath: dbPath,
    allowLoopback: false,
    ...overrides,
  };
}

const request = (
  remoteAddress: string,
  headers: JurisdictionRequest['headers'] = {},
): JurisdictionRequest => ({
  remoteAddress,
  headers,
});

describe('a direct client (the peer is not a trusted proxy)', () => {
  let gate: JurisdictionGate;
  beforeAll(() => {
    gate = createJurisdictionGate(options());
  });
  afterAll(() => gate.close());

  it('is allowed from an allowed country, by the database', async () => {
    expect(await gate.check(request(CH_CLIENT))).toEqual({ allowed: true, country: 'CH', source: 'maxmind' });
  });

  it('is refused from a restricted country', async () => {
    expect(await gate.check(request(US_CLIENT))).toEqual({
      allowed: false,
      why: 'restricted',
      country: 'US',
      source: 'maxmind',
    });
  });

  it('cannot choose its country with a spoofed country header', async () => {
    const verdict = await gate.check(request(US_CLIENT, { 'cf-ipcountry': 'CH' }));
    expect(verdict).toEqual({ allowed: false, why: 'restricted', country: 'US', source: 'maxmind' });
  });

  it('cannot choose its address with a spoofed X-Forwarded-For', async () => {
    const verdict = await gate.check(request(US_CLIENT, { 'x-forwarded-for': CH_CLIENT }));
    expect(verdict).toMatchObject({ allowed: false, why: 'restricted', country: 'US' });
  });

  it('is refused as unknown when the database has no country for it', async () => {
    expect(await gate.check(request(UNLISTED_CLIENT))).toEqual({
      allowed: false,
      why: 'unknown',
      country: null,
      source: 'maxmind',
    });
  });

  it('is judged by registered_country when the record has no country', async () => {
    expect(await gate.check(request(GB_REGISTERED_CLIENT))).toMatchObject({
      allowed: false,
      why: 'restricted',
      country: 'GB',
    });
  });

  it('is looked up over IPv6', async () => {
    expect(await gate.check(request(IR_CLIENT_V6))).toMatchObject({ allowed: false, country: 'IR' });
    expect(await gate.check(request(CH_CLIENT_V6))).toEqual({
      allowed: true,
      country: 'CH',
      source: 'maxmind',
    });
  });

  it('is looked up by its IPv4 address when the socket reports it IPv4-mapped', async () => {
    expect(await gate.check(request(`::ffff:${US_CLIENT}`))).toMatchObject({ allowed: false, country: 'US' });
    expect(await gate.check(request(`::ffff:${CH_CLIENT}`))).toMatchObject({ allowed: true, country: 'CH' });
  });

  it('is refused as unknown when its address does not parse', async () => {
    for (const remoteAddress of ['', 'garbage', '203.0.113']) {
      expect(await gate.check(request(remoteAddress))).toEqual({
        allowed: false,
        why: 'unknown',
        country: null,
        source: 'none',
      });
    }
  });
});

describe('behind a trusted proxy', () => {
  let gate: JurisdictionGate;
  beforeAll(() => {
    gate = createJurisdictionGate(options());
  });
  afterAll(() => gate.close());

  it('believes the country header of a peer inside a trusted IPv4 block', async () => {
    expect(await gate.check(request(EDGE, { 'cf-ipcountry': 'CH' }))).toEqual({
      allowed: true,
      country: 'CH',
      source: 'edge-header',
    });
    expect(await gate.check(request(EDGE, { 'cf-ipcountry': 'US', 'x-forwarded-for': CH_CLIENT }))).toEqual({
      allowed: false,
      why: 'restricted',
      country: 'US',
      source: 'edge-header',
    });
  });

  it('believes it from a trusted IPv6 block, a single trusted address and an IPv4-mapped peer', async () => {
    for (const peer of [EDGE_V6, INNER_PROXY, `::ffff:${EDGE}`]) {
      expect(await gate.check(request(peer, { 'cf-ipcountry': 'IR' }))).toMatchObject({
        allowed: false,
        why: 'restricted',
        country: 'IR',
        source: 'edge-header',
      });
    }
  });

  it('ignores the header from a peer just outside the trusted blocks', async () => {
    // 11.0.0.1 is next to 10.0.0.0/8, 2001:db8:fffe::1 next to 2001:db8:ffff::/48, 172.16.0.3 next
    // to 172.16.0.2: none is trusted, so their header means nothing and none has a country.
    for (const peer of ['11.0.0.1', '2001:db8:fffe::1', '172.16.0.3']) {
      expect(await gate.check(request(peer, { 'cf-ipcountry': 'CH' }))).toEqual({
        allowed: false,
        why: 'unknown',
        country: null,
        source: 'maxmind',
      });
    }
  });

  it('accepts the header in lower case and with spaces', async () => {
    expect(await gate.check(request(EDGE, { 'cf-ipcountry': ' ch ' }))).toMatchObject({
      allowed: true,
      country: 'CH',
    });
  });

  it.each([
    ['XX', "Cloudflare's no country"],
    ['T1', "Cloudflare's Tor"],
    ['', 'empty'],
    ['ZZ', 'unassigned'],
    ['UK', 'reserved, not a country'],
    ['USA', 'alpha-3'],
    ['CH, US', 'two values'],
  ])('refuses as unknown a header of %j (%s), without asking the database', async (value) => {
    // The forwarded client is in an allowed country: the edge's "unknown" still wins.
    const verdict = await gate.check(request(EDGE, { 'cf-ipcountry': value, 'x-forwarded-for': CH_CLIENT }));
    expect(verdict).toEqual({ allowed: false, why: 'unknown', country: null, source: 'edge-header' });
  });

  it('refuses a header repeated with different values, and believes one repeated with the same', async () => {
    expect(await gate.check(request(EDGE, { 'cf-ipcountry': ['CH', 'US'] }))).toMatchObject({
      allowed: false,
      why: 'unknown',
    });
    expect(await gate.check(request(EDGE, { 'cf-ipcountry': ['CH', 'ch'] }))).toMatchObject({
      allowed: true,
      country: 'CH',
    });
  });

  describe('without a country header: the client X-Forwarded-For reports', () => {
    it('looks up the right-most untrusted entry, not what the client wrote before it', async () => {
      // The client sent "X-Forwarded-For: <CH address>"; the edge appended the real address.
      const verdict = await gate.check(request(EDGE, { 'x-forwarded-for': `${CH_CLIENT}, ${US_CLIENT}` }));
      expect(verdict).toEqual({ allowed: false, why: 'restricted', country: 'US', source: 'maxmind' });
      expect(await gate.check(request(EDGE, { 'x-forwarded-for': `${US_CLIENT}, ${CH_CLIENT}` }))).toEqual({
        allowed: true,
        country: 'CH',
        source: 'maxmind',
      });
    });

    it('skips trusted proxies in the chain', async () => {
      const chain = `${US_CLIENT}, ${CH_CLIENT}, ${INNER_PROXY}, 10.1.1.1`;
      expect(await gate.check(request(EDGE, { 'x-forwarded-for': chain }))).toMatchObject({
        allowed: true,
        country: 'CH',
      });
    });

    it('reads entries with ports, IPv6 entries and a header sent twice', async () => {
      expect(await gate.check(request(EDGE, { 'x-forwarded-for': `${US_CLIENT}:51234` }))).toMatchObject({
        country: 'US',
      });
      expect(await gate.check(request(EDGE, { 'x-forwarded-for': `[${IR_CLIENT_V6}]:443` }))).toMatchObject({
        country: 'IR',
      });
      expect(
        await gate.check(request(EDGE, { 'x-forwarded-for': [CH_CLIENT, `${US_CLIENT}, 10.0.0.1`] })),
      ).toMatchObject({
        country: 'US',
      });
    });

    it('refuses as unknown when the entry that names the client is not an address', async () => {
      for (const xff of [
        'unknown',
        `${CH_CLIENT}, unknown`,
        `${CH_CLIENT}, garbage, 10.0.0.1`,
        `${CH_CLIENT},`,
      ]) {
        expect(await gate.check(request(EDGE, { 'x-forwarded-for': xff }))).toEqual({
          allowed: false,
          why: 'unknown',
          country: null,
          source: 'none',
        });
      }
    });

    it('takes the left-most entry when every entry is a trusted proxy, and the peer when there is none', async () => {
      // Both are our own proxies, which have no country.
      expect(await gate.check(request(EDGE, { 'x-forwarded-for': `${INNER_PROXY}, 10.9.9.9` }))).toEqual({
        allowed: false,
        why: 'unknown',
        country: null,
        source: 'maxmind',
      });
      expect(await gate.check(request(EDGE))).toMatchObject({ allowed: false, why: 'unknown' });
    });
  });
});

describe('loopback', () => {
  it('is refused as unknown unless allowLoopback is set', async () => {
    const gate = createJurisdictionGate(options({ allowLoopback: false }));
    for (const peer of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) {
      expect(await gate.check(request(peer))).toEqual({
        allowed: false,
        why: 'unknown',
        country: null,
        source: 'none',
      });
    }
  });

  it('is allowed with allowLoopback, whatever country header it sends', async () => {
    const gate = createJurisdictionGate(options({ allowLoopback: true }));
    for (const peer of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
      expect(await gate.check(request(peer, { 'cf-ipcountry': 'US' }))).toEqual({
        allowed: true,
        country: null,
        source: 'loopback',
      });
    }
  });

  it('is not a way around the gate when a loopback proxy is trusted', async () => {
    // A local reverse proxy on 127.0.0.1: its header is believed, and without the header the
    // client it reports is judged, not the loopback peer.
    const gate = createJurisdictionGate(options({ allowLoopback: true, trustedProxies: ['127.0.0.1'] }));
    expect(await gate.check(request('127.0.0.1', { 'cf-ipcountry': 'US' }))).toMatchObject({
      allowed: false,
      country: 'US',
      source: 'edge-header',
    });
    expect(await gate.check(request('127.0.0.1', { 'x-forwarded-for': US_CLIENT }))).toMatchObject({
      allowed: false,
      country: 'US',
      source: 'maxmind',
    });
    expect(await gate.check(request('127.0.0.1', { 'x-forwarded-for': '127.0.0.1' }))).toMatchObject({
      allowed: true,
      source: 'loopback',
    });
  });
});

describe('without a database', () => {
  it('refuses every client whose country no trusted edge reports', async () => {
    const gate = createJurisdictionGate(options({ maxmindDbPath: null }));
    expect(await gate.check(request(CH_CLIENT))).toEqual({
      allowed: false,
      why: 'unknown',
      country: null,
      source: 'none',
    });
    expect(await gate.check(request(EDGE, { 'x-forwarded-for': CH_CLIENT }))).toMatchObject({
      allowed: false,
      why: 'unknown',
    });
    expect(await gate.check(request(EDGE, { 'cf-ipcountry': 'CH' }))).toMatchObject({
      allowed: true,
      country: 'CH',
    });
  });

  it('uses a fixed table when given one', async () => {
    const gate = createJurisdictionGate(
      options({
        maxmindDbPath: null,
        countryLookup: fixedCountryLookup({ '203.0.113.0/24': 'US', '203.0.113.128/25': 'CH' }),
      }),
    );
    expect(await gate.check(request('203.0.113.1'))).toMatchObject({ allowed: false, country: 'US' });
    expect(await gate.check(request('203.0.113.200'))).toMatchObject({ allowed: true, country: 'CH' });
  });
});

describe('a custom country header', () => {
  it('reads the configured header only', async () => {
    const gate = createJurisdictionGate(options({ countryHeader: 'X-Client-Country', maxmindDbPath: null }));
    expect(await gate.check(request(EDGE, { 'x-client-country': 'CH' }))).toMatchObject({
      allowed: true,
      country: 'CH',
      source: 'edge-header',
    });
    expect(await gate.check(request(EDGE, { 'cf-ipcountry': 'CH' }))).toMatchObject({
      allowed: false,
      why: 'unknown',
    });
  });
});

describe('options', () => {
  it.each([
    [{ trustedProxies: ['10.0.0.0/33'] }, /trustedProxies/],
    [{ trustedProxies: ['proxy.internal'] }, /trustedProxies/],
    [{ restrictedCountries: ['UK'] }, /"UK".*did you mean GB/],
    [{ restrictedCountries: ['us'] }, /"us" is not an uppercase/],
    [{ restrictedCountries: ['USA'] }, /"USA"/],
    [{ countryHeader: 'bad header' }, /countryHeader/],
    [{ countryLookup: fixedCountryLookup({}) }, /either maxmindDbPath or countryLookup/],
  ] as [Partial<JurisdictionGateOptions>, RegExp][])('refuse %j at creation', (overrides, message) => {
    expect(() => createJurisdictionGate(options(overrides))).toThrow(message);
  });
});

describe('the database file', () => {
  it('missing: the lazy gate rejects each check (no verdict) until the file appears', async () => {
    const path = join(dir, 'later.mmdb');
    const gate = createJurisdictionGate(options({ maxmindDbPath: path }));
    await expect(gate.check(request(CH_CLIENT))).rejects.toBeInstanceOf(GeoDatabaseUnavailable);
    // A header from the trusted edge needs no database.
    expect(await gate.check(request(EDGE, { 'cf-ipcountry': 'CH' }))).toMatchObject({ allowed: true });
    writeMmdb(path, [{ network: '203.0.113.0/24', data: countryRecord('CH') }]);
    expect(await gate.check(request(CH_CLIENT))).toEqual({ allowed: true, country: 'CH', source: 'maxmind' });
    await gate.close();
  });

  it('missing: openJurisdictionGate throws at start', async () => {
    await expect(openJurisdictionGate(options({ maxmindDbPath: join(dir, 'absent.mmdb') }))).rejects.toThrow(
      GeoDatabaseUnavailable,
    );
  });

  it('present: openJurisdictionGate opens it at once', async () => {
    const gate = await openJurisdictionGate(options());
    expect(await gate.check(request(US_CLIENT))).toMatchObject({ allowed: false, country: 'US' });
    await gate.close();
  });
});

describe('DEFAULT_RESTRICTED_COUNTRIES', () => {
  it('is a valid restricted list of assigned codes, without duplicates', () => {
    expect(new Set(DEFAULT_RESTRICTED_COUNTRIES).size).toBe(DEFAULT_RESTRICTED_COUNTRIES.length);
    for (const code of DEFAULT_RESTRICTED_COUNTRIES) expect(COUNTRY_CODES.has(code)).toBe(true);
    expect(() =>
      createJurisdictionGate(options({ restrictedCountries: DEFAULT_RESTRICTED_COUNTRIES })),
    ).not.toThrow();
  });

  it("holds Polymarket's OFAC and close-only-on-API countries, not the frontend-only ones", () => {
    for (const code of ['US', 'GB', 'FR', 'DE', 'IR', 'KP', 'CU', 'SY', 'RU', 'SG', 'AU', 'UM']) {
      expect(DEFAULT_RESTRICTED_COUNTRIES).toContain(code);
    }
    for (const code of ['IE', 'JP', 'MT', 'NL', 'KR', 'CH', 'UA', 'CA']) {
      expect(DEFAULT_RESTRICTED_COUNTRIES).not.toContain(code);
    }
    expect(DEFAULT_RESTRICTED_REGIONS).toEqual([
      'UA-43',
      'UA-14',
      'UA-09',
      'CA-BC',
      'CA-ON',
      'CA-AB',
      'CA-QC',
    ]);
  });

  it('refuses a client from the United States with the defaults', async () => {
    const gate = createJurisdictionGate(options({ restrictedCountries: DEFAULT_RESTRICTED_COUNTRIES }));
    expect(await gate.check(request(US_CLIENT))).toMatchObject({
      allowed: false,
      why: 'restricted',
      country: 'US',
    });
    expect(await gate.check(request(CH_CLIENT))).toMatchObject({ allowed: true, country: 'CH' });
    await gate.close();
  });
});

describe('COUNTRY_CODES', () => {
  it('holds the 249 assigned ISO 3166-1 alpha-2 codes and XK', () => {
    expect(COUNTRY_CODES.size).toBe(250);
    for (const code of COUNTRY_CODES) expect(code).toMatch(/^[A-Z]{2}$/);
    for (const code of ['XX', 'T1', 'UK', 'EU', 'AP', 'ZZ']) expect(COUNTRY_CODES.has(code)).toBe(false);
  });
});
