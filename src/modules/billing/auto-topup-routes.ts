import { Type, type TSchema } from 'typebox';
import { actorOf, requirePrincipal } from '../../core/http/actor.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { USD_PATTERN } from '../../core/money.ts';
import { SignedAuthorization, toSubmitted } from '../payments/index.ts';
import {
  addArrows,
  ARROWS_PER_CALL,
  MAX_PER_MONTH_LIMIT,
  QUIVER_CAP,
  readAutoTopupState,
  setAutoTopupRule,
  SUSPEND_AFTER_FAILURES,
} from './auto-topup.ts';
import {
  ARROW_AUTHORIZATION_EXAMPLE,
  AUTO_TOPUP_RULE_EXAMPLE,
  AUTO_TOPUP_STATE_EXAMPLE,
} from './openapi-examples.ts';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Usd = Type.String({ pattern: USD_PATTERN });
const Count = Type.Integer({ minimum: 0 });

/** The spec's auto-top-up state (section 2). */
export const AutoTopupStateResponse = Type.Object(
  {
    threshold_usd: Type.String({
      pattern: USD_PATTERN,
      description: 'An arrow fires when a debit leaves the prepaid balance below this; "0" without a rule.',
    }),
    max_per_month: Type.Integer({
      description: 'Arrows fired at most per UTC calendar month; 0 without a rule.',
    }),
    suspended: Type.Boolean({
      description: `Set after ${SUSPEND_AFTER_FAILURES} consecutive failed arrows; PUT the rule to re-enable it.`,
    }),
    consecutive_failures: Count,
    quiver: Type.Object(
      { ready: Count, settled: Count, failed: Count, expired: Count },
      {
        additionalProperties: false,
        description: 'Arrows by status; one being settled is in `arrows` only.',
      },
    ),
    ready_value_usd: Usd,
    used_this_month: Type.Integer({
      minimum: 0,
      description: 'Arrows fired this UTC month that settled or are settling.',
    }),
    arrows: Type.Array(
      Type.Object(
        {
          nonce: Type.String(),
          payer: Type.String(),
          value_usd: Usd,
          valid_before: Type.String({ format: 'date-time' }),
          status: Type.Union([
            Type.Literal('ready'),
            Type.Literal('settling'),
            Type.Literal('settled'),
            Type.Literal('failed'),
            Type.Literal('expired'),
          ]),
          tx_hash: Nullable(Type.String()),
          fail_reason: Nullable(Type.String()),
        },
        { additionalProperties: false },
      ),
      { description: 'Ready and settling arrows in firing order, then the 50 most recently finished.' },
    ),
  },
  { additionalProperties: false, title: 'AutoTopupState' },
);

const AutoTopupRuleBody = Type.Object(
  {
    threshold_usd: Type.String({
      pattern: USD_PATTERN,
      description: 'A positive USD amount (at most 6 decimals).',
      examples: ['5'],
    }),
    max_per_month: Type.Integer({
      minimum: 0,
      maximum: MAX_PER_MONTH_LIMIT,
      description: 'Arrows fired at most per UTC calendar month (0 pauses auto-top-up).',
    }),
  },
  { additionalProperties: false },
);

const AddArrowsBody = Type.Object(
  {
    arrows: Type.Array(SignedAuthorization, {
      minItems: 1,
      maxItems: ARROWS_PER_CALL,
      description: 'EIP-3009 authorizations paying USDC to the treasury, as for POST /v1/balance/topups.',
    }),
  },
  { additionalProperties: false },
);

