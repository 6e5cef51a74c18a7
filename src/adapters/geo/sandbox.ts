// The sandbox country lookup: a fixed table of networks, for development and tests where no
// GeoIP database is at hand.

import { inCidr, parseAddress, parseCidr, type Cidr } from './addresses.ts';
import { parseCountryList } from './countries.ts';
import type { CountryLookup } from './port.ts';

/**
 * `{ '203.0.113.0/24': 'FR', '2001:db8::/32': 'DE' }` → a lookup answering each address with the
 * country of the most specific network that holds it, null for the rest.
 */
export function fixedCountryLookup(table: Record<string, string>): CountryLookup {
  const rows: { cidr: Cidr; country: string }[] = Object.entries(table).map(([network, country]) => {
    const [code] = parseCountryList([country], `fixedCountryLookup ${network}`);
    return { cidr: parseCidr(network), country: code as string };
  });
  rows.sort((a, b) => b.cidr.prefix - a.cidr.prefix);
  return {
    country(address) {
      const parsed = parseAddress(address);
      if (!parsed) return null;
      return rows.find((row) => inCidr(parsed.bytes, row.cidr))?.country ?? null;
    },
  };
}
