// Panic: an account switches its own execution off at once (supervisor) and back on (admin).

import { Type, type TSchema } from 'typebox';
import { actorOf } from '../../core/http/actor.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { SwitchViewSchema } from './schemas.ts';
import { panicAccount, switchesChanged, SWITCH_REASON_MAX, unpanicAccount } from './service.ts';

const TAGS = ['account'];
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const AccountSwitchState = Type.Object(
  {
    account_id: Type.String(),
    execution_enabled: Type.Boolean({
      description: 'False while the environment or the account (panic or operator) is switched off.',
    }),
    panic: Nullable(SwitchViewSchema),
    switches: Type.Array(SwitchViewSchema, {
      description:
        'Every switch that is off and touches the account: environment, account, its wallets, every venue.',
    }),
  },
  { additionalProperties: false },
);

const PanicBody = Nullable(
  Type.Object(
    {
      reason: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: SWITCH_REASON_MAX,
          description: 'Shown to callers refused while the panic lasts.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);

// OpenAPI examples: an account whose supervisor key panics, then lifts the panic.
const ACCOUNT_ID = 'acc_7k2m9q4x1c8v5n3b6z0d';
const PANIC_REASON = 'Unexpected spend from the trading agent; investigating.';
const PANIC_VIEW = {
  scope: 'account' as const,
  target: ACCOUNT_ID,
  source: 'panic' as const,
  reason: PANIC_REASON,
  set_by: 'key:key_3h8r1t6w0p4y9s2f5j7l',
  set_at: '2026-03-14T11:20:05.761Z',
};
const PANICKED = {
  account_id: ACCOUNT_ID,
  execution_enabled: false,
  panic: PANIC_VIEW,
  switches: [PANIC_VIEW],
};

export const switchesRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'POST',
    url: '/v1/account/panic',
    operationId: 'panicAccount',
    summary: "Switch execution off for the caller's account at once",
    description:
      'Every executing route of the account (conversion intents, prediction-market orders, hosted credential ' +
      'intake…) then answers 403 EXECUTION_DISABLED naming the panic and its reason; reads, cancels, revocations ' +
      'and checks keep working. The body and its `reason` are optional. Already panicked: nothing changes (the ' +
      'first panic stands) and the answer is the same. Effective at once in this process and within two ' +
      'seconds in every other. DELETE (admin) switches execution back on.',
    tags: TAGS,
    class: 'bearer',
    scope: 'supervisor',
    wallet: false,
    schema: { body: PanicBody, response: { 200: AccountSwitchState } },
    docs: {
      errors: [],
      responses: {
        200: "The account's switches: execution off, `panic` set (the first panic's, if it was already on).",
      },
      example: { body: { reason: PANIC_REASON }, status: 200, response: PANICKED },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      const result = await ctx.mutate(async (tx) => ({
        status: 200,
        body: await panicAccount(tx, ctx.deps.clock, actor, ctx.body?.reason),
      }));
      switchesChanged(); // committed: this process's cached answers are stale
      return result;
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/v1/account/panic',
    operationId: 'unpanicAccount',
    summary: "Switch the account's execution back on after a panic",
    description:
      "Lifts the account's own panic. A switch an operator set on the account, a wallet, a venue or the " +
      'environment stays (listed in `switches`; `execution_enabled` says whether the account may execute). Not ' +
      'panicked: nothing changes.',
    tags: TAGS,
    class: 'bearer',
    scope: 'admin',
    wallet: false,
    schema: { response: { 200: AccountSwitchState } },
    docs: {
      errors: [],
      responses: {
        200: "The account's switches: `panic` null; an operator's switches, if any, stay listed.",
      },
      example: {
        status: 200,
        response: { account_id: ACCOUNT_ID, execution_enabled: true, panic: null, switches: [] },
      },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      const result = await ctx.mutate(async (tx) => ({
        status: 200,
        body: await unpanicAccount(tx, ctx.deps.clock, actor),
      }));
      switchesChanged();
      return result;
    },
  }),
];