export const autoTopupRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'GET',
    url: '/v1/balance/auto-topup',
    operationId: 'getAutoTopup',
    summary: "The account's auto-top-up rule and quiver",
    description:
      'The rule (threshold, monthly maximum, suspension), the quiver of pre-signed arrows by status, the ' +
      'value ready to fire, the arrows fired this UTC month, and the arrows themselves (never their signatures).',
    tags: ['balance'],
    class: 'bearer',
    scope: 'read',
    wallet: false,
    schema: { response: { 200: AutoTopupStateResponse } },
    docs: {
      errors: [],
      responses: { 200: "The account's auto-top-up state: the rule, the quiver and its arrows." },
      example: { status: 200, response: AUTO_TOPUP_STATE_EXAMPLE },
    },
    handler: async (ctx) => {
      const principal = requirePrincipal(ctx);
      return {
        status: 200,
        body: await readAutoTopupState(ctx.deps.db, ctx.deps.clock, principal.accountId),
      };
    },
  }),
  defineRoute({
    method: 'PUT',
    url: '/v1/balance/auto-topup',
    operationId: 'putAutoTopupRule',
    summary: 'Set the auto-top-up rule',
    description:
      'When a fee debit leaves the prepaid balance below `threshold_usd`, one ready arrow (the one expiring ' +
      'soonest) is settled on-chain and credited, at most `max_per_month` times a UTC month. Writing the rule ' +
      `re-enables a rule suspended after ${SUSPEND_AFTER_FAILURES} consecutive failed arrows. If the balance is ` +
      'already below the threshold, an arrow fires at once. Answers the state.',
    tags: ['balance'],
    class: 'bearer',
    scope: 'write',
    wallet: false,
    schema: { body: AutoTopupRuleBody, response: { 200: AutoTopupStateResponse } },
    docs: {
      errors: [{ code: 'INVALID_REQUEST', when: 'threshold_usd is zero: it must be a positive amount' }],
      responses: { 200: 'The rule is stored (a suspended one re-enabled): the auto-top-up state.' },
      example: { body: AUTO_TOPUP_RULE_EXAMPLE, status: 200, response: AUTO_TOPUP_STATE_EXAMPLE },
    },
    handler: (ctx) =>
      ctx.mutate(async (tx) => ({
        status: 200,
        body: await setAutoTopupRule(tx, ctx.deps.clock, actorOf(ctx), ctx.body),
      })),
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/balance/auto-topup/arrows',
    operationId: 'addAutoTopupArrows',
    summary: 'Add pre-signed authorizations (arrows) to the quiver',
    description:
      `1 to ${ARROWS_PER_CALL} EIP-3009 authorizations, each checked like a top-up (payee, asset, at least ` +
      '0.01 USD, validity window, signature, nonce unused, the payer holds the USDC) but not broadcast; ' +
      'validBefore at most 366 days away. All or nothing: the first refused arrow answers 400 PAYMENT_INVALID ' +
      `naming its index, and nothing is stored. At most ${QUIVER_CAP} ready arrows (422 LIMIT_EXCEEDED). An ` +
      'authorization already in the quiver with the same terms is accepted again without a copy. 201 with ' +
      'the state when something was added, 200 when everything was there already. An arrow expires at its ' +
      'validBefore; its signature is destroyed once it is settled, failed or expired.',
    tags: ['balance'],
    class: 'bearer',
    scope: 'write',
    wallet: false,
    schema: {
      body: AddArrowsBody,
      response: { 200: AutoTopupStateResponse, 201: AutoTopupStateResponse },
    },
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when: 'the same authorization (payer and nonce) appears twice in the call',
        },
        {
          code: 'PAYMENT_INVALID',
          when:
            'an arrow fails a check or was submitted before for a payment or as another arrow; the message ' +
            'names its index and nothing is stored',
        },
        { code: 'LIMIT_EXCEEDED', when: `the quiver would hold more than ${QUIVER_CAP} ready arrows` },
        { code: 'UNAVAILABLE', when: 'payments are not configured, or the chain cannot be read' },
      ],
      responses: {
        200: 'Every arrow was in the quiver already: the state, unchanged.',
        201: 'At least one arrow was added: the auto-top-up state.',
      },
      example: {
        body: { arrows: [ARROW_AUTHORIZATION_EXAMPLE] },
        status: 201,
        response: AUTO_TOPUP_STATE_EXAMPLE,
      },
    },
    handler: (ctx) =>
      ctx.replayable(async () => {
        const result = await addArrows(
          ctx.deps,
          actorOf(ctx),
          ctx.body.arrows.map((a) => toSubmitted(a)),
          ctx.deadline,
        );
        return { status: result.added > 0 ? 201 : 200, body: result.state };
      }),
  }),
];
