// The executor module: what runs an admitted intent. Built: its first moves (claim, the checks
// before the run, abort), one operation by session key, slices that survive a crash and fills
// read from receipts; the run that schedules them is the next part (docs/executor.md).

export { accountMovements, fillEntries, NATIVE, type ReceiptLog } from './fills.ts';
export {
  permissionInstalled,
  signSessionOperation,
  submitSessionOperation,
  type SessionGrant,
  type SignedOperation,
} from './session-operation.ts';
export { landSlice, recordSignedSlice, type SliceDeps, type SliceOutcome } from './slices.ts';
export {
  abortIntent,
  startIntent,
  type Abort,
  type AbortReason,
  type ExecutorDeps,
  type StartOutcome,
} from './start.ts';
export { findSlice, signedSlices, type SliceRecord, type SliceState } from './store.ts';
