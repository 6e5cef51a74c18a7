// The feedback module: what other modules use.

export {
  FEEDBACK_LIST_DEFAULT_LIMIT,
  FEEDBACK_LIST_MAX_LIMIT,
  listFeatureRequests,
  type PublicFeatureRequest,
} from './service.ts';
export { FEATURE_REQUEST_STATUSES, insertFeatureRequest, type FeatureRequestStatus } from './store.ts';
export { FEEDBACK_PURPOSE, feedbackEffect } from './submit.ts';
export {
  purgePaymentChallenges,
  UNUSED_CHALLENGE_RETENTION_MS,
  USED_CHALLENGE_RETENTION_MS,
} from './challenges.ts';
