// The rate lanes module: platform-wide token buckets shared by every process (docs/rate-lanes.md).
// Take a lane's token right before transmitting to the venue; answer 429 with Retry-After when
// refused, and give the token back if the request is then refused before anything was sent.

export {
  parsePmRateLanes,
  PM_RATE_LANE_KINDS,
  POLYMARKET_RATE_LANES,
  RATE_LANE_MAX_CAPACITY,
  RATE_LANE_MAX_REFILL_PER_SECOND,
  RATE_LANE_MIN_REFILL_PER_SECOND,
  rateLaneName,
  type ParsedPmRateLanes,
  type PmRateLaneKind,
  type PmRateLanes,
  type RateLaneConfig,
} from '../../config/rate-lanes.ts';
export { peekTokens, returnTokens, takeTokens, type LaneTokens, type TakeTokensResult } from './store.ts';
