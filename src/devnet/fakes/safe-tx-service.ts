// A loopback fake of the Safe Transaction Service's owner look-ups, in the service's formats
// (safe-global/safe-transaction-service `history/views.py` OwnersView, `history/views_v2.py`
// OwnersViewV2, `history/serializers.py`, `history/pagination.py`; protocols.md §9.3):
//
//   GET /api/v1/owners/{address}/safes/  → 200 {"safes": ["0x…", …]} (at most 200; deprecated)
//   GET /api/v2/owners/{address}/safes/?limit=&offset=
//     → 200 {"count", "next", "previous", "results": [{"address", "owners", "threshold", "nonce",
//            "master_copy", "fallback_handler", "guard", "module_guard", "enabled_modules"}]}
//   a non-checksummed address (EIP-55) → 422 {"code": 1, "message": "Checksum address
//     validation failed", "arguments": ["<address as sent>"]}
//
// Pagination is Django REST framework's LimitOffsetPagination as the service configures it
// (default limit 100, max 200; a missing, malformed, zero or negative limit is the default, a
// malformed or negative offset 0; next/previous are absolute URLs with the query parameters
// sorted, previous without `offset` when it would be 0). `@safe-global/api-kit`'s
// `getSafesByOwner` (4.2.0, which calls v1) works against it unchanged, with
// `txServiceUrl: <fake url>/api`.
//
// Unlike the service, which indexes the chain and caches v1 answers for 15 s, every answer is read
// LIVE from the chain: the Safes are the proxies the given proxy factories created
// (`ProxyCreation` events), and a Safe belongs to an owner while its current `getOwners()`
// includes that address, so a swapOwner shows at once (the `lagBlocks` knob reads that many
// blocks behind the head instead, as a lagging indexer would). Safes are listed in creation
// order. `guard` and `module_guard` are null when unset, as the service stores them.
//
// Not the service's, chosen here: unknown paths answer 404 {"detail": "Not found."} and methods
// other than GET 405 {"detail": "Method \"POST\" not allowed."} (DRF's texts); the 429 of the
// `rateLimitRetryAfter` knob answers DRF's throttle text {"detail": "Request was throttled.
// Expected available in N seconds."} with Retry-After (the hosted gateway's own 429 body is
// unknown); the `serverError` knob answers Django's plain "Server Error (500)" page as text/html;
// with the `apiKey` option a request without `Authorization: Bearer <key>` answers 401
// {"detail": "Invalid API key."} (the hosted gateway's answer is unknown). Development and tests
// only.

