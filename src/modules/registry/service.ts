// The token registry: per supported chain, its wrapped native token, venues and tokens. Built once
// at start from the catalog (real addresses) and, in development, the devnet's deployed addresses.

import { getAddress, isAddress, type Address } from 'viem';
import type { PurserEnv } from '../../config.ts';
import { CATALOG, type CatalogChain, type VenueName } from './catalog.ts';

export interface RegistryToken {
  /** The exact UPPERCASE symbol that `spend.token_allowlist` carries (`PUSD`, `USDC.E`). */
  readonly symbol: string;
  /** EIP-55 checksummed. */
  readonly address: Address;
  readonly decimals: number;
  /** USD-pegged and valued 1:1; a euro-pegged token is false. */
  readonly stable: boolean;
}

export interface RegistryVenue {
  readonly name: VenueName;
  /** Whether the venue settles token conversions on this chain (see catalog.ts). */
  readonly settles: boolean;
}

export interface RegistryChain {
  readonly chainId: number;
  readonly name: string;
  readonly wrappedNative: Address;
  readonly venues: readonly RegistryVenue[];
  readonly tokens: readonly RegistryToken[];
}

/**
 * Chain id → the conversion venues whose adapter serves that chain. Given, the registry's
 * `settles` for conversion venues says what actually settles; absent, the catalog's defaults.
 */
export type SettlingVenues = Record<number, readonly string[]>;

/** The venues listed for another role than conversions (prediction markets). */
const PREDICTION_MARKET_VENUE_NAMES: readonly VenueName[] = ['polymarket'];
const isConversionVenue = (name: VenueName): boolean => !PREDICTION_MARKET_VENUE_NAMES.includes(name);

/** Addresses the devnet deployed, by chain id and symbol (any case: `pUSD` and `PUSD` are one). */
export type DevnetTokenAddresses = Record<number, Record<string, `0x${string}`>>;

export interface TokenRegistry {
  readonly env: PurserEnv;
  /** Every supported chain, in a stable order (Base, Base Sepolia, Polygon). */
  registryChains(): readonly RegistryChain[];
  /**
   * The conversion venues listed on any chain, settling or not: the names a policy's
   * `execution.venues` may carry (the real venues, and those the configuration adds).
   */
  conversionVenues(): readonly string[];
  /** The chain's entry, or null when the chain is not supported. */
  chain(chainId: number): RegistryChain | null;
  /**
   * A token of the chain by its address (any case) or its exact registry symbol (`USDC.E`, not
   * `USDC.e`: the symbol is what a policy allowlist must carry verbatim). Null when absent.
   */
  findToken(chainId: number, symbolOrAddress: string): RegistryToken | null;
}

/** The registry spelling of a token symbol: uppercase (`pUSD` → `PUSD`, `USDC.e` → `USDC.E`). */
export function normalizeSymbol(symbol: string): string {
  return symbol.trim().toUpperCase();
}

const ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;

/**
 * Builds the registry of an environment. Production lists the real contract addresses only.
 * Development adds the devnet's AMM venue and takes each token's address from `devnetTokens`
 * when the devnet deployed that symbol on that chain; a symbol the devnet did not deploy keeps
 * its real address, and a devnet symbol the catalog does not know is ignored (the catalog
 * decides which tokens exist, the devnet only relocates them).
 *
 * Throws when `devnetTokens` is given in production, holds an invalid address, or maps two
 * symbols of one chain to the same address.
 */
export function buildTokenRegistry(
  env: PurserEnv,
  devnetTokens?: DevnetTokenAddresses,
  settling?: SettlingVenues,
): TokenRegistry {
  if (env === 'production' && devnetTokens !== undefined) {
    throw new Error(
      'Devnet token addresses are refused in production: the registry lists real addresses only.',
    );
  }
  const chains = CATALOG.map((entry) =>
    buildChain(entry, devnetTokens?.[entry.chainId] ?? {}, settling ? (settling[entry.chainId] ?? []) : null),
  );
  const byId = new Map(chains.map((c) => [c.chainId, c]));
  const bySymbol = new Map(chains.map((c) => [c.chainId, new Map(c.tokens.map((t) => [t.symbol, t]))]));
  const byAddress = new Map(
    chains.map((c) => [c.chainId, new Map(c.tokens.map((t) => [t.address.toLowerCase(), t]))]),
  );
  const frozen = Object.freeze(chains);
  const conversionVenues = Object.freeze([
    ...new Set(chains.flatMap((c) => c.venues.filter((v) => isConversionVenue(v.name)).map((v) => v.name))),
  ]);
  return Object.freeze({
    env,
    registryChains: () => frozen,
    conversionVenues: () => conversionVenues,
    chain: (chainId: number) => byId.get(chainId) ?? null,
    findToken: (chainId: number, symbolOrAddress: string) => {
      if (ADDRESS_PATTERN.test(symbolOrAddress)) {
        return byAddress.get(chainId)?.get(symbolOrAddress.toLowerCase()) ?? null;
      }
      return bySymbol.get(chainId)?.get(symbolOrAddress) ?? null;
    },
  });
}

function buildChain(
  entry: CatalogChain,
  devnet: Record<string, string>,
  settling: readonly string[] | null,
): RegistryChain {
  const relocated = new Map<string, Address>();
  for (const [symbol, address] of Object.entries(devnet)) {
    if (!isAddress(address, { strict: false })) {
      throw new Error(`Devnet address of ${symbol} on chain ${entry.chainId} is not an address: ${address}`);
    }
    relocated.set(normalizeSymbol(symbol), getAddress(address));
  }
  const tokens = entry.tokens.map((t) =>
    Object.freeze({
      symbol: t.symbol,
      address: relocated.get(t.symbol) ?? t.address,
      decimals: t.decimals,
      stable: t.stable,
    }),
  );
  const seen = new Map<string, string>();
  for (const t of tokens) {
    const prior = seen.get(t.address.toLowerCase());
    if (prior)
      throw new Error(`Chain ${entry.chainId}: ${prior} and ${t.symbol} share the address ${t.address}`);
    seen.set(t.address.toLowerCase(), t.symbol);
  }
  const wrapped = tokens.find((t) => t.symbol === entry.wrappedNativeSymbol);
  if (!wrapped)
    throw new Error(`Chain ${entry.chainId}: wrapped native ${entry.wrappedNativeSymbol} is not a token`);
  const venues = entry.venues.map((v) =>
    Object.freeze({
      name: v.name,
      // A conversion venue settles where an adapter serves the chain; the catalog says so otherwise.
      settles: settling && isConversionVenue(v.name) ? settling.includes(v.name) : v.settles,
    }),
  );
  // Conversion venues the configuration adds (the devnet's AMM): listed where an adapter serves.
  for (const name of settling ?? [])
    if (!venues.some((v) => v.name === name))
      venues.push(Object.freeze({ name: name as VenueName, settles: true }));
  return Object.freeze({
    chainId: entry.chainId,
    name: entry.name,
    wrappedNative: wrapped.address,
    venues: Object.freeze(venues),
    tokens: Object.freeze(tokens),
  });
}
