// The venues module: asking the conversion venues for quotes and swap calls (docs/venues.md).

export {
  buildSwap,
  quoteAllVenues,
  venuesOnChain,
  type BuildSwapInput,
  type QuoteAllInput,
  type QuoteAllResult,
  type VenueDeps,
  type VenueFailure,
  type VenueSkipped,
} from './service.ts';
export { bestCut, type Cut, type CutInput } from './cut.ts';
