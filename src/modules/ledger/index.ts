// The ledger module: what other modules use. Nothing else writes the ledger's tables; every
// booking goes through these functions, in the caller's transaction.

export {
  bridgeAccount,
  chainNativeAsset,
  erc1155Asset,
  erc20Asset,
  externalAccount,
  FEE_REVENUE,
  isAsset,
  isLedgerAccount,
  nativeAsset,
  parseAsset,
  prepaidAccount,
  prepaidOwner,
  TREASURY,
  USD,
  venueAccount,
  walletAccount,
  type ParsedAsset,
} from './chart.ts';
export {
  balanceOf,
  LedgerError,
  postGroup,
  postGroups,
  readGroup,
  reverseGroup,
  transfer,
  type BatchedGroup,
  type BookingGuard,
  type LedgerEntryInput,
  type LedgerGroup,
  type PostGroupParameters,
  type PostGroupResult,
  type ReverseGroupParameters,
} from './ledger.ts';
export {
  DEFAULT_BATCHER_OPTIONS,
  GroupBatcher,
  groupBatcher,
  observeBatches,
  type BatchObserver,
  type BatcherStats,
  type GroupBatcherOptions,
} from './batcher.ts';
export {
  expireHolds,
  placeHold,
  postHold,
  readHold,
  voidHold,
  type CloseHoldResult,
  type HoldView,
  type PlaceHoldParameters,
  type PlaceHoldResult,
} from './holds.ts';
export type { HoldState } from './store.ts';
export {
  prepaidBalanceSql,
  prepaidFloatSql,
  readPrepaidBalance,
  readPrepaidBalances,
  readPrepaidFloat,
  type PrepaidBalance,
} from './prepaid-balances.ts';
export {
  compareCodeUnits,
  readStatementBalances,
  readStatementEntryBatch,
  statementScope,
  type StatementBalanceRow,
  type StatementEntryBatch,
  type StatementScope,
} from './statement-reads.ts';
export { groupMemos, kindEntryTotals, ledgerTotalsByAsset, type AccountTotalsFilter } from './totals.ts';
