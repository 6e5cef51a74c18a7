import { getAddress } from 'viem';
import type { ChainPort } from '../../adapters/chain/port.ts';
import { AppError, unavailable } from '../../core/errors/app-error.ts';
import { actorOf, requirePrincipal } from '../../core/http/actor.ts';
import { defineRoute, type DocumentedError, type RouteDefinition } from '../../core/http/route-table.ts';
import { keyringOf } from '../../core/sealing.ts';
import { VenueRejected, VenueUnavailable } from '../../adapters/pm-venue/port.ts';
import type { AppDeps } from '../../deps.ts';
import {
  credentialView,
  listCredentialViews,
  noActiveCredential,
  revokeCredential,
  storeCredential,
  vetCredential,
  type CredentialDeps,
} from './credentials.ts';
import { lookupFunder } from './funder.ts';
import { pmJurisdictionGate } from './gate.ts';
import { onboardingStatus } from './onboarding.ts';
import { rotationCalldata } from './rotation.ts';
import { wrapCollateral } from './wrap.ts';
import { syncFills } from './fills.ts';
import { clobCredsOf } from './types.ts';
import {
  cancelAllOf,
  cancelOne,
  listRestingOrders,
  placeOrderOnce,
  prepareOrderOnce,
  submitOrder,
  type KeyedAnswer,
  type OrderDeps,
} from './orders.ts';
import {
  CREDENTIAL_ID_PARAMS,
  FUNDER_LOOKUP,
  FUNDER_PARAMS,
  ONBOARDING_PARAMS,
  ONBOARDING_STATUS,
  ROTATION_CALLDATA,
  ROTATION_QUERY,
  REVOKED_CREDENTIAL,
  STORE_CREDENTIAL_BODY,
  STORED_CREDENTIAL,
  VERIFIED_CREDENTIAL,
  WRAP_BODY,
  PLACE_ORDER_BODY,
  PLACED_ORDER,
  FILL_SYNC_BODY,
  FILL_SYNC_RESULT,
  PREPARED_ORDER,
  SUBMIT_ORDER_BODY,
  ORDERS_QUERY,
  RESTING_ORDERS,
  CANCEL_PARAMS,
  CANCEL_QUERY,
  CANCELLED_ORDER,
  CANCELLED_ALL,
  WRAP_RESULT,
} from './openapi-examples.ts';
import {
  CREDENTIAL_LIST_DEFAULT_LIMIT,
  CredentialIdParams,
  CredentialListSchema,
  CredentialSchema,
  FunderParams,
  FunderSchema,
  OnboardingParams,
  OnboardingSchema,
  RotationQuery,
  RotationSchema,
  ListCredentialsQuery,
  StoreCredentialBody,
  VerifyCredentialSchema,
  WrapBody,
  PlaceOrderBody,
  PlacedOrderSchema,
  FillSyncBody,
  FillSyncSchema,
  PreparedOrderSchema,
  SubmitOrderBody,
  OrdersQuery,
  RestingOrdersSchema,
  CancelOrderParams,
  CancelOrderQuery,
  CancelledOrderSchema,
  CancelAllSchema,
  WrapSchema,
} from './schemas.ts';
import { getCredentialMeta } from './store.ts';
import { useCredential } from './usage.ts';
import { withTransaction } from '../../core/db/database.ts';

const TAGS = ['prediction markets'];

/** Every prediction-market route can answer 451 before anything else. */
const GATED: DocumentedError = {
  code: 'JURISDICTION_BLOCKED',
  when: 'the request comes from a restricted or unknown origin (checked before anything else)',
};

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

export function credentialDeps(deps: AppDeps): CredentialDeps {
  return {
    clock: deps.clock,
    keyring: keyringOf(deps.config.sealingKeys),
    venues: deps.pmVenues ?? null,
    watch: deps.config.pm.watch,
  };
}

