import { getAddress } from 'viem';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { formatScaled, moveDevnetPrice } from './price-feeds.ts';
import {
  FaucetRequest,
  FaucetResponse,
  KernelAccountRequest,
  KernelAccountResponse,
  PriceFeedMoveRequest,
  PriceFeedMoveResponse,
} from './schemas.ts';
import { fundFromFaucet, kernelAccountFromFaucet } from './service.ts';

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
  defineRoute({
    method: 'POST',
    url: '/v1/dev/kernel-accounts',
    operationId: 'devKernelAccount',
    summary: 'Development only: the Kernel v3.1 smart account of an owner, optionally deployed and funded',
    description:
      'The address is the one the ZeroDev SDK computes for the owner and index on the devnet’s Kernel ' +
      'factory, implementation and ECDSA validator (`useMetaFactory: false`). `deploy` creates it now; ' +
      '`eth_wei` and `tokens` fund it through the faucet. Repeating the call is harmless.',
    tags: ['development'],
    class: 'public',
    wallet: false,
    devOnly: true,
    schema: { body: KernelAccountRequest, response: { 200: KernelAccountResponse } },
    handler: async ({ deps, body, deadline, replayable }) =>
      replayable(async () => {
        const { account, txHashes, funded } = await kernelAccountFromFaucet(deps.devnet, deadline, {
          chainId: body.chain_id,
          owner: getAddress(body.owner),
          index: BigInt(body.index ?? '0'),
          deploy: body.deploy ?? false,
          ...(body.eth_wei ? { ethWei: body.eth_wei } : {}),
          ...(body.tokens ? { tokens: body.tokens } : {}),
        });
        return {
          status: 200,
          body: {
            chain_id: account.chainId,
            address: account.address,
            owner: account.owner,
            index: account.index.toString(),
            deployed: account.deployed,
            factory: account.factory,
            implementation: account.implementation,
            ecdsa_validator: account.ecdsaValidator,
            factory_data: account.factoryData,
            tx_hashes: txHashes,
            balances: {
              eth_wei: (funded?.eth ?? 0n).toString(),
              tokens: Object.fromEntries(
                Object.entries(funded?.tokens ?? {}).map(([k, v]) => [k, v.toString()]),
              ),
            },
          },
        };
      }),
  }),
];
