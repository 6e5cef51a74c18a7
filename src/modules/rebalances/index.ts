// The rebalances module: cross-chain USDC over CCTP V2 by the treasury executor
// (docs/rebalances.md). Routes, the burn job and the hourly completion.

export { rebalanceRunDeps, rebalancesRoutes } from './routes.ts';
export { BURN_JOB, MINT_JOB, type Rebalance } from './service.ts';
export {
  completePendingRebalances,
  enqueueMintCheck,
  recoverSubmittedMints,
  runBurn,
  runMintCheck,
  type RebalanceRunDeps,
} from './run.ts';
