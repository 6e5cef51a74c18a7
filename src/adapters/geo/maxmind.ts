// Country by IP from a MaxMind DB file (GeoIP2 / GeoLite2 Country or City, or any database in
// those layouts), read with the `maxmind` package. The file is read into memory once; a
// database update needs a restart (or a new gate).

import { open, type CountryResponse, type Reader } from 'maxmind';
import { parseAddress } from './addresses.ts';
import { normalizeCountry } from './countries.ts';
import { GeoDatabaseUnavailable, type CountryLookup } from './port.ts';

/**
 * The country of a Country or City record: `country.iso_code` (where the address is), else
 * `registered_country.iso_code` (where the network is registered: MaxMind leaves `country` out
 * for some networks, anycast and satellite providers among them). Null when neither is an
 * assigned ISO 3166-1 alpha-2 code. `represented_country` (e.g. a military base abroad) is not
 * used: the gate asks where the client is.
 */
export function countryOfRecord(record: unknown): string | null {
  if (typeof record !== 'object' || record === null) return null;
  const r = record as { country?: { iso_code?: unknown }; registered_country?: { iso_code?: unknown } };
  return normalizeCountry(r.country?.iso_code) ?? normalizeCountry(r.registered_country?.iso_code);
}

/** Database types whose records carry `country` / `registered_country`. */
const COUNTRY_LAYOUT = /country|city|enterprise/i;

/**
 * Opens the database at `path`. Throws GeoDatabaseUnavailable when the file is missing, is not a
 * MaxMind DB, or is a kind without countries (an ASN or ISP database would make every client
 * unknown, and so refuse everyone).
 */
export async function openMaxMindCountryLookup(path: string): Promise<CountryLookup> {
  let reader: Reader<CountryResponse>;
  try {
    reader = await open<CountryResponse>(path, { watchForUpdates: false });
  } catch (err) {
    throw new GeoDatabaseUnavailable(`cannot open the GeoIP database ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const type = String(reader.metadata.databaseType);
  if (!COUNTRY_LAYOUT.test(type)) {
    throw new GeoDatabaseUnavailable(
      `the GeoIP database ${path} is a ${JSON.stringify(type)} database; a Country or City database is needed`,
    );
  }
  const ipv4Only = reader.metadata.ipVersion === 4;
  return {
    country(address) {
      const parsed = parseAddress(address);
      if (!parsed) return null;
      // An IPv4-only tree cannot answer for IPv6; an IPv6 tree holds IPv4 at ::/96, which the
      // reader finds from the dotted form.
      if (ipv4Only && !parsed.ipv4) return null;
      return countryOfRecord(reader.get(parsed.text));
    },
  };
}
