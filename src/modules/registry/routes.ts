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
