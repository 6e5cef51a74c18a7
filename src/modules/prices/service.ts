// Price references for the request path: a cache of feed readings, refreshed off the request path
// by a timer, that values tokens in USD and prices one token in another synchronously, with no RPC.
//
// Fail closed: a token is valued only through a usable reading (or its USD peg). A reading older
// than its heartbeat + margin at the moment of use is refused even though it is cached, and a feed
// whose latest read failed is refused, except that an RPC outage keeps the last good reading until
// it ages out on its own.

import {
  freshnessFailure,
  normalizePair,
  type PriceFailure,
  type PriceFailureKind,
  type PriceFeedSpec,
  type PriceReading,
  type PriceReferencePort,
  type PriceResult,
} from '../../adapters/prices/port.ts';
import type { Clock } from '../../core/clock.ts';
import { normalizeSymbol, type RegistryToken, type TokenRegistry } from '../registry/index.ts';

export interface PriceRefusal {
  /** A feed failure, or: the token is not in the registry (`unknown_token`), the feed was never read (`not_read`). */
  kind: PriceFailureKind | 'unknown_token' | 'not_read';
  chainId: number;
  /** The feed that could not be used; null for an unknown token. */
  pair: string | null;
  message: string;
}

export type UsdValuation =
  | {
      ok: true;
      /** Rounded up to the next micro-USD, so a cap check never under-counts. */
      usdMicro: bigint;
      /** The reading used, or null for a USD-pegged token valued 1:1. */
      reading: PriceReading | null;
    }
  | { ok: false; refusal: PriceRefusal };

/**
 * Buy-token base units per sell-token base unit, exactly: `num / den` (reduced, both > 0).
 * `P = (sell/USD) / (buy/USD)` scaled by the tokens' decimals.
 */
export interface CrossPrice {
  chainId: number;
  sellToken: RegistryToken;
  buyToken: RegistryToken;
  num: bigint;
  den: bigint;
  /** The readings of each leg; null for a USD-pegged leg. */
  sellReading: PriceReading | null;
  buyReading: PriceReading | null;
}

export type CachedReading = { ok: true; reading: PriceReading } | { ok: false; refusal: PriceRefusal };

export type CrossPriceResult = { ok: true; price: CrossPrice } | { ok: false; refusal: PriceRefusal };

export interface RefreshSummary {
  usable: number;
  failures: PriceFailure[];
}

export interface PriceReferences {
  /** Every feed read, as configured. */
  feeds(): readonly PriceFeedSpec[];
  /** The cached reading of a feed if it is usable now (no RPC). */
  reading(chainId: number, pair: string): CachedReading;
  /**
   * USD value of `amount` base units of a registry token (address or symbol), no RPC: USD-pegged
   * tokens 1:1, others through their `<SYMBOL>/USD` feed (WETH through ETH/USD).
   * Throws RangeError for a negative amount.
   */
  valueUsdMicro(chainId: number, token: string, amount: bigint): UsdValuation;
  /** The reference price of selling `sellToken` for `buyToken`; covered only when both legs are usable. */
  crossPrice(chainId: number, sellToken: string, buyToken: string): CrossPriceResult;
  /** Reads every feed now and updates the cache. Never throws for a feed problem. */
  refresh(): Promise<RefreshSummary>;
  /** Reads one feed now (after a price was moved on the devnet). Null when no such feed is configured. */
  refreshFeed(chainId: number, pair: string): Promise<PriceResult | null>;
  /** Starts the refresh timer (first refresh at once); returns the function that stops it. */
  start(): () => Promise<void>;
}

export interface PriceReferencesLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface CreatePriceReferencesOptions {
  port: PriceReferencePort;
  feeds: readonly PriceFeedSpec[];
  registry: TokenRegistry;
  clock: Clock;
  marginSeconds: number;
  refreshIntervalMs: number;
  log?: PriceReferencesLog;
}

/** The feed a non-pegged token is valued through: `<base>/USD`, the wrapped native by its coin. */
export function referencePair(token: RegistryToken): string | null {
  if (token.stable) return null;
  const base = WRAPPED_NATIVE_BASE[token.symbol] ?? token.symbol;
  return `${base}/USD`;
}

const WRAPPED_NATIVE_BASE: Record<string, string> = { WETH: 'ETH', WPOL: 'POL' };

interface CacheEntry {
  /** The last usable reading; kept through an RPC outage, dropped on any other failure. */
  reading: PriceReading | null;
  /** The latest read's failure, null after a usable one. */
  failure: PriceFailure | null;
  /** Order of the read that produced this entry: a slower, older read never overwrites it. */
  seq: number;
}

const ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;

