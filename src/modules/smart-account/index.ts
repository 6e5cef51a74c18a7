// Smart accounts (Kernel v3.1 on EntryPoint v0.7): what other modules use to get a UserOperation
// paid for and sent. See docs/smart-accounts.md.

export {
  DEPOSIT_SWEEP_AFTER_MS,
  PREFUND_KIND,
  PrefundDepositFailedError,
  reconcilePrefundDeposits,
  requiredPrefundWei,
  sponsorPrefund,
  type PrefundRequest,
  type SponsorDeps,
  type SponsorResult,
} from './prefund.ts';
export { bookedDepositsFor, type PrefundDeposit } from './store.ts';
