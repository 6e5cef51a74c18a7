import { requirePrincipal } from '../../core/http/actor.ts';
import { keyringOf } from '../../core/sealing.ts';
import { Type } from 'typebox';
import { cursorParam } from '../../core/http/paging.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import type { AppDeps } from '../../deps.ts';
import {
  ensureSecret,
  listFailures,
  readEndpoint,
  sendTestEvent,
  setEndpoint,
  TEST_EVENT_KIND,
  vetDestination,
  type WebhookSettings,
} from './service.ts';

const TAGS = ['webhooks'];
export const FAILURES_DEFAULT_LIMIT = 50;
export const FAILURES_MAX_LIMIT = 100;

export function webhookSettings(deps: AppDeps): WebhookSettings {
  return { production: deps.config.env === 'production', keyring: keyringOf(deps.config.sealingKeys) };
}

const EndpointBody = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'https only in production, and never a loopback, private or link-local target.',
    }),
  },
  { additionalProperties: false },
);
const EndpointResponse = Type.Object({ url: Type.String() }, { additionalProperties: false });
const TestEventResponse = Type.Object(
  {
    event_id: Type.String({ description: 'The id of the test event (body `id` and `x-service-event-id`).' }),
    kind: Type.Literal(TEST_EVENT_KIND),
    url: Type.String({ description: 'The destination it was sent to.' }),
    delivered: Type.Boolean({ description: 'The destination answered 2xx within the timeout.' }),
    status: Type.Union([Type.Integer(), Type.Null()], {
      description: "The destination's HTTP status; null when no answer came.",
    }),
    error: Type.Union([Type.String(), Type.Null()], {
      description:
        'Why the delivery failed (`HTTP <status>`, a timeout, a refused connection or destination); null when delivered.',
    }),
    signed_at: Type.String({ format: 'date-time', description: 'The `t` of the signature.' }),
  },
  { additionalProperties: false },
);
const SecretResponse = Type.Object({ secret: Type.String() }, { additionalProperties: false });
const FailuresQuery = Type.Object(
  {
    cursor: Type.Optional(cursorParam('The last seen failure id: returns older failures.')),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: FAILURES_MAX_LIMIT, default: FAILURES_DEFAULT_LIMIT }),
    ),
  },
  { additionalProperties: false },
);
const Failure = Type.Object(
  {
    id: Type.Integer(),
    event_id: Type.String(),
    kind: Type.String(),
    attempts: Type.Integer(),
    last_status: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    first_attempt_at: Type.String({ format: 'date-time' }),
    dead_at: Type.String({ format: 'date-time' }),
    body: Type.Union([Type.String(), Type.Null()], { description: 'The raw body that was sent.' }),
  },
  { additionalProperties: false },
);
const FailuresResponse = Type.Object(
  { failures: Type.Array(Failure), next_cursor: Type.Union([Type.Integer(), Type.Null()]) },
  { additionalProperties: false, title: 'WebhookDeadLetterList' },
);

const NO_DESTINATION = {
  code: 'NOT_FOUND',
  when: 'no destination is registered (`next` points at PUT /v1/webhooks/endpoint)',
} as const;
const DESTINATION_EXAMPLE = { url: 'https://agent.example.com/hooks/purser' };

