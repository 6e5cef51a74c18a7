// What a trusted edge (Cloudflare, a load balancer, a reverse proxy) tells us about the client:
// its country in a header (Cloudflare's `CF-IPCountry` by default) and its address in
// X-Forwarded-For. Both are only read when the socket peer is a trusted proxy; the caller decides
// that. Anyone else can write these headers, so from an untrusted peer they mean nothing.

import { inCidr, parseForwardedEntry, type Cidr, type ParsedAddress } from './addresses.ts';
import { normalizeCountry } from './countries.ts';

/** The header as one string: absent → undefined; repeated → its values joined with ", ". */
export function headerValue(
  headers: Record<string, string | string[] | undefined>,
  name: string,
): string | undefined {
  const value = headers[name.toLowerCase()];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : value;
}

export type EdgeCountry =
  /** The edge sent no country header. */
  | { present: false }
  /** The edge sent one; `country` is null when it is not a country (XX, T1, empty, two values, junk). */
  | { present: true; country: string | null };

/**
 * The country the edge reports. A header repeated with different values (Node joins them into
 * "US, FR") is not one country, so it counts as unknown; so do `XX` (Cloudflare: no country),
 * `T1` (Cloudflare: Tor) and anything that is not an assigned ISO 3166-1 alpha-2 code.
 */
export function edgeCountry(
  headers: Record<string, string | string[] | undefined>,
  headerName: string,
): EdgeCountry {
  const raw = headerValue(headers, headerName);
  if (raw === undefined) return { present: false };
  const values = [...new Set(raw.split(',').map((v) => v.trim().toUpperCase()))];
  if (values.length !== 1) return { present: true, country: null };
  return { present: true, country: normalizeCountry(values[0]) };
}

export type ForwardedClient =
  | { ok: true; address: ParsedAddress }
  /** The entry that should name the client is not an address (`unknown`, junk, empty). */
  | { ok: false };

/**
 * The client address a chain of trusted proxies reports, from X-Forwarded-For.
 *
 * Each proxy appends the address of whoever connected to it, so the list reads
 * `client, proxy1, proxy2` and only the right-hand end is written by proxies we trust: anything
 * to the left of the first untrusted entry may have been sent by the client itself (a client can
 * start the header with any addresses it likes). So we walk from the right, starting with the
 * socket peer (already known to be trusted), skipping entries that are themselves trusted
 * proxies, and take the first entry that is not: the right-most untrusted address, the last
 * hop our own proxies saw. Taking the left-most entry instead would let any client choose its
 * own address, and so its own country, by sending `X-Forwarded-For: <an address in an allowed
 * country>`.
 *
 * - No X-Forwarded-For at all: the trusted peer reported no client, so the peer itself is the
 *   client (a health check, a request made on the proxy host).
 * - Every entry trusted: the request started inside our own proxies; the left-most entry is the
 *   client.
 * - The entry we stop at does not parse: we do not skip past it (what lies left of it is the
 *   client's own writing), and the client is unknown.
 */
export function forwardedClient(
  peer: ParsedAddress,
  headers: Record<string, string | string[] | undefined>,
  trusted: readonly Cidr[],
): ForwardedClient {
  const raw = headerValue(headers, 'x-forwarded-for');
  if (raw === undefined || raw.trim() === '') return { ok: true, address: peer };
  const entries = raw.split(',');
  let leftMost: ParsedAddress | null = null;
  for (let i = entries.length - 1; i >= 0; i--) {
    const parsed = parseForwardedEntry(entries[i] ?? '');
    if (!parsed) return { ok: false };
    if (!trusted.some((c) => inCidr(parsed.bytes, c))) return { ok: true, address: parsed };
    leftMost = parsed;
  }
  return leftMost ? { ok: true, address: leftMost } : { ok: false };
}
