// The token registry module: what other modules use.

export {
  buildTokenRegistry,
  normalizeSymbol,
  type DevnetTokenAddresses,
  type RegistryChain,
  type RegistryToken,
  type RegistryVenue,
  type TokenRegistry,
} from './service.ts';
export { assetMetadata, type AssetMetadata } from './assets.ts';
export type { VenueName } from './catalog.ts';
