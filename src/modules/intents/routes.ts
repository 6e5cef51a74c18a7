import { unavailable } from '../../core/errors/app-error.ts';
import { actorOf, requirePrincipal } from '../../core/http/actor.ts';
import { toldByEventLine } from '../../core/http/request-log.ts';
import {
  defineRoute,
  type ResourceWalletLocator,
  type RouteDefinition,
} from '../../core/http/route-table.ts';
import type { AppDeps } from '../../deps.ts';
import {
  CANCELLED_INTENT,
  CREATE_INTENT_BODY,
  INTENT_ID_PARAMS,
  LIST_INTENTS_QUERY,
  PLANNED_INTENT,
} from './openapi-examples.ts';
import {
  CreateIntentBody,
  INTENT_LIST_DEFAULT_LIMIT,
  ApprovalBody,
  ApprovalSchema,
  IntentIdParams,
  IntentListSchema,
  IntentSchema,
  ListIntentsQuery,
} from './schemas.ts';
import { admitIntent, admitIntentAlone, DispatchRefused, recordRefusedIntent } from './admission.ts';
import { cancelIntent, getIntent, listIntents, type IntentDeps } from './service.ts';
import { intentWallet } from './store.ts';
import { approveIntent } from './approvals.ts';

const TAGS = ['intents'];

