// Smart accounts (Kernel v3.1 on EntryPoint v0.7): what other modules use to get a UserOperation
// paid for and sent. See docs/smart-accounts.md.

export {
  ensurePrefund,
  PrefundDepositFailedError,
  requiredPrefundWei,
  type EnsurePrefundResult,
} from './prefund.ts';
