import { Type } from 'typebox';
import { FEATURE_REQUEST_STATUSES } from './store.ts';
import { FEEDBACK_LIST_DEFAULT_LIMIT, FEEDBACK_LIST_MAX_LIMIT } from './service.ts';

export const FeedbackListQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: FEEDBACK_LIST_MAX_LIMIT, default: FEEDBACK_LIST_DEFAULT_LIMIT }),
    ),
  },
  { additionalProperties: false },
);

export const PublicFeatureRequestSchema = Type.Object(
  {
    id: Type.String(),
    title: Type.String(),
    status: Type.Union(FEATURE_REQUEST_STATUSES.map((s) => Type.Literal(s))),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

export const FeedbackListResponse = Type.Object(
  { requests: Type.Array(PublicFeatureRequestSchema) },
  { additionalProperties: false },
);
