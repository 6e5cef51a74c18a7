// The quotes module: the public quote comparison (docs/execution.md).

export {
  compareQuotes,
  planSale,
  splitGasCost,
  type PlannedSale,
  type QuoteComparison,
  type QuoteDeps,
  type QuoteRequest,
  type SaleToPlan,
  type SplitGasDeps,
} from './service.ts';
export { quotesRoutes } from './routes.ts';
