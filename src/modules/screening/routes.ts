import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { ScreeningRequest, ScreeningResponse } from './schemas.ts';
import { screenAddress } from './service.ts';

export const screeningRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'POST',
    url: '/v1/screenings',
    operationId: 'screenAddress',
    summary: 'Screen a wallet address against sanctions lists (OFAC SDN digital-currency addresses)',
    tags: ['public utilities'],
    class: 'public',
    wallet: false,
    schema: { body: ScreeningRequest, response: { 200: ScreeningResponse } },
    docs: {
      errors: [
        {
          code: 'UNAVAILABLE',
          when: 'a screening provider cannot answer (the SDN list was never loaded): screening fails closed',
        },
      ],
      responses: { 200: 'Whether any screening list names the address, and which.' },
      example: {
        body: { address: '0x7987FFfd095501F3A5D57eca0dfdC19EF1157eAb' },
        status: 200,
        response: {
          address: '0x7987FFfd095501F3A5D57eca0dfdC19EF1157eAb',
          sanctioned: true,
          lists: ['OFAC SDN'],
          provider_count: 1,
        },
      },
    },
    // Like every POST it honours Idempotency-Key: a client that reuses a key asks for the answer it
    // already got, not a fresh one.
    handler: async ({ deps, body, deadline, replayable }) =>
      replayable(async () => {
        const result = await screenAddress(
          {
            db: deps.db,
            env: deps.config.env,
            clock: deps.clock,
            log: deps.log,
            extraProviders: deps.screeningProviders ?? [],
            deadline,
          },
          body.address as `0x${string}`,
        );
        return {
          status: 200,
          body: {
            address: result.address,
            sanctioned: result.sanctioned,
            lists: result.lists,
            provider_count: result.providerCount,
          },
        };
      }),
  }),
];
