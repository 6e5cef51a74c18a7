import { actorOf, requirePrincipal } from '../../core/http/actor.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { screenAddress } from '../screening/index.ts';
import { platformDefaults, POLICY_CHAIN_IDS, type PolicyChainId } from './document.ts';
import {
  BASE_DEFAULTS,
  CHECK_BODY,
  CHECK_RESULT,
  POLICY_RECORD,
  PUT_POLICY_BODY,
} from './openapi-examples.ts';
import {
  CheckBody,
  CheckResponse,
  DefaultsQuery,
  DefaultsResponse,
  ListPoliciesQuery,
  ListPoliciesResponse,
  PolicyRecordSchema,
  PutPolicyBody,
} from './schemas.ts';
import {
  actionFromCheck,
  checkAction,
  listPolicies,
  POLICY_LIST_DEFAULT_LIMIT,
  preparePolicy,
  putPolicy,
} from './service.ts';
import { invalidRequest } from '../../core/errors/app-error.ts';

const TAGS = ['policies'];

export const policiesRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'GET',
    url: '/v1/policies',
    operationId: 'listPolicies',
    summary: "The account's policy versions, newest first (one wallet's with `wallet`)",
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: { in: 'query', field: 'wallet' },
    schema: { querystring: ListPoliciesQuery, response: { 200: ListPoliciesResponse } },
    docs: {
      errors: [],
      responses: { 200: "The account's policy records, newest first." },
      example: {
        query: { wallet: PUT_POLICY_BODY.wallet, limit: 50 },
        status: 200,
        response: { policies: [POLICY_RECORD] },
      },
    },
    handler: async ({ deps, principal, query }) => {
      const { accountId } = requirePrincipal({ principal: principal });
      const policies = await listPolicies(
        deps.db,
        accountId,
        query.wallet ?? null,
        query.limit ?? POLICY_LIST_DEFAULT_LIMIT,
      );
      return { status: 200, body: { policies } };
    },
  }),
  defineRoute({
    method: 'PUT',
    url: '/v1/policies',
    operationId: 'putPolicy',
    summary: 'Publish a policy document for a wallet (a new immutable version)',
    description:
      'Omitted sections and fields are filled from the platform defaults (GET /v1/policies/defaults), stored ' +
      'and listed in `defaulted`. A new document becomes version n+1 of its wallet (201); the latest document ' +
      're-submitted verbatim (before or after filling defaults) returns that version with `unchanged: true` (200).',
    tags: TAGS,
    class: 'bearer',
    scope: 'write',
    wallet: { in: 'body', field: 'wallet' },
    schema: { body: PutPolicyBody, response: { 200: PolicyRecordSchema, 201: PolicyRecordSchema } },
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when:
            "the document fails a check beyond the schema: a symbol not in the chain's registry (or not " +
            'a stable in stables.accepted), a venue that does not settle conversions on the chain, an ' +
            'amount out of range, an inverted range or a bad corridor',
        },
      ],
      responses: {
        200: 'The latest version, unchanged (the document was already the latest); `unchanged` is true.',
        201: 'A new version was published: the policy record.',
      },
      example: { body: PUT_POLICY_BODY, status: 201, response: POLICY_RECORD },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      const registry = ctx.deps.tokenRegistry;
      preparePolicy(ctx.body, registry); // a 400 before any transaction
      return ctx.mutate(async (tx) => {
        const { created, record } = await putPolicy(tx, ctx.deps.clock, registry, actor, ctx.body);
        return { status: created ? 201 : 200, body: record };
      });
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/policies/defaults',
    operationId: 'getPolicyDefaults',
    summary: 'The platform defaults that fill omitted policy sections and fields, for one chain',
    description:
      'Three lists depend on the chain: execution.venues, stables.accepted and spend.token_allowlist. ' +
      'Default chain: 8453.',
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: false,
    schema: { querystring: DefaultsQuery, response: { 200: DefaultsResponse } },
    docs: {
      errors: [{ code: 'INVALID_REQUEST', when: '`chain_id` is not 8453, 84532 or 137' }],
      responses: { 200: 'The platform defaults of every section for the chain.' },
      example: {
        query: { chain_id: 8453 },
        status: 200,
        response: { chain_id: 8453, sections: BASE_DEFAULTS },
      },
    },
    handler: async ({ deps, query }) => {
      const chainId = query.chain_id ?? 8453;
      if (!(POLICY_CHAIN_IDS as readonly number[]).includes(chainId)) {
        throw invalidRequest(`Invalid querystring: chain_id must be one of ${POLICY_CHAIN_IDS.join(', ')}.`);
      }
      return {
        status: 200,
        body: { chain_id: chainId, sections: platformDefaults(deps.tokenRegistry, chainId as PolicyChainId) },
      };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/checks',
    operationId: 'checkAction',
    summary: "Dry run: every rule of the wallet's active policy against a hypothetical action",
    description:
      'Reserves nothing and writes nothing, and answers under every execution switch. Returns the verdict of ' +
      'each rule with its limit and what the action would use, including the daily and velocity caps against ' +
      'the current counters. An execution switch that would refuse the action is a failing rule ' +
      '(`switch.environment`, `switch.account`, `switch.panic`, `switch.wallet`, `switch.venue`) with the ' +
      'code the executing route answers (EXECUTION_DISABLED, or VENUE_UNAVAILABLE when a conversion has no ' +
      'venue left); `refusal.message` names the switch and its reason.',
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: { in: 'body', field: 'wallet' },
    idempotent: false,
    schema: { body: CheckBody, response: { 200: CheckResponse } },
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when:
            'a field the kind needs is missing (sell_token and buy_token for a conversion, venue for a ' +
            'prediction-market order, token for a transfer)',
        },
        { code: 'NOT_FOUND', when: 'the wallet has no policy' },
        {
          code: 'UNAVAILABLE',
          when: 'a transfer needs its counterparty screened and the sanctions list is not loaded yet',
        },
      ],
      responses: { 200: 'The verdict of every rule; `refusal` names the first that fails, else null.' },
      example: { body: CHECK_BODY, status: 200, response: CHECK_RESULT },
    },
    handler: async ({ deps, principal, body, deadline }) => {
      const { accountId } = requirePrincipal({ principal: principal });
      const registry = deps.tokenRegistry;
      const screen = async (address: `0x${string}`) => {
        const result = await screenAddress(
          {
            db: deps.db,
            env: deps.config.env,
            clock: deps.clock,
            log: deps.log,
            deadline,
            ...(deps.screeningProviders ? { extraProviders: deps.screeningProviders } : {}),
          },
          address,
        );
        return result.sanctioned;
      };
      const result = await checkAction(deps.db, deps.clock, registry, accountId, body.wallet, (policy) =>
        actionFromCheck(body, policy, screen),
      );
      return { status: 200, body: result };
    },
  }),
];
