import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createPublicClient,
  formatUnits,
  http,
  parseAbi,
  parseEther,
  parseUnits,
  zeroAddress,
  type Address,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import { BASE_CHAIN_ID, devnetToken, expectedDevnetContracts, startDevnet, type Devnet } from './devnet.ts';
import { fundAddress } from './faucet.ts';
import { DEVNET_MARKET_MAKER_KEY, DEVNET_POOLS, isqrt, sqrtPriceX96 } from './markets.ts';

const quoterAbi = parseAbi([
  'function quoteExactInputSingle((address tokenIn, address tokenOut, uint256 amountIn, uint24 fee, uint160 sqrtPriceLimitX96) params) returns (uint256 amountOut, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate)',
]);
const v2RouterAbi = parseAbi([
  'function getAmountsOut(uint256 amountIn, address[] path) view returns (uint256[])',
]);
const aeroAbi = parseAbi([
  'struct Route { address from; address to; bool stable; address factory; }',
  'function getAmountsOut(uint256 amountIn, Route[] routes) view returns (uint256[])',
]);
const feedAbi = parseAbi([
  'function latestRoundData() view returns (uint80, int256, uint256, uint256, uint80)',
  'function description() view returns (string)',
  'function decimals() view returns (uint8)',
]);
const balanceAbi = parseAbi(['function balanceOf(address) view returns (uint256)']);

/** USD per whole token at the devnet's start prices. */
const USD: Record<string, number> = { WETH: 3000, USDC: 1, EURC: 1.08 };

