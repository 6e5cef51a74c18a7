// The chain watcher module: what other modules use (docs/ledger.md, "The chain").

export { claimChainTransaction, type ChainClaim } from './claims.ts';
export { adjustDrift, listDrifts, unresolvedDrifts, type DriftView } from './drifts.ts';
export { walletHoldings } from './holdings.ts';
export { reconcileChain, reconcileChains, type ReconcileReport } from './reconcile.ts';
export {
  chainWatchDeps,
  chainwatchRoutes,
  DRIFT_EXAMPLE,
  DriftList,
  DriftListQuery,
  driftsPage,
  DriftSchema,
} from './routes.ts';
export { accountWatch, watchCursors } from './store.ts';
export {
  chainHoldingsAt,
  watchChain,
  watchChains,
  type ChainWatchReport,
  type WatchDeps,
} from './watcher.ts';
