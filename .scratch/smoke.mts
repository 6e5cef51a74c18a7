import { startDevnet } from '../src/devnet/devnet.ts';
import { createPublicClient, http, parseAbi, parseEther } from 'viem';
const t0 = performance.now();
const d = await startDevnet({ chainIds: [8453, 84532] });
console.log('started in', Math.round(performance.now() - t0), 'ms');
const c = d.chains[8453]!;
console.log(c.contracts, c.priceFeeds, c.pools.length, d.chains[84532]!.priceFeeds);
const pc = createPublicClient({ transport: http(c.rpcUrl) });
const q = parseAbi(['function quoteExactInputSingle((address tokenIn,address tokenOut,uint256 amountIn,uint24 fee,uint160 sqrtPriceLimitX96)) returns (uint256 amountOut,uint160,uint32,uint256)']);
for (const fee of [500, 3000]) {
  const r = await pc.simulateContract({ address: c.contracts.uniswapV3QuoterV2!, abi: q, functionName: 'quoteExactInputSingle', args: [{ tokenIn: c.contracts.weth, tokenOut: c.contracts.usdc, amountIn: parseEther('1'), fee, sqrtPriceLimitX96: 0n }] });
  console.log('v3', fee, r.result[0]);
}
const a = parseAbi(['struct Route { address from; address to; bool stable; address factory; }', 'function getAmountsOut(uint256, Route[]) view returns (uint256[])']);
console.log('aero', await pc.readContract({ address: c.contracts.aerodromeRouter!, abi: a, functionName: 'getAmountsOut', args: [parseEther('1'), [{ from: c.contracts.weth, to: c.contracts.usdc, stable: false, factory: '0x0000000000000000000000000000000000000000' }]] }));
const v2 = parseAbi(['function getAmountsOut(uint256, address[]) view returns (uint256[])']);
console.log('v2', await pc.readContract({ address: c.contracts.uniswapV2Router02!, abi: v2, functionName: 'getAmountsOut', args: [parseEther('1'), [c.contracts.weth, c.contracts.usdc]] }));
console.log('v2 eurc', await pc.readContract({ address: c.contracts.uniswapV2Router02!, abi: v2, functionName: 'getAmountsOut', args: [1_000_000n, [c.contracts.eurc!, c.contracts.usdc]] }));
await d.stop();
