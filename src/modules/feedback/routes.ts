import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { FeedbackListQuery, FeedbackListResponse } from './schemas.ts';
import { FEEDBACK_LIST_DEFAULT_LIMIT, listFeatureRequests } from './service.ts';

export const feedbackRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'GET',
    url: '/v1/feedback',
    operationId: 'listFeatureRequests',
    summary: 'The public feature-request list, newest first',
    description: 'Titles and statuses only: bodies and requesters are never published.',
    tags: ['public utilities'],
    class: 'public',
    wallet: false,
    schema: { querystring: FeedbackListQuery, response: { 200: FeedbackListResponse } },
    handler: async ({ deps, query }) => {
      const requests = await listFeatureRequests(deps.db, query.limit ?? FEEDBACK_LIST_DEFAULT_LIMIT);
      return {
        status: 200,
        body: {
          requests: requests.map((r) => ({
            id: r.id,
            title: r.title,
            status: r.status,
            created_at: r.createdAt.toISOString(),
          })),
        },
      };
    },
  }),
];
