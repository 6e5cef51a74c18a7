import { Type, type TSchema } from 'typebox';
import { requirePrincipal } from '../../core/http/actor.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { buildAccountExport, EXPORT_ARRAY_BOUND } from './export.ts';

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
        ctx.deps.config.statements.s3 !== null,
      );
      return { status: 200, body, headers: { 'cache-control': 'no-store' } };
    },
  }),
];
