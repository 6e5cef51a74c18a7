import { requirePrincipal } from '../../core/http/actor.ts';
import { Type } from 'typebox';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import type { AppDeps } from '../../deps.ts';
import { ensureSecret, listFailures, setEndpoint, vetDestination, type WebhookSettings } from './service.ts';

const TAGS = ['webhooks'];
export const FAILURES_DEFAULT_LIMIT = 50;
export const FAILURES_MAX_LIMIT = 100;

export function webhookSettings(deps: AppDeps): WebhookSettings {
  return { production: deps.config.env === 'production', sealingKey: deps.config.sealingKey };
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
const SecretResponse = Type.Object({ secret: Type.String() }, { additionalProperties: false });
const FailuresQuery = Type.Object(
  {
    cursor: Type.Optional(
      Type.Integer({ minimum: 1, description: 'The last seen failure id: returns older failures.' }),
    ),
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
  { additionalProperties: false },
);

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
    url: '/v1/webhooks/secret',
    operationId: 'getWebhookSecret',
    summary: "The account's webhook HMAC secret, created if needed",
    tags: TAGS,
    class: 'bearer',
    scope: 'admin',
    wallet: false,
    schema: { response: { 200: SecretResponse } },
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