export const pmRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'GET',
    url: '/v1/pm/credentials',
    operationId: 'listVenueCredentials',
    summary: "The account's venue credentials, newest first (metadata only)",
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: false,
    gate: pmJurisdictionGate,
    schema: { querystring: ListCredentialsQuery, response: { 200: CredentialListSchema } },
    docs: {
      errors: [GATED],
      responses: { 200: 'The active credentials (and revoked ones with include_revoked), metadata only.' },
      example: { query: { limit: 50 }, status: 200, response: { credentials: [STORED_CREDENTIAL] } },
    },
    handler: async ({ deps, principal, query }) => ({
      status: 200,
      body: {
        credentials: await listCredentialViews(deps.db, requirePrincipal({ principal }).accountId, {
          limit: query.limit ?? CREDENTIAL_LIST_DEFAULT_LIMIT,
          offset: query.offset ?? 0,
          includeRevoked: query.include_revoked ?? false,
        }),
      },
    }),
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/pm/credentials',
    operationId: 'storeVenueCredential',
    summary: 'Store a venue trade credential, checked against the venue and sealed at rest',
    description:
      'polymarket: signature_type and either signer_key (hosted flow: the service signs orders) or ' +
      'signer_address (client-signed flow), with the CLOB L2 key (api_key, api_secret, api_passphrase) or, with a ' +
      'signer_key, none of them (derived from the CLOB with L1 headers). kalshi: api_key (the key id) and ' +
      'private_key_pem. The venue is asked first (an authenticated read); a refusal is 400 and nothing is ' +
      'stored. The material is sealed (AES-256-GCM bound to the account, the venue and the credential id) and ' +
      'never returned, logged or exported. See docs/prediction-markets.md.',
    tags: TAGS,
    class: 'bearer',
    scope: 'write',
    wallet: false,
    gate: pmJurisdictionGate,
    schema: { body: StoreCredentialBody, response: { 201: CredentialSchema } },
    docs: {
      errors: [
        GATED,
        {
          code: 'INVALID_REQUEST',
          when: 'a field is malformed or missing for the venue, or the venue rejected the credential (nothing stored)',
        },
        {
          code: 'EXECUTION_DISABLED',
          when: 'the operator switched off hosted credential intake (a signer_key or a kalshi key); use the client-signed flow',
        },
        {
          code: 'UNAVAILABLE',
          when: 'sealing or the venue is not configured here, or the venue could not be asked',
        },
      ],
      responses: { 201: 'The credential, stored: metadata only.' },
      example: { body: STORE_CREDENTIAL_BODY, status: 201, response: STORED_CREDENTIAL },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      const deps = credentialDeps(ctx.deps);
      const vetted = await vetCredential(ctx.deps.db, deps, ctx.body, ctx.deadline);
      return ctx.mutate(async (tx) => ({
        status: 201,
        body: await storeCredential(tx, deps, actor.principal.accountId, actor, vetted),
      }));
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/v1/pm/credentials/{id}',
    operationId: 'revokeVenueCredential',
    summary: 'Revoke a venue credential: its sealed material is destroyed',
    description:
      'The ciphertext is overwritten in the same statement that marks the credential revoked; a revoked ' +
      'credential answers 404 wherever it is used. Revoke the key at the venue too.',
    tags: TAGS,
    class: 'bearer',
    scope: 'cancel',
    wallet: false,
    gate: pmJurisdictionGate,
    schema: { params: CredentialIdParams, response: { 200: CredentialSchema } },
    docs: {
      errors: [GATED, { code: 'NOT_FOUND', when: 'the account has no active credential with this id' }],
      responses: { 200: 'The credential, revoked (metadata only).' },
      example: { params: CREDENTIAL_ID_PARAMS, status: 200, response: REVOKED_CREDENTIAL },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      return ctx.mutate(async (tx) => ({
        status: 200,
        body: await revokeCredential(tx, ctx.deps.clock, actor.principal.accountId, actor, ctx.params.id),
      }));
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/pm/credentials/{id}/verify',
    operationId: 'verifyVenueCredential',
    summary: 'Ask the venue whether it still accepts a stored credential',
    description:
      'An authenticated read at the venue with the stored credential (a use: audited and watched). 200 says ' +
      'whether the venue accepts it now, with its reason when not. Takes no Idempotency-Key.',
    tags: TAGS,
    class: 'bearer',
    scope: 'write',
    wallet: false,
    idempotent: false,
    gate: pmJurisdictionGate,
    schema: { params: CredentialIdParams, response: { 200: VerifyCredentialSchema } },
    docs: {
      errors: [
        GATED,
        { code: 'NOT_FOUND', when: 'the account has no active credential with this id' },
        { code: 'UNAVAILABLE', when: 'the venue is not configured here or could not be asked' },
      ],
      responses: { 200: "The credential and the venue's answer." },
      example: { params: CREDENTIAL_ID_PARAMS, status: 200, response: VERIFIED_CREDENTIAL },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      const accountId = actor.principal.accountId;
      const deps = credentialDeps(ctx.deps);
      const venues = deps.venues;
      if (!venues) {
        throw unavailable('No prediction-market venue is configured here.', {
          remediation: 'The operator configures the venue URLs (docs/operations.md).',
          next: [],
        });
      }
      // The use is recorded (audit, watch) whatever the venue answers.
      const used = await withTransaction(ctx.deps.db, (tx) =>
        useCredential(tx, deps, {
          accountId,
          credentialId: ctx.params.id,
          operation: 'authenticate',
          actor,
        }),
      );
      if (!used) throw noActiveCredential(ctx.params.id);
      ctx.deadline.check(`asking ${used.row.venue} about the credential`);
      let check;
      try {
        const m = used.material;
        check =
          m.venue === 'polymarket'
            ? await venues.polymarket.checkApiCredentials(
                used.row.signer_address as `0x${string}`,
                clobCredsOf(m),
              )
            : await venues.kalshi.checkApiKey({ keyId: m.api_key, privateKeyPem: m.private_key_pem });
      } catch (err) {
        if (err instanceof VenueRejected) check = { ok: false as const, reason: err.message };
        else if (err instanceof VenueUnavailable) {
          throw new AppError('UNAVAILABLE', `${used.row.venue} could not be asked: ${err.message}`, {
            remediation: 'Retry in a minute.',
            next: [],
          });
        } else throw err;
      }
      const row = await getCredentialMeta(ctx.deps.db, accountId, ctx.params.id);
      return {
        status: 200,
        body: {
          credential: credentialView(row!),
          accepted: check.ok,
          reason: check.ok ? null : check.reason,
          checked_at: ctx.deps.clock.now().toISOString(),
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/pm/credentials/{id}/rotation',
    operationId: 'venueCredentialRotation',
    summary: "The swapOwner calldata that replaces a Safe funder's signer (never submitted by Purser)",
    description:
      'For a polymarket credential of signature type 2: swapOwner(prev_owner, old_owner, new_owner) for the ' +
      "Safe to execute, prev_owner read from the Safe's live owner list (the sentinel 0x…01 when the signer " +
      'heads it, as in a 1-of-1 Safe), with the ordered steps and the rotation policy. Execute it from the ' +
      'Safe, store a credential with the new key, revoke this one.',
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: false,
    gate: pmJurisdictionGate,
    schema: { params: CredentialIdParams, querystring: RotationQuery, response: { 200: RotationSchema } },
    docs: {
      errors: [
        GATED,
        { code: 'NOT_FOUND', when: 'the account has no active credential with this id' },
        { code: 'INVALID_REQUEST', when: 'new_owner is the zero address, the sentinel or the Safe itself' },
        {
          code: 'NOT_APPLICABLE',
          when: 'not rotatable: a kalshi credential, a funder that is not a Safe, a signer that is no longer an owner, or a new_owner that already is one',
        },
        { code: 'UNAVAILABLE', when: 'the chain RPC did not answer' },
      ],
      responses: { 200: 'The calldata and the steps.' },
      example: {
        params: CREDENTIAL_ID_PARAMS,
        query: ROTATION_QUERY,
        status: 200,
        response: ROTATION_CALLDATA,
      },
    },
    handler: async (ctx) => ({
      status: 200,
      body: await rotationCalldata(
        ctx.deps.db,
        chainOf(ctx.deps),
        ctx.deps.config.pm.chainId,
        requirePrincipal(ctx).accountId,
        ctx.params.id,
        ctx.query.new_owner,
        ctx.deadline,
      ),
    }),
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/pm/onboarding/{address}',
    operationId: 'pmOnboarding',
    summary: 'What a wallet lacks to trade on Polymarket: the six grants and its collateral, read on chain',
    description:
      "Reads live on the prediction-market chain: pUSD's allowance and the conditional tokens' operator " +
      'approval for each of the CTF Exchange V2, the NegRisk CTF Exchange V2 and the NegRisk Adapter (an ' +
      'allowance counts from 2^128, and the calldata grants the maximum), the pUSD balance and the USDC.e ' +
      'still to wrap. Each missing grant comes with the call the wallet makes; wrap_calls approve the onramp ' +
      'and wrap the whole USDC.e balance. Non-custodial: nothing is submitted.',
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: { in: 'params', field: 'address' },
    gate: pmJurisdictionGate,
    schema: { params: OnboardingParams, response: { 200: OnboardingSchema } },
    docs: {
      errors: [GATED, { code: 'UNAVAILABLE', when: 'the chain RPC did not answer' }],
      responses: { 200: 'The grants, the collateral and the calls still to make.' },
      example: { params: ONBOARDING_PARAMS, status: 200, response: ONBOARDING_STATUS },
    },
    handler: async (ctx) => ({
      status: 200,
      body: await onboardingStatus(
        chainOf(ctx.deps),
        ctx.deps.config.pm.chainId,
        ctx.deps.config.pm.contracts,
        getAddress(ctx.params.address),
        ctx.deadline,
      ),
    }),
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/pm/funder/{owner}',
    operationId: 'pmFunder',
    summary: "An owner's funder Safe: its Safes from the Safe Transaction Service, the likeliest first",
    description:
      "The owner's Safes on the prediction-market chain (Safe's Transaction Service), each read on chain: the " +
      'likeliest funder has the most of the six grants set, then the most pUSD. At most 20 are read.',
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: { in: 'params', field: 'owner' },
    gate: pmJurisdictionGate,
    schema: { params: FunderParams, response: { 200: FunderSchema } },
    docs: {
      errors: [
        GATED,
        { code: 'UNAVAILABLE', when: 'the Safe Transaction Service or the chain RPC did not answer' },
      ],
      responses: { 200: 'The candidates, likeliest first, and the likeliest as funder (null without any).' },
      example: { params: FUNDER_PARAMS, status: 200, response: FUNDER_LOOKUP },
    },
    handler: async (ctx) => {
      if (!ctx.deps.safeIndex) {
        throw unavailable('No Safe Transaction Service is configured here.', {
          remediation: 'The operator sets SAFE_TX_SERVICE_URL (docs/operations.md).',
          next: [],
        });
      }
      return {
        status: 200,
        body: await lookupFunder(
          ctx.deps.safeIndex,
          chainOf(ctx.deps),
          ctx.deps.config.pm.chainId,
          ctx.deps.config.pm.contracts,
          ctx.params.owner,
          ctx.deadline,
        ),
      };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/pm/wrap',
    operationId: 'pmWrap',
    summary: "Wrap a Safe funder's USDC.e into pUSD, signed with the stored signer key and relayed",
    description:
      'For a polymarket credential of signature type 2 stored with its signer key, and a 1-of-1 Safe: the ' +
      'approve of the onramp (unless its allowance covers the amount) and the wrap, each a Safe transaction ' +
      "signed with the sealed signer key and sent by the platform's relayer, which pays the gas. The budget " +
      'is checked before each broadcast: a 504 says what was sent, and an approve without its wrap is safe ' +
      "to retry. Booked as one ledger group on the Safe's wallet.",
    tags: TAGS,
    class: 'bearer',
    scope: 'write',
    wallet: false,
    gate: pmJurisdictionGate,
    schema: { body: WrapBody, response: { 200: WrapSchema } },
    docs: {
      errors: [
        GATED,
        { code: 'INVALID_REQUEST', when: "amount_base_units is 0 or more than the Safe's unwrapped USDC.e" },
        { code: 'NOT_FOUND', when: 'the account has no active credential with this id' },
        {
          code: 'EXECUTION_DISABLED',
          when: 'execution is switched off for the environment, the account or the Safe',
        },
        {
          code: 'NOT_APPLICABLE',
          when: 'not wrappable: another venue or signature type, a client-signed credential, a Safe of more than one required signature or whose owners no longer include the signer, nothing to wrap, or a transaction that reverted',
        },
        {
          code: 'UNAVAILABLE',
          when: 'sealing or the relay signer is not configured, or the chain did not answer',
        },
      ],
      responses: { 200: 'Wrapped: the amount, the transactions and the balances after.' },
      example: { body: WRAP_BODY, status: 200, response: WRAP_RESULT },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      const deps = {
        ...credentialDeps(ctx.deps),
        db: ctx.deps.db,
        chain: chainOf(ctx.deps),
        chainId: ctx.deps.config.pm.chainId,
        contracts: ctx.deps.config.pm.contracts,
      };
      return ctx.replayable(async () => ({
        status: 200,
        body: await wrapCollateral(deps, actor, ctx.body, ctx.deadline),
      }));
    },
  }),
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
  defineRoute({
    method: 'POST',
    url: '/v1/pm/fills/sync',
    operationId: 'syncPmFills',
    summary: "Journal the credential's unseen fills as balanced ledger groups on the wallet",
    description:
      "Pages the venue's trades of the credential, newest first (10 pages a run), and books each fill of " +
      'the wallet once: pUSD against outcome shares with the venue, and the venue fee, stamped with the ' +
      "wallet's active policy hash. The trade and order ids are the settlement identity: re-running, even " +
      'concurrently, never books twice. Works under every switch. Takes no Idempotency-Key.',
    tags: TAGS,
    class: 'bearer',
    scope: 'write',
    wallet: { in: 'body', field: 'wallet' },
    idempotent: false,
    gate: pmJurisdictionGate,
    schema: { body: FillSyncBody, response: { 200: FillSyncSchema } },
    docs: {
      errors: [
        GATED,
        { code: 'INVALID_REQUEST', when: "the wallet is not the credential's funder" },
        { code: 'NOT_FOUND', when: 'the account has no active credential with this id' },
        { code: 'RATE_LIMITED', when: "the platform's read budget for the venue is spent" },
        { code: 'UNAVAILABLE', when: 'the venue did not answer' },
      ],
      responses: { 200: 'What this run journaled and skipped.' },
      example: { body: FILL_SYNC_BODY, status: 200, response: FILL_SYNC_RESULT },
    },
    handler: async (ctx) => ({
      status: 200,
      body: await syncFills(orderDeps(ctx.deps), actorOf(ctx), ctx.body, ctx.deadline),
    }),
  }),
];

/** What the order routes need; 503 without a configured venue. */
export function orderDeps(deps: AppDeps): OrderDeps {
  if (!deps.pmVenues) {
    throw unavailable('No prediction-market venue is configured here.', {
      remediation: 'The operator configures POLYMARKET_CLOB_URL (docs/operations.md).',
      next: [],
    });
  }
  return {
    ...credentialDeps(deps),
    config: deps.config,
    db: deps.db,
    registry: deps.tokenRegistry,
    clob: deps.pmVenues.polymarket,
  };
}

/** The chains of this process; 503 without them. */
function chainOf(deps: AppDeps): ChainPort {
  if (!deps.chain) {
    throw unavailable('This process has no chain connection.', {
      remediation: 'The operator configures RPC_URL_137; retry later.',
      next: [],
    });
  }
  return deps.chain;
}

/** A 201 of an order route, marked as a replay when it answers a retry with the same key. */
function keyedResult<T>(answer: KeyedAnswer<T>) {
  return {
    status: 201 as const,
    body: answer.body,
    ...(answer.replayed ? { headers: { 'idempotent-replayed': 'true' } } : {}),
  };
}
