import { AttestationUnavailable } from '../../adapters/attestation/port.ts';
import { unavailable } from '../../core/errors/app-error.ts';
import { actorOf, requirePrincipal } from '../../core/http/actor.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import type { AppDeps } from '../../deps.ts';
import {
  AWAITING_REBALANCE,
  CREATE_REBALANCE_BODY,
  MINTED_REBALANCE,
  PLANNED_REBALANCE,
  REBALANCE_ID_PARAMS,
} from './openapi-examples.ts';
import { completeRebalance, type RebalanceRunDeps } from './run.ts';
import { CreateRebalanceBody, RebalanceIdParams, RebalanceSchema } from './schemas.ts';
import { admitRebalance, getRebalance } from './service.ts';

const TAGS = ['rebalances'];

/** What completing needs; 503 when this process has no chains, attestation service or executor key. */
export function rebalanceRunDeps(deps: AppDeps): RebalanceRunDeps | null {
  if (!deps.chain || !deps.attestation) return null;
  return {
    config: deps.config,
    clock: deps.clock,
    db: deps.db,
    chain: deps.chain,
    registry: deps.tokenRegistry,
    attestation: deps.attestation,
    log: deps.log,
  };
}

export const rebalancesRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'POST',
    url: '/v1/rebalances',
    operationId: 'createRebalance',
    summary: "Move the executor's USDC to another chain over CCTP V2 (treasury executor only)",
    description:
      'The caller must be signed in as the treasury executor (403 before anything else). Checked in order, in ' +
      'one transaction: an executor key is configured (503), the chains are CCTP chains of this deployment and ' +
      'differ, and the amount is more than 0 and at most 10^15 base units (400 naming the field), the execution ' +
      "switches (403 EXECUTION_DISABLED), the executor wallet's policy (404), its `rebalance` section (422 " +
      'POLICY_VIOLATION naming the rule: enabled, corridors, min_transfer_usd, max_transfer_usd, daily_cap_usd, ' +
      'counted exactly under concurrency). Then the rebalance is planned (`rebalance.planned`) and a job signs and ' +
      'sends the burn (approve and depositForBurn). Complete it with POST /v1/rebalances/{id}/complete once its ' +
      'phase is awaiting_attestation; an hourly job does the same for every rebalance nobody completed.',
    tags: TAGS,
    class: 'executor',
    scope: 'write',
    wallet: false,
    schema: { body: CreateRebalanceBody, response: { 201: RebalanceSchema } },
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when: 'a chain is not a CCTP chain of this deployment, both chains are the same, or the amount is 0 or too large',
        },
        {
          code: 'EXECUTION_DISABLED',
          when: 'execution is switched off for the environment, the account or the wallet',
        },
        { code: 'NOT_FOUND', when: "the executor's wallet has no policy" },
        {
          code: 'POLICY_VIOLATION',
          when: "the executor wallet's rebalance section refuses it (enabled, corridors, amounts, daily cap); names the rule",
        },
        { code: 'UNAVAILABLE', when: 'no executor key is configured' },
      ],
      responses: { 201: 'The rebalance, planned; its burn is on its way.' },
      example: { body: CREATE_REBALANCE_BODY, status: 201, response: PLANNED_REBALANCE },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      const deps = {
        config: ctx.deps.config,
        clock: ctx.deps.clock,
        db: ctx.deps.db,
        registry: ctx.deps.tokenRegistry,
      };
      return ctx.mutate(async (tx) => ({
        status: 201,
        body: await admitRebalance(tx, deps, actor, ctx.body),
      }));
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/rebalances/{id}/complete',
    operationId: 'completeRebalance',
    summary: "Ask for the burn's attestation and, once it is ready, mint on the destination",
    description:
      "For a rebalance awaiting attestation: asks Circle's attestation service. Ready: the executor sends " +
      'receiveMessage on the destination chain, waits a few seconds for it, and the answer is 200 with the ' +
      'rebalance minted (status filled), or still mint_submitted if the chain is slow (a job finishes it). Not ' +
      'ready: 202 with the rebalance and Retry-After. Any other phase: 409. A message whose nonce the destination ' +
      'has used already is recorded as minted, never sent twice. Safe to repeat; takes no Idempotency-Key.',
    tags: TAGS,
    class: 'executor',
    scope: 'write',
    wallet: false,
    idempotent: false,
    schema: { params: RebalanceIdParams, response: { 200: RebalanceSchema, 202: RebalanceSchema } },
    docs: {
      errors: [
        { code: 'NOT_FOUND', when: 'the account has no rebalance with this id' },
        {
          code: 'CONFLICT',
          when: 'the rebalance is not awaiting attestation (its burn has not landed, or it ended)',
        },
        {
          code: 'UNAVAILABLE',
          when: 'the attestation service or a chain is not reachable, or not configured here',
        },
      ],
      responses: {
        200: 'The mint was submitted: the rebalance, minted (filled) or mint_submitted.',
        202: 'The attestation is not ready: the rebalance, unchanged; retry after Retry-After seconds.',
      },
      example: { params: REBALANCE_ID_PARAMS, status: 200, response: MINTED_REBALANCE },
    },
    handler: async (ctx) => {
      const principal = requirePrincipal(ctx);
      const deps = rebalanceRunDeps(ctx.deps);
      if (!deps) {
        throw unavailable('This process has no chain connection or attestation service for rebalances.', {
          remediation: 'Configure RPC_URL_<chain> for both chains and CCTP_ATTESTATION_URL, then retry.',
          next: [],
        });
      }
      let done;
      try {
        done = await completeRebalance(
          deps,
          ctx.params.id,
          principal.accountId,
          ctx.deps.config.cctp.mintWaitMs,
        );
      } catch (err) {
        if (!(err instanceof AttestationUnavailable)) throw err;
        throw unavailable(`Circle's attestation service could not be asked: ${err.message}.`, {
          remediation:
            'Retry in a minute; the rebalance is unchanged, and the hourly job completes it anyway.',
          next: [{ method: 'GET', path: `/v1/rebalances/${ctx.params.id}`, why: 'the rebalance, unchanged' }],
        });
      }
      if (done.state === 'not_ready') {
        return {
          status: 202,
          body: done.rebalance,
          headers: { 'retry-after': String(Math.max(1, Math.ceil(done.retryAfterMs / 1000))) },
        };
      }
      return { status: 200, body: done.rebalance };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/rebalances/{id}',
    operationId: 'getRebalance',
    summary: 'One rebalance (treasury executor only)',
    tags: TAGS,
    class: 'executor',
    scope: 'read',
    wallet: false,
    schema: { params: RebalanceIdParams, response: { 200: RebalanceSchema } },
    docs: {
      errors: [{ code: 'NOT_FOUND', when: 'the account has no rebalance with this id' }],
      responses: { 200: 'The rebalance, with its phase and report so far.' },
      example: { params: REBALANCE_ID_PARAMS, status: 200, response: AWAITING_REBALANCE },
    },
    handler: async ({ deps, principal, params }) => ({
      status: 200,
      body: await getRebalance(deps.db, requirePrincipal({ principal }).accountId, params.id),
    }),
  }),
];
