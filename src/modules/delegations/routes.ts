import { actorOf, requirePrincipal } from '../../core/http/actor.ts';
import type { Hex } from 'viem';
import {
  defineRoute,
  type ResourceWalletLocator,
  type RouteDefinition,
} from '../../core/http/route-table.ts';
import {
  ConfirmBody,
  DELEGATION_LIST_DEFAULT_LIMIT,
  DelegationListSchema,
  DelegationSchema,
  IdParams,
  ListQuery,
  PrepareBody,
  RenewBody,
  RevocationSchema,
} from './schemas.ts';
import {
  ACTIVE_DELEGATION,
  CONFIRM_BODY,
  DELEGATION_ID_PARAMS,
  LIST_QUERY,
  PREPARE_BODY,
  PREPARED_DELEGATION,
  RENEW_BODY,
  RENEWED_DELEGATION,
  REVOCATION,
} from './openapi-examples.ts';
import { normalizeScope } from './scope.ts';
import {
  activate,
  assertConfirmable,
  assertRenewable,
  checkScopeFits,
  createGrant,
  getDelegationRow,
  listDelegations,
  nowSecsOf,
  readState,
  renewedScope,
  revocationNonce,
  revoke,
  toDelegation,
  verifyEnableSignature,
} from './service.ts';
import { delegationWallet } from './store.ts';

const TAGS = ['delegations'];
/** When preparing a grant (or a renewal) answers 503. */
const GRANT_UNAVAILABLE =
  'no RPC endpoint or Kernel modules are configured for the chain, no executor address is configured, ' +
  'or the chain did not answer';

/** The guard's locator for `/v1/delegations/{id}`: the delegation's smart account. */
const DELEGATION_WALLET: ResourceWalletLocator = {
  in: 'resource',
  resource: 'delegation',
  resolve: (db, accountId, params) =>
    typeof params['id'] === 'string' ? delegationWallet(db, accountId, params['id']) : Promise.resolve(null),
};

