import { Type } from 'typebox';
import { cursorParam } from '../../core/http/paging.ts';
import { AppError } from '../../core/errors/app-error.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { listEvents } from './store.ts';

export const EVENTS_DEFAULT_LIMIT = 50;
export const EVENTS_MAX_LIMIT = 200;

const EventsQuery = Type.Object(
  {
    cursor: Type.Optional(
      cursorParam('The `next_cursor` of the previous page: returns events older than it.'),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: EVENTS_MAX_LIMIT, default: EVENTS_DEFAULT_LIMIT }),
    ),
  },
  { additionalProperties: false },
);

const EventItem = Type.Object(
  {
    id: Type.String(),
    kind: Type.String(),
    subject: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    data: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: false },
);

const EventsResponse = Type.Object(
  {
    events: Type.Array(EventItem),
    next_cursor: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Pass as `cursor` for the next (older) page; null on the last page.',
    }),
  },
  { additionalProperties: false },
);

export const eventsRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'GET',
    url: '/v1/events',
    operationId: 'listEvents',
    summary: "The account's events, newest first",
    description:
      'Every event is kept permanently. Page with `cursor` (an integer: the `next_cursor` of the ' +
      'previous page). The kinds are catalogued in docs/events.md; `data` is the same object a ' +
      'webhook delivery carries.',
    tags: ['events'],
    class: 'bearer',
    scope: 'read',
    wallet: false,
    schema: { querystring: EventsQuery, response: { 200: EventsResponse } },
    docs: {
      errors: [],
      responses: { 200: "One page of the account's events, newest first, and the cursor of the next page." },
      example: {
        query: { limit: 1 },
        status: 200,
        response: {
          events: [
            {
              id: 'evt_8k3j5h7g9f1d2s4a6q0w',
              kind: 'balance.credited',
              subject: 'pay_7q2k9m4x1c8v3n6b5z0d',
              created_at: '2026-03-14T09:30:04.812Z',
              data: {
                source: 'topup',
                value_usd: '5',
                balance_usd: '17.500000',
                payer: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
                tx_hash: '0x5194ead3df889a15f3d33e47bcc128114dbb9dcd1147f2de8a8ffba6a815f248',
              },
            },
          ],
          next_cursor: 1841,
        },
      },
    },
    handler: async (ctx) => {
      if (!ctx.principal) throw new AppError('UNAUTHORIZED', 'This route needs a bearer credential.');
      const limit = ctx.query.limit ?? EVENTS_DEFAULT_LIMIT;
      const cursor = ctx.query.cursor;
      const rows = await listEvents(
        ctx.deps.db,
        ctx.principal.accountId,
        limit + 1,
        cursor === undefined ? undefined : String(cursor),
      );
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        status: 200,
        body: {
          events: page.map((e) => ({
            id: e.id,
            kind: e.kind,
            subject: e.subject,
            created_at: new Date(e.created_at).toISOString(),
            data: (typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload) as Record<
              string,
              unknown
            >,
          })),
          next_cursor: rows.length > limit && last ? Number(last.seq) : null,
        },
      };
    },
  }),
];
