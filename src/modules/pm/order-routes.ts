// The prediction-market order routes: place (hosted), prepare and submit (client-signed), each
// under its Idempotency-Key; the venue's resting orders of a credential; cancel one, or all.

import { actorOf } from '../../core/http/actor.ts';
import { defineRoute, type DocumentedError, type RouteDefinition } from '../../core/http/route-table.ts';
import { pmJurisdictionGate } from './gate.ts';
import {
  CANCEL_PARAMS,
  CANCEL_QUERY,
  CANCELLED_ALL,
  CANCELLED_ORDER,
  ORDERS_QUERY,
  PLACE_ORDER_BODY,
  PLACED_ORDER,
  PREPARED_ORDER,
  RESTING_ORDERS,
  SUBMIT_ORDER_BODY,
} from './openapi-examples.ts';
import {
  cancelAllOf,
  cancelOne,
  listRestingOrders,
  placeOrderOnce,
  prepareOrderOnce,
  submitOrder,
  type KeyedAnswer,
} from './orders.ts';
import { GATED, orderDeps, TAGS } from './route-deps.ts';
import {
  CancelAllSchema,
  CancelledOrderSchema,
  CancelOrderParams,
  CancelOrderQuery,
  OrdersQuery,
  PlacedOrderSchema,
  PlaceOrderBody,
  PreparedOrderSchema,
  RestingOrdersSchema,
  SubmitOrderBody,
} from './schemas.ts';

/** What admitting an order can answer (POST /v1/pm/orders and /prepare alike). */
const ADMISSION_ERRORS: DocumentedError[] = [
  GATED,
  { code: 'PAYMENT_REQUIRED', when: 'the prepaid balance cannot cover the order fee' },
  {
    code: 'POLICY_VIOLATION',
    status: 403,
    when: 'a prediction_markets rule or exposure cap refuses it; names the rule',
  },
  { code: 'EXECUTION_DISABLED', when: 'the environment, account, wallet or venue is switched off' },
  { code: 'NOT_FOUND', when: 'no policy for the wallet, or no active credential' },
  { code: 'CONFLICT', when: 'client_order_id already claimed; nothing transmitted' },
  { code: 'RATE_LIMITED', when: "the platform's order cap for the venue is spent; nothing transmitted" },
];

