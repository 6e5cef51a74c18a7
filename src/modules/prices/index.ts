// The price references module: what other modules (admission, the planner) and the runtime use.

export {
  applyCrossPrice,
  createPriceReferences,
  referencePair,
  type CachedReading,
  type CreatePriceReferencesOptions,
  type CrossPrice,
  type CrossPriceResult,
  type PriceReferences,
  type PriceRefusal,
  type RefreshSummary,
  type UsdValuation,
} from './service.ts';
export { feedsFromConfig, sequencerFeeds } from './feeds.ts';
export { buildPriceReferences, type BuildPriceReferencesParameters } from './build.ts';
