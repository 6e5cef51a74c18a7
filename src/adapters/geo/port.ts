// The jurisdiction (geo) port: where a request comes from, and whether prediction-market routes may
// serve it. Prediction-market routes ask the gate before any other work and answer
// 451 JURISDICTION_BLOCKED to a refusal.

/** What the gate needs from an HTTP request. */
export interface JurisdictionRequest {
  /** The socket's peer address (Node's `socket.remoteAddress`), never a header. */
  remoteAddress: string;
  /** Header names in lower case, as Node gives them. */
  headers: Record<string, string | string[] | undefined>;
}

/**
 * Which authority the verdict rests on:
 * - `edge-header`: the country header of a trusted proxy (also when that header said "unknown",
 *   e.g. `XX` or Cloudflare's `T1` for Tor);
 * - `maxmind`: a lookup in the GeoIP database (also when the database had no country for the
 *   address);
 * - `loopback`: a loopback client, allowed because `allowLoopback` is set;
 * - `none`: nothing could be asked (no database, an address that does not parse, a loopback
 *   client without `allowLoopback`).
 */
export type CountrySource = 'edge-header' | 'maxmind' | 'loopback' | 'none';

export type JurisdictionVerdict =
  | { allowed: true; country: string | null; source: CountrySource }
  | { allowed: false; why: 'restricted' | 'unknown'; country: string | null; source: CountrySource };

export interface JurisdictionGate {
  check(request: JurisdictionRequest): Promise<JurisdictionVerdict> | JurisdictionVerdict;
  /** Releases the database (tests, shutdown). */
  close(): Promise<void>;
}

/** Country by client address: the GeoIP database, or a fixed table in tests. */
export interface CountryLookup {
  /** The ISO 3166-1 alpha-2 code of `address` (plain IPv4 or IPv6 text), or null when unknown. */
  country(address: string): string | null;
  close?(): Promise<void>;
}

export interface JurisdictionGateOptions {
  /** ISO 3166-1 alpha-2, uppercase. A request from one of these is refused. */
  restrictedCountries: readonly string[];
  /**
   * Addresses and CIDR blocks (IPv4 and IPv6; an IPv4 entry also covers its IPv4-mapped form) of
   * the proxies in front of Purser. Only a request whose socket peer is one of these has its
   * country header and X-Forwarded-For read.
   */
  trustedProxies: readonly string[];
  /** The header the trusted edge sets the client's country in. Default `cf-ipcountry`. */
  countryHeader?: string;
  /** A GeoIP2/GeoLite2 Country or City database (.mmdb). null: no database. */
  maxmindDbPath: string | null;
  /** Allow loopback clients (127.0.0.0/8, ::1) for which no country is known (development). */
  allowLoopback: boolean;
  /** Instead of `maxmindDbPath`: a lookup to use (a fixed table in tests). */
  countryLookup?: CountryLookup;
}

/** The GeoIP database could not be opened or read: a configuration fault, never a verdict. */
export class GeoDatabaseUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GeoDatabaseUnavailable';
  }
}