import {
  createPublicClient,
  getAddress,
  http,
  parseAbiItem,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { chainDefinition } from '../../adapters/chain/viem.ts';
import {
  defaultKnobs,
  MALFORMED_BODY,
  rateLimited,
  serveFake,
  type FakeAnswer,
  type FakeKnobs,
  type FakeRequest,
  type RunningFake,
} from './loopback.ts';
import { SAFE_ABI, SAFE_SENTINEL_OWNERS } from '../../adapters/safe/safe-tx.ts';

export interface SafeTxServiceFakeOptions {
  rpcUrl: string;
  /** Default 137 (the devnet's Polygon). */
  chainId?: number;
  /** The proxy factories whose `ProxyCreation` events make the Safes the fake knows. */
  proxyFactories: Address[];
  /** The first block searched for `ProxyCreation` (default 0). */
  fromBlock?: bigint;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (401 otherwise). */
  apiKey?: string;
  host?: string;
  /** Default 0: a free port. */
  port?: number;
}

export interface SafeTxServiceFakeKnobs extends FakeKnobs {
  /** Read the chain this many blocks behind its head (a lagging indexer); 0: at the head. */
  lagBlocks: number;
}

export type SafeTxServiceFake = RunningFake<SafeTxServiceFakeKnobs>;

/** The service's 422 for an address that is not EIP-55 checksummed. */
export function checksumErrorBody(address: string) {
  return { code: 1, message: 'Checksum address validation failed', arguments: [address] };
}

/** One `results` item of v2 (SafeLastStatusSerializer). */
export interface SafeStatus {
  address: Address;
  owners: Address[];
  threshold: number;
  nonce: number;
  master_copy: Address;
  fallback_handler: Address;
  guard: Address | null;
  module_guard: Address | null;
  enabled_modules: Address[];
}

export interface SafesPage {
  count: number;
  next: string | null;
  previous: string | null;
  results: SafeStatus[];
}

/** DefaultPagination of the service (history/pagination.py). */
export const SAFE_TX_SERVICE_DEFAULT_LIMIT = 100;
export const SAFE_TX_SERVICE_MAX_LIMIT = 200;

// keccak256 of "fallback_manager.handler.address", "guard_manager.guard.address" and
// "module_manager.module_guard.address" (FallbackManager, GuardManager, ModuleManager).
const FALLBACK_HANDLER_SLOT: Hex = '0x6c9a6c4a39284e37ed1cf53d337577d14212a4870fb976a4366c693b939918d5';
const GUARD_SLOT: Hex = '0x4a204f620c8c5ccdca3fd54d003badd85ba500436a431f0cbda4f558c93c34c8';
const MODULE_GUARD_SLOT: Hex = '0xb104e0b93118902c651344349b610029d694cfdec91c589c91ebafbcd0289947';

const proxyCreation = parseAbiItem('event ProxyCreation(address indexed proxy, address singleton)');

const OWNERS_V1 = /^\/api\/v1\/owners\/([^/]+)\/safes\/$/;
const OWNERS_V2 = /^\/api\/v2\/owners\/([^/]+)\/safes\/$/;

/** What Python's int() accepts for the query parameters (signs, spaces, digit underscores). */
function pythonInt(text: string | undefined): number | null {
  if (text === undefined) return null;
  const t = text.trim();
  if (!/^[+-]?\d+(_\d+)*$/.test(t)) return null;
  return Number(t.replaceAll('_', ''));
}

/** DRF LimitOffsetPagination.get_limit: strict positive int capped at max, else the default. */
export function pageLimit(text: string | undefined): number {
  const n = pythonInt(text);
  if (n === null || n <= 0) return SAFE_TX_SERVICE_DEFAULT_LIMIT;
  return Math.min(n, SAFE_TX_SERVICE_MAX_LIMIT);
}

/** DRF LimitOffsetPagination.get_offset: a non-negative int, else 0. */
export function pageOffset(text: string | undefined): number {
  const n = pythonInt(text);
  return n === null || n < 0 ? 0 : n;
}

/** DRF's replace_query_param / remove_query_param: the query rebuilt with its keys sorted. */
function withQuery(base: string, query: URLSearchParams, set: Record<string, string | null>): string {
  const q = new URLSearchParams(query);
  for (const [k, v] of Object.entries(set)) {
    if (v === null) q.delete(k);
    else q.set(k, v);
  }
  q.sort();
  const text = q.toString();
  return text ? `${base}?${text}` : base;
}

/** EIP-55: the address as sent is exactly its checksummed form (all-lowercase is refused). */
export function isChecksumAddress(text: string): boolean {
  if (!/^0x[0-9a-fA-F]{40}$/.test(text)) return false;
  return getAddress(text) === text;
}

function addressFromWord(word: Hex | undefined): Address {
  return getAddress(`0x${(word ?? '0x').slice(2).padStart(64, '0').slice(24)}`);
}

export async function startSafeTxServiceFake(options: SafeTxServiceFakeOptions): Promise<SafeTxServiceFake> {
  const chainId = options.chainId ?? 137;
  const client: PublicClient = createPublicClient({
    chain: chainDefinition(chainId, options.rpcUrl),
    transport: http(options.rpcUrl, { retryCount: 1 }),
  });
  const factories = options.proxyFactories.map((f) => getAddress(f));

  /** The block the answers read at (the head, less the lag). */
  async function readBlock(knobs: SafeTxServiceFakeKnobs): Promise<bigint> {
    const head = await client.getBlockNumber({ cacheTime: 0 });
    const lag = BigInt(Math.max(0, Math.trunc(knobs.lagBlocks)));
    return head > lag ? head - lag : 0n;
  }

  /** Every Safe proxy the factories created up to `block`, in creation order. */
  async function proxies(block: bigint): Promise<Address[]> {
    const logs = await client.getLogs({
      address: factories,
      event: proxyCreation,
      fromBlock: options.fromBlock ?? 0n,
      toBlock: block,
    });
    logs.sort((a, b) =>
      a.blockNumber === b.blockNumber
        ? (a.logIndex ?? 0) - (b.logIndex ?? 0)
        : a.blockNumber! < b.blockNumber!
          ? -1
          : 1,
    );
    const seen = new Set<string>();
    const out: Address[] = [];
    for (const log of logs) {
      const proxy = log.args.proxy;
      if (!proxy || seen.has(proxy.toLowerCase())) continue;
      seen.add(proxy.toLowerCase());
      out.push(getAddress(proxy));
    }
    return out;
  }

  /** The Safes among `candidates` whose owners (at `block`) include `owner`. */
  async function safesOf(owner: Address, block: bigint): Promise<Address[]> {
    const candidates = await proxies(block);
    const owned = await Promise.all(
      candidates.map(async (safe) => {
        try {
          const owners = await client.readContract({
            address: safe,
            abi: SAFE_ABI,
            functionName: 'getOwners',
            blockNumber: block,
          });
          return owners.some((o) => o.toLowerCase() === owner.toLowerCase());
        } catch {
          return false; // not set up, or not a Safe
        }
      }),
    );
    return candidates.filter((_, i) => owned[i]);
  }

  async function status(safe: Address, block: bigint): Promise<SafeStatus> {
    const read = <F extends 'getOwners' | 'getThreshold' | 'nonce'>(functionName: F) =>
      client.readContract({ address: safe, abi: SAFE_ABI, functionName, blockNumber: block });
    const slot = (s: Hex) => client.getStorageAt({ address: safe, slot: s, blockNumber: block });
    const [owners, threshold, nonce, singleton, handler, guard, moduleGuard, modules] = await Promise.all([
      read('getOwners'),
      read('getThreshold'),
      read('nonce'),
      slot('0x0'),
      slot(FALLBACK_HANDLER_SLOT),
      slot(GUARD_SLOT),
      slot(MODULE_GUARD_SLOT),
      client.readContract({
        address: safe,
        abi: SAFE_ABI,
        functionName: 'getModulesPaginated',
        args: [SAFE_SENTINEL_OWNERS, 100n],
        blockNumber: block,
      }),
    ]);
    const zeroToNull = (a: Address) => (BigInt(a) === 0n ? null : a);
    return {
      address: safe,
      owners: owners.map((o) => getAddress(o)),
      threshold: Number(threshold),
      nonce: Number(nonce),
      master_copy: addressFromWord(singleton),
      fallback_handler: addressFromWord(handler),
      guard: zeroToNull(addressFromWord(guard)),
      module_guard: zeroToNull(addressFromWord(moduleGuard)),
      enabled_modules: modules[0].map((m) => getAddress(m)),
    };
  }

  async function handle(request: FakeRequest, knobs: SafeTxServiceFakeKnobs): Promise<FakeAnswer> {
    if (knobs.rateLimitRetryAfter !== null) {
      const wait = Number(knobs.rateLimitRetryAfter);
      const detail = Number.isFinite(wait)
        ? `Request was throttled. Expected available in ${wait} second${wait === 1 ? '' : 's'}.`
        : 'Request was throttled.';
      return rateLimited(knobs.rateLimitRetryAfter, { detail });
    }
    if (knobs.serverError !== null) {
      return {
        status: knobs.serverError,
        body: `<!doctype html>\n<html lang="en">\n<head>\n  <title>Server Error (${knobs.serverError})</title>\n</head>\n<body>\n  <h1>Server Error (${knobs.serverError})</h1><p></p>\n</body>\n</html>\n`,
        headers: { 'content-type': 'text/html; charset=utf-8' },
      };
    }
    if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      return { status: 401, body: { detail: 'Invalid API key.' } };
    }
    const v1 = OWNERS_V1.exec(request.path);
    const v2 = v1 ? null : OWNERS_V2.exec(request.path);
    if (!v1 && !v2) return { status: 404, body: { detail: 'Not found.' } };
    if (request.method !== 'GET') {
      return { status: 405, body: { detail: `Method "${request.method}" not allowed.` } };
    }
    const address = decodeURIComponent((v1 ?? v2)![1]!);
    if (!isChecksumAddress(address)) return { status: 422, body: checksumErrorBody(address) };
    if (knobs.malformedJson) return { status: 200, body: MALFORMED_BODY };

    const block = await readBlock(knobs);
    const safes = await safesOf(address as Address, block);
    if (v1) return { status: 200, body: { safes: safes.slice(0, SAFE_TX_SERVICE_MAX_LIMIT) } };

    const limit = pageLimit(request.query.limit);
    const offset = pageOffset(request.query.offset);
    const count = safes.length;
    const page = count === 0 || offset > count ? [] : safes.slice(offset, offset + limit);
    const base = `http://${request.headers.host ?? '127.0.0.1'}${request.path}`;
    const query = request.url.searchParams;
    const next =
      offset + limit >= count
        ? null
        : withQuery(base, query, { limit: String(limit), offset: String(offset + limit) });
    const previous =
      offset <= 0
        ? null
        : withQuery(base, query, {
            limit: String(limit),
            offset: offset - limit <= 0 ? null : String(offset - limit),
          });
    const results = await Promise.all(page.map((safe) => status(safe, block)));
    const body: SafesPage = { count, next, previous, results };
    return { status: 200, body };
  }

  return serveFake<SafeTxServiceFakeKnobs>({
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.port === undefined ? {} : { port: options.port }),
    knobs: () => ({ ...defaultKnobs(), lagBlocks: 0 }),
    handle,
    internalError: () => '<h1>Server Error (500)</h1>',
  });
}
