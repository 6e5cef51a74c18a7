import { invalidRequest } from '../../core/errors/app-error.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import type { AppDeps } from '../../deps.ts';
import { TokensQuery, TokensResponse } from './schemas.ts';
import { buildTokenRegistry, type RegistryChain, type TokenRegistry } from './service.ts';

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
              venues: [
                { name: '0x', settles: true },
                { name: 'kyberswap', settles: true },
                { name: 'aerodrome', settles: true },
                { name: 'uniswap-v3', settles: true },
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
      const registry = registryOf(deps);
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
        body: { chains: chains.map(toWire) },
        // The registry changes only with a deploy.
        headers: { 'cache-control': 'public, max-age=300' },
      };
    },
  }),
];

/** The registry built at start; without one (a test or tool that did not build it), the real addresses. */
function registryOf(deps: AppDeps): TokenRegistry {
  return deps.tokenRegistry ?? buildTokenRegistry(deps.config.env);
}

function toWire(chain: RegistryChain) {
  return {
    chain_id: chain.chainId,
    name: chain.name,
    wrapped_native: chain.wrappedNative,
    venues: chain.venues.map((v) => ({ name: v.name, settles: v.settles })),
    tokens: chain.tokens.map((t) => ({
      symbol: t.symbol,
      address: t.address,
      decimals: t.decimals,
      stable: t.stable,
    })),
  };
}
