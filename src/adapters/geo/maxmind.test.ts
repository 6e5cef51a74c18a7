// The MaxMind country lookup, and the test MMDB writer it is tested with: the `maxmind` package
// must read back what the writer built, for every record size and both tree kinds.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type CityResponse } from 'maxmind';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildMmdb,
  cityRecord,
  countryRecord,
  double,
  encodeValue,
  uint16,
  uint64,
  writeMmdb,
} from '../../../test/support/mmdb.ts';
import { countryOfRecord, openMaxMindCountryLookup } from './maxmind.ts';
import { GeoDatabaseUnavailable } from './port.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'purser-mmdb-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const NETWORKS = [
  { network: '203.0.113.0/24', data: countryRecord('CH') },
  // A more specific network inside a wider one overrides that part of it.
  { network: '203.0.113.128/25', data: countryRecord('US') },
  { network: '198.51.100.7', data: countryRecord('JP') },
];
const V6_NETWORKS = [
  ...NETWORKS,
  { network: '2001:db8:1::/48', data: countryRecord('IR') },
  { network: '2001:db8:1:8000::/49', data: countryRecord('DE') },
];

describe('the test MMDB writer, read back by the maxmind package', () => {
  for (const recordSize of [24, 28, 32] as const) {
    it(`IPv6 tree, ${recordSize}-bit records: IPv4 and IPv6 lookups, nested networks, misses`, async () => {
      const path = writeMmdb(join(dir, `v6-${recordSize}.mmdb`), V6_NETWORKS, { recordSize });
      const reader = await open<CityResponse>(path);
      expect(reader.metadata).toMatchObject({
        recordSize,
        ipVersion: 6,
        databaseType: 'GeoLite2-Country',
        binaryFormatMajorVersion: 2,
        binaryFormatMinorVersion: 0,
        languages: ['en'],
        description: { en: 'Purser test database' },
      });
      expect(reader.metadata.buildEpoch.toISOString()).toBe('2023-11-14T22:13:20.000Z');
      const iso = (ip: string) => reader.get(ip)?.country?.iso_code ?? null;
      expect(iso('203.0.113.1')).toBe('CH');
      expect(iso('203.0.113.127')).toBe('CH');
      expect(iso('203.0.113.128')).toBe('US');
      expect(iso('203.0.113.255')).toBe('US');
      expect(iso('198.51.100.7')).toBe('JP');
      expect(iso('198.51.100.6')).toBeNull();
      expect(iso('198.51.100.8')).toBeNull();
      expect(iso('2001:db8:1::1')).toBe('IR');
      expect(iso('2001:db8:1:7fff::1')).toBe('IR');
      expect(iso('2001:db8:1:8000::1')).toBe('DE');
      expect(iso('2001:db8:2::1')).toBeNull();
      expect(reader.getWithPrefixLength('203.0.113.200')[1]).toBe(25);
      expect(reader.getWithPrefixLength('2001:db8:1:8000::1')[1]).toBe(49);
    });

    it(`IPv4 tree, ${recordSize}-bit records`, async () => {
      const path = writeMmdb(join(dir, `v4-${recordSize}.mmdb`), NETWORKS, { recordSize, ipVersion: 4 });
      const reader = await open<CityResponse>(path);
      expect(reader.metadata.ipVersion).toBe(4);
      expect(reader.get('203.0.113.1')?.country?.iso_code).toBe('CH');
      expect(reader.get('203.0.113.129')?.country?.iso_code).toBe('US');
      expect(reader.get('198.51.100.7')?.country?.iso_code).toBe('JP');
      expect(reader.get('192.0.2.1')).toBeNull();
      expect(reader.getWithPrefixLength('203.0.113.1')[1]).toBe(25);
    });
  }

  it('keeps record values above 2^24 intact in the 28- and 32-bit layouts (a 17 MB data section)', async () => {
    // A first record of ~16.8 MB pushes the second one's data pointer past 24 bits, so the
    // 28-bit layout has to carry the top nibble in the shared middle byte.
    const padding = { network: '192.0.2.0/24', data: { filler: 'x'.repeat(16_800_000) } };
    for (const recordSize of [28, 32] as const) {
      const networks = [padding, { network: '203.0.113.0/24', data: countryRecord('CH') }];
      const path = writeMmdb(join(dir, `big-${recordSize}.mmdb`), networks, { recordSize });
      const reader = await open<CityResponse>(path);
      expect(reader.get('203.0.113.9')?.country?.iso_code).toBe('CH');
      expect((reader.get('192.0.2.9') as unknown as { filler: string }).filler).toHaveLength(16_800_000);
    }
    expect(() =>
      buildMmdb([padding, { network: '203.0.113.0/24', data: countryRecord('CH') }], { recordSize: 24 }),
    ).toThrow(/too small/);
  });

  it('encodes the data types the City layout uses', async () => {
    const path = writeMmdb(
      join(dir, 'city.mmdb'),
      [{ network: '203.0.113.0/24', data: cityRecord('FR', 'DE') }],
      {
        databaseType: 'GeoIP2-City',
        languages: ['en', 'fr'],
        description: { en: 'City test', fr: 'Test ville' },
      },
    );
    const reader = await open<CityResponse>(path);
    expect(reader.metadata).toMatchObject({
      databaseType: 'GeoIP2-City',
      languages: ['en', 'fr'],
      description: { en: 'City test', fr: 'Test ville' },
    });
    expect(reader.get('203.0.113.50')).toEqual({
      continent: { code: 'EU', geoname_id: 6255148, names: { en: 'Europe' } },
      country: { geoname_id: 1, iso_code: 'FR', names: { en: 'Country FR' } },
      registered_country: { geoname_id: 2, iso_code: 'DE', names: { en: 'Country DE' } },
      city: { geoname_id: 2988507, names: { en: 'Some City' } },
      location: { accuracy_radius: 20, latitude: 48.8534, longitude: 2.3488, time_zone: 'Europe/Paris' },
      postal: { code: '75001' },
      subdivisions: [{ geoname_id: 3012874, iso_code: 'IDF', names: { en: 'Île-de-France' } }],
    });
  });

  it('writes control bytes and sizes as the specification lays them out', () => {
    expect([...encodeValue('ab')]).toEqual([0x42, 0x61, 0x62]); // utf8 string, size 2
    expect([...encodeValue(uint16(0))]).toEqual([0xa0]); // uint16 0: no payload
    expect([...encodeValue(uint16(300))]).toEqual([0xa2, 0x01, 0x2c]);
    expect([...encodeValue(true)]).toEqual([0x01, 0x07]); // extended type 14 (boolean), value in the size
    expect([...encodeValue(uint64(2n ** 40n))]).toEqual([0x06, 0x02, 0x01, 0, 0, 0, 0, 0]); // extended 9
    expect([...encodeValue([])]).toEqual([0x00, 0x04]); // extended 11 (array), size 0
    expect([...encodeValue({})]).toEqual([0xe0]); // map, size 0
    expect(encodeValue(double(1.5)).subarray(0, 1)).toEqual(Buffer.from([0x68]));
    expect([...encodeValue('x'.repeat(29)).subarray(0, 2)]).toEqual([0x5d, 0x00]); // size 29: 29 + 0
    expect([...encodeValue('x'.repeat(285)).subarray(0, 3)]).toEqual([0x5e, 0x00, 0x00]); // 285 + 0
    expect([...encodeValue('x'.repeat(65_821)).subarray(0, 4)]).toEqual([0x5f, 0x00, 0x00, 0x00]);
  });
});

