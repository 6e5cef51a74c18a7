// The policies module: what other modules use. Every spending path evaluates its action with
// `evaluate` and holds its amount with `reserveSpend` in its own transaction.

export {
  documentProblems,
  EXECUTION_VENUE_VOCABULARY,
  fillDefaults,
  platformDefaults,
  policyHash,
  policyVocabularies,
  POLICY_CHAIN_IDS,
  type PolicyChainId,
  type PolicyDocument,
  type PolicyDocumentInput,
  type SpendApprovals,
} from './document.ts';
export {
  evaluate,
  evaluateRules,
  refusalMessage,
  type DelegationCall,
  type Evaluation,
  type PolicyAction,
  type RefusalCode,
  type RuleName,
  type RuleVerdict,
  type SpendUsage,
} from './engine.ts';
export {
  expireReservations,
  readSpendUsage,
  releaseReservation,
  releaseSpendCall,
  reservationRefusal,
  reserveSpend,
  reserveSpendGuard,
  settleReservation,
  type CloseReservationResult,
  type ReserveSpendParameters,
  type ReserveSpendResult,
  type SpendCapRule,
} from './reservations.ts';
export {
  activePolicyOf,
  getActivePolicy,
  noPolicyError,
  pinnedPolicy,
  type ActivePolicy,
} from './service.ts';
export type { PolicyRow } from './store.ts';
export { formatUsd, parseUsd, usdToMicro } from '../../core/money.ts';
