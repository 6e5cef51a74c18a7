// The feedback module: what other modules use.

export {
  FEEDBACK_LIST_DEFAULT_LIMIT,
  FEEDBACK_LIST_MAX_LIMIT,
  listFeatureRequests,
  type PublicFeatureRequest,
} from './service.ts';
export { FEATURE_REQUEST_STATUSES, insertFeatureRequest, type FeatureRequestStatus } from './store.ts';
