// The executor module: what runs an admitted intent (docs/executor.md). The `intents.execute`
// job runs `runIntentStep` until the intent ends; the parts are exported for their tests.

export { accountMovements, fillEntries, NATIVE, type ReceiptLog } from './fills.ts';
export { abortIntent, filledValueMicro, finishIntent, type IntentEnd } from './finish.ts';
export { uncoveredCall } from './grant.ts';
export type { Abort, AbortReason, RunReport, SliceReport } from './report.ts';
export { failIntent, reconcileAbandonedSlices, runIntentStep, type StepOutcome } from './run.ts';
export { UNWRAP_VENUE } from './next-slice.ts';
export {
  permissionInstalled,
  signSessionOperation,
  submitSessionOperation,
  type SessionGrant,
  type SignedOperation,
} from './session-operation.ts';
export {
  dropSlice,
  landSlice,
  recordSignedSlice,
  settleIfDecided,
  type SliceDeps,
  type SliceOutcome,
} from './slices.ts';
export { startIntent, type ExecutorDeps, type RunDeps, type StartOutcome } from './start.ts';
export {
  abandonedSlices,
  findSlice,
  intentSlices,
  signedSlices,
  type SliceRecord,
  type SliceState,
} from './store.ts';
