// `uniswap-v3`: quotes with QuoterV2 (an eth_call per fee tier, the best kept) and builds
// SwapRouter02 calls locally: `multicall(deadline, [exactInputSingle(...)])`, SwapRouter02's way
// of carrying a deadline (its exactInputSingle struct has none). On Base the addresses are
// Uniswap's deployments; on the devnet, QuoterV2 and the pools are Uniswap's npm artifacts and the
// router is DevSwapRouter02, which takes SwapRouter02's formats (docs/venues.md).

import { encodeFunctionData, parseAbi, type Address } from 'viem';
import { VenueError, type VenueAdapter } from './port.ts';
import { routerVenue, type RouterVenueOptions } from './router-venue.ts';

export const quoterV2Abi = parseAbi([
  'function quoteExactInputSingle((address tokenIn, address tokenOut, uint256 amountIn, uint24 fee, uint160 sqrtPriceLimitX96) params) returns (uint256 amountOut, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate)',
]);

export const swapRouter02Abi = parseAbi([
  'function exactInputSingle((address tokenIn, address tokenOut, uint24 fee, address recipient, uint256 amountIn, uint256 amountOutMinimum, uint160 sqrtPriceLimitX96) params) payable returns (uint256 amountOut)',
  'function multicall(uint256 deadline, bytes[] data) payable returns (bytes[] results)',
]);

/** Uniswap v3's fee tiers on Base, in hundredths of a basis point. */
export const UNISWAP_V3_FEE_TIERS = [100, 500, 3000, 10000] as const;

export interface UniswapV3Deployment {
  quoterV2: Address;
  swapRouter02: Address;
  /** Fee tiers to quote (default: all four). */
  feeTiers?: readonly number[];
}

export type UniswapV3Options = RouterVenueOptions<UniswapV3Deployment>;

export function createUniswapV3Venue(options: UniswapV3Options): VenueAdapter {
  return routerVenue<UniswapV3Deployment>(
    {
      venue: 'uniswap-v3',
      router: (d) => d.swapRouter02,
      candidates: (client, d, request) =>
        (d.feeTiers ?? UNISWAP_V3_FEE_TIERS).map(async (fee) => {
          // QuoterV2 is nonpayable and reverts internally to return its answer: an eth_call.
          const { result } = await client.simulateContract({
            address: d.quoterV2,
            abi: quoterV2Abi,
            functionName: 'quoteExactInputSingle',
            args: [
              {
                tokenIn: request.sellToken,
                tokenOut: request.buyToken,
                amountIn: request.sellAmount,
                fee,
                sqrtPriceLimitX96: 0n,
              },
            ],
          });
          return { amountOut: result[0], feePpm: fee, route: { fee } };
        }),
      swapData: (_d, quote, minOut, to, deadline) => {
        const fee = quote.route.fee;
        if (typeof fee !== 'number' || !Number.isInteger(fee)) {
          throw new VenueError('uniswap-v3', 'bad_response', 'uniswap-v3 quote carries no fee tier');
        }
        const swap = encodeFunctionData({
          abi: swapRouter02Abi,
          functionName: 'exactInputSingle',
          args: [
            {
              tokenIn: quote.sellToken,
              tokenOut: quote.buyToken,
              fee,
              recipient: to,
              amountIn: quote.sellAmount,
              amountOutMinimum: minOut,
              sqrtPriceLimitX96: 0n,
            },
          ],
        });
        return encodeFunctionData({
          abi: swapRouter02Abi,
          functionName: 'multicall',
          args: [deadline, [swap]],
        });
      },
    },
    options,
  );
}
