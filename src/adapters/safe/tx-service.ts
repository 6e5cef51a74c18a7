// The Safe Transaction Service, for one question: which Safes does this address own (is an owner
// of)? `GET {base}/api/v2/owners/{checksummed owner}/safes/?limit=&offset=` (protocols.md §9.3;
// safe-transaction-service `history/views_v2.py` OwnersViewV2), paged by offset until `count` is
// reached. The pages' own `next` links are not followed: the service builds them from the host it
// was asked on, which behind the hosted gateway is not the gateway's. The deprecated v1
// (`/api/v1/owners/{owner}/safes/`, at most 200 Safes) is not used.
//
// Base URLs per chain, without `/api`: the hosted gateway's `https://api.safe.global/tx-service/<chain
// short name>` (with an API key, sent as `Authorization: Bearer <key>`), a self-hosted service,
// or in development the devnet's fake (`DevnetChain.safeTxServiceUrl`).
//
// The service is an index: it lags the chain, and the real one caches answers. A caller that
// needs the current owners of a Safe reads `getOwners()` on chain; this answers which Safes to
// look at.

import { getAddress, isAddress, type Address } from 'viem';
import { systemClock, type Clock } from '../../core/clock.ts';

export interface OwnedSafe {
  address: Address;
  owners: Address[];
  threshold: number;
  nonce: number;
}

export interface SafeTxServicePort {
  /** The Safes `owner` is an owner of, on `chainId`, as the service has indexed them (every page). */
  safesOfOwner(chainId: number, owner: Address): Promise<Address[]>;
  /** The same Safes with their owners, threshold and nonce as the service has them. */
  ownedSafes(chainId: number, owner: Address): Promise<OwnedSafe[]>;
}

/**
 * The service could not answer: no URL for the chain, a network error or timeout, a 429 (with
 * `retryAfterMs` when it said), a 5xx, any other refusal, or an answer not in its format.
 */
export class SafeServiceUnavailable extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'SafeServiceUnavailable';
  }
}

export interface SafeTxServiceAdapterOptions {
  /** Chain id → the service's base URL, without `/api` and without a trailing slash. */
  urls: Record<number, string>;
  /** Sent as `Authorization: Bearer <apiKey>` (the hosted gateway needs one). */
  apiKey?: string;
  /** Per request (default 10 s). */
  timeoutMs?: number;
  /** Page size asked for (default 100; the service allows 1–200). */
  pageSize?: number;
  /** Stops with SafeServiceUnavailable past this many pages (default 50). */
  maxPages?: number;
  /** For a Retry-After given as an HTTP-date (default the system clock). */
  clock?: Clock;
  fetch?: typeof fetch;
}

interface V2Page {
  count: number;
  results: OwnedSafe[];
}

function isAddressText(v: unknown): v is string {
  return typeof v === 'string' && isAddress(v, { strict: false });
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** A v2 page as the service answers it, or null for anything else. */
function parsePage(body: unknown): V2Page | null {
  if (typeof body !== 'object' || body === null) return null;
  const { count, results } = body as { count?: unknown; results?: unknown };
  if (!isCount(count) || !Array.isArray(results)) return null;
  const safes: OwnedSafe[] = [];
  for (const item of results) {
    if (typeof item !== 'object' || item === null) return null;
    const { address, owners, threshold, nonce } = item as Record<string, unknown>;
    if (!isAddressText(address) || !Array.isArray(owners) || !owners.every(isAddressText)) return null;
    if (!isCount(threshold) || !isCount(nonce)) return null;
    safes.push({ address: getAddress(address), owners: owners.map((o) => getAddress(o)), threshold, nonce });
  }
  return { count, results: safes };
}

/** Retry-After as milliseconds: delay-seconds or an HTTP-date; undefined when absent or unreadable. */
function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export function createSafeTxServiceAdapter(options: SafeTxServiceAdapterOptions): SafeTxServicePort {
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const pageSize = Math.min(200, Math.max(1, Math.trunc(options.pageSize ?? 100)));
  const maxPages = options.maxPages ?? 50;
  const clock = options.clock ?? systemClock;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  async function page(url: string): Promise<V2Page> {
    let res: Response;
    try {
      res = await doFetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      throw new SafeServiceUnavailable(
        `the Safe Transaction Service did not answer: ${(err as Error).message}`,
      );
    }
    if (res.status === 429) {
      await res.body?.cancel();
      throw new SafeServiceUnavailable(
        'the Safe Transaction Service is rate limiting (429)',
        429,
        retryAfterMs(res.headers.get('retry-after'), clock.now().getTime()),
      );
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new SafeServiceUnavailable(`the Safe Transaction Service answered ${res.status}`, res.status);
    }
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      throw new SafeServiceUnavailable(
        'the Safe Transaction Service answered something other than JSON',
        res.status,
      );
    }
    const parsed = parsePage(body);
    if (!parsed) {
      throw new SafeServiceUnavailable(
        'the Safe Transaction Service answered a page not in its format',
        res.status,
      );
    }
    return parsed;
  }

  async function ownedSafes(chainId: number, owner: Address): Promise<OwnedSafe[]> {
    const base = options.urls[chainId];
    if (!base)
      throw new SafeServiceUnavailable(`no Safe Transaction Service is configured for chain ${chainId}`);
    // The service refuses an address that is not EIP-55 checksummed (422).
    const path = `${base.replace(/\/+$/, '')}/api/v2/owners/${getAddress(owner)}/safes/`;
    const found = new Map<string, OwnedSafe>();
    let offset = 0;
    for (let pages = 0; ; pages++) {
      if (pages >= maxPages) {
        throw new SafeServiceUnavailable(
          `the Safe Transaction Service has more than ${maxPages} pages of Safes for ${owner}`,
        );
      }
      const { count, results } = await page(`${path}?limit=${pageSize}&offset=${offset}`);
      for (const safe of results) if (!found.has(safe.address)) found.set(safe.address, safe);
      offset += results.length;
      if (results.length === 0 || offset >= count) break;
    }
    return [...found.values()];
  }

  return {
    ownedSafes,
    async safesOfOwner(chainId, owner) {
      return (await ownedSafes(chainId, owner)).map((s) => s.address);
    },
  };
}
