// The quotes module: the public quote comparison (docs/execution.md).

export {
  compareQuotes,
  planSale,
  type PlannedSale,
  type QuoteComparison,
  type QuoteDeps,
  type QuoteRequest,
  type SaleToPlan,
} from './service.ts';
export { quotesRoutes } from './routes.ts';