export const orderRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'POST',
    url: '/v1/pm/orders',
    operationId: 'placePmOrder',
    summary: 'Place a limit order on Polymarket with a stored hosted credential, under the wallet’s policy',
    description:
      'Checked in order, before anything is transmitted: the credential (active, polymarket, hosted) and the ' +
      "wallet (its funder), the market's tick size from the venue, the order's price and size on the venue's " +
      "grid (400 naming the field), the platform's order cap (429), the switches (403; 503 when they cannot " +
      "be read), the wallet's prediction_markets policy and its open exposure under a per-wallet lock (403 " +
      'POLICY_VIOLATION naming the rule), the client_order_id (409), the fee from the prepaid balance (402). ' +
      'The order is recorded, then signed (EIP-712, domain version 2) and transmitted; the budget is checked ' +
      'before the transmit. A venue refusal is 422 with its reason; the fee is reversed and the exposure released. ' +
      'An Idempotency-Key is recorded on the order: a retry with it answers the order as it is now (201 once ' +
      'placed, 409 while the first request runs), never a second order.',
    tags: TAGS,
    class: 'bearer',
    scope: 'write',
    wallet: { in: 'body', field: 'wallet' },
    gate: pmJurisdictionGate,
    schema: { body: PlaceOrderBody, response: { 201: PlacedOrderSchema } },
    docs: {
      errors: [
        ...ADMISSION_ERRORS,
        {
          code: 'INVALID_REQUEST',
          when: 'a field is malformed, off the tick grid, or the wallet is not the funder',
        },
        { code: 'VENUE_REJECTED', when: 'the venue refused the order (its reason in the message)' },
        {
          code: 'UNAVAILABLE',
          when: 'sealing, the venue or the switches unavailable; or the venue did not answer',
        },
      ],
      responses: { 201: 'Transmitted and accepted by the venue.' },
      example: { body: PLACE_ORDER_BODY, status: 201, response: PLACED_ORDER },
    },
    handler: async (ctx) =>
      keyedResult(
        await placeOrderOnce(orderDeps(ctx.deps), actorOf(ctx), ctx.body, ctx.deadline, ctx.requestKey()),
      ),
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/pm/orders/prepare',
    operationId: 'preparePmOrder',
    summary: 'Client-signed flow, first half: every check of POST /v1/pm/orders, then the order to sign',
    description:
      'For a polymarket credential stored without a signer key. Every check of POST /v1/pm/orders runs, the ' +
      'exposure is reserved and the fee debited on a durable prepared order; the answer is the exact V2 order ' +
      'and its EIP-712 payload. Sign it (eth_signTypedData_v4) and submit the signature with POST ' +
      '/v1/pm/orders/submit before expires_at (5 minutes); unsigned, it is swept: exposure released, fee reversed.',
    tags: TAGS,
    class: 'bearer',
    scope: 'write',
    wallet: { in: 'body', field: 'wallet' },
    gate: pmJurisdictionGate,
    schema: { body: PlaceOrderBody, response: { 201: PreparedOrderSchema } },
    docs: {
      errors: [
        ...ADMISSION_ERRORS,
        {
          code: 'INVALID_REQUEST',
          when: 'not a client-signed credential, or a field is malformed or off the grid',
        },
        { code: 'UNAVAILABLE', when: 'the venue (for the market) or the switches are unavailable' },
      ],
      responses: { 201: 'The prepared order: sign typed_data, then submit.' },
      example: { body: PLACE_ORDER_BODY, status: 201, response: PREPARED_ORDER },
    },
    handler: async (ctx) =>
      keyedResult(
        await prepareOrderOnce(orderDeps(ctx.deps), actorOf(ctx), ctx.body, ctx.deadline, ctx.requestKey()),
      ),
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/pm/orders/submit',
    operationId: 'submitPmOrder',
    summary: 'Client-signed flow, second half: the signature of a prepared order, transmitted',
    tags: TAGS,
    class: 'bearer',
    scope: 'write',
    wallet: {
      in: 'resource',
      resource: 'prepared order',
      resolve: async (db, accountId, _params, body) => {
        const id = (body as { prepare_id?: unknown } | undefined)?.prepare_id;
        if (typeof id !== 'string') return null;
        const row = await db
          .selectFrom('pm_orders')
          .select('wallet')
          .where('id', '=', id)
          .where('account_id', '=', accountId)
          .executeTakeFirst();
        return row?.wallet ?? null;
      },
    },
    gate: pmJurisdictionGate,
    schema: { body: SubmitOrderBody, response: { 201: PlacedOrderSchema } },
    docs: {
      errors: [
        GATED,
        { code: 'INVALID_REQUEST', when: 'the signature does not recover to the declared signer' },
        {
          code: 'NOT_FOUND',
          when: 'no prepared order with this id awaits a signature (expired, submitted or unknown)',
        },
        { code: 'CONFLICT', when: 'another submit of it is in flight' },
        { code: 'VENUE_REJECTED', when: 'the venue refused the order' },
        {
          code: 'RATE_LIMITED',
          when: "the platform's order cap for the venue is spent; nothing transmitted",
        },
        { code: 'UNAVAILABLE', when: 'the venue did not answer (the order is reconciled by its hash)' },
      ],
      responses: { 201: 'Transmitted and accepted by the venue.' },
      example: { body: SUBMIT_ORDER_BODY, status: 201, response: PLACED_ORDER },
    },
    handler: async (ctx) =>
      keyedResult(
        await submitOrder(orderDeps(ctx.deps), actorOf(ctx), ctx.body, ctx.deadline, ctx.requestKey()),
      ),
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/pm/orders',
    operationId: 'listPmOrders',
    summary: "The venue's resting orders of a credential (venue-authoritative)",
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: false,
    gate: pmJurisdictionGate,
    schema: { querystring: OrdersQuery, response: { 200: RestingOrdersSchema } },
    docs: {
      errors: [
        GATED,
        { code: 'NOT_FOUND', when: 'the account has no active credential with this id' },
        { code: 'RATE_LIMITED', when: "the platform's read budget for the venue is spent" },
        { code: 'UNAVAILABLE', when: 'the venue did not answer' },
      ],
      responses: { 200: "The venue's open orders of the credential." },
      example: { query: ORDERS_QUERY, status: 200, response: RESTING_ORDERS },
    },
    handler: async (ctx) => ({
      status: 200,
      body: await listRestingOrders(orderDeps(ctx.deps), actorOf(ctx), ctx.query, ctx.deadline),
    }),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/v1/pm/orders/{venue}/{order_id}',
    operationId: 'cancelPmOrder',
    summary: 'Cancel one resting order (never blocked by a switch, never counted against the order cap)',
    tags: TAGS,
    class: 'bearer',
    scope: 'cancel',
    wallet: false,
    gate: pmJurisdictionGate,
    schema: {
      params: CancelOrderParams,
      querystring: CancelOrderQuery,
      response: { 200: CancelledOrderSchema },
    },
    docs: {
      errors: [
        GATED,
        { code: 'NOT_FOUND', when: 'the account has no active credential with this id' },
        {
          code: 'VENUE_REJECTED',
          when: 'the venue did not cancel it (filled or gone); its reason in the message',
        },
        { code: 'RATE_LIMITED', when: "the platform's cancel lane is spent" },
        { code: 'UNAVAILABLE', when: 'the venue did not answer' },
      ],
      responses: { 200: 'Cancelled at the venue.' },
      example: { params: CANCEL_PARAMS, query: CANCEL_QUERY, status: 200, response: CANCELLED_ORDER },
    },
    handler: async (ctx) =>
      ctx.replayable(async () => ({
        status: 200,
        body: await cancelOne(
          orderDeps(ctx.deps),
          actorOf(ctx),
          ctx.params.order_id,
          ctx.query.credential_id,
          ctx.deadline,
        ),
      })),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/v1/pm/orders',
    operationId: 'cancelAllPmOrders',
    summary: 'Cancel every resting order of a credential, optionally of one market',
    tags: TAGS,
    class: 'bearer',
    scope: 'cancel',
    wallet: false,
    gate: pmJurisdictionGate,
    schema: { querystring: OrdersQuery, response: { 200: CancelAllSchema } },
    docs: {
      errors: [
        GATED,
        { code: 'NOT_FOUND', when: 'the account has no active credential with this id' },
        { code: 'RATE_LIMITED', when: "the platform's cancel lane is spent" },
        { code: 'UNAVAILABLE', when: 'the venue did not answer' },
      ],
      responses: { 200: 'What was cancelled; complete is false when some orders were not.' },
      example: { query: ORDERS_QUERY, status: 200, response: CANCELLED_ALL },
    },
    handler: async (ctx) =>
      ctx.replayable(async () => ({
        status: 200,
        body: await cancelAllOf(orderDeps(ctx.deps), actorOf(ctx), ctx.query, ctx.deadline),
      })),
  }),
];

/** A 201 of an order route, marked as a replay when it answers a retry with the same key. */
function keyedResult<T>(answer: KeyedAnswer<T>) {
  return {
    status: 201 as const,
    body: answer.body,
    ...(answer.replayed ? { headers: { 'idempotent-replayed': 'true' } } : {}),
  };
}
