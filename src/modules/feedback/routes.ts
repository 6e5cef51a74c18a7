import { actorOf } from '../../core/http/actor.ts';
import { toldByEventLine } from '../../core/http/request-log.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { pendingSettlementBody } from '../billing/index.ts';
import { PendingSettlement, type SettlementEffects } from '../payments/index.ts';
import {
  FeedbackCreateBody,
  FeedbackCreatedResponse,
  FeedbackListQuery,
  FeedbackListResponse,
  FeedbackPaymentRequiredResponse,
} from './schemas.ts';
import { FEEDBACK_LIST_DEFAULT_LIMIT, listFeatureRequests } from './service.ts';
import {
  feedbackPaymentRequired,
  payFeedbackWithX402,
  prepaidFeedbackAnswer,
  recordPrepaidFeedback,
  recordPrepaidFeedbackAlone,
  type PrepaidFeedbackResult,
} from './submit.ts';
import { paymentHeaderOf } from './x402.ts';

/** The feedback routes; `effects` as for the balance routes (src/settlement-effects.ts). */
export const feedbackRoutes = (effects: SettlementEffects): RouteDefinition[] => [
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
    docs: {
      errors: [],
      responses: { 200: 'The newest feature requests, titles and statuses only, newest first.' },
      example: {
        query: { limit: 10 },
        status: 200,
        response: {
          requests: [
            {
              id: 'fr_q8gv8vcvhrb3qllx4i7n',
              title: 'Limit orders',
              status: 'planned',
              created_at: '2026-03-12T16:41:07.225Z',
            },
          ],
        },
      },
    },
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
  defineRoute({
    method: 'POST',
    url: '/v1/feedback',
    operationId: 'createFeatureRequest',
    summary: 'Record a feature request (1 USD)',
    description:
      'The fee is 1 USD. Without a payment header it is debited from the prepaid balance in the ' +
      'same commit that records the request (201, `paid_ref` = the fee ledger group; with metering switched ' +
      'off nothing is charged, `charged_usd` "0"). When the balance does not cover it the answer is 402 in both ' +
      'x402 versions at once: the x402 v1 body `{x402Version: 1, error, accepts}` with, beside it, the error body ' +
      '(`code` PAYMENT_REQUIRED, `message`, `remediation`, `docs_url`, `request_id`, `next`: the top-up and its ' +
      'terms), and the x402 v2 `PAYMENT-REQUIRED` header (base64 PaymentRequired: CAIP-2 network, `amount`, the ' +
      'resource). Retry the same request with `PAYMENT-SIGNATURE` (base64 x402 v2 PaymentPayload) or `X-PAYMENT` ' +
      '(base64 x402 v1 PaymentPayload), never both: scheme "exact", an EIP-3009 USDC authorization of exactly ' +
      'the fee to the treasury. It is checked without broadcasting (400 PAYMENT_INVALID naming the x402 ' +
      "reason, also for a payload whose version is not its header's), recorded with the request, settled " +
      'on-chain, and only then the request is recorded: 201 (`paid_ref` = the settlement transaction hash) ' +
      'with the settlement answer in `PAYMENT-RESPONSE` (v2) or `X-PAYMENT-RESPONSE` (v1). 202 with the ' +
      'pending-settlement body when the outcome is not known in time: do not re-sign; retry with the same ' +
      'payment header to read it. The same authorization never pays twice, in either version. ' +
      '503 UNAVAILABLE when the balance does not cover the fee and payments are not configured.',
    tags: ['feedback'],
    class: 'bearer',
    scope: 'write',
    wallet: false,
    schema: {
      body: FeedbackCreateBody,
      response: {
        201: FeedbackCreatedResponse,
        202: PendingSettlement,
        402: FeedbackPaymentRequiredResponse,
      },
    },
    docs: {
      errors: [
        {
          code: 'PAYMENT_REQUIRED',
          when: 'the prepaid balance does not cover the fee: the 402 body carries the x402 payment requirements',
        },
        {
          code: 'PAYMENT_INVALID',
          when:
            'the payment header (PAYMENT-SIGNATURE or X-PAYMENT) or its authorization was refused before anything ' +
            'was broadcast (the message names the x402 reason), or its settlement failed: nothing credited, ' +
            'nothing recorded',
        },
        {
          code: 'UNAVAILABLE',
          when:
            'the balance does not cover the fee and payments are not configured, or the chain or the relayer ' +
            'cannot settle a payment now',
        },
      ],
      responses: {
        201:
          'Recorded: paid from the prepaid balance, or settled on-chain with an x402 payment (PAYMENT-RESPONSE ' +
          'header for v2, X-PAYMENT-RESPONSE for v1).',
        202: 'Settlement outcome unknown; reconciled from chain truth. Do not re-sign: retry with the same payment header.',
        402:
          'The prepaid balance does not cover the fee: the x402 v1 payment requirements with the error body beside ' +
          'them, and the x402 v2 PaymentRequired in the PAYMENT-REQUIRED header.',
      },
      example: {
        body: { title: 'Limit orders', body: 'Let an agent rest a conversion at a price.' },
        status: 201,
        response: {
          id: 'fr_ee3oaibtz6uqy67cei20',
          status: 'open',
          charged_usd: '1',
          paid_ref: 'lgr_r71i89smhlrfok0frx6l',
        },
      },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      const payment = paymentHeaderOf(ctx.req.headers);
      if (payment !== null) {
        return ctx.replayable(async () => {
          const paid = await payFeedbackWithX402(ctx.deps, effects, actor, ctx.body, payment, ctx.deadline);
          if (paid.state === 'pending') {
            return { status: 202, body: pendingSettlementBody(paid.row, 'feedback fee') };
          }
          const { name, value } = paid.paymentResponse;
          return {
            status: 201,
            body: paid.receipt,
            headers: { [name.toLowerCase()]: value, 'access-control-expose-headers': name },
          };
        });
      }
      // The fee, the request and the Idempotency-Key's claim and answer are one statement
      // committed alone, in a batch with concurrent requests; with metering off (nothing to book)
      // the request is recorded free in a transaction. Recorded here (not replayed), the request's
      // log line is the feedback.created event's, as an intent's admission's is intent.planned's.
      let toldByEvent = false;
      const told = (result: PrepaidFeedbackResult) => {
        toldByEvent = result.state === 'created' && result.eventLine;
        return prepaidFeedbackAnswer(result);
      };
      const recorded = await ctx.mutateAlone(
        async (key) => {
          const alone = await recordPrepaidFeedbackAlone(ctx.deps, actor, ctx.body, key);
          return alone === null ? null : told(alone);
        },
        async (tx) => told(await recordPrepaidFeedback(tx, ctx.deps, actor, ctx.body)),
      );
      if (toldByEvent) toldByEventLine(ctx.req);
      if (recorded.status !== 402) return recorded;
      // Not stored for replay (402 never is): the retry carrying a payment must be processed.
      const required = await feedbackPaymentRequired(ctx.deps, actor.principal.accountId, ctx.requestId);
      return { status: 402, body: required.body, headers: required.headers };
    },
  }),
];
