// The symbol and decimals of a ledger asset, which say how to read its base units: a statement's
// balance row (format version 2, docs/statements.md), a wallet's holdings, a drift. Static per
// deployment (the token registry is built once at start), so a statement's bytes still depend only
// on its ledger range.

import { parseAsset } from '../ledger/index.ts';
import type { TokenRegistry } from './service.ts';

export interface AssetMetadata {
  /** The registry's symbol (`USDC`, `USDC.E`), `USD`, the native coin's; null when unknown. */
  symbol: string | null;
  /** Decimals of the base units; null when unknown. */
  decimals: number | null;
}

/** Prepaid micro-USD. */
const USD_METADATA: AssetMetadata = { symbol: 'USD', decimals: 6 };
/** A prediction-market outcome share (ERC-1155): no symbol of its own, counted in micro shares. */
const SHARE_METADATA: AssetMetadata = { symbol: null, decimals: 6 };
const UNKNOWN: AssetMetadata = { symbol: null, decimals: null };

/** SLIP-44 coin type that names every chain's native coin in the ledger (`ETH_SLIP44`). */
const SLIP44_ETH = 60;
/** Native coin per chain (the registry lists only its wrapped token), with its own SLIP-44 type. */
const NATIVE_COINS: Record<number, { symbol: string; slip44: number }> = {
  8453: { symbol: 'ETH', slip44: 60 },
  84532: { symbol: 'ETH', slip44: 60 },
  137: { symbol: 'POL', slip44: 966 },
};
const NATIVE_DECIMALS = 18;

/**
 * The symbol and decimals of a ledger asset: an ERC-20 from the registry's entry for its chain and
 * address; `USD` is USD with 6; a chain's native coin (`slip44:60`, or the chain's own coin type)
 * its symbol with 18; an ERC-1155 share null with 6; anything the registry does not know, nulls.
 */
export function assetMetadata(registry: TokenRegistry, asset: string): AssetMetadata {
  const parsed = parseAsset(asset);
  if (!parsed) return UNKNOWN;
  switch (parsed.kind) {
    case 'usd':
      return USD_METADATA;
    case 'erc20': {
      const token = registry.findToken(parsed.chainId, parsed.token);
      return token ? { symbol: token.symbol, decimals: token.decimals } : UNKNOWN;
    }
    case 'erc1155':
      return SHARE_METADATA;
    case 'native': {
      const coin = NATIVE_COINS[parsed.chainId];
      if (!coin || registry.chain(parsed.chainId) === null) return UNKNOWN;
      if (parsed.slip44 !== SLIP44_ETH && parsed.slip44 !== coin.slip44) return UNKNOWN;
      return { symbol: coin.symbol, decimals: NATIVE_DECIMALS };
    }
  }
}