export function createPriceReferences(options: CreatePriceReferencesOptions): PriceReferences {
  const { port, registry, clock, marginSeconds, log } = options;
  const key = (chainId: number, pair: string) => `${chainId}:${normalizePair(pair)}`;
  const specs = new Map(options.feeds.map((f) => [key(f.chainId, f.pair), f]));
  const cache = new Map<string, CacheEntry>();
  let seq = 0;

  async function readInto(spec: PriceFeedSpec): Promise<PriceResult> {
    const mine = ++seq;
    const result = await port.read(spec);
    const k = key(spec.chainId, spec.pair);
    const prior = cache.get(k);
    if (prior && prior.seq > mine) return result;
    if (result.ok) {
      if (prior?.failure)
        log?.info({ chainId: spec.chainId, pair: spec.pair }, 'price reference usable again');
      cache.set(k, { reading: result.reading, failure: null, seq: mine });
    } else {
      if (prior?.failure?.kind !== result.failure.kind) {
        log?.warn(
          { chainId: spec.chainId, pair: spec.pair, kind: result.failure.kind },
          result.failure.message,
        );
      }
      const keep = result.failure.kind === 'unreachable' ? (prior?.reading ?? null) : null;
      cache.set(k, { reading: keep, failure: result.failure, seq: mine });
    }
    return result;
  }

  function reading(chainId: number, pair: string): CachedReading {
    const refuse = (kind: PriceRefusal['kind'], message: string): CachedReading => ({
      ok: false,
      refusal: { kind, chainId, pair, message },
    });
    const spec = specs.get(key(chainId, pair));
    if (!spec) return refuse('missing_feed', `no ${pair} price feed is configured on chain ${chainId}`);
    const entry = cache.get(key(chainId, pair));
    if (entry?.reading) {
      const stale = freshnessFailure(entry.reading, spec.heartbeatSeconds, marginSeconds, clock.now());
      if (!stale) return { ok: true, reading: entry.reading };
      const outage = entry.failure?.kind === 'unreachable' ? ' (the chain has not answered since)' : '';
      return refuse('stale', `${stale.message}${outage}`);
    }
    if (entry?.failure) return refuse(entry.failure.kind, entry.failure.message);
    return refuse('not_read', `${pair} on chain ${chainId} has not been read yet`);
  }

  function findToken(chainId: number, token: string): RegistryToken | PriceRefusal {
    const found = registry.findToken(chainId, ADDRESS_PATTERN.test(token) ? token : normalizeSymbol(token));
    if (found) return found;
    return {
      kind: 'unknown_token',
      chainId,
      pair: null,
      message: `${token} is not a listed token on chain ${chainId}`,
    };
  }

  /** The token's USD price as a fraction (`num / den` USD per whole token), or why there is none. */
  function usdPrice(
    chainId: number,
    token: RegistryToken,
  ): { num: bigint; den: bigint; reading: PriceReading | null } | PriceRefusal {
    const pair = referencePair(token);
    if (pair === null) return { num: 1n, den: 1n, reading: null };
    const result = reading(chainId, pair);
    if (!result.ok) return result.refusal;
    return {
      num: result.reading.answer,
      den: 10n ** BigInt(result.reading.decimals),
      reading: result.reading,
    };
  }

  function valueUsdMicro(chainId: number, tokenRef: string, amount: bigint): UsdValuation {
    if (amount < 0n) throw new RangeError('amount must not be negative');
    const token = findToken(chainId, tokenRef);
    if ('kind' in token) return { ok: false, refusal: token };
    const price = usdPrice(chainId, token);
    if ('kind' in price) return { ok: false, refusal: price };
    const num = amount * price.num * 1_000_000n;
    const den = price.den * 10n ** BigInt(token.decimals);
    return { ok: true, usdMicro: ceilDiv(num, den), reading: price.reading };
  }

  function crossPrice(chainId: number, sellRef: string, buyRef: string): CrossPriceResult {
    const sellToken = findToken(chainId, sellRef);
    if ('kind' in sellToken) return { ok: false, refusal: sellToken };
    const buyToken = findToken(chainId, buyRef);
    if ('kind' in buyToken) return { ok: false, refusal: buyToken };
    const sell = usdPrice(chainId, sellToken);
    if ('kind' in sell) return { ok: false, refusal: sell };
    const buy = usdPrice(chainId, buyToken);
    if ('kind' in buy) return { ok: false, refusal: buy };
    // (sell.num / sell.den) USD per sell token ÷ (buy.num / buy.den) USD per buy token, in base units.
    const num = sell.num * buy.den * 10n ** BigInt(buyToken.decimals);
    const den = sell.den * buy.num * 10n ** BigInt(sellToken.decimals);
    const g = gcd(num, den);
    return {
      ok: true,
      price: {
        chainId,
        sellToken,
        buyToken,
        num: num / g,
        den: den / g,
        sellReading: sell.reading,
        buyReading: buy.reading,
      },
    };
  }

  let inFlight: Promise<RefreshSummary> | null = null;
  async function refreshAll(): Promise<RefreshSummary> {
    const results = await Promise.all([...specs.values()].map((s) => readInto(s)));
    const failures = results.flatMap((r) => (r.ok ? [] : [r.failure]));
    return { usable: results.length - failures.length, failures };
  }
  function refresh(): Promise<RefreshSummary> {
    inFlight ??= refreshAll().finally(() => {
      inFlight = null;
    });
    return inFlight;
  }

  async function refreshFeed(chainId: number, pair: string): Promise<PriceResult | null> {
    const spec = specs.get(key(chainId, pair));
    return spec ? readInto(spec) : null;
  }

  function start(): () => Promise<void> {
    const tick = () => {
      refresh().catch((err: unknown) => log?.warn({ err }, 'price reference refresh failed'));
    };
    tick();
    const timer = setInterval(tick, options.refreshIntervalMs);
    timer.unref();
    return async () => {
      clearInterval(timer);
      await inFlight?.catch(() => undefined);
    };
  }

  return {
    feeds: () => [...specs.values()],
    reading,
    valueUsdMicro,
    crossPrice,
    refresh,
    refreshFeed,
    start,
  };
}

/** `amount` sell-token base units at `price`, in buy-token base units, rounded down. */
export function applyCrossPrice(price: Pick<CrossPrice, 'num' | 'den'>, sellAmount: bigint): bigint {
  return (sellAmount * price.num) / price.den;
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}
