import { Type, type TSchema } from 'typebox';
import { actorOf, requirePrincipal } from '../core/http/actor.ts';
import { defineRoute, type RouteDefinition } from '../core/http/route-table.ts';
import { buildAccountExport, EXPORT_ARRAY_BOUND } from './export.ts';
import {
  checkOffboardConfirmation,
  offboardAccount,
  OFFBOARD_DEFAULT_REASON,
  OFFBOARD_REASON_MAX,
  OFFBOARD_RETAINED,
  OFFBOARD_SCHEDULED,
  readOffboardChainState,
  retiredCredentialAccount,
  offboardNote,
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
    watched_wallets: Type.Array(
      Type.Object(
        {
          chain_id: Type.Integer(),
          address: Type.String(),
          role: Type.String({ description: 'policy, pm_funder or executor: why the wallet is watched.' }),
          opened_block: Nullable(
            Type.String({ description: 'The block of its opening; null until booked.' }),
          ),
          next_block: Nullable(Type.String({ description: "The next block the chain's watcher reads." })),
        },
        { additionalProperties: false },
      ),
      { description: 'The wallets whose books the chain watcher keeps equal to the chain (docs/ledger.md).' },
    ),
  },
  { additionalProperties: false, title: 'AccountExport' },
);

const OffboardBody = Type.Object(
  {
    confirm_wallet_address: Type.String({
      pattern: '^0x[0-9a-fA-F]{40}$',
      description: "The account's own wallet address (any letter case), to confirm.",
    }),
    reason: Type.Optional(Type.String({ maxLength: OFFBOARD_REASON_MAX, default: OFFBOARD_DEFAULT_REASON })),
  },
  { additionalProperties: false, title: 'OffboardRequest' },
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
  { additionalProperties: false, title: 'OffboardResult' },
);

