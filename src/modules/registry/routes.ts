import { invalidRequest } from '../../core/errors/app-error.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import type { VenueAdapter } from '../../adapters/venues/index.ts';
import { TokensQuery, TokensResponse } from './schemas.ts';
import type { RegistryChain } from './service.ts';

export const registryRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'GET',
    url: '/v1/tokens',
    operationId: 'listTokens',
    summary: 'The token registry: tokens, wrapped native token and venues of each supported chain',
    description:
      'Membership does not promise that a pair is routable at a size. `symbol` is the exact UPPERCASE ' +
      'string that spend.token_allowlist must carry.',
    tags: ['public utilities'],
    class: 'public',
    wallet: false,
    schema: { querystring: TokensQuery, response: { 200: TokensResponse } },
    docs: {
      errors: [{ code: 'INVALID_REQUEST', when: 'chain_id is not a supported chain' }],
      responses: { 200: 'The registry of every supported chain, or of the one chain_id names.' },
      example: {
        query: { chain_id: '8453' },
        status: 200,
        response: {
          chains: [
            {
              chain_id: 8453,
              name: 'Base',
              wrapped_native: '0x4200000000000000000000000000000000000006',
              explorer_url: 'https://basescan.org',
              venues: [
                { name: '0x', settles: true, contracts: ['0x0000000000001fF3684f28c67538d4D072C22734'] },
                {
                  name: 'kyberswap',
                  settles: true,
                  contracts: ['0x6131B5fae19EA4f9D964eAc0408E4408b66337b5'],
                },
                {
                  name: 'aerodrome',
                  settles: true,
                  contracts: ['0xcF77a3Ba9A5CA399B7c97c74d54e5b1Beb874E43'],
                },
                {
                  name: 'uniswap-v3',
                  settles: true,
                  contracts: ['0x2626664c2603336E57B271c5C0b26F421741e481'],
                },
              ],
              tokens: [
                {
                  symbol: 'USDC',
                  address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
                  decimals: 6,
                  stable: true,
                },
                {
                  symbol: 'WETH',
                  address: '0x4200000000000000000000000000000000000006',
                  decimals: 18,
                  stable: false,
                },
                {
                  symbol: 'EURC',
                  address: '0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42',
                  decimals: 6,
                  stable: false,
                },
              ],
            },
          ],
        },
      },
    },
    handler: async ({ deps, query }) => {
      const registry = deps.tokenRegistry;
      let chains: readonly RegistryChain[] = registry.registryChains();
      if (query.chain_id !== undefined) {
        const chain = registry.chain(Number(query.chain_id));
        if (!chain) {
          const supported = chains.map((c) => `${c.chainId} (${c.name})`).join(', ');
          throw invalidRequest(
            `chain_id ${query.chain_id} is not supported; supported chains: ${supported}.`,
            {
              remediation: 'Use one of the supported chain ids, or omit chain_id to list every chain.',
              next: [{ method: 'GET', path: '/v1/tokens', why: 'lists every supported chain' }],
            },
          );
        }
        chains = [chain];
      }
      return {
        status: 200,
        body: {
          chains: chains.map((c) =>
            toWire(c, deps.venues ?? [], deps.config.explorerUrls[c.chainId] ?? null),
          ),
        },
        // The registry changes only with a deploy.
        headers: { 'cache-control': 'public, max-age=300' },
      };
    },
  }),
];

function toWire(chain: RegistryChain, venues: readonly VenueAdapter[], explorer: string | null) {
  return {
    chain_id: chain.chainId,
    name: chain.name,
    wrapped_native: chain.wrappedNative,
    explorer_url: explorer,
    venues: chain.venues.map((v) => ({
      name: v.name,
      settles: v.settles,
      contracts: [...(venues.find((a) => a.venue === v.name)?.contracts(chain.chainId) ?? [])],
    })),
    tokens: chain.tokens.map((t) => ({
      symbol: t.symbol,
      address: t.address,
      decimals: t.decimals,
      stable: t.stable,
    })),
  };
}
