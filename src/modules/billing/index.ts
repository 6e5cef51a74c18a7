// The billing module: the prepaid balance. Metered routes debit their fee with `debitFee` in the
// transaction of their write and answer `insufficient` with `paymentRequired` (402).

export {
  creditPrepaid,
  debitFee,
  debitFeeAlone,
  formatBalanceUsd,
  paymentRequired,
  readPrepaidBalance,
  type CreditPrepaidParameters,
  type CreditPrepaidResult,
  type DebitFeeParameters,
  type DebitFeeResult,
  type PrepaidBalance,
} from './prepaid.ts';
export {
  chargeFee,
  chargeFeeAlone,
  pmOrderFeeMicro,
  productFeeMicro,
  publishedFeeSchedule,
  type ChargeFeeParameters,
  type ChargeFeeResult,
  type MeteredProduct,
} from './fees.ts';
export {
  accountPrepaidCap,
  meteringEnforced,
  readBillingSettings,
  setAccountPrepaidCap,
  setMeteringEnforced,
  setPrepaidCap,
  type BillingSettings,
} from './settings.ts';
export {
  admitPrepaidCredit,
  authorizationSettlementId,
  pendingSettlementBody,
  refuseQuiverAuthorization,
  topupEffect,
} from './topups.ts';
export { billingOverview, type BillingOverview } from './overview.ts';
export { readAccountCaps } from './store.ts';
