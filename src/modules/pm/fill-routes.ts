// The prediction-market fill route: the credential's unseen fills at the venue journaled as
// balanced ledger groups on the wallet (its positions), once each.

import { actorOf } from '../../core/http/actor.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { syncFills } from './fills.ts';
import { pmJurisdictionGate } from './gate.ts';
import { FILL_SYNC_BODY, FILL_SYNC_RESULT } from './openapi-examples.ts';
import { GATED, orderDeps, TAGS } from './route-deps.ts';
import { FillSyncBody, FillSyncSchema } from './schemas.ts';

export const fillRoutes: RouteDefinition[] = [
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
