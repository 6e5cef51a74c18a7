// The prediction-market module (docs/prediction-markets.md): venue credentials sealed at rest,
// their watched use, and the jurisdiction gate of every prediction-market route.

export { pmRoutes, credentialDeps, orderDeps } from './routes.ts';
export { exportOrders, reconcileTransmitting, sweepPrepared } from './orders.ts';
export { jurisdictionGateOf, pmJurisdictionGate } from './gate.ts';
export { useCredential, noteUse, networkOf, TRADING_OPERATIONS, type TradingOperation } from './usage.ts';
export {
  listCredentialViews,
  zeroAccountCredentials,
  type CredentialView,
  type StoreCredentialBody,
} from './credentials.ts';
export type { CredentialMaterial, UsageWatchSettings } from './types.ts';
export { exportPositions } from './fills.ts';
export { deleteVenueCredentialNetworksSeenBefore, deleteVenueCredentialUsageBefore } from './store.ts';
export { resealVenueCredentials } from './reseal.ts';
