// The devnet's arbitrage keeper: on mainnet, arbitrageurs bring a pool back to the market price
// within blocks of a trade moving it; on the devnet nobody trades but Purser and its users, so
// this keeper does it. One `step()` reads every pool it keeps and the reference feeds, and trades
// each pool further than `toleranceBps` from the feeds' price back to it, with tokens it mints
// (ETH wrapped for WETH): a constant-product pair (devnet-amm, aerodrome) by a swap on the pair
// sized to land on the price, a Uniswap v3 pool through its SwapRouter with the price as the
// swap's limit. `npm start` runs steps on a timer (startKeeperTimer); tests call `step()` when
// they want the market to recover, never a timer, because they share one devnet.

import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  http,
  keccak256,
  parseAbi,
  parseEther,
  stringToHex,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { chainDefinition } from '../adapters/chain/viem.ts';
import { aggregatorV3Abi } from '../adapters/prices/chainlink.ts';
import type { DevnetInfo } from './devnet.ts';
import { isqrt, sqrtPriceX96, type DevnetPool } from './markets.ts';

/** The keeper's key: fixed, so its trades are recognisable on the devnet; it holds nothing of value. */
export const DEVNET_KEEPER_KEY: Hex = keccak256(stringToHex('purser devnet arbitrage keeper'));

const pairAbi = parseAbi([
  'function token0() view returns (address)',
  'function getReserves() view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast)',
  'function swap(uint256 amount0Out, uint256 amount1Out, address to, bytes data)',
]);
const v3PoolAbi = parseAbi([
  'function token0() view returns (address)',
  'function slot0() view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex, uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked)',
]);
const swapRouterAbi = parseAbi([
  'struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient; uint256 deadline; uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }',
  'function exactInputSingle(ExactInputSingleParams params) payable returns (uint256 amountOut)',
]);
const tokenAbi = parseAbi([
  'function mint(address to, uint256 amount) returns (bool)',
  'function deposit() payable',
  'function approve(address spender, uint256 amount) returns (bool)',
  'function transfer(address to, uint256 amount) returns (bool)',
  'function balanceOf(address owner) view returns (uint256)',
]);

export interface KeeperToken {
  symbol: string;
  address: Address;
  decimals: number;
  /** The feed that prices it (default `<symbol>/USD`, WETH: `ETH/USD`). */
  feed?: string;
}

export interface KeeperInput {
  rpcUrl: string;
  chainId: number;
  pools: readonly DevnetPool[];
  tokens: readonly KeeperToken[];
  /** The devnet's feeds by pair (`ETH/USD`). */
  priceFeeds: Record<string, Address>;
  /** Uniswap v3's SwapRouter (its v1 interface: a swap may stop at a price limit). */
  uniswapV3SwapRouter?: Address;
  wrappedNative: Address;
  /** How far from the feeds' price a pool may be before the keeper trades it back (default 10 bps). */
  toleranceBps?: number;
  /** The keeper's key (default DEVNET_KEEPER_KEY). */
  key?: Hex;
}

/** What one step did to one pool: its deviation from the feeds before, and whether it traded. */
export interface KeeperMove {
  pool: Address;
  venue: DevnetPool['venue'];
  pair: [string, string];
  deviationBps: number;
  traded: boolean;
}

export interface ArbitrageKeeper {
  /** One pass over the pools; steps never overlap (a second waits for the first). */
  step(): Promise<KeeperMove[]>;
}

/** A price as a fraction: raw units of token1 per raw unit of token0. */
interface Fraction {
  num: bigint;
  den: bigint;
}

const feedOf = (symbol: string) => `${symbol === 'WETH' ? 'ETH' : symbol}/USD`;

