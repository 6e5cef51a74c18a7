// The quotes module: the public quote comparison (docs/execution.md).

export { compareQuotes, type QuoteComparison, type QuoteDeps, type QuoteRequest } from './service.ts';
export { quotesRoutes } from './routes.ts';
