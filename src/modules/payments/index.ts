// The payments module: EIP-3009 USDC authorizations paying the platform treasury, recorded before
// they are broadcast and finished from chain truth (docs/payments.md). Billing (top-ups,
// auto-top-up) and feedback (x402) use it; each names the effect a settled payment has.

export {
  authorizationDigest,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  transferWithAuthorizationCalldata,
  type TransferAuthorization,
} from './eip3009.ts';
export {
  findExistingSettlement,
  paymentTerms,
  reconcileSettlement,
  reconcileStaleSettlements,
  submitPayment,
  verifyAuthorization,
  type PaymentOutcome,
  type PaymentsDeps,
  type PaymentTerms,
  type SettlementEffect,
  type SettlementEffects,
  type SubmittedAuthorization,
  type SubmitPaymentParameters,
} from './service.ts';
export { findSettlement, openSettlementsSql, type SettlementRow } from './store.ts';

export { Eip3009Authorization, PendingSettlement, SignedAuthorization, toSubmitted } from './schemas.ts';
