// The jurisdiction gate: decides from the socket peer, a trusted edge's headers and the GeoIP
// database whether a request may reach the prediction-market routes.
//
// The rules, in order:
// 1. The socket peer (`remoteAddress`) is the only address nobody can forge. If it does not parse,
//    the client is unknown: refused.
// 2. Only when the peer is a trusted proxy are its headers read:
//    a. a country header (CF-IPCountry by default) is believed as it stands: a country is judged
//       (source `edge-header`); `XX`, `T1` (Tor), empty, two values or junk mean the edge does
//       not know the country, and the request is refused as unknown without asking the database
//       (the database would only locate a Tor exit or the edge's guess);
//    b. without the header, the client is the address the proxies report in X-Forwarded-For
//       (its right-most untrusted entry; see `forwardedClient`), and that address goes on to 3.
//    From any other peer both headers are ignored, whatever they say, and the peer is the client.
// 3. A loopback client (127.0.0.0/8, ::1, also IPv4-mapped) has no country: allowed when
//    `allowLoopback` is set (source `loopback`), else refused as unknown.
// 4. With a database, the client's country is looked up (source `maxmind`); without one, or when
//    the database has no country for the address, the client is unknown: refused.
// 5. A country in the restricted list is refused; any other country is allowed.

import { inCidr, isLoopback, parseAddress, parseCidr, type Cidr } from './addresses.ts';
import { parseCountryList } from './countries.ts';
import { edgeCountry, forwardedClient } from './edge-header.ts';
import { openMaxMindCountryLookup } from './maxmind.ts';
import type {
  CountryLookup,
  CountrySource,
  JurisdictionGate,
  JurisdictionGateOptions,
  JurisdictionRequest,
  JurisdictionVerdict,
} from './port.ts';

export { DEFAULT_RESTRICTED_COUNTRIES, DEFAULT_RESTRICTED_REGIONS } from './restricted.ts';
export { countryOfRecord, openMaxMindCountryLookup } from './maxmind.ts';
export { fixedCountryLookup } from './sandbox.ts';
export {
  GeoDatabaseUnavailable,
  type CountryLookup,
  type CountrySource,
  type JurisdictionGate,
  type JurisdictionGateOptions,
  type JurisdictionRequest,
  type JurisdictionVerdict,
} from './port.ts';

export const DEFAULT_COUNTRY_HEADER = 'cf-ipcountry';

interface Settings {
  restricted: Set<string>;
  trusted: Cidr[];
  countryHeader: string;
  allowLoopback: boolean;
}

function settingsOf(options: JurisdictionGateOptions): Settings {
  const trusted = options.trustedProxies.map((entry) => {
    try {
      return parseCidr(entry);
    } catch (err) {
      throw new Error(`trustedProxies: ${(err as Error).message}`);
    }
  });
  const countryHeader = (options.countryHeader ?? DEFAULT_COUNTRY_HEADER).trim().toLowerCase();
  if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(countryHeader)) {
    throw new Error(`countryHeader: ${JSON.stringify(options.countryHeader)} is not a header name`);
  }
  if (options.countryLookup && options.maxmindDbPath !== null) {
    throw new Error('give either maxmindDbPath or countryLookup, not both');
  }
  return {
    restricted: parseCountryList(options.restrictedCountries, 'restrictedCountries'),
    trusted,
    countryHeader,
    allowLoopback: options.allowLoopback,
  };
}

function judge(settings: Settings, country: string | null, source: CountrySource): JurisdictionVerdict {
  if (country === null) return { allowed: false, why: 'unknown', country: null, source };
  if (settings.restricted.has(country)) return { allowed: false, why: 'restricted', country, source };
  return { allowed: true, country, source };
}

function gate(settings: Settings, lookup: () => Promise<CountryLookup | null>, close: () => Promise<void>) {
  return {
    async check(request: JurisdictionRequest): Promise<JurisdictionVerdict> {
      const peer = parseAddress(typeof request.remoteAddress === 'string' ? request.remoteAddress : '');
      if (!peer) return judge(settings, null, 'none');

      let client = peer;
      if (settings.trusted.some((c) => inCidr(peer.bytes, c))) {
        const edge = edgeCountry(request.headers, settings.countryHeader);
        if (edge.present) return judge(settings, edge.country, 'edge-header');
        const forwarded = forwardedClient(peer, request.headers, settings.trusted);
        if (!forwarded.ok) return judge(settings, null, 'none');
        client = forwarded.address;
      }

      if (isLoopback(client.bytes)) {
        return settings.allowLoopback
          ? { allowed: true, country: null, source: 'loopback' }
          : judge(settings, null, 'none');
      }
      const db = await lookup();
      if (!db) return judge(settings, null, 'none');
      return judge(settings, db.country(client.text), 'maxmind');
    },
    close,
  } satisfies JurisdictionGate;
}

/**
 * The gate, opening the MaxMind database (when configured) on the first request that needs it,
 * once. Options are checked here, so a bad CIDR, header name or country code throws at creation.
 * A database that cannot be opened makes `check` reject with GeoDatabaseUnavailable (and the next
 * check tries again); use `openJurisdictionGate` to find that out at start instead.
 */
export function createJurisdictionGate(options: JurisdictionGateOptions): JurisdictionGate {
  const settings = settingsOf(options);
  let opened: Promise<CountryLookup | null> | null = null;
  const lookup = (): Promise<CountryLookup | null> => {
    if (options.countryLookup) return Promise.resolve(options.countryLookup);
    if (options.maxmindDbPath === null) return Promise.resolve(null);
    if (!opened) {
      opened = openMaxMindCountryLookup(options.maxmindDbPath);
      opened.catch(() => {
        opened = null;
      });
    }
    return opened;
  };
  const close = async () => {
    const db = opened ? await opened.catch(() => null) : (options.countryLookup ?? null);
    await db?.close?.();
  };
  return gate(settings, lookup, close);
}

/** The gate with its database opened now: a missing or unusable database throws here. */
export async function openJurisdictionGate(options: JurisdictionGateOptions): Promise<JurisdictionGate> {
  const settings = settingsOf(options);
  const db =
    options.countryLookup ??
    (options.maxmindDbPath === null ? null : await openMaxMindCountryLookup(options.maxmindDbPath));
  return gate(
    settings,
    () => Promise.resolve(db),
    async () => {
      await db?.close?.();
    },
  );
}
