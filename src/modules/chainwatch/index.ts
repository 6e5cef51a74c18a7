// The chain watcher module: what other modules use (docs/ledger.md, "The chain").

export { claimChainTransaction, type ChainClaim } from './claims.ts';
export { accountWatch } from './store.ts';
export {
  chainHoldingsAt,
  watchChain,
  watchChains,
  type ChainWatchReport,
  type WatchDeps,
} from './watcher.ts';