export const webhookRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'PUT',
    url: '/v1/webhooks/endpoint',
    operationId: 'putWebhookEndpoint',
    summary: 'Register the webhook destination of the account',
    description:
      'Events emitted after this call are delivered to `url` (signed; see docs/events.md). In ' +
      'production the URL must be https and every address its host resolves to must be publicly ' +
      'routable (checked now and again on every delivery). Creates the signing secret if needed.',
    tags: TAGS,
    class: 'bearer',
    scope: 'admin',
    wallet: false,
    schema: { body: EndpointBody, response: { 200: EndpointResponse } },
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when:
            'the url is not an absolute http(s) URL, carries credentials or a fragment, or (production) is not ' +
            'https, does not resolve or reaches a loopback, private or link-local address',
        },
      ],
      responses: { 200: 'The destination is registered: the URL as stored (normalized).' },
      example: { body: DESTINATION_EXAMPLE, status: 200, response: DESTINATION_EXAMPLE },
    },
    handler: async (ctx) => {
      const principal = requirePrincipal(ctx);
      const settings = webhookSettings(ctx.deps);
      const url = await vetDestination(ctx.body.url, settings);
      return ctx.mutate(async (tx) => {
        await setEndpoint(tx, ctx.deps.clock, settings, principal.accountId, url);
        return { status: 200, body: { url } };
      });
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/webhooks/endpoint',
    operationId: 'getWebhookEndpoint',
    summary: 'The registered webhook destination of the account',
    description:
      'Answers `{url}` as PUT /v1/webhooks/endpoint stored it; 404 NOT_FOUND (with `next` pointing at the ' +
      'PUT) when none is registered.',
    tags: TAGS,
    class: 'bearer',
    scope: 'admin',
    wallet: false,
    schema: { response: { 200: EndpointResponse } },
    docs: {
      errors: [NO_DESTINATION],
      responses: { 200: 'The registered destination URL.' },
      example: { status: 200, response: DESTINATION_EXAMPLE },
    },
    handler: async (ctx) => {
      const principal = requirePrincipal(ctx);
      return { status: 200, body: await readEndpoint(ctx.deps.db, principal.accountId) };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/webhooks/test',
    operationId: 'sendWebhookTestEvent',
    summary: 'Send a signed `test` event to the destination now',
    description:
      'Sends one event of kind `test` to the registered destination, signed and sent exactly like a real ' +
      'delivery (attempt 1; see docs/events.md), and waits for the answer (at most 10 s, within the ' +
      "request's time budget). 200 reports what happened: the event id, and whether the destination answered " +
      '2xx (`delivered`, `status`, `error`). A test event is not recorded: it is not retried, not ' +
      'dead-lettered and not listed in GET /v1/events. 404 NOT_FOUND (with `next` pointing at PUT ' +
      '/v1/webhooks/endpoint) when no destination is registered. A retry with the same Idempotency-Key ' +
      'replays the report without sending again.',
    tags: TAGS,
    class: 'bearer',
    scope: 'admin',
    wallet: false,
    schema: { response: { 200: TestEventResponse } },
    docs: {
      errors: [NO_DESTINATION],
      responses: {
        200: 'The test event was sent: whether the destination answered 2xx, and what it answered.',
      },
      example: {
        status: 200,
        response: {
          event_id: 'evt_5t1r8e4w7q0p3o6i9u2y',
          kind: 'test',
          url: DESTINATION_EXAMPLE.url,
          delivered: true,
          status: 204,
          error: null,
          signed_at: '2026-03-14T09:30:00.000Z',
        },
      },
    },
    handler: (ctx) =>
      ctx.replayable(async () => {
        const principal = requirePrincipal(ctx);
        const body = await sendTestEvent(
          ctx.deps,
          webhookSettings(ctx.deps),
          principal.accountId,
          ctx.deadline,
        );
        return { status: 200, body };
      }),
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/webhooks/secret',
    operationId: 'getWebhookSecret',
    summary: "The account's webhook HMAC secret, created if needed",
    tags: TAGS,
    class: 'bearer',
    scope: 'admin',
    wallet: false,
    schema: { response: { 200: SecretResponse } },
    docs: {
      errors: [],
      responses: { 200: "The account's HMAC signing secret (`whsec_` and 43 base64url characters)." },
      example: { status: 200, response: { secret: 'whsec_9RdtIO106YeCVr6gmjg_1hbdq_5TtfnGi21rOULzNAg' } },
    },
    handler: async (ctx) => {
      const principal = requirePrincipal(ctx);
      const secret = await ensureSecret(
        ctx.deps.db,
        ctx.deps.clock,
        webhookSettings(ctx.deps),
        principal.accountId,
      );
      return { status: 200, body: { secret }, headers: { 'cache-control': 'no-store' } };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/webhooks/failures',
    operationId: 'listWebhookFailures',
    summary: 'Dead-lettered webhook deliveries, most recent first',
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: false,
    schema: { querystring: FailuresQuery, response: { 200: FailuresResponse } },
    docs: {
      errors: [],
      responses: {
        200: 'One page of dead-lettered deliveries, most recent first, and the cursor of the next.',
      },
      example: {
        query: { limit: 1 },
        status: 200,
        response: {
          failures: [
            {
              id: 42,
              event_id: 'evt_0m3n6b9v2c5x8z1l4k7j',
              kind: 'balance.debited',
              attempts: 9,
              last_status: 503,
              last_error: 'HTTP 503',
              first_attempt_at: '2026-03-10T14:02:11.482Z',
              dead_at: '2026-03-13T10:38:12.107Z',
              body:
                '{"id":"evt_0m3n6b9v2c5x8z1l4k7j","kind":"balance.debited","created_at":"2026-03-10T14:02:11.431Z",' +
                '"data":{"product":"conversion_intent","fee_usd":"0.05","group_id":"lgr_2w5e8r1t4y7u0i3o6p9a",' +
                '"wallet":"0x70997970c51812dc3a010c7d01b50e0d17dc79c8"}}',
            },
          ],
          next_cursor: 42,
        },
      },
    },
    handler: async (ctx) => {
      const principal = requirePrincipal(ctx);
      return {
        status: 200,
        body: await listFailures(
          ctx.deps.db,
          principal.accountId,
          ctx.query.limit ?? FAILURES_DEFAULT_LIMIT,
          ctx.query.cursor,
        ),
      };
    },
  }),
];
