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

const NO_DEVNET = {
  code: 'UNAVAILABLE',
  when: 'no devnet is running, or its chain did not accept the transactions',
} as const;
const AGENT = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const OWNER = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

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
    docs: {
      errors: [
        NO_DEVNET,
        {
          code: 'INVALID_REQUEST',
          when: 'the chain or a token is not on the devnet, or neither eth_wei nor tokens is asked for',
        },
      ],
      responses: { 200: "Funded: the faucet's transactions and the address's balances after them." },
      example: {
        body: {
          chain_id: 8453,
          address: AGENT,
          eth_wei: '1000000000000000000',
          tokens: [{ symbol: 'USDC', amount: '100000000' }],
        },
        status: 200,
        response: {
          chain_id: 8453,
          address: AGENT,
          tx_hashes: ['0x183a7d361ca1625fa85289cbdf578effaa4376f038587b9ab574e3fe80e5edc5'],
          balances: { eth_wei: '1000000000000000000', tokens: { USDC: '100000000' } },
        },
      },
    },
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
    docs: {
      errors: [
        NO_DEVNET,
        {
          code: 'INVALID_REQUEST',
          when: "the chain or the pair's feed is not on the devnet, or the answer is finer than the feed's decimals",
        },
      ],
      responses: {
        200: 'The round is posted: the feed, the answer as posted, and whether valuations now use the feed.',
      },
      example: {
        body: { chain_id: 8453, pair: 'ETH/USD', answer: '3456.78' },
        status: 200,
        response: {
          chain_id: 8453,
          pair: 'ETH/USD',
          address: '0xDc64a140Aa3E981100a9becA4E685f962f0cF6C9',
          decimals: 8,
          answer: '3456.78',
          answer_raw: '345678000000',
          round_id: '4',
          updated_at: 1773480600,
          tx_hash: '0x97a85b9f687bba82d44975f5f92f40894dc150ae53b4683e2e1509313bac6f73',
          reference: { usable: true },
        },
      },
    },
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
    docs: {
      errors: [
        NO_DEVNET,
        {
          code: 'INVALID_REQUEST',
          when: 'the chain has no Kernel v3.1 on the devnet, or a token to fund with is not on it',
        },
      ],
      responses: {
        200: 'The Kernel account of the owner and index: its address, whether it is deployed, and its balances.',
      },
      example: {
        body: {
          chain_id: 8453,
          owner: OWNER,
          deploy: true,
          eth_wei: '1000000000000000000',
          tokens: [{ symbol: 'USDC', amount: '250000000' }],
        },
        status: 200,
        response: {
          chain_id: 8453,
          address: '0xBCB0FC9aE4908e04F89E328E3F6720C7bB856781',
          owner: OWNER,
          index: '0',
          deployed: true,
          factory: '0xaac5D4240AF87249B3f71BC8E4A2cae074A3E419',
          implementation: '0xBAC849bB641841b44E965fB01A4Bf5F074f84b4D',
          ecdsa_validator: '0x845ADb2C711129d4f3966735eD98a9F09fC4cE57',
          factory_data:
            '0xea6d13ac00000000000000000000000000000000000000000000000000000000000000400000000000000000000000' +
            '000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000' +
            '00000001243c3b752b01845ADb2C711129d4f3966735eD98a9F09fC4cE57000000000000000000000000000000000000' +
            '000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000' +
            '0000000000000000a000000000000000000000000000000000000000000000000000000000000000e000000000000000' +
            '000000000000000000000000000000000000000000000001000000000000000000000000000000000000000000000000' +
            '0000000000000000143C44CdDdB6a900fa2b585dd299e03d12FA4293BC00000000000000000000000000000000000000' +
            '000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000' +
            '00000000000000000000000000000000000000000000000000000000000000000000000000',
          tx_hashes: [
            '0x4a65af02a6b35dc2aa600611e5e7edc5e1b6bdb8c79a250434ca9b84e30b1c70',
            '0x4e1d7b2e7ffd8c92d050963a5d75aa049066cd4f5c0ea6c875c9a0b04c3a3e2d',
          ],
          balances: { eth_wei: '1000000000000000000', tokens: { USDC: '250000000' } },
        },
      },
    },
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
