// Auto-top-up: when a fee debit leaves the prepaid balance below the account's threshold, one
// pre-signed EIP-3009 authorization (an "arrow") from the account's quiver is settled on-chain
// and credited, at most `max_per_month` times a UTC month (docs/payments.md, "Auto-top-up").
//
// The fee path pays nothing for it unless the balance falls below the threshold (the rule's
// threshold is mirrored on the balance row, migration 0018): a trigger on prepaid_balances
// (migration 0013) enqueues the account's `auto_topup.fire` job in the debit's own statement,
// deduplicated by the job queue's singleton key. The job settles one arrow through the payments
// module (purpose `auto_topup`); `autoTopupEffect` credits the balance and marks the arrow settled
// in the transaction that marks the settlement settled. Arrows whose settlement the reconciler
// failed are caught up by `syncSettlingArrows`; arrows past validBefore by `expireArrows`.

//
// The files, by what they do: auto-topup-state.ts (limits, the state the API shows),
// auto-topup-rule.ts (the rule), auto-topup-quiver.ts (adding arrows), auto-topup-fire.ts (the
// fire job and its catch-up), auto-topup-effect.ts (a settled arrow), auto-topup-expiry.ts,
// auto-topup-export.ts and auto-topup-offboarding.ts; auto-topup-store.ts holds the tables. This
// file is what the rest of the service uses.

export { autoTopupEffect } from './auto-topup-effect.ts';
export { expireArrows } from './auto-topup-expiry.ts';
export { exportAutoTopup } from './auto-topup-export.ts';
export { fireAutoTopup, syncSettlingArrows, type FireResult } from './auto-topup-fire.ts';
export {
  arrowCancellation,
  CANCEL_AUTHORIZATION_TYPES,
  listReadyArrowTokens,
  removeReadyArrows,
  type RemovedArrow,
} from './auto-topup-offboarding.ts';
export { addArrows, type AddArrowsResult } from './auto-topup-quiver.ts';
export { setAutoTopupRule, type SetAutoTopupRuleParameters } from './auto-topup-rule.ts';
export {
  ARROWS_PER_CALL,
  CAP_QUIET_MS,
  FINISHED_ARROWS_SHOWN,
  FIRE_JOB,
  MAX_ARROW_VALIDITY_SECONDS,
  MAX_PER_MONTH_LIMIT,
  QUIVER_CAP,
  readAutoTopupState,
  SUSPEND_AFTER_FAILURES,
  type ArrowView,
  type AutoTopupState,
} from './auto-topup-state.ts';