const dirs: string[] = [];
const devnets: Devnet[] = [];
afterAll(async () => {
  await Promise.all(devnets.map((d) => d.stop()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function start(options: Parameters<typeof startDevnet>[0]): Promise<Devnet> {
  const devnet = await startDevnet(options);
  devnets.push(devnet);
  return devnet;
}

/** What `amountIn` of `from` buys of `to` on a seeded pool (on-chain reads only). */
async function quotePool(
  devnet: Devnet,
  pool: (typeof DEVNET_POOLS)[number],
  from: string,
  amountIn: bigint,
) {
  const chain = devnet.chains[BASE_CHAIN_ID]!;
  const client = createPublicClient({ transport: http(chain.rpcUrl) });
  const tokenIn = devnetToken(devnet, BASE_CHAIN_ID, from).address;
  const to = pool.pair[0] === from ? pool.pair[1] : pool.pair[0];
  const tokenOut = devnetToken(devnet, BASE_CHAIN_ID, to).address;
  if (pool.venue === 'uniswap-v3') {
    const { result } = await client.simulateContract({
      address: chain.contracts.uniswapV3QuoterV2!,
      abi: quoterAbi,
      functionName: 'quoteExactInputSingle',
      args: [{ tokenIn, tokenOut, amountIn, fee: pool.fee!, sqrtPriceLimitX96: 0n }],
    });
    return result[0];
  }
  if (pool.venue === 'devnet-amm') {
    const amounts = await client.readContract({
      address: chain.contracts.uniswapV2Router02!,
      abi: v2RouterAbi,
      functionName: 'getAmountsOut',
      args: [amountIn, [tokenIn, tokenOut]],
    });
    return amounts[1]!;
  }
  const amounts = await client.readContract({
    address: chain.contracts.aerodromeRouter!,
    abi: aeroAbi,
    functionName: 'getAmountsOut',
    args: [amountIn, [{ from: tokenIn, to: tokenOut, stable: false, factory: zeroAddress }]],
  });
  return amounts[1]!;
}

describe('the devnet markets on Base', () => {
  it('price every seeded pool at the feeds’ start prices, deep pools barely moving and shallow ones sliding', async () => {
    const devnet = await start({ chainIds: [BASE_CHAIN_ID] });
    const chain = devnet.chains[BASE_CHAIN_ID]!;
    expect(chain.pools).toHaveLength(DEVNET_POOLS.length);
    const client = createPublicClient({ transport: http(chain.rpcUrl) });

    // The feeds answer the start prices with Chainlink's decimals.
    for (const [pair, address] of Object.entries(chain.priceFeeds)) {
      const [, answer] = await client.readContract({
        address,
        abi: feedAbi,
        functionName: 'latestRoundData',
      });
      expect(await client.readContract({ address, abi: feedAbi, functionName: 'description' })).toBe(pair);
      expect(Number(formatUnits(answer, 8))).toBe({ 'ETH/USD': 3000, 'USDC/USD': 1, 'EURC/USD': 1.08 }[pair]);
    }

    for (const pool of DEVNET_POOLS) {
      const [base, quote] = pool.pair;
      const decimals = (s: string) => devnetToken(devnet, BASE_CHAIN_ID, s).decimals;
      // A sale of 0.01% of the pool's depth: the price is the pool's price less its fee.
      const small = parseUnits(pool.depth[0], decimals(base)) / 10_000n;
      const out = await quotePool(devnet, pool, base, small);
      const price = Number(formatUnits(out, decimals(quote))) / Number(formatUnits(small, decimals(base)));
      const fair = USD[base]! / USD[quote]!;
      const feeShare = (pool.fee ?? 3000) / 1e6;
      expect(price / fair, `${pool.venue} ${base}/${quote}`).toBeGreaterThan(1 - feeShare - 0.002);
      expect(price / fair, `${pool.venue} ${base}/${quote}`).toBeLessThanOrEqual(1 - feeShare + 1e-4);
    }

    // 10 WETH: under 1% off the small-size price on the deep v3 tier, over 8% on devnet-amm.
    const deep = DEVNET_POOLS.find((p) => p.venue === 'uniswap-v3' && p.fee === 500)!;
    const shallow = DEVNET_POOLS.find((p) => p.venue === 'devnet-amm' && p.pair.join() === 'WETH,USDC')!;
    const impact = async (pool: typeof deep) => {
      const unit = await quotePool(devnet, pool, 'WETH', parseEther('0.001'));
      const big = await quotePool(devnet, pool, 'WETH', parseEther('10'));
      return 1 - Number(big) / (Number(unit) * 10_000);
    };
    expect(await impact(deep)).toBeLessThan(0.01);
    expect(await impact(shallow)).toBeGreaterThan(0.08);
  });

  it('on a chain saved by an earlier devnet, deploys only what was appended, keeps balances, and seeds once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'purser-devnet-markets-'));
    dirs.push(dir);
    const holder: Address = '0x00000000000000000000000000000000000b0b0b';
    // The devnet as it was before the markets: USDC, WETH and the account factory only.
    const before = await start({ chainIds: [BASE_CHAIN_ID], stateDir: dir, planLength: 3 });
    expect(before.chains[BASE_CHAIN_ID]!.pools).toEqual([]);
    await fundAddress(before, {
      chainId: BASE_CHAIN_ID,
      address: holder,
      tokens: [{ symbol: 'USDC', amount: 1_234_567n }],
    });
    await before.stop();

    const after = await start({ chainIds: [BASE_CHAIN_ID], stateDir: dir });
    const chain = after.chains[BASE_CHAIN_ID]!;
    const expected = expectedDevnetContracts(BASE_CHAIN_ID);
    expect(chain.contracts).toMatchObject(expected);
    expect(chain.tokens.map((t) => t.symbol)).toEqual(['USDC', 'WETH', 'EURC']);
    expect(chain.pools).toHaveLength(DEVNET_POOLS.length);
    const client = createPublicClient({ transport: http(chain.rpcUrl) });
    expect(
      await client.readContract({
        address: expected.usdc,
        abi: balanceAbi,
        functionName: 'balanceOf',
        args: [holder],
      }),
    ).toBe(1_234_567n);
    const maker = privateKeyToAccount(DEVNET_MARKET_MAKER_KEY).address;
    const makerNonce = await client.getTransactionCount({ address: maker });
    const pools = chain.pools;
    await after.stop();

    // A third start finds the pools seeded and leaves them alone.
    const again = await start({ chainIds: [BASE_CHAIN_ID], stateDir: dir });
    const client3 = createPublicClient({ transport: http(again.chains[BASE_CHAIN_ID]!.rpcUrl) });
    expect(again.chains[BASE_CHAIN_ID]!.pools).toEqual(pools);
    expect(await client3.getTransactionCount({ address: maker })).toBe(makerNonce);
  });
});

describe('pool price arithmetic', () => {
  it('takes exact integer square roots and Uniswap v3 start prices', () => {
    expect(isqrt(0n)).toBe(0n);
    expect(isqrt(15n)).toBe(3n);
    expect(isqrt(16n)).toBe(4n);
    expect(isqrt(10n ** 40n + 1n)).toBe(10n ** 20n);
    // 1 token0 = 1 token1: sqrtPriceX96 is 2^96.
    expect(sqrtPriceX96(10n ** 18n, 10n ** 18n)).toBe(2n ** 96n);
    // 4 token1 per token0: twice 2^96.
    expect(sqrtPriceX96(10n ** 6n, 4n * 10n ** 6n)).toBe(2n ** 97n);
  });
});
