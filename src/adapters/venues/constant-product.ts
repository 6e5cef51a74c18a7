// The two router venues over constant-product pools: `devnet-amm` (Uniswap v2's Router02, the
// devnet's own AMM) and `aerodrome` (Aerodrome's Router on Base: routes of {from, to, stable,
// factory}; volatile and stable pools are both quoted and the better kept). Both quote with the
// router's `getAmountsOut` view and swap with its `swapExactTokensForTokens`, approved to the router.

import { encodeFunctionData, parseAbi, zeroAddress, type Address } from 'viem';
import { VenueError, type VenueAdapter } from './port.ts';
import { routerVenue, type RouterVenueOptions } from './router-venue.ts';

export const uniswapV2RouterAbi = parseAbi([
  'function getAmountsOut(uint256 amountIn, address[] path) view returns (uint256[] amounts)',
  'function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline) returns (uint256[] amounts)',
]);

export const aerodromeRouterAbi = parseAbi([
  'struct Route { address from; address to; bool stable; address factory; }',
  'function getAmountsOut(uint256 amountIn, Route[] routes) view returns (uint256[] amounts)',
  'function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, Route[] routes, address to, uint256 deadline) returns (uint256[] amounts)',
]);

export interface UniswapV2Deployment {
  router02: Address;
}

export interface AerodromeDeployment {
  router: Address;
  /** The pool factory routes name (Aerodrome's default factory on Base). */
  poolFactory: Address;
}

/** Uniswap v2 pairs take 0.30% of the input. */
const V2_FEE_PPM = 3000;

/** `devnet-amm`: Uniswap v2 Router02 over the direct pair (no multi-hop). */
export function createDevnetAmmVenue(options: RouterVenueOptions<UniswapV2Deployment>): VenueAdapter {
  return routerVenue<UniswapV2Deployment>(
    {
      venue: 'devnet-amm',
      router: (d) => d.router02,
      candidates: (client, d, request) => [
        client
          .readContract({
            address: d.router02,
            abi: uniswapV2RouterAbi,
            functionName: 'getAmountsOut',
            args: [request.sellAmount, [request.sellToken, request.buyToken]],
          })
          .then((amounts) => ({ amountOut: amounts.at(-1) ?? 0n, feePpm: V2_FEE_PPM, route: {} })),
      ],
      swapData: (_d, quote, minOut, to, deadline) =>
        encodeFunctionData({
          abi: uniswapV2RouterAbi,
          functionName: 'swapExactTokensForTokens',
          args: [quote.sellAmount, minOut, [quote.sellToken, quote.buyToken], to, deadline],
        }),
    },
    options,
  );
}

/** Aerodrome's default pool fees: 0.30% volatile, 0.05% stable (a pool may differ; the quote is net of it). */
const AERODROME_FEE_PPM = { volatile: 3000, stable: 500 } as const;

/** `aerodrome`: Aerodrome's Router, the direct volatile and stable pools of the default factory. */
export function createAerodromeVenue(options: RouterVenueOptions<AerodromeDeployment>): VenueAdapter {
  const route = (d: AerodromeDeployment, from: Address, to: Address, stable: boolean) => ({
    from,
    to,
    stable,
    factory: d.poolFactory ?? zeroAddress,
  });
  return routerVenue<AerodromeDeployment>(
    {
      venue: 'aerodrome',
      router: (d) => d.router,
      candidates: (client, d, request) =>
        [false, true].map((stable) =>
          client
            .readContract({
              address: d.router,
              abi: aerodromeRouterAbi,
              functionName: 'getAmountsOut',
              args: [request.sellAmount, [route(d, request.sellToken, request.buyToken, stable)]],
            })
            .then((amounts) => ({
              amountOut: amounts.at(-1) ?? 0n,
              feePpm: stable ? AERODROME_FEE_PPM.stable : AERODROME_FEE_PPM.volatile,
              route: { stable },
            })),
        ),
      swapData: (d, quote, minOut, to, deadline) => {
        if (typeof quote.route.stable !== 'boolean') {
          throw new VenueError('aerodrome', 'bad_response', 'aerodrome quote does not say which pool');
        }
        return encodeFunctionData({
          abi: aerodromeRouterAbi,
          functionName: 'swapExactTokensForTokens',
          args: [
            quote.sellAmount,
            minOut,
            [route(d, quote.sellToken, quote.buyToken, quote.route.stable)],
            to,
            deadline,
          ],
        });
      },
    },
    options,
  );
}