const APPROVAL_EXAMPLE = {
  quorum: 2,
  approvers: [
    '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
    '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc',
    '0x90f79bf6eb2c4f870365e785982e1f101e93b906',
  ],
  signatures: [
    { approver: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8', signed_at: '2026-03-14T10:04:11.020Z' },
    { approver: '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc', signed_at: '2026-03-14T10:05:02.311Z' },
  ],
  state: 'approved',
  expires_at: '2026-03-14T11:02:17.554Z',
  digest: '0x9f2c4be1d7a35e8f06c1b2a4d98e7f3c5b6a0d1e2f3a4b5c6d7e8f9a0b1c2d3e',
  typed_data: {
    domain: { name: 'Purser intent approval', version: '1', chainId: 8453 },
    primaryType: 'IntentApproval',
    message: {
      intentId: '7d2f4a91-3c6e-4b8d-9f15-a0e8c2b47d36',
      account: 'acc_rnwppnrslr81f7b6tiej',
      wallet: '0x9bf338818ba7cf5c658d5182349c51c4d4528579',
      chainId: '8453',
      kind: 'conversion',
      sellToken: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
      buyToken: '0x4200000000000000000000000000000000000006',
      sellAmount: '250000000',
      maxSlippageBps: '30',
      policyVersion: '2',
      policyHash: '0x48e7a2f83ac99bf7654dd72417bdba8328f2ad6bca000569692cbed8adec7cd7',
      expiresAt: '1773486137',
    },
  },
};

/** The guard's locator for `/v1/intents/{id}`: the intent's wallet. */
const INTENT_WALLET: ResourceWalletLocator = {
  in: 'resource',
  resource: 'intent',
  resolve: (db, accountId, params) =>
    typeof params['id'] === 'string' ? intentWallet(db, accountId, params['id']) : Promise.resolve(null),
};

function intentDeps(deps: AppDeps): IntentDeps {
  return {
    config: deps.config,
    clock: deps.clock,
    db: deps.db,
    // The registry built at start; without one (a test that did not build it), the real addresses.
    registry: deps.tokenRegistry,
    prices: deps.prices,
  };
}

export const intentsRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'POST',
    url: '/v1/intents',
    operationId: 'createIntent',
    summary: "Admit a conversion or a gas top-up under the wallet's active policy",
    description:
      "The chain is the active policy's `chain_id`; `sell_token` and `buy_token` are registry token addresses " +
      "of that chain. A gas top-up sells the chain's wrapped native token (amount in wei) for the native " +
      'placeholder 0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE. Checked in order, and written in one statement: the execution switches (403 ' +
      'EXECUTION_DISABLED), the policy (404 with `next` to PUT /v1/policies; its version and hash are pinned on ' +
      'the intent), the policy rules (422 POLICY_VIOLATION naming the rule), the USD value (a USD stable at 1:1, ' +
      'else the cached price reference; an unusable reference is 503), the spend reservation (422 ' +
      'BUDGET_EXCEEDED naming the cap), the fee `conversion_intent` from the prepaid balance (402 when it does ' +
      'not cover it and metering is enforced), then the planned intent, its `intent.planned` event and its ' +
      'execution job. A conversion on the testbed chain (84532) is admitted and aborts UNSUPPORTED_KIND. ' +
      "503 UNAVAILABLE when the executor's queue refuses it (the wallet's open intents at " +
      'INTENT_QUEUE_PER_WALLET, or INTENT_QUEUE_MAX jobs waiting): the intent is then kept as aborted ' +
      '(EXECUTION_ERROR, queue_refused) with nothing held or charged, and the 503 is not stored for replay.',
    tags: TAGS,
    class: 'bearer',
    scope: 'write',
    wallet: { in: 'body', field: 'wallet' },
    schema: { body: CreateIntentBody, response: { 201: IntentSchema } },
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when:
            "a token is not a registry token of the policy's chain, the two tokens are the same, or a gas " +
            "top-up does not sell the chain's wrapped native token for the native placeholder",
        },
        {
          code: 'PAYMENT_REQUIRED',
          when: 'the prepaid balance does not cover the intent fee (when metering is enforced)',
        },
        {
          code: 'EXECUTION_DISABLED',
          when: 'execution is switched off for the environment, the account (operator or panic) or wallet',
        },
        { code: 'NOT_FOUND', when: 'the wallet has no policy' },
        {
          code: 'POLICY_VIOLATION',
          when:
            "a rule of the wallet's policy refuses it (chain, token allowlist, venues, slippage, gas " +
            'top-up limits); names the rule',
        },
        {
          code: 'BUDGET_EXCEEDED',
          when:
            'a spend cap (per transaction, daily, hourly velocity) refuses it, or neither leg is an ' +
            'accepted stable',
        },
        {
          code: 'UNAVAILABLE',
          when:
            "the executor's queue refused the intent (kept as aborted, nothing held or charged), or the " +
            'price reference that values the sell token is missing or unusable',
        },
      ],
      responses: { 201: 'The intent, planned and dispatched to the executor.' },
      example: { body: CREATE_INTENT_BODY, status: 201, response: PLANNED_INTENT },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      const deps = intentDeps(ctx.deps);
      try {
        // Two round trips: the context, then the reservation, the fee, the intent and the
        // Idempotency-Key's claim and answer in one statement committed alone (batched with
        // concurrent bookings); with metering off (no fee to book) a transaction instead.
        // Admitted here (not replayed), the request's log line is the intent.planned event's.
        let admitted = false;
        const answer = await ctx.mutateAlone(
          async (key) => {
            const intent = await admitIntentAlone(deps, actor, ctx.body, key);
            admitted = intent !== null;
            return intent === null ? null : { status: 201, body: intent };
          },
          async (tx) => {
            const intent = await admitIntent(tx, deps, actor, ctx.body);
            admitted = true;
            return { status: 201, body: intent };
          },
        );
        if (admitted) toldByEventLine(ctx.req);
        return answer;
      } catch (err) {
        if (!(err instanceof DispatchRefused)) throw err;
        // Not admitted: the admission rolled back (no reservation, no fee, no stored answer), and
        // the intent is kept as aborted on its own, without an intent.aborted event.
        await recordRefusedIntent(deps.db, err);
        throw unavailable(`The executor's queue refused the intent: ${err.why}.`, {
          remediation:
            'Retry once earlier intents of the wallet have finished, or cancel planned ones you no longer need; the refused intent is listed as aborted (EXECUTION_ERROR, queue_refused).',
          next: [
            {
              method: 'GET',
              path: `/v1/intents/${err.intent.id}`,
              why: 'the refused intent, aborted',
            },
          ],
        });
      }
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/intents',
    operationId: 'listIntents',
    summary: "The account's intents, newest first (one wallet's with `wallet`)",
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: { in: 'query', field: 'wallet' },
    schema: { querystring: ListIntentsQuery, response: { 200: IntentListSchema } },
    docs: {
      errors: [],
      responses: { 200: "The account's intents, newest first." },
      example: { query: LIST_INTENTS_QUERY, status: 200, response: { intents: [PLANNED_INTENT] } },
    },
    handler: async ({ deps, principal, query }) => {
      const intents = await listIntents(
        deps.db,
        requirePrincipal({ principal }).accountId,
        query.wallet ?? null,
        query.limit ?? INTENT_LIST_DEFAULT_LIMIT,
        query.offset ?? 0,
      );
      return { status: 200, body: { intents } };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/intents/{id}',
    operationId: 'getIntent',
    summary: 'One intent',
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: INTENT_WALLET,
    schema: { params: IntentIdParams, response: { 200: IntentSchema } },
    docs: {
      errors: [{ code: 'NOT_FOUND', when: 'the account has no intent with this id' }],
      responses: { 200: 'The intent, with its report so far.' },
      example: { params: INTENT_ID_PARAMS, status: 200, response: PLANNED_INTENT },
    },
    handler: async ({ deps, principal, params }) => ({
      status: 200,
      body: await getIntent(deps.db, requirePrincipal({ principal }).accountId, params.id),
    }),
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/intents/{id}/cancel',
    operationId: 'cancelIntent',
    summary: 'Cancel a planned intent: its spend reservation is released and its fee reversed',
    description:
      'Only a planned intent can be cancelled; any other, or an unknown one, is 404. Never refused by an ' +
      'execution switch. Emits `intent.cancelled`.',
    tags: TAGS,
    class: 'bearer',
    scope: 'cancel',
    wallet: INTENT_WALLET,
    schema: { params: IntentIdParams, response: { 200: IntentSchema } },
    docs: {
      errors: [
        { code: 'NOT_FOUND', when: 'the account has no intent with this id, or it is no longer planned' },
      ],
      responses: { 200: 'The intent, cancelled.' },
      example: { params: INTENT_ID_PARAMS, status: 200, response: CANCELLED_INTENT },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      return ctx.mutate(async (tx) => ({
        status: 200,
        body: await cancelIntent(tx, ctx.deps.clock, actor, ctx.params.id),
      }));
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/intents/{id}/approvals',
    operationId: 'approveIntent',
    summary: "An approver's signature for an intent waiting for approval (the policy's approval tier)",
    description:
      "An intent worth more than its policy's spend.approvals.above_usd waits, planned, with report.approval " +
      '(quorum, approvers, signatures so far, expires_at, the EIP-712 typed data and its digest). Each approver ' +
      'signs the typed data and posts the signature here: no credential, the signature alone authenticates ' +
      '(EOA, ERC-1271, or ERC-6492 for an undeployed account). A second signature of one approver counts once. ' +
      'The signature that reaches the quorum dispatches the execution in its transaction (`intent.approved`).',
    tags: TAGS,
    class: 'public',
    wallet: false,
    // Naturally idempotent: an approver counts once however often it posts.
    idempotent: false,
    schema: { params: IntentIdParams, body: ApprovalBody, response: { 200: ApprovalSchema } },
    docs: {
      errors: [
        { code: 'NOT_FOUND', when: 'no intent with this id waits (or waited) for approval' },
        { code: 'FORBIDDEN', when: "the approver is not one of the policy's approvers" },
        {
          code: 'AUTH_SIGNATURE_INVALID',
          when: "the signature is not the approver's over this intent's approval",
        },
        { code: 'CONFLICT', when: 'the intent no longer waits: cancelled, aborted, or its approval expired' },
        { code: 'UNAVAILABLE', when: "the approver's chain cannot be asked to check the signature" },
      ],
      responses: { 200: 'The approval: who signed so far, and whether the quorum was reached.' },
      example: {
        params: INTENT_ID_PARAMS,
        body: { approver: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', signature: `0x${'ab'.repeat(65)}` },
        status: 200,
        response: APPROVAL_EXAMPLE,
      },
    },
    handler: async ({ deps, params, body }) => ({
      status: 200,
      body: await approveIntent(
        { db: deps.db, clock: deps.clock, chain: deps.chain },
        params.id,
        body.approver,
        body.signature as `0x${string}`,
      ),
    }),
  }),
];
