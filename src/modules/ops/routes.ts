// The operator surface under /v1/ops/: only the operator token opens it (src/core/http/register.ts),
// never an account credential. The same controls are on the command line (`purser ops`).

import { Type, type Static, type TSchema } from 'typebox';
import { isoTime, isoTimeOrNull, jsonColumn } from '../../core/account-part.ts';
import { AppError, notFound } from '../../core/errors/app-error.ts';
import { afterCommit } from '../../core/db/database.ts';
import { jobQueueStats } from '../../core/jobs/index.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { formatUsd, parseUsd, USD_PATTERN } from '../../core/money.ts';
import { accountsPage, findAccountByAddress, findAccountById } from '../account/index.ts';
import { recordAudit } from '../audit/index.ts';
import {
  adjustDrift,
  DRIFT_EXAMPLE,
  DriftList,
  DriftListQuery,
  driftsPage,
  DriftSchema,
  unresolvedDrifts,
  type DriftView,
} from '../chainwatch/index.ts';
import {
  billingOverview,
  formatBalanceUsd,
  readAccountCaps,
  setAccountPrepaidCap,
  setMeteringEnforced,
  setPrepaidCap,
} from '../billing/index.ts';
import { eventsOfKind } from '../events/index.ts';
import { FEATURE_REQUEST_STATUSES } from '../feedback/index.ts';
import { readPrepaidBalances } from '../ledger/index.ts';
import { setFeatureRequestStatus } from '../feedback/service.ts';
import {
  listSwitches,
  setSwitch,
  SWITCH_REASON_MAX,
  SWITCH_SCOPES,
  SWITCH_VENUES,
  switchesChanged,
  SwitchViewSchema,
} from '../switches/index.ts';

const TAGS = ['operator'];

/** Accounts per page of GET /v1/ops/accounts, at most. */
export const OPS_ACCOUNTS_MAX_LIMIT = 200;

const AccountsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: OPS_ACCOUNTS_MAX_LIMIT, default: 50 })),
    cursor: Type.Optional(
      Type.String({ pattern: '^acc_[0-9a-z]{1,64}$', description: 'The last id of the page before.' }),
    ),
  },
  { additionalProperties: false },
);

const AccountList = Type.Object(
  {
    accounts: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          address: Type.String(),
          kind: Type.String(),
          test_fixture: Type.Boolean({
            description: 'A development test-fixture account (purged after 7 days).',
          }),
          created_at: Type.String({ format: 'date-time' }),
          offboarded_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
          prepaid_balance_usd: Type.String({
            description: 'The posted prepaid balance (0 when never topped up).',
          }),
          prepaid_cap_usd: Type.Union([Type.String(), Type.Null()], {
            description: "The account's own prepaid cap; null: the default cap applies.",
          }),
        },
        { additionalProperties: false },
      ),
    ),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false, title: 'OpsAccountList' },
);

const QueueList = Type.Object(
  {
    as_of: Type.String({ format: 'date-time' }),
    queues: Type.Array(
      Type.Object(
        {
          name: Type.String({ description: 'The job name (src/jobs.ts lists them).' }),
          waiting: Type.Integer({ description: 'Due now and not yet taken by a worker.' }),
          scheduled: Type.Integer({ description: "Due later: a retry's backoff, a continuation's time." }),
          running: Type.Integer({ description: 'Held by a worker now.' }),
          failed_last_day: Type.Integer({ description: 'Failed for good in the last 24 hours.' }),
          oldest_waiting_seconds: Type.Number({
            description: 'How long the oldest due job has waited (0 when none is due).',
          }),
        },
        { additionalProperties: false },
      ),
      { description: 'Every job name with a job waiting, scheduled, running or failed in the last day.' },
    ),
  },
  { additionalProperties: false, title: 'OpsQueueList' },
);

/** Alerts per answer of GET /v1/ops/alerts, at most; and how far back security alerts go by default. */
export const OPS_ALERTS_MAX_LIMIT = 200;
const OPS_ALERTS_DEFAULT_LIMIT = 100;
const OPS_ALERTS_DEFAULT_WINDOW_MS = 7 * 24 * 3_600_000;

