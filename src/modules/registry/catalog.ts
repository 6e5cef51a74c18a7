// The token registry's source data: the real contract addresses of every supported chain.
// Sources: the project's protocol reference (USDC and WETH addresses, Polymarket contracts) and
// execution reference (Base venues), which cite docs.base.org, Circle and Polymarket; EURC and
// WPOL are Circle's and Polygon's published deployments. A symbol here is the exact UPPERCASE string that
// `spend.token_allowlist` carries.

import type { Address } from 'viem';

/**
 * Every venue identifier the registry can list (decisions.md, "Venue identifiers"). The catalog
 * lists the real venues; a conversion venue the configuration adds (the devnet's own AMM, through
 * the devnet's door) is listed where its adapter serves a chain.
 */
export type VenueName = '0x' | 'kyberswap' | 'aerodrome' | 'uniswap-v3' | 'devnet-amm' | 'polymarket';

export interface CatalogToken {
  symbol: string;
  address: Address;
  decimals: number;
  /** USD-pegged and valued 1:1 (a euro stablecoin is not). */
  stable: boolean;
}

export interface CatalogVenue {
  name: VenueName;
  /**
   * True when an intent's token conversion can be executed (settled on-chain) through this venue
   * on this chain: it is a candidate for quotes and execution and a meaningful member of a
   * policy's `execution.venues`. False when the venue is listed on the chain for another role
   * (polymarket settles prediction-market orders on Polygon, not conversions).
   */
  settles: boolean;
}

export interface CatalogChain {
  chainId: number;
  name: string;
  /** Symbol of the token that wraps the chain's native coin (gas top-ups unwrap it). */
  wrappedNativeSymbol: string;
  venues: CatalogVenue[];
  tokens: CatalogToken[];
}

export const CATALOG: readonly CatalogChain[] = [
  {
    chainId: 8453,
    name: 'Base',
    wrappedNativeSymbol: 'WETH',
    venues: [
      { name: '0x', settles: true },
      { name: 'kyberswap', settles: true },
      { name: 'aerodrome', settles: true },
      { name: 'uniswap-v3', settles: true },
    ],
    tokens: [
      { symbol: 'USDC', address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', decimals: 6, stable: true },
      { symbol: 'WETH', address: '0x4200000000000000000000000000000000000006', decimals: 18, stable: false },
      { symbol: 'EURC', address: '0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42', decimals: 6, stable: false },
    ],
  },
  {
    // The testbed chain: only gas top-ups run here, so no venue settles conversions.
    chainId: 84532,
    name: 'Base Sepolia',
    wrappedNativeSymbol: 'WETH',
    venues: [],
    tokens: [
      { symbol: 'USDC', address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', decimals: 6, stable: true },
      { symbol: 'WETH', address: '0x4200000000000000000000000000000000000006', decimals: 18, stable: false },
    ],
  },
  {
    // The prediction-market chain. pUSD is Polymarket's collateral, backed 1:1 by USDC/USDC.e.
    chainId: 137,
    name: 'Polygon',
    wrappedNativeSymbol: 'WPOL',
    venues: [{ name: 'polymarket', settles: false }],
    tokens: [
      { symbol: 'USDC', address: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', decimals: 6, stable: true },
      { symbol: 'USDC.E', address: '0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174', decimals: 6, stable: true },
      { symbol: 'PUSD', address: '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB', decimals: 6, stable: true },
      // Formerly WMATIC: the contract is unchanged, Polygon renamed its native coin POL.
      { symbol: 'WPOL', address: '0x0d500B1d8E8eF31E21C99d1Db9A6444d3ADf1270', decimals: 18, stable: false },
    ],
  },
];
