import { getAddress } from 'viem';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { FaucetRequest, FaucetResponse } from './schemas.ts';
import { fundFromFaucet } from './service.ts';

/** Development helpers under /v1/dev/: never mounted in production. */
export const devRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'POST',
    url: '/v1/dev/faucet',
    operationId: 'devFaucet',
    summary: 'Development only: fund an address with devnet ETH and test tokens',
    tags: ['development'],
    class: 'public',
    wallet: false,
    devOnly: true,
    schema: { body: FaucetRequest, response: { 200: FaucetResponse } },
    // With an Idempotency-Key a retry replays the first funding instead of minting again.
    handler: async ({ deps, body, deadline, replayable }) =>
      replayable(async () => {
        const funded = await fundFromFaucet(deps.devnet, deadline, {
          chainId: body.chain_id,
          address: getAddress(body.address),
          ...(body.eth_wei ? { ethWei: body.eth_wei } : {}),
          ...(body.tokens ? { tokens: body.tokens } : {}),
        });
        return {
          status: 200,
          body: {
            chain_id: funded.chainId,
            address: funded.address,
            tx_hashes: funded.txHashes,
            balances: {
              eth_wei: funded.eth.toString(),
              tokens: Object.fromEntries(Object.entries(funded.tokens).map(([k, v]) => [k, v.toString()])),
            },
          },
        };
      }),
  }),
];