describe('countryOfRecord', () => {
  it.each([
    [{ country: { iso_code: 'FR' }, registered_country: { iso_code: 'DE' } }, 'FR'],
    [{ registered_country: { iso_code: 'DE' } }, 'DE'],
    [{ country: { iso_code: 'EU' }, registered_country: { iso_code: 'DE' } }, 'DE'],
    [{ country: {}, registered_country: { iso_code: 'de' } }, 'DE'],
    [{ represented_country: { iso_code: 'US' } }, null],
    [{ continent: { code: 'EU' } }, null],
    [null, null],
    ['FR', null],
  ])('%j → %s', (record, country) => {
    expect(countryOfRecord(record)).toBe(country);
  });
});

describe('openMaxMindCountryLookup', () => {
  it('reads the Country layout, falling back to registered_country', async () => {
    const path = writeMmdb(join(dir, 'country-layout.mmdb'), [
      { network: '203.0.113.0/24', data: countryRecord('CH') },
      { network: '198.51.100.0/24', data: countryRecord(null, 'US') },
      { network: '2001:db8::/32', data: countryRecord('JP') },
    ]);
    const lookup = await openMaxMindCountryLookup(path);
    expect(lookup.country('203.0.113.1')).toBe('CH');
    expect(lookup.country('198.51.100.1')).toBe('US');
    expect(lookup.country('2001:db8::1')).toBe('JP');
    expect(lookup.country('::ffff:203.0.113.1')).toBe('CH');
    expect(lookup.country('192.0.2.1')).toBeNull();
    expect(lookup.country('not an address')).toBeNull();
  });

  it('reads the City layout', async () => {
    const path = writeMmdb(
      join(dir, 'city-layout.mmdb'),
      [
        { network: '203.0.113.0/24', data: cityRecord('FR', 'DE') },
        { network: '198.51.100.0/24', data: cityRecord(null, 'GB') },
      ],
      { databaseType: 'GeoIP2-City' },
    );
    const lookup = await openMaxMindCountryLookup(path);
    expect(lookup.country('203.0.113.1')).toBe('FR');
    expect(lookup.country('198.51.100.1')).toBe('GB');
  });

  it('answers null for IPv6 from an IPv4-only database', async () => {
    const path = writeMmdb(join(dir, 'v4-only.mmdb'), [{ network: '0.0.0.0/1', data: countryRecord('CH') }], {
      ipVersion: 4,
    });
    const lookup = await openMaxMindCountryLookup(path);
    expect(lookup.country('1.2.3.4')).toBe('CH');
    expect(lookup.country('::1.2.3.4')).toBeNull();
    expect(lookup.country('2001:db8::1')).toBeNull();
  });

  it('refuses a database without countries, a file that is not a database, and a missing file', async () => {
    const asn = writeMmdb(
      join(dir, 'asn.mmdb'),
      [{ network: '203.0.113.0/24', data: { autonomous_system_number: 64500 } }],
      { databaseType: 'GeoLite2-ASN' },
    );
    await expect(openMaxMindCountryLookup(asn)).rejects.toThrow(/"GeoLite2-ASN" database; a Country or City/);
    const junk = join(dir, 'junk.mmdb');
    writeFileSync(junk, 'not a database');
    await expect(openMaxMindCountryLookup(junk)).rejects.toBeInstanceOf(GeoDatabaseUnavailable);
    await expect(openMaxMindCountryLookup(join(dir, 'missing.mmdb'))).rejects.toBeInstanceOf(
      GeoDatabaseUnavailable,
    );
  });
});
