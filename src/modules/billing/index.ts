// The billing module: the prepaid balance. Metered routes debit their fee with `debitFee` in the
// transaction of their write and answer `insufficient` with `paymentRequired` (402).

export {
  creditPrepaid,
  debitFee,
  formatBalanceUsd,
  paymentRequired,
  readPrepaidBalance,
  type CreditPrepaidParameters,
  type CreditPrepaidResult,
  type DebitFeeParameters,
  type DebitFeeResult,
  type PrepaidBalance,
} from './prepaid.ts';
export { billingRoutes } from './routes.ts';
