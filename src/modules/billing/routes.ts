import { AppError } from '../../core/errors/app-error.ts';
import { actorOf, requirePrincipal } from '../../core/http/actor.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import {
  PendingSettlement,
  SignedAuthorization,
  toSubmitted,
  type SettlementEffects,
} from '../payments/index.ts';
import { publishedFeeSchedule } from './fees.ts';
import {
  BALANCE_EXAMPLE,
  FEE_SCHEDULE_EXAMPLE,
  TOPUP_AUTHORIZATION_EXAMPLE,
  TOPUP_EXAMPLE,
  TOPUP_TERMS_EXAMPLE,
} from './openapi-examples.ts';
import { formatBalanceUsd, readPrepaidBalance } from './prepaid.ts';
import { BalanceResponse, FeeScheduleResponse, TopupResponse, TopupTermsResponse } from './schemas.ts';
import { meteringEnforced } from './settings.ts';
import { pendingSettlementBody, topUp, topupTerms } from './topups.ts';

/**
 * The balance routes. `effects` are what a settled payment does, per purpose, composed above the
 * modules (src/settlement-effects.ts) and passed in, so billing never imports the modules it serves.
 */
export const billingRoutes = (effects: SettlementEffects): RouteDefinition[] => [
  defineRoute({
    method: 'GET',
    url: '/v1/balance',
    operationId: 'getBalance',
    summary: "The account's prepaid USD balance",
    description:
      'Metered fees are debited from this balance; a fee it does not cover answers 402 PAYMENT_REQUIRED ' +
      'pointing at POST /v1/balance/topups. `balance_usd` is a decimal string with exactly six decimals ' +
      '(micro-USD); an account that never topped up has "0.000000".',
    tags: ['balance'],
    class: 'bearer',
    scope: 'read',
    wallet: false,
    schema: { response: { 200: BalanceResponse } },
    docs: {
      errors: [],
      responses: { 200: 'The prepaid balance, in USD with six decimals.' },
      example: { status: 200, response: BALANCE_EXAMPLE },
    },
    handler: async ({ deps, principal }) => {
      if (!principal) throw new AppError('UNAUTHORIZED', 'This route needs a bearer credential.');
      const { balanceMicro } = await readPrepaidBalance(deps.db, principal.accountId);
      return { status: 200, body: { balance_usd: formatBalanceUsd(balanceMicro), currency: 'USD' } };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/balance/topups/terms',
    operationId: 'getTopupTerms',
    summary: 'What a top-up authorization must say',
    description:
      'The chain, the USDC contract, the EIP-712 domain, types and primary type to sign, the treasury to pay, ' +
      "the smallest top-up and the account's prepaid cap: everything needed to sign the EIP-3009 " +
      'TransferWithAuthorization that POST /v1/balance/topups takes (`eip712_domain`, `eip712_types` and ' +
      '`primary_type` go as they are into signTypedData). 503 UNAVAILABLE when payments are not configured.',
    tags: ['balance'],
    class: 'bearer',
    scope: 'read',
    wallet: false,
    schema: { response: { 200: TopupTermsResponse } },
    docs: {
      errors: [
        {
          code: 'UNAVAILABLE',
          when: 'payments are not configured on this service, or USDC on the payments chain cannot be read',
        },
      ],
      responses: { 200: "The terms to sign a top-up authorization by, with the account's prepaid cap." },
      example: { status: 200, response: TOPUP_TERMS_EXAMPLE },
    },
    handler: async (ctx) => {
      const principal = requirePrincipal(ctx);
      return { status: 200, body: await topupTerms(ctx.deps, principal.accountId) };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/balance/topups',
    operationId: 'createTopup',
    summary: 'Top up the prepaid balance with a USDC authorization',
    description:
      'Takes an EIP-3009 TransferWithAuthorization signed by the payer, paying USDC to the platform treasury ' +
      '(GET /v1/balance/topups/terms). It is checked (payee, asset, amount, validity window, signature, nonce ' +
      'unused, the payer holds the USDC) and admitted against the per-account and platform-wide prepaid caps ' +
      '(422 LIMIT_EXCEEDED naming the cap; nothing broadcast, the authorization unused), then settled on-chain; ' +
      'the balance is credited only once the transfer is confirmed (201). 202 with the pending-settlement body ' +
      'when the outcome is not known within the request: retry with the same authorization to read it. ' +
      'Submitting the same authorization again never credits twice (200 with the first top-up).',
    tags: ['balance'],
    class: 'bearer',
    scope: 'write',
    wallet: false,
    schema: {
      body: SignedAuthorization,
      response: { 200: TopupResponse, 201: TopupResponse, 202: PendingSettlement },
    },
    docs: {
      errors: [
        {
          code: 'PAYMENT_INVALID',
          when:
            'the authorization fails a check (payee, amount, window, signature, nonce used or an auto-top-up ' +
            'arrow, too little USDC), or its settlement failed; nothing credited',
        },
        {
          code: 'LIMIT_EXCEEDED',
          when: 'the top-up would push the per-account or the platform-wide prepaid cap; nothing broadcast',
        },
        {
          code: 'UNAVAILABLE',
          when: 'payments are not configured, the chain cannot be read, or the relayer cannot pay gas',
        },
      ],
      responses: {
        200: 'This authorization was submitted before and settled: the first top-up, not credited again.',
        201: 'Settled on-chain and credited: the top-up and the new balance.',
        202: 'Broadcast but not yet confirmed: retry with the same authorization to read the outcome.',
      },
      example: { body: TOPUP_AUTHORIZATION_EXAMPLE, status: 201, response: TOPUP_EXAMPLE },
    },
    handler: (ctx) =>
      ctx.replayable(async () => {
        const result = await topUp(ctx.deps, effects, actorOf(ctx), toSubmitted(ctx.body), ctx.deadline);
        if (result.state === 'pending')
          return { status: 202, body: pendingSettlementBody(result.row, 'top-up') };
        return {
          status: result.state === 'created' ? 201 : 200,
          body: { topup: result.topup, balance_usd: formatBalanceUsd(result.balanceMicro) },
        };
      }),
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/fees',
    operationId: 'getFeeSchedule',
    summary: 'The fee schedule',
    description:
      'The metered fees, debited from the prepaid balance (docs/fees.md), and whether metering is enforced ' +
      'right now (an operator switch; when off, nothing is debited).',
    tags: ['public utilities'],
    class: 'public',
    wallet: false,
    schema: { response: { 200: FeeScheduleResponse } },
    docs: {
      errors: [],
      responses: { 200: 'The metered fees in USD, and whether metering is enforced now.' },
      example: { status: 200, response: FEE_SCHEDULE_EXAMPLE },
    },
    handler: async ({ deps }) => {
      const enforced = await meteringEnforced(deps.db, deps.db, deps.config, deps.clock.now().getTime());
      return { status: 200, body: publishedFeeSchedule(deps.config, enforced) };
    },
  }),
];
