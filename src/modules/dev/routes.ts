import { getAddress } from 'viem';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { formatScaled, moveDevnetPrice } from './price-feeds.ts';
import { FaucetRequest, FaucetResponse, PriceFeedMoveRequest, PriceFeedMoveResponse } from './schemas.ts';
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
  defineRoute({
    method: 'POST',
    url: '/v1/dev/price-feeds',
    operationId: 'devMovePriceFeed',
    summary: 'Development only: post a new price (or a stale or bad round) to a devnet price feed',
    description:
      "Posts a round to the devnet feed of the pair and refreshes the service's cached reading, so the " +
      'next valuation uses it. `updated_at` stamps the round (an old stamp makes the feed stale); a zero ' +
      'or negative answer makes it unusable. See docs/prices.md.',
    tags: ['development'],
    class: 'public',
    wallet: false,
    devOnly: true,
    schema: { body: PriceFeedMoveRequest, response: { 200: PriceFeedMoveResponse } },
    handler: async ({ deps, body, deadline, replayable }) =>
      replayable(async () => {
        const moved = await moveDevnetPrice(deps.devnet, deps.prices, deadline, {
          chainId: body.chain_id,
          pair: body.pair,
          answer: body.answer,
          ...(body.updated_at === undefined ? {} : { updatedAt: body.updated_at }),
        });
        return {
          status: 200,
          body: {
            chain_id: moved.chainId,
            pair: moved.pair,
            address: moved.address,
            decimals: moved.decimals,
            answer: formatScaled(moved.answerRaw, moved.decimals),
            answer_raw: moved.answerRaw.toString(),
            round_id: moved.roundId.toString(),
            updated_at: Number(moved.updatedAt),
            tx_hash: moved.txHash,
            reference: moved.reference,
          },
        };
      }),
  }),
];
