// The operator surface under /v1/ops/: only the operator token opens it (src/core/http/register.ts),
// never an account credential. The same controls are on the command line (`purser ops`).

import { Type } from 'typebox';
import { AppError, notFound } from '../../core/errors/app-error.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { parseUsd, USD_PATTERN } from '../../core/money.ts';
import { findAccountById } from '../account/index.ts';
import { recordAudit } from '../audit/index.ts';
import {
  billingOverview,
  setAccountPrepaidCap,
  setMeteringEnforced,
  setPrepaidCap,
} from '../billing/index.ts';

const TAGS = ['operator'];
const UsdOrNull = Type.Union([Type.String({ pattern: USD_PATTERN }), Type.Null()]);

const Overview = Type.Object(
  {
    metering_enforced: Type.Boolean(),
    prepaid_float_cap_usd: Type.String(),
    prepaid_account_cap_default_usd: Type.String(),
    prepaid_float_usd: Type.String(),
    fee_revenue_usd: Type.String(),
    accounts_with_own_cap: Type.Integer(),
  },
  { additionalProperties: false },
);

const BillingSettingsBody = Type.Object(
  {
    metering_enforced: Type.Optional(
      Type.Union([Type.Boolean(), Type.Null()], { description: 'null: back to METERING_ENFORCED.' }),
    ),
    prepaid_float_cap_usd: Type.Optional(UsdOrNull),
    prepaid_account_cap_default_usd: Type.Optional(UsdOrNull),
  },
  { additionalProperties: false, minProperties: 1 },
);

const AccountCapBody = Type.Object(
  {
    cap_usd: Type.Union([Type.String({ pattern: USD_PATTERN }), Type.Null()], {
      description: 'null: the default cap.',
    }),
  },
  { additionalProperties: false },
);

function micro(value: string | null): bigint | null {
  if (value === null) return null;
  const parsed = parseUsd(value);
  if (parsed === null) throw new AppError('INVALID_REQUEST', `Not a USD amount: ${value}.`);
  return parsed;
}

export const opsRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'GET',
    url: '/v1/ops/billing',
    operationId: 'opsGetBilling',
    summary: 'Billing settings in force and platform totals (operator)',
    tags: TAGS,
    class: 'operator',
    wallet: false,
    schema: { response: { 200: Overview } },
    handler: async ({ deps }) => ({ status: 200, body: await billingOverview(deps.db, deps.config) }),
  }),
  defineRoute({
    method: 'PUT',
    url: '/v1/ops/billing',
    operationId: 'opsPutBilling',
    summary: 'Switch metering; set the prepaid float cap and the default account cap (operator)',
    description:
      'Each field given replaces the setting in force; null returns it to the configured default. Metering ' +
      'switches take effect within two seconds on every process.',
    tags: TAGS,
    class: 'operator',
    wallet: false,
    schema: { body: BillingSettingsBody, response: { 200: Overview } },
    handler: (ctx) =>
      ctx.mutate(async (tx) => {
        const now = ctx.deps.clock.now();
        const b = ctx.body;
        if (b.metering_enforced !== undefined)
          await setMeteringEnforced(tx, b.metering_enforced, 'operator', now);
        if (b.prepaid_float_cap_usd !== undefined)
          await setPrepaidCap(tx, 'float', micro(b.prepaid_float_cap_usd), 'operator', now);
        if (b.prepaid_account_cap_default_usd !== undefined)
          await setPrepaidCap(
            tx,
            'account_default',
            micro(b.prepaid_account_cap_default_usd),
            'operator',
            now,
          );
        await recordAudit(tx, ctx.deps.clock, {
          accountId: null,
          actor: 'operator',
          action: 'ops.billing_settings',
          details: { ...b },
          network: { clientIp: ctx.clientIp, userAgent: ctx.userAgent },
        });
        return { status: 200, body: await billingOverview(tx, ctx.deps.config) };
      }),
  }),
  defineRoute({
    method: 'PUT',
    url: '/v1/ops/accounts/{id}/prepaid-cap',
    operationId: 'opsPutAccountPrepaidCap',
    summary: "Set one account's prepaid cap (operator)",
    tags: TAGS,
    class: 'operator',
    wallet: false,
    schema: {
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
      body: AccountCapBody,
      response: {
        200: Type.Object(
          { account_id: Type.String(), cap_usd: Type.Union([Type.String(), Type.Null()]) },
          { additionalProperties: false },
        ),
      },
    },
    handler: (ctx) =>
      ctx.mutate(async (tx) => {
        const account = await findAccountById(tx, ctx.params.id);
        if (!account) throw notFound(`No account ${ctx.params.id}.`);
        const now = ctx.deps.clock.now();
        await setAccountPrepaidCap(tx, account.id, micro(ctx.body.cap_usd), 'operator', now);
        await recordAudit(tx, ctx.deps.clock, {
          accountId: account.id,
          actor: 'operator',
          action: 'ops.prepaid_cap',
          details: { cap_usd: ctx.body.cap_usd },
          network: { clientIp: ctx.clientIp, userAgent: ctx.userAgent },
        });
        return { status: 200, body: { account_id: account.id, cap_usd: ctx.body.cap_usd } };
      }),
  }),
];
