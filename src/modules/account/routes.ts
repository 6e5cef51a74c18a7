import { Type, type TSchema } from 'typebox';
import { actorOf, requirePrincipal } from '../../core/http/actor.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { buildAccountExport, EXPORT_ARRAY_BOUND } from './export.ts';
import {
  checkOffboardConfirmation,
  offboardAccount,
  OFFBOARD_DEFAULT_REASON,
  OFFBOARD_REASON_MAX,
  readOffboardChainState,
  retiredCredentialAccount,
} from './offboard.ts';

const Item = Type.Object({}, { additionalProperties: true, description: 'Free-form record.' });
const Items = Type.Array(Item);
const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const AccountExport = Type.Object(
  {
    export_version: Type.Integer(),
    generated_at: Timestamp,
    truncated: Type.Array(Type.String(), {
      description: `Names of the arrays cut to their newest ${EXPORT_ARRAY_BOUND} items.`,
    }),
    account: Type.Object(
      {
        address: Type.String(),
        contact: Nullable(Type.String()),
        kind: Type.String(),
        created_at: Timestamp,
        offboarded_at: Nullable(Timestamp),
      },
      { additionalProperties: false },
    ),
    api_keys: Items,
    sessions: Items,
    policies: Items,
    delegations: Items,
    intents: Items,
    ledger_entries: Items,
    payment_credits: Items,
    balance: Nullable(Type.Object({ micro: Type.String() }, { additionalProperties: false })),
    events: Items,
    webhooks: Type.Object(
      { secret_configured: Type.Boolean(), failures: Items },
      { additionalProperties: false },
    ),
    auto_topup: Nullable(
      Type.Object({ rule: Nullable(Item), authorizations: Items }, { additionalProperties: false }),
    ),
    venue_credentials: Items,
    pm_orders: Items,
    pm_positions: Items,
    audit_log: Items,
    statements_manifest: Type.Object(
      { bucket_bound: Type.Boolean(), keys: Type.Array(Type.String()) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const OffboardBody = Type.Object(
  {
    confirm_wallet_address: Type.String({
      pattern: '^0x[0-9a-fA-F]{40}$',
      description: "The account's own wallet address (any letter case), to confirm.",
    }),
    reason: Type.Optional(Type.String({ maxLength: OFFBOARD_REASON_MAX, default: OFFBOARD_DEFAULT_REASON })),
  },
  { additionalProperties: false },
);

const Call = Type.Object({ to: Type.String(), data: Type.String() }, { additionalProperties: false });

const OffboardResult = Type.Object(
  {
    offboarded: Type.Literal(true),
    address: Type.String(),
    offboarded_at: Timestamp,
    deleted: Type.Object(
      {
        api_keys_revoked: Type.Integer(),
        sessions_revoked: Type.Integer(),
        credentials_zeroed: Type.Integer(),
        auto_topup_arrows_removed: Type.Integer(),
        webhook_secret_removed: Type.Boolean(),
        webhook_failures_removed: Type.Integer(),
        contact_scrubbed: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
    retained: Type.Array(Type.String()),
    scheduled: Type.Array(Type.String()),
    delegations_revoked: Type.Array(
      Type.Object(
        { id: Type.String(), account: Type.String(), uninstall_call: Call, invalidate_nonce_call: Call },
        { additionalProperties: false },
      ),
    ),
    note: Type.String(),
    cancellation: Type.Object(
      {
        authorizations: Type.Array(Item, {
          description:
            'Per removed auto-top-up arrow: the EIP-3009 CancelAuthorization typed data for the payer to sign ' +
            "under the token's domain, and the token's cancelAuthorization call to send it with.",
        }),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: false },
);

export const accountRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'GET',
    url: '/v1/account/export',
    operationId: 'exportAccount',
    summary: 'Everything the service keeps about the authenticated account',
    description:
      'One consistent snapshot of the caller’s own account. Credentials appear as metadata only: ' +
      'never a token, a token hash, sealed ciphertext or a signature. Each array keeps at most ' +
      `its newest ${EXPORT_ARRAY_BOUND} items; the names of cut arrays are listed in \`truncated\`.`,
    tags: ['account'],
    class: 'bearer',
    scope: 'admin',
    wallet: false,
    schema: { response: { 200: AccountExport } },
    handler: async (ctx) => {
      const principal = requirePrincipal(ctx);
      const body = await buildAccountExport(
        ctx.deps.db,
        ctx.deps.clock,
        principal.accountId,
        EXPORT_ARRAY_BOUND,
        ctx.deps.objectStore?.kind === 's3',
      );
      return { status: 200, body, headers: { 'cache-control': 'no-store' } };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/account/offboard',
    operationId: 'offboardAccount',
    summary: 'Retire the authenticated account: revoke every credential and grant, delete secrets',
    description:
      'In one transaction: API keys and sessions revoked; delegations revoked (the owner’s unwind ' +
      'calldata returned); ready auto-top-up arrows removed (EIP-3009 cancellation material returned: ' +
      'removing the service’s copy does not revoke the authorization on-chain); webhook destination, ' +
      'secret and dead letters deleted; contact scrubbed; the account retired in place. The ledger, ' +
      'events, policies and audit facts are retained; statement exports are deleted by the ' +
      'housekeeping sweep. `confirm_wallet_address` must be the account’s address (400 otherwise, ' +
      'nothing changed). Afterwards no credential of the account works (401) and sign-in answers ' +
      '403; the same request with the same Idempotency-Key, from a credential it revoked, replays ' +
      'the result for 7 days. `deleted.*` counts what this call removed (booleans: whether there was ' +
      'one to remove).',
    tags: ['account'],
    class: 'bearer',
    scope: 'admin',
    wallet: false,
    schema: { body: OffboardBody, response: { 200: OffboardResult } },
    retiredReplay: (req, deps) =>
      retiredCredentialAccount(deps.db, deps.clock, req.headers.authorization, req.ip),
    handler: async (ctx) => {
      const { deps } = ctx;
      const actor = actorOf(ctx);
      const accountId = actor.principal.accountId;
      const request = {
        confirm_wallet_address: ctx.body.confirm_wallet_address,
        reason: ctx.body.reason ?? OFFBOARD_DEFAULT_REASON,
      };
      // Refuse a wrong confirmation before asking any chain; the transaction checks it again.
      await checkOffboardConfirmation(deps.db, accountId, request.confirm_wallet_address);
      const reads = await readOffboardChainState(deps, accountId, ctx.deadline);
      const result = await ctx.mutate(async (tx) => ({
        status: 200,
        body: await offboardAccount(tx, deps, actor, request, reads),
        headers: { 'cache-control': 'no-store' },
      }));
      // Committed: this process forgets the account's credentials now; the others hear the NOTIFY.
      deps.credentialCache?.invalidate(accountId);
      return result;
    },
  }),
];
