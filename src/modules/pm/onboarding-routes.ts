// The prediction-market routes that get a wallet ready to trade: what it lacks on chain (the six
// grants and its collateral), its funder Safe found from the Safe Transaction Service, and its
// USDC.e wrapped into pUSD with the stored signer key.

import { getAddress } from 'viem';
import { unavailable } from '../../core/errors/app-error.ts';
import { actorOf } from '../../core/http/actor.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { lookupFunder } from './funder.ts';
import { pmJurisdictionGate } from './gate.ts';
import { onboardingStatus } from './onboarding.ts';
import {
  FUNDER_LOOKUP,
  FUNDER_PARAMS,
  ONBOARDING_PARAMS,
  ONBOARDING_STATUS,
  WRAP_BODY,
  WRAP_RESULT,
} from './openapi-examples.ts';
import { chainOf, credentialDeps, GATED, TAGS } from './route-deps.ts';
import {
  FunderParams,
  FunderSchema,
  OnboardingParams,
  OnboardingSchema,
  WrapBody,
  WrapSchema,
} from './schemas.ts';
import { wrapCollateral } from './wrap.ts';

export const onboardingRoutes: RouteDefinition[] = [
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
];