const AlertsQuery = Type.Object(
  {
    since: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'Security alerts raised at or after this time (default: 7 days ago). Unresolved drifts are ' +
          'listed whatever their age.',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: OPS_ALERTS_MAX_LIMIT, default: OPS_ALERTS_DEFAULT_LIMIT }),
    ),
  },
  { additionalProperties: false },
);

const Severity = Type.Union([Type.Literal('warning'), Type.Literal('critical')], {
  description: 'critical: a security alert or an open drift; warning: a suspected drift.',
});

/** The fields every alert has. */
const alertFields = (id: string, raisedAt: string) => ({
  id: Type.String({ description: id }),
  account_id: Type.String(),
  raised_at: Type.String({ format: 'date-time', description: raisedAt }),
  severity: Severity,
  summary: Type.String({ description: 'What happened, in one sentence.' }),
  remediation: Type.String({ description: 'What to do about it.' }),
});

const SecurityAlert = Type.Object(
  {
    kind: Type.Literal('security'),
    ...alertFields('The security.alert event id (evt_…).', "The event's time."),
    detail: Type.Object(
      {
        credential_id: Type.String({
          description: "The venue credential's id (the account's GET /v1/pm/credentials lists it).",
        }),
        venue: Type.String(),
        reason: Type.String({ description: 'usage_burst or new_network (docs/events.md, security.alert).' }),
        operation: Type.String(),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, title: 'OpsSecurityAlert' },
);

const DriftAlert = Type.Object(
  {
    kind: Type.Literal('drift'),
    ...alertFields('The drift id (drf_…).', 'When the drift was raised; a suspected one: when first seen.'),
    detail: DriftSchema,
  },
  { additionalProperties: false, title: 'OpsDriftAlert' },
);

const AlertList = Type.Object(
  {
    as_of: Type.String({ format: 'date-time' }),
    alerts: Type.Array(Type.Union([SecurityAlert, DriftAlert]), {
      description: 'Newest first, at most `limit`.',
    }),
    counts: Type.Object(
      {
        security: Type.Integer({ description: 'Security alerts since `since`, in all.' }),
        drift: Type.Integer({ description: 'Unresolved (open and suspected) drifts, in all.' }),
      },
      {
        additionalProperties: false,
        description: 'How many there are in all: more than `alerts` holds when `limit` cut the list.',
      },
    ),
  },
  { additionalProperties: false, title: 'OpsAlertList' },
);

type Alert = Static<typeof SecurityAlert> | Static<typeof DriftAlert>;

/**
 * What the operator does about a security alert. The event's own remediation speaks to the account
 * (its webhook carried it); this one speaks to the operator.
 */
const CREDENTIAL_REMEDIATION =
  'Ask the account whether the use was its own; if not, it revokes the credential (DELETE ' +
  '/v1/pm/credentials/{id}) and rotates the key at the venue. Meanwhile an account switch (PUT ' +
  "/v1/ops/switches) stops the account's executing routes.";

/** A security.alert event as an alert (docs/events.md: its payload). */
function securityAlert(event: {
  id: string;
  account_id: string;
  created_at: Date | string;
  payload: unknown;
}): Alert {
  const payload = (jsonColumn(event.payload) ?? {}) as Record<string, unknown>;
  const text = (key: string) => (typeof payload[key] === 'string' ? payload[key] : '');
  const observed = (payload['detail'] ?? {}) as Record<string, unknown>;
  const detail = {
    credential_id: text('credential_id'),
    venue: text('venue'),
    reason: text('reason'),
    operation: text('operation'),
  };
  const what =
    detail.reason === 'usage_burst'
      ? `was used in a burst far above its own rate (${String(observed['uses_this_minute'] ?? '?')} uses in a minute)`
      : detail.reason === 'new_network'
        ? `was used from a client network it was never used from (${String(observed['network'] ?? '?')})`
        : `was used anomalously (${detail.reason || 'no reason given'})`;
  return {
    kind: 'security',
    id: event.id,
    account_id: event.account_id,
    raised_at: isoTime(event.created_at),
    severity: 'critical',
    summary: `The ${detail.venue || 'venue'} credential ${detail.credential_id} ${what}, for ${detail.operation || 'an operation'}.`,
    remediation: CREDENTIAL_REMEDIATION,
    detail,
  };
}

/** An unresolved drift as an alert: critical once raised, a warning while only suspected. */
function driftAlert(accountId: string, drift: DriftView): Alert {
  const open = drift.state === 'open';
  return {
    kind: 'drift',
    id: drift.id,
    account_id: accountId,
    raised_at: drift.raised_at ?? drift.first_seen_at,
    severity: open ? 'critical' : 'warning',
    summary:
      `The books of wallet ${drift.wallet} ${open ? 'differ' : 'may differ'} from chain ${drift.chain_id} ` +
      `for ${drift.asset}: chain − ledger = ${drift.difference} at block ${drift.block}` +
      `${open ? '' : ' (suspected: not confirmed by reconciliation yet)'}.`,
    remediation: open
      ? 'Find the cause (docs/operations.md, "Drifts between books and chain"); it clears when the books ' +
        'agree with the chain again, or book an adjustment with a reason (POST /v1/ops/drifts/{id}/adjust).'
      : 'Nothing to do yet: the next reconciliation raises it, or forgets it if the books agree with the chain.',
    detail: drift,
  };
}

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

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const SwitchList = Type.Object(
  { switches: Type.Array(SwitchViewSchema), venues: Type.Array(Type.String()) },
  { additionalProperties: false },
);

const SwitchBody = Type.Object(
  {
    scope: Type.Enum(SWITCH_SCOPES),
    target: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'None for the environment; a venue name, a 0x address or an account id.',
      }),
    ),
    enabled: Type.Boolean(),
    reason: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: SWITCH_REASON_MAX,
        description: 'Shown to callers while the switch is off; required when switching off.',
      }),
    ),
  },
  { additionalProperties: false },
);