// The examples of the OpenAPI document: an account with one API key, and its offboarding.
const WALLET = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const KERNEL_ACCOUNT = '0x8b3f0c2E4A71D9B56E3c1f0A27D4E89B6C5A1f32';
const KEY_FACTS = {
  key_id: 'key_g0mvy9rdymc7z3y9147q',
  via: 'create',
  created_by: 'session:ses_guki3pj5f55uyvhzl4wk',
  name: 'reporting',
  scopes: ['read'],
  wallets: null,
  allowed_ips: null,
  expires_at: '2026-04-13T09:28:02.117Z',
};
const EXPORT_EXAMPLE = {
  export_version: 1,
  generated_at: '2026-03-14T12:00:31.502Z',
  truncated: [],
  account: {
    address: WALLET.toLowerCase(),
    contact: null,
    kind: 'agent',
    created_at: '2026-03-14T09:27:10.412Z',
    offboarded_at: null,
  },
  api_keys: [
    {
      id: KEY_FACTS.key_id,
      name: 'reporting',
      scopes: ['read'],
      wallets: null,
      allowed_ips: null,
      created_at: '2026-03-14T09:28:02.117Z',
      expires_at: '2026-04-13T09:28:02.117Z',
      revoked_at: null,
      rotated_to: null,
      rotated_from: null,
      created_by: KEY_FACTS.created_by,
    },
  ],
  sessions: [
    {
      id: 'ses_guki3pj5f55uyvhzl4wk',
      created_at: '2026-03-14T09:27:10.412Z',
      expires_at: '2026-03-15T09:27:10.412Z',
      revoked_at: null,
    },
  ],
  policies: [],
  delegations: [],
  intents: [],
  ledger_entries: [],
  payment_credits: [],
  balance: null,
  events: [
    {
      id: 'evt_2jlkm7zu1c00paybmswk',
      kind: 'key.created',
      subject: KEY_FACTS.key_id,
      created_at: '2026-03-14T09:28:02.117Z',
      data: KEY_FACTS,
    },
  ],
  webhooks: { secret_configured: false, failures: [] },
  auto_topup: null,
  venue_credentials: [],
  pm_orders: [],
  pm_positions: [],
  audit_log: [
    {
      id: 'aud_vgb08pfh7dvbn2z5cmkz',
      actor: KEY_FACTS.created_by,
      action: 'key.created',
      subject: KEY_FACTS.key_id,
      details: KEY_FACTS,
      created_at: '2026-03-14T09:28:02.117Z',
      client_ip: '203.0.113.7',
      user_agent: 'node',
    },
  ],
  statements_manifest: { bucket_bound: false, keys: [] },
  watched_wallets: [],
};
const OFFBOARD_EXAMPLE = {
  offboarded: true,
  address: WALLET,
  offboarded_at: '2026-03-20T17:45:09.318Z',
  deleted: {
    api_keys_revoked: 1,
    sessions_revoked: 1,
    credentials_zeroed: 0,
    auto_topup_arrows_removed: 0,
    webhook_secret_removed: true,
    webhook_failures_removed: 0,
    contact_scrubbed: false,
  },
  retained: [...OFFBOARD_RETAINED],
  scheduled: [...OFFBOARD_SCHEDULED],
  delegations_revoked: [
    {
      id: '6f1c2a9e-4b7d-4e3a-9c58-2d0f7b1e8a43',
      account: KERNEL_ACCOUNT,
      uninstall_call: {
        to: KERNEL_ACCOUNT,
        data:
          '0xe6f3d50a025c1e9a070000000000000000000000000000000000000000000000000000000000000000000000000000' +
          '000000000000000000000000000000000000000060000000000000000000000000000000000000000000000000000000' +
          '000000036000000000000000000000000000000000000000000000000000000000000002e00000000000000000000000' +
          '000000000000000000000000000000000000000020000000000000000000000000000000000000000000000000000000' +
          '000000000300000000000000000000000000000000000000000000000000000000000000600000000000000000000000' +
          '0000000000000000000000000000000000000001c0000000000000000000000000000000000000000000000000000000' +
          '0000000240000000000000000000000000000000000000000000000000000000000000013600009a52283276a0ec8740' +
          'df50bf01b28a80d880eaf200000000000000000000000000000000000000000000000000000000000000200000000000' +
          '000000000000000000000000000000000000000000000000000001000000000000000000000000000000000000000000' +
          '000000000000000000002000000000000000000000000000000000000000000000000000000000000000000000000000' +
          '00000000000000833589fcd6edb6e08f4c7c32d4f71b54bda02913095ea7b30000000000000000000000000000000000' +
          '000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000' +
          '0000000000000000000000000000000000000000000000000000a0000000000000000000000000000000000000000000' +
          '000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000' +
          '00000000560000b9f8f524be6ecd8c945b1b87f9ae5c192fdce20f000000000000000000000000000000000000000000' +
          '0000000000000000000000000000000000000000000000000000000000000000000000000000006a27e7400000000000' +
          '0000000000000000000000000000000000000000000000000000000000000000000000002a00026a6f069e2a08c2468e' +
          '7724ab3250cdbfba14d4ff1f9a6c3b7e2d4058a9c1b3e7f6d2a8c4e5b09d170000000000000000000000000000000000' +
          '00000000000000000000000000000000000000000000000000000000000000000000000000',
      },
      invalidate_nonce_call: {
        to: KERNEL_ACCOUNT,
        data: '0x1f1b92e30000000000000000000000000000000000000000000000000000000000000002',
      },
    },
  ],
  note: offboardNote(WALLET),
  cancellation: { authorizations: [] },
};

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
    docs: {
      errors: [],
      responses: { 200: 'Everything the service keeps about the account, as one consistent snapshot.' },
      example: { status: 200, response: EXPORT_EXAMPLE },
    },
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
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when: "confirm_wallet_address is not the account's wallet address (nothing changed)",
        },
        {
          code: 'UNAUTHORIZED',
          when: 'the account is already offboarded (its credentials no longer work)',
        },
      ],
      responses: {
        200: 'The account is retired: what was revoked and deleted, what is kept, and the on-chain calls left to the owner.',
      },
      example: {
        body: { confirm_wallet_address: WALLET, reason: 'agent retired' },
        status: 200,
        response: OFFBOARD_EXAMPLE,
      },
    },
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