export function createArbitrageKeeper(input: KeeperInput): ArbitrageKeeper {
  const chain = chainDefinition(input.chainId, input.rpcUrl);
  const transport = http(input.rpcUrl, { retryCount: 0 });
  const client = createPublicClient({ chain, transport, pollingInterval: 20 });
  const anvil = createTestClient({ mode: 'anvil', chain, transport });
  const keeper = privateKeyToAccount(input.key ?? DEVNET_KEEPER_KEY);
  const wallet = createWalletClient({ account: keeper, chain, transport });
  const tolerance = input.toleranceBps ?? 10;
  const token = (symbol: string) => {
    const t = input.tokens.find((x) => x.symbol === symbol);
    if (!t) throw new Error(`keeper: no token ${symbol} on chain ${input.chainId}`);
    return t;
  };

  /** USD per whole token, as the feed's fraction (answer / 10^decimals). */
  async function usd(symbol: string): Promise<Fraction> {
    const pair = token(symbol).feed ?? feedOf(symbol);
    const feed = input.priceFeeds[pair];
    if (!feed) throw new Error(`keeper: no feed ${pair}`);
    const [round, decimals] = await Promise.all([
      client.readContract({ address: feed, abi: aggregatorV3Abi, functionName: 'latestRoundData' }),
      client.readContract({ address: feed, abi: aggregatorV3Abi, functionName: 'decimals' }),
    ]);
    return { num: round[1], den: 10n ** BigInt(decimals) };
  }

  /** The feeds' price of the pool: raw token1 per raw token0. */
  async function target(pool: DevnetPool, token0: Address): Promise<Fraction> {
    const [a, b] = [token(pool.pair[0]), token(pool.pair[1])];
    const [first, second] = a.address.toLowerCase() === token0.toLowerCase() ? [a, b] : [b, a];
    const [u0, u1] = await Promise.all([usd(first.symbol), usd(second.symbol)]);
    // (u0 / u1) whole token1 per whole token0, in raw units.
    return {
      num: u0.num * u1.den * 10n ** BigInt(second.decimals),
      den: u0.den * u1.num * 10n ** BigInt(first.decimals),
    };
  }

  let pending: Promise<unknown> = Promise.resolve();
  const send = async (to: Address, data: Hex, value = 0n) => {
    const hash = await wallet.sendTransaction({ to, data, value, gas: 2_000_000n });
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== 'success') throw new Error(`keeper: a transaction to ${to} reverted`);
  };
  /** Gives the keeper `amount` of the token: WETH wrapped from ether, anything else minted. */
  const fund = async (tokenAddress: Address, amount: bigint) => {
    const wrapping = tokenAddress.toLowerCase() === input.wrappedNative.toLowerCase();
    // Ether for gas (and to wrap): only a step that trades needs any.
    await anvil.setBalance({ address: keeper.address, value: (wrapping ? amount : 0n) + parseEther('10') });
    if (wrapping) {
      await send(tokenAddress, encodeFunctionData({ abi: tokenAbi, functionName: 'deposit' }), amount);
    } else {
      await send(
        tokenAddress,
        encodeFunctionData({ abi: tokenAbi, functionName: 'mint', args: [keeper.address, amount] }),
      );
    }
  };

  const deviation = (price: Fraction, goal: Fraction) =>
    Number(((price.num * goal.den - goal.num * price.den) * 1_000_000n) / (goal.num * price.den)) / 100;

  /** A constant-product pair: the input that lands its price on the target, swapped on the pair. */
  async function keepPair(pool: DevnetPool): Promise<KeeperMove> {
    const [token0, reserves] = await Promise.all([
      client.readContract({ address: pool.address, abi: pairAbi, functionName: 'token0' }),
      client.readContract({ address: pool.address, abi: pairAbi, functionName: 'getReserves' }),
    ]);
    const [r0, r1] = [reserves[0], reserves[1]];
    const goal = await target(pool, token0);
    const off = deviation({ num: r1, den: r0 }, goal);
    const move = { pool: pool.address, venue: pool.venue, pair: pool.pair, deviationBps: off, traded: false };
    if (Math.abs(off) <= tolerance) return move;
    const token1 = pool.pair
      .map((s) => token(s).address)
      .find((a) => a.toLowerCase() !== token0.toLowerCase())!;
    // k = r0·r1 held (the 0.3% fee aside): token0 too dear (r1/r0 above the goal) is sold into the
    // pair until r0' = √(k / goal); too cheap, token1 until r1' = √(k · goal).
    const sellZero = off > 0;
    const [rIn, rOut] = sellZero ? [r0, r1] : [r1, r0];
    const after = sellZero ? isqrt((r0 * r1 * goal.den) / goal.num) : isqrt((r0 * r1 * goal.num) / goal.den);
    if (after <= rIn) return move;
    const amountIn = ((after - rIn) * 1000n) / 997n;
    const amountOut = (amountIn * 997n * rOut) / (rIn * 1000n + amountIn * 997n);
    const tokenIn = sellZero ? token0 : token1;
    await fund(tokenIn, amountIn);
    await send(
      tokenIn,
      encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [pool.address, amountIn] }),
    );
    await send(
      pool.address,
      encodeFunctionData({
        abi: pairAbi,
        functionName: 'swap',
        args: sellZero ? [0n, amountOut, keeper.address, '0x'] : [amountOut, 0n, keeper.address, '0x'],
      }),
    );
    return { ...move, traded: true };
  }

  /** A Uniswap v3 pool: a swap through the router that stops at the target price. */
  async function keepV3(pool: DevnetPool): Promise<KeeperMove> {
    const [token0, slot0] = await Promise.all([
      client.readContract({ address: pool.address, abi: v3PoolAbi, functionName: 'token0' }),
      client.readContract({ address: pool.address, abi: v3PoolAbi, functionName: 'slot0' }),
    ]);
    const goal = await target(pool, token0);
    const current = slot0[0];
    const price: Fraction = { num: current * current, den: 1n << 192n };
    const off = deviation(price, goal);
    const move = { pool: pool.address, venue: pool.venue, pair: pool.pair, deviationBps: off, traded: false };
    if (Math.abs(off) <= tolerance || !input.uniswapV3SwapRouter) return move;
    const limit = sqrtPriceX96(goal.den, goal.num);
    const token1 = pool.pair
      .map((s) => token(s).address)
      .find((a) => a.toLowerCase() !== token0.toLowerCase())!;
    // Token0 too dear: sell token0 (the price falls to the limit); else sell token1.
    const [tokenIn, tokenOut] = off > 0 ? [token0, token1] : [token1, token0];
    // More than the swap can take before the limit: the pool's own balance of the other side,
    // valued in tokenIn at the target, twice over. The router takes only what reaches the limit.
    const held = await client.readContract({
      address: tokenOut,
      abi: tokenAbi,
      functionName: 'balanceOf',
      args: [pool.address],
    });
    const amountIn = 2n * (off > 0 ? (held * goal.den) / goal.num : (held * goal.num) / goal.den) + 1n;
    await fund(tokenIn, amountIn);
    await send(
      tokenIn,
      encodeFunctionData({
        abi: tokenAbi,
        functionName: 'approve',
        args: [input.uniswapV3SwapRouter, amountIn],
      }),
    );
    await send(
      input.uniswapV3SwapRouter,
      encodeFunctionData({
        abi: swapRouterAbi,
        functionName: 'exactInputSingle',
        args: [
          {
            tokenIn,
            tokenOut,
            fee: pool.fee ?? 3000,
            recipient: keeper.address,
            deadline: 2n ** 40n,
            amountIn,
            amountOutMinimum: 0n,
            sqrtPriceLimitX96: limit,
          },
        ],
      }),
    );
    return { ...move, traded: true };
  }

  return {
    step() {
      const run = pending.then(async () => {
        const moves: KeeperMove[] = [];
        for (const pool of input.pools) {
          moves.push(pool.venue === 'uniswap-v3' ? await keepV3(pool) : await keepPair(pool));
        }
        return moves;
      });
      pending = run.catch(() => undefined);
      return run;
    },
  };
}

/** Runs a step every `everyMs` until the returned function is called; a failed step is reported. */
export function startKeeperTimer(
  keeper: ArbitrageKeeper,
  everyMs: number,
  onError: (err: unknown) => void,
): () => Promise<void> {
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    if (stopped) return;
    running = keeper.step().catch(onError);
  }, everyMs);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}

/** The keeper of a devnet chain's seeded pools (Base), or null when the chain has none. */
export function devnetKeeper(info: DevnetInfo, chainId = 8453): ArbitrageKeeper | null {
  const chain = info.chains[chainId];
  if (!chain || chain.pools.length === 0 || !chain.contracts.weth) return null;
  return createArbitrageKeeper({
    rpcUrl: chain.rpcUrl,
    chainId,
    pools: chain.pools,
    tokens: chain.tokens,
    priceFeeds: chain.priceFeeds,
    ...(chain.contracts.uniswapV3SwapRouter
      ? { uniswapV3SwapRouter: chain.contracts.uniswapV3SwapRouter }
      : {}),
    wrappedNative: chain.contracts.weth,
  });
}