const SwitchStateSchema = Type.Object(
  {
    scope: Type.Enum(SWITCH_SCOPES),
    target: Nullable(Type.String()),
    enabled: Type.Boolean(),
    reason: Nullable(Type.String()),
    set_by: Nullable(Type.String()),
    set_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

const OVERVIEW_EXAMPLE = {
  metering_enforced: true,
  prepaid_float_cap_usd: '1000000',
  prepaid_account_cap_default_usd: '1000',
  prepaid_float_usd: '48210.5',
  fee_revenue_usd: '1273.45',
  accounts_with_own_cap: 3,
};
const TOO_LARGE = {
  code: 'INVALID_REQUEST',
  when: 'a cap exceeds the largest USD amount the service holds (10^12 USD)',
} as const;
const ACCOUNT_EXAMPLE = 'acc_4h8s2j6w0e9r3t7y1u5i';
const SWITCH_REASON_EXAMPLE = 'KyberSwap router incident: routing paused until the vendor confirms a fix.';

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
    docs: {
      errors: [],
      responses: { 200: 'The billing settings in force and the platform totals.' },
      example: { status: 200, response: OVERVIEW_EXAMPLE },
    },
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
    docs: {
      errors: [TOO_LARGE],
      responses: {
        200: 'The settings are changed: the billing settings now in force and the platform totals.',
      },
      example: {
        body: { prepaid_float_cap_usd: '2000000' },
        status: 200,
        response: { ...OVERVIEW_EXAMPLE, prepaid_float_cap_usd: '2000000' },
      },
    },
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
    description:
      "`{id}` is the account id (acc_…) or the account's wallet address (0x…). null: the default cap.",
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
    docs: {
      errors: [{ code: 'NOT_FOUND', when: 'no account has this id or wallet address' }, TOO_LARGE],
      responses: { 200: "The account's cap is set: its id and the cap (null: the default applies)." },
      example: {
        params: { id: ACCOUNT_EXAMPLE },
        body: { cap_usd: '5000' },
        status: 200,
        response: { account_id: ACCOUNT_EXAMPLE, cap_usd: '5000' },
      },
    },
    handler: (ctx) =>
      ctx.mutate(async (tx) => {
        const ref = ctx.params.id;
        const account = /^0x[0-9a-fA-F]{40}$/.test(ref)
          ? await findAccountByAddress(tx, ref.toLowerCase())
          : await findAccountById(tx, ref);
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
  defineRoute({
    method: 'GET',
    url: '/v1/ops/switches',
    operationId: 'opsListSwitches',
    summary: 'Every execution switch that is off (operator)',
    description:
      'Each switch that is off: its scope (environment, venue, wallet, account), target, source (operator, or ' +
      'panic: the account itself), the reason shown to callers, who set it and when. `venues` lists the names ' +
      'a venue switch accepts.',
    tags: TAGS,
    class: 'operator',
    wallet: false,
    schema: { response: { 200: SwitchList } },
    docs: {
      errors: [],
      responses: { 200: 'Every switch that is off, and the venue names a venue switch accepts.' },
      example: {
        status: 200,
        response: {
          switches: [
            {
              scope: 'venue',
              target: 'kyberswap',
              source: 'operator',
              reason: SWITCH_REASON_EXAMPLE,
              set_by: 'operator',
              set_at: '2026-03-14T09:30:00.000Z',
            },
          ],
          venues: [...SWITCH_VENUES],
        },
      },
    },
    handler: async ({ deps }) => ({
      status: 200,
      body: { switches: await listSwitches(deps.db), venues: [...SWITCH_VENUES] },
    }),
  }),
  defineRoute({
    method: 'PUT',
    url: '/v1/ops/switches',
    operationId: 'opsPutSwitch',
    summary: 'Switch execution off or on for the environment, a venue, a wallet or an account (operator)',
    description:
      'Switched off, every executing route of what it covers answers 403 EXECUTION_DISABLED naming the switch ' +
      'and `reason` (required when switching off); reads, cancels and checks keep working. `target`: none for ' +
      `the environment, one of ${SWITCH_VENUES.join(', ')} for a venue (credential_intake: hosted venue-credential ` +
      'intake), a 0x address for a wallet, an account id for an account. Takes effect at once in this process ' +
      "and within two seconds in the others. An account's own panic is not lifted here (DELETE /v1/account/panic).",
    tags: TAGS,
    class: 'operator',
    wallet: false,
    schema: { body: SwitchBody, response: { 200: SwitchStateSchema } },
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when:
            'switching off without a reason, or a target missing, unknown or not of the form its scope takes ' +
            '(none, a venue name, a 0x address, an account id)',
        },
        { code: 'NOT_FOUND', when: 'an account switch names an account that does not exist' },
      ],
      responses: {
        200: "The switch's state now: off with its reason, who set it and when, or on (those null).",
      },
      example: {
        body: { scope: 'venue', target: 'kyberswap', enabled: false, reason: SWITCH_REASON_EXAMPLE },
        status: 200,
        response: {
          scope: 'venue',
          target: 'kyberswap',
          enabled: false,
          reason: SWITCH_REASON_EXAMPLE,
          set_by: 'operator',
          set_at: '2026-03-14T09:30:00.000Z',
        },
      },
    },
    handler: async (ctx) => {
      const result = await ctx.mutate(async (tx) => {
        const state = await setSwitch(tx, ctx.deps.clock, ctx.body, {
          clientIp: ctx.clientIp,
          userAgent: ctx.userAgent,
        });
        // The flip's own line, once committed: a warning when execution stops.
        afterCommit(tx, () => {
          const line = { event: 'switch.flipped', ...state };
          if (state.enabled) ctx.req.log.info(line, 'switch.flipped');
          else ctx.req.log.warn(line, 'switch.flipped');
        });
        return { status: 200, body: state };
      });
      switchesChanged(); // committed: this process's cached answers are stale
      return result;
    },
  }),
  defineRoute({
    method: 'PUT',
    url: '/v1/ops/feature-requests/{id}',
    operationId: 'opsPutFeatureRequestStatus',
    summary: "Change a feature request's status (operator)",
    description: 'The new status shows on GET /v1/feedback at once. 404 for an unknown id.',
    tags: TAGS,
    class: 'operator',
    wallet: false,
    schema: {
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
      body: Type.Object({ status: Type.Enum(FEATURE_REQUEST_STATUSES) }, { additionalProperties: false }),
      response: {
        200: Type.Object(
          {
            id: Type.String(),
            title: Type.String(),
            status: Type.String(),
            previous_status: Type.String(),
            updated_at: Type.String({ format: 'date-time' }),
          },
          { additionalProperties: false },
        ),
      },
    },
    docs: {
      errors: [{ code: 'NOT_FOUND', when: 'no feature request has this id' }],
      responses: { 200: 'The status is changed: the feature request with its new and previous status.' },
      example: {
        params: { id: 'fr_9d2f5g8h1j4k7l0z3x6c' },
        body: { status: 'planned' },
        status: 200,
        response: {
          id: 'fr_9d2f5g8h1j4k7l0z3x6c',
          title: 'Webhook deliveries for statement exports',
          status: 'planned',
          previous_status: 'open',
          updated_at: '2026-03-14T09:30:00.000Z',
        },
      },
    },
    handler: (ctx) =>
      ctx.mutate(async (tx) => {
        const changed = await setFeatureRequestStatus(tx, ctx.deps.clock, ctx.params.id, ctx.body.status, {
          clientIp: ctx.clientIp,
          userAgent: ctx.userAgent,
        });
        return {
          status: 200,
          body: {
            id: changed.id,
            title: changed.title,
            status: changed.status,
            previous_status: changed.previousStatus,
            updated_at: changed.updatedAt.toISOString(),
          },
        };
      }),
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/ops/accounts',
    operationId: 'opsListAccounts',
    summary: 'Accounts, newest first, with their prepaid balance and own cap (operator)',
    description:
      'A page of accounts (newest first) with what the operator sets or watches per account: the posted ' +
      'prepaid balance and the account’s own prepaid cap (null: the default applies; set it with PUT ' +
      '/v1/ops/accounts/{id}/prepaid-cap). Offboarded accounts stay listed with their offboarded_at.',
    tags: TAGS,
    class: 'operator',
    wallet: false,
    schema: { querystring: AccountsQuery, response: { 200: AccountList } },
    docs: {
      errors: [],
      responses: { 200: 'A page of accounts and the cursor of the next one (null at the end).' },
      example: {
        query: { limit: 50 },
        status: 200,
        response: {
          accounts: [
            {
              id: ACCOUNT_EXAMPLE,
              address: '0x9bf338818ba7cf5c658d5182349c51c4d4528579',
              kind: 'agent',
              test_fixture: false,
              created_at: '2026-12-01T09:30:00.000Z',
              offboarded_at: null,
              prepaid_balance_usd: '12.500000',
              prepaid_cap_usd: null,
            },
          ],
          next_cursor: null,
        },
      },
    },
    handler: async (ctx) => {
      const limit = ctx.query.limit ?? 50;
      const rows = await accountsPage(ctx.deps.db, ctx.query.cursor ?? null, limit + 1);
      const page = rows.slice(0, limit);
      const ids = page.map((a) => a.id);
      const [balances, caps] = await Promise.all([
        readPrepaidBalances(ctx.deps.db, ids),
        readAccountCaps(ctx.deps.db, ids),
      ]);
      return {
        status: 200,
        body: {
          accounts: page.map((a) => {
            const cap = caps.get(a.id);
            return {
              id: a.id,
              address: a.address,
              kind: a.kind,
              test_fixture: a.is_test_fixture,
              created_at: isoTime(a.created_at),
              offboarded_at: isoTimeOrNull(a.offboarded_at),
              prepaid_balance_usd: formatBalanceUsd(balances.get(a.id) ?? 0n),
              prepaid_cap_usd: cap === undefined ? null : formatUsd(cap),
            };
          }),
          next_cursor: rows.length > limit ? (page[page.length - 1]?.id ?? null) : null,
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/ops/queues',
    operationId: 'opsListJobQueues',
    summary:
      'The job queues: what waits, how long the oldest has waited, what runs and what failed (operator)',
    description:
      'One line per job name with work: jobs due now and not yet taken, jobs due later, jobs a worker ' +
      'holds, jobs that failed for good in the last 24 hours, and the age of the oldest due job. A queue ' +
      'whose oldest job keeps ageing has no worker taking it (RUN_WORKERS, or the executor is not ' +
      'configured). The same figures are metrics (purser_jobs_*).',
    tags: TAGS,
    class: 'operator',
    wallet: false,
    schema: { response: { 200: QueueList } },
    docs: {
      errors: [],
      responses: { 200: 'The queues with work, by job name.' },
      example: {
        status: 200,
        response: {
          as_of: '2026-12-06T12:00:00.000Z',
          queues: [
            {
              name: 'intents.execute',
              waiting: 3,
              scheduled: 1,
              running: 2,
              failed_last_day: 0,
              oldest_waiting_seconds: 1.5,
            },
          ],
        },
      },
    },
    handler: async (ctx) => {
      const now = ctx.deps.clock.now();
      const stats = await jobQueueStats(ctx.deps.db, now);
      return {
        status: 200,
        body: {
          as_of: now.toISOString(),
          queues: stats.map((q) => ({
            name: q.name,
            waiting: q.waiting,
            scheduled: q.scheduled,
            running: q.running,
            failed_last_day: q.failedLastDay,
            oldest_waiting_seconds: q.oldestWaitingSeconds,
          })),
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/ops/alerts',
    operationId: 'opsListAlerts',
    summary: 'Security alerts and unresolved drifts, across every account, newest first (operator)',
    description:
      'What needs an operator, in one list: each `security.alert` event (a venue credential used in a ' +
      'burst or from a new client network; docs/events.md) raised since `since` (default: 7 days ago), ' +
      'and every drift between books and chain not resolved yet, whatever its age (`open`: critical; ' +
      '`suspected`: a warning until reconciliation confirms or forgets it). Each alert has its account, ' +
      'a one-sentence summary, what to do and the details; `counts` says how many there are in all ' +
      'when `limit` cut the list. Nothing here changes anything.',
    tags: TAGS,
    class: 'operator',
    wallet: false,
    schema: { querystring: AlertsQuery, response: { 200: AlertList } },
    docs: {
      errors: [],
      responses: { 200: 'The alerts, newest first, and how many of each kind there are in all.' },
      example: {
        query: { since: '2026-11-29T12:00:00.000Z', limit: 100 },
        status: 200,
        response: {
          as_of: '2026-12-06T12:00:00.000Z',
          alerts: [
            {
              kind: 'security',
              id: 'evt_6n1q8s3u0w5y2a7c4e9g',
              account_id: ACCOUNT_EXAMPLE,
              raised_at: '2026-12-06T11:42:10.000Z',
              severity: 'critical',
              summary:
                'The polymarket credential 3f2b8c1e-7d4a-4e9b-a6c5-2d8f1b0e9a47 was used from a client network it was ' +
                'never used from (203.0.113.0/24), for order.place.',
              remediation: CREDENTIAL_REMEDIATION,
              detail: {
                credential_id: '3f2b8c1e-7d4a-4e9b-a6c5-2d8f1b0e9a47',
                venue: 'polymarket',
                reason: 'new_network',
                operation: 'order.place',
              },
            },
            driftAlert(ACCOUNT_EXAMPLE, DRIFT_EXAMPLE),
          ],
          counts: { security: 1, drift: 1 },
        },
      },
    },
    handler: async (ctx) => {
      const now = ctx.deps.clock.now();
      const limit = ctx.query.limit ?? OPS_ALERTS_DEFAULT_LIMIT;
      const since = ctx.query.since
        ? new Date(ctx.query.since)
        : new Date(now.getTime() - OPS_ALERTS_DEFAULT_WINDOW_MS);
      const security = await eventsOfKind(ctx.deps.db, 'security.alert', since, limit);
      const drifts = await unresolvedDrifts(ctx.deps.db, limit);
      const alerts = [
        ...security.events.map(securityAlert),
        ...drifts.drifts.map((d) => driftAlert(d.accountId, d.drift)),
      ]
        .sort((a, b) => b.raised_at.localeCompare(a.raised_at) || b.id.localeCompare(a.id))
        .slice(0, limit);
      return {
        status: 200,
        body: {
          as_of: now.toISOString(),
          alerts,
          counts: { security: security.total, drift: drifts.total },
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/ops/drifts',
    operationId: 'opsListLedgerDrifts',
    summary: 'Differences between books and chain, across every account (operator)',
    description:
      'What reconciliation found (docs/ledger.md, "Reconciliation and drift"): `open` (the default) lists the ' +
      'raised drifts no one has resolved. An open drift is cleared by the books agreeing with the chain ' +
      'again, or by an adjustment with a reason (POST /v1/ops/drifts/{id}/adjust).',
    tags: TAGS,
    class: 'operator',
    wallet: false,
    schema: { querystring: DriftListQuery, response: { 200: DriftList } },
    docs: {
      errors: [],
      responses: { 200: 'A page of drifts and the cursor of the next one (null at the end).' },
      example: {
        query: { state: 'open' },
        status: 200,
        response: { drifts: [DRIFT_EXAMPLE], next_cursor: null },
      },
    },
    handler: async (ctx) => ({ status: 200, body: await driftsPage(ctx.deps.db, null, ctx.query) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/ops/drifts/{id}/adjust',
    operationId: 'opsAdjustLedgerDrift',
    summary: 'Book an explained adjustment for an open drift, with the reason (operator)',
    description:
      "Books the drift's difference into the wallet against `external:<chain>` (kind `chain.adjustment`, " +
      'the reason in its memo), resolves the drift (`adjusted`), records the audit fact `ledger.adjusted` and ' +
      'emits `ledger.drift_resolved`. Only an open drift can be adjusted: a suspected or resolved one is 409.',
    tags: TAGS,
    class: 'operator',
    wallet: false,
    schema: {
      params: Type.Object(
        { id: Type.String({ pattern: '^drf_[0-9a-z]{1,64}$' }) },
        { additionalProperties: false },
      ),
      body: Type.Object(
        {
          reason: Type.String({
            minLength: 3,
            maxLength: 500,
            description: 'Why the books move: kept in the ledger memo and the audit fact.',
          }),
        },
        { additionalProperties: false },
      ),
      response: { 200: DriftSchema },
    },
    docs: {
      errors: [
        { code: 'NOT_FOUND', when: 'no drift has this id' },
        { code: 'CONFLICT', when: 'the drift is only suspected, or resolved already' },
      ],
      responses: { 200: 'The drift, resolved, with the adjustment group.' },
      example: {
        params: { id: DRIFT_EXAMPLE.id },
        body: { reason: 'Tokens airdropped to the wallet by the issuer' },
        status: 200,
        response: {
          ...DRIFT_EXAMPLE,
          state: 'resolved',
          resolved_at: '2026-03-02T10:00:00.000Z',
          resolution: 'adjusted',
          reason: 'Tokens airdropped to the wallet by the issuer',
          adjustment_group_id: 'lgr_4f8h2k6m0p3r7t1v5x9z',
        },
      },
    },
    handler: (ctx) =>
      ctx.mutate(async (tx) => ({
        status: 200,
        body: await adjustDrift(tx, ctx.deps.clock, {
          driftId: ctx.params.id,
          reason: ctx.body.reason,
          actor: 'operator',
          network: { clientIp: ctx.clientIp, userAgent: ctx.userAgent },
          registry: ctx.deps.tokenRegistry,
        }),
      })),
  }),
];
