// The executor module: what runs an admitted intent. Today its first moves (claim, the checks
// that need no chain read, abort); the on-chain run is the next part (docs/executor.md).

export {
  abortIntent,
  startIntent,
  type Abort,
  type AbortReason,
  type ExecutorDeps,
  type StartOutcome,
} from './start.ts';