export const delegationsRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'POST',
    url: '/v1/delegations/prepare',
    operationId: 'prepareDelegation',
    summary: 'Prepare a session-key grant for the executor (ZeroDev Kernel v3 permission)',
    description:
      'Builds the permission: a call policy (target, selector, value limit per call), a timestamp policy ' +
      '(valid_after, valid_until in unix seconds), an optional rate-limit policy (`count` operations in ' +
      'total, at most one per `interval_secs`), and the executor as ECDSA session signer that cannot sign ' +
      "as the account (ERC-1271). The scope must fit inside the wallet's active policy. Calls get " +
      "parameter rules (`scope.calls[].rules`): an approval's spender must be a contract of the policy's " +
      'venues, a swap must pay the account. The owner signs ' +
      '`digest` (the EIP-712 hash of `typed_data`) and confirms.',
    tags: TAGS,
    class: 'bearer',
    scope: 'write',
    wallet: { in: 'body', field: 'account' },
    schema: { body: PrepareBody, response: { 201: DelegationSchema } },
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when:
            'a check beyond the schema fails: an EIP-55 checksum, a target that is the account or zero, a ' +
            'repeated target and selector, a value limit over uint256, or valid_until not after ' +
            'valid_after and now',
        },
        { code: 'NOT_FOUND', when: 'the account (wallet) has no policy' },
        {
          code: 'POLICY_VIOLATION',
          when: "the scope is wider than the wallet's active policy; names the rule",
        },
        {
          code: 'UNAVAILABLE',
          when: GRANT_UNAVAILABLE,
        },
      ],
      responses: { 201: 'The delegation, prepared: the owner signs `digest` and confirms it.' },
      example: { body: PREPARE_BODY, status: 201, response: PREPARED_DELEGATION },
    },
    handler: async (ctx) => {
      const { deps, body } = ctx;
      const actor = actorOf(ctx);
      const scope = normalizeScope(body, nowSecsOf(deps.clock));
      const wallet = body.account.toLowerCase();
      // Fail fast without a chain read; the transaction checks again against the policy it sees.
      await checkScopeFits(deps.db, deps, actor.principal.accountId, wallet, body.chain_id, scope);
      const state = await readState(deps, body.chain_id, wallet);
      return ctx.mutate(async (tx) => {
        const delegation = await createGrant(tx, deps, actor, {
          wallet,
          chainId: body.chain_id,
          scope,
          state,
          renewedFrom: null,
        });
        return { status: 201, body: delegation };
      });
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/delegations/{id}/confirm',
    operationId: 'confirmDelegation',
    summary: "Activate a prepared delegation with the owner's signature over its digest",
    description:
      "Verifies `enable_sig` against the account's on-chain ECDSA owner and the live Kernel nonce. While the " +
      'account is not deployed, `owner` is required and must derive the account (Kernel v3.1 on the configured ' +
      'factory, implementation and ECDSA validator, at `index`, default 0); the index and the deployment are ' +
      'kept for the first delegated operation. A moved nonce, or a delegation that is not prepared, is 409.',
    tags: TAGS,
    class: 'bearer',
    scope: 'write',
    wallet: DELEGATION_WALLET,
    schema: { params: IdParams, body: ConfirmBody, response: { 200: DelegationSchema } },
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when:
            "`enable_sig` is not the owner's signature over the digest, or `owner` (and `index`) is not " +
            "the account's owner: wrong, or missing while the account is not deployed",
        },
        { code: 'NOT_FOUND', when: 'the account has no delegation with this id' },
        {
          code: 'CONFLICT',
          when:
            "the delegation is not prepared, the account's Kernel nonce or EIP-712 version moved since " +
            'prepare, or the account has no owner in the ECDSA root validator',
        },
        {
          code: 'UNAVAILABLE',
          when: 'no RPC endpoint or Kernel modules are configured for the chain, or the chain did not answer',
        },
      ],
      responses: { 200: 'The delegation, active.' },
      example: { params: DELEGATION_ID_PARAMS, body: CONFIRM_BODY, status: 200, response: ACTIVE_DELEGATION },
    },
    handler: async (ctx) => {
      const { deps, body, params } = ctx;
      const actor = actorOf(ctx);
      const row = await getDelegationRow(deps.db, actor.principal.accountId, params.id);
      assertConfirmable(row, nowSecsOf(deps.clock));
      const sig = body.enable_sig as Hex;
      const verified = await verifyEnableSignature(deps, row, sig, body.owner, body.index);
      return ctx.mutate(async (tx) => ({
        status: 200,
        body: await activate(tx, deps, actor, row.id, sig, verified),
      }));
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/delegations/{id}',
    operationId: 'getDelegation',
    summary: 'One delegation',
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: DELEGATION_WALLET,
    schema: { params: IdParams, response: { 200: DelegationSchema } },
    docs: {
      errors: [{ code: 'NOT_FOUND', when: 'the account has no delegation with this id' }],
      responses: {
        200: 'The delegation, with its status as of now (`expired` once valid_until has passed).',
      },
      example: { params: DELEGATION_ID_PARAMS, status: 200, response: ACTIVE_DELEGATION },
    },
    handler: async ({ deps, principal, params }) => {
      const row = await getDelegationRow(
        deps.db,
        requirePrincipal({ principal: principal }).accountId,
        params.id,
      );
      return { status: 200, body: toDelegation(row, nowSecsOf(deps.clock)) };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/delegations',
    operationId: 'listDelegations',
    summary: "The account's delegations, newest first (one smart account's with `account`)",
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: { in: 'query', field: 'account' },
    schema: { querystring: ListQuery, response: { 200: DelegationListSchema } },
    docs: {
      errors: [],
      responses: { 200: "The account's delegations, newest first." },
      example: { query: LIST_QUERY, status: 200, response: { delegations: [ACTIVE_DELEGATION] } },
    },
    handler: async ({ deps, principal, query }) => {
      const delegations = await listDelegations(
        deps.db,
        deps.clock,
        requirePrincipal({ principal: principal }).accountId,
        query.account ?? null,
        query.limit ?? DELEGATION_LIST_DEFAULT_LIMIT,
      );
      return { status: 200, body: { delegations } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/v1/delegations/{id}',
    operationId: 'revokeDelegation',
    summary: "Revoke a delegation: the executor stops at once; returns the owner's on-chain calls",
    tags: TAGS,
    class: 'bearer',
    scope: 'cancel',
    wallet: DELEGATION_WALLET,
    schema: { params: IdParams, response: { 200: RevocationSchema } },
    docs: {
      errors: [
        { code: 'NOT_FOUND', when: 'the account has no delegation with this id' },
        { code: 'CONFLICT', when: 'the delegation is already revoked or expired' },
      ],
      responses: {
        200: "Revoked: the executor no longer uses the grant; the owner's calls remove it on-chain.",
      },
      example: { params: DELEGATION_ID_PARAMS, status: 200, response: REVOCATION },
    },
    handler: async (ctx) => {
      const { deps, params } = ctx;
      const actor = actorOf(ctx);
      const row = await getDelegationRow(deps.db, actor.principal.accountId, params.id);
      const nextNonce = await revocationNonce(deps, row);
      return ctx.mutate(async (tx) => ({
        status: 200,
        body: await revoke(tx, deps, actor, row.id, nextNonce),
      }));
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/delegations/{id}/renew',
    operationId: 'renewDelegation',
    summary:
      'Prepare a new grant with the same calls and rate limit; the old one stays active until it expires',
    description:
      "Re-checks the scope against the policy active now. Default duration: the original's, capped at 90 " +
      'days; `valid_until` (unix seconds) may be at most 90 days ahead. Sign and confirm it like a prepared one.',
    tags: TAGS,
    class: 'bearer',
    scope: 'write',
    wallet: DELEGATION_WALLET,
    schema: { params: IdParams, body: RenewBody, response: { 201: DelegationSchema } },
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when: '`valid_until` is not in the future or is more than 90 days ahead',
        },
        {
          code: 'NOT_FOUND',
          when: 'the account has no delegation with this id, or its account (wallet) no longer has a policy',
        },
        { code: 'CONFLICT', when: 'the delegation is not active (prepared, revoked or expired)' },
        {
          code: 'POLICY_VIOLATION',
          when: "the grant's calls are wider than the wallet's policy active now; names the rule",
        },
        {
          code: 'UNAVAILABLE',
          when: GRANT_UNAVAILABLE,
        },
      ],
      responses: {
        201: 'The new delegation, prepared; `renewed_from` names the old one, active until it expires.',
      },
      example: { params: DELEGATION_ID_PARAMS, body: RENEW_BODY, status: 201, response: RENEWED_DELEGATION },
    },
    handler: async (ctx) => {
      const { deps, params, body } = ctx;
      const actor = actorOf(ctx);
      const row = await getDelegationRow(deps.db, actor.principal.accountId, params.id);
      const now = nowSecsOf(deps.clock);
      assertRenewable(row, now);
      // The body is optional: a renewal without one takes the default duration.
      const validUntil = (body as { valid_until?: number } | undefined)?.valid_until;
      const scope = renewedScope(row, now, validUntil);
      await checkScopeFits(deps.db, deps, actor.principal.accountId, row.wallet, row.chain_id, scope);
      const state = await readState(deps, row.chain_id, row.wallet);
      return ctx.mutate(async (tx) => {
        const delegation = await createGrant(tx, deps, actor, {
          wallet: row.wallet,
          chainId: row.chain_id,
          scope,
          state,
          renewedFrom: row.id,
        });
        return { status: 201, body: delegation };
      });
    },
  }),
];
