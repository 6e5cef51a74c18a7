// The devnet's markets: liquidity pools for the registry's Base pairs (USDC/WETH, EURC/USDC,
// EURC/WETH) on each on-chain venue, seeded at realistic prices (ETH 3,000 USD, EUR 1.08 USD, the
// devnet feeds' start answers). Some pools are deep and some shallow, so price impact, slicing
// and depth collapse happen for real: see docs/venues.md for the table.
//
// Seeded from a market-maker key of its own (never the deployer, whose nonces fix the contract
// addresses), once: a pool that already holds liquidity (a chain loaded from its saved state) is
// left as it is.

import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  http,
  keccak256,
  parseAbi,
  parseEther,
  parseUnits,
  stringToHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { chainDefinition } from '../adapters/chain/viem.ts';

/** The seeder's key: fixed, so its address is recognisable; it holds nothing of value. */
export const DEVNET_MARKET_MAKER_KEY: Hex = keccak256(stringToHex('purser devnet market maker'));

export type DevnetPoolVenue = 'uniswap-v3' | 'devnet-amm' | 'aerodrome';

export interface DevnetPool {
  venue: DevnetPoolVenue;
  /** Registry symbols, as seeded: `[base, quote]`. */
  pair: [string, string];
  /** Uniswap v3 fee tier in hundredths of a bip; null for the constant-product pools (0.30%). */
  fee: number | null;
  address: Address;
  /** What was deposited, in whole tokens (`base`, `quote`). */
  depth: [string, string];
}

export interface PoolSpec {
  venue: DevnetPoolVenue;
  pair: [string, string];
  fee: number | null;
  /** Whole tokens of each side; their ratio is the pool's starting price. */
  depth: [string, string];
}

/**
 * The seeded pools. Prices: 1 WETH = 3,000 USDC = 2,777.78 EURC; 1 EURC = 1.08 USDC. Depth (in
 * WETH or USD of one side): deep on the Uniswap v3 0.05% and 0.01% tiers, medium on Aerodrome and
 * the v3 0.30% tier, shallow on devnet-amm and everything EURC/WETH.
 */
export const DEVNET_POOLS: readonly PoolSpec[] = [
  { venue: 'uniswap-v3', pair: ['WETH', 'USDC'], fee: 500, depth: ['2000', '6000000'] },
  { venue: 'uniswap-v3', pair: ['WETH', 'USDC'], fee: 3000, depth: ['50', '150000'] },
  { venue: 'uniswap-v3', pair: ['EURC', 'USDC'], fee: 100, depth: ['2000000', '2160000'] },
  { venue: 'uniswap-v3', pair: ['WETH', 'EURC'], fee: 3000, depth: ['20', '55555.555555'] },
  { venue: 'devnet-amm', pair: ['WETH', 'USDC'], fee: null, depth: ['100', '300000'] },
  { venue: 'devnet-amm', pair: ['EURC', 'USDC'], fee: null, depth: ['50000', '54000'] },
  { venue: 'devnet-amm', pair: ['WETH', 'EURC'], fee: null, depth: ['5', '13888.888888'] },
  { venue: 'aerodrome', pair: ['WETH', 'USDC'], fee: null, depth: ['500', '1500000'] },
  { venue: 'aerodrome', pair: ['EURC', 'USDC'], fee: null, depth: ['200000', '216000'] },
];

const erc20 = parseAbi([
  'function approve(address spender, uint256 value) returns (bool)',
  'function transfer(address to, uint256 value) returns (bool)',
  'function mint(address to, uint256 amount) returns (bool)',
  'function deposit() payable',
  'function totalSupply() view returns (uint256)',
]);
const v2Factory = parseAbi([
  'function getPair(address, address) view returns (address)',
  'function createPair(address, address) returns (address)',
]);
const v2Pair = parseAbi(['function mint(address to) returns (uint256)']);
const v3Factory = parseAbi(['function getPool(address, address, uint24) view returns (address)']);
const v3Pool = parseAbi(['function liquidity() view returns (uint128)']);
const positionManager = parseAbi([
  'function createAndInitializePoolIfNecessary(address token0, address token1, uint24 fee, uint160 sqrtPriceX96) payable returns (address)',
  'struct MintParams { address token0; address token1; uint24 fee; int24 tickLower; int24 tickUpper; uint256 amount0Desired; uint256 amount1Desired; uint256 amount0Min; uint256 amount1Min; address recipient; uint256 deadline; }',
  'function mint(MintParams params) payable returns (uint256 tokenId, uint128 liquidity, uint256 amount0, uint256 amount1)',
]);

/** The widest usable tick range of a fee tier (MIN_TICK/MAX_TICK rounded to its tick spacing). */
const FULL_RANGE_TICK: Record<number, number> = { 100: 887272, 500: 887270, 3000: 887220, 10000: 887200 };

/** ⌊√n⌋ for a non-negative bigint (Newton's method). */
export function isqrt(n: bigint): bigint {
  if (n < 0n) throw new RangeError('square root of a negative number');
  if (n < 2n) return n;
  let x = n;
  let y = (x + 1n) >> 1n;
  while (y < x) {
    x = y;
    y = (x + n / x) >> 1n;
  }
  return x;
}

/** Uniswap v3's sqrtPriceX96 for a price of `amount1 / amount0` (token1 base units per token0 base unit). */
export function sqrtPriceX96(amount0: bigint, amount1: bigint): bigint {
  return isqrt((amount1 << 192n) / amount0);
}

function sortTokens(a: Address, b: Address): [Address, Address] {
  return a.toLowerCase() < b.toLowerCase() ? [a, b] : [b, a];
}

interface DevnetToken {
  symbol: string;
  address: Address;
  decimals: number;
}

export interface SeedInput {
  chainId: number;
  rpcUrl: string;
  contracts: {
    weth: Address;
    uniswapV2Factory?: Address;
    uniswapV3Factory?: Address;
    uniswapV3PositionManager?: Address;
    aerodromePoolFactory?: Address;
  };
  tokens: DevnetToken[];
}

/** Seeds the pools of DEVNET_POOLS that hold no liquidity yet; returns every pool. Base only. */
export function seedDevnetMarkets(input: SeedInput): Promise<DevnetPool[]> {
  return seedPools(input, DEVNET_POOLS, DEVNET_MARKET_MAKER_KEY);
}

/**
 * Seeds `specs` (pairs named by the symbols of `input.tokens`) on the devnet's venues, skipping
 * pools that already hold liquidity, from `makerKey` (funded here; give each concurrent caller
 * its own key). Returns every pool of `specs`; nothing when the chain has no venues deployed.
 */
export async function seedPools(
  input: SeedInput,
  specs: readonly PoolSpec[],
  makerKey: Hex,
): Promise<DevnetPool[]> {
  const c = input.contracts;
  if (!c.uniswapV2Factory || !c.uniswapV3Factory || !c.uniswapV3PositionManager || !c.aerodromePoolFactory) {
    return [];
  }
  const chain = chainDefinition(input.chainId, input.rpcUrl);
  const transport = http(input.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 20 });
  const maker = privateKeyToAccount(makerKey);
  const wallet = createWalletClient({ account: maker, chain, transport });
  const token = (symbol: string): DevnetToken => {
    const found = input.tokens.find((t) => t.symbol === symbol);
    if (!found) throw new Error(`devnet markets: no token ${symbol} on chain ${input.chainId}`);
    return found;
  };

  // What is there already (a chain loaded from its state), and what must be seeded.
  const pools: DevnetPool[] = [];
  const toSeed: { spec: PoolSpec; amounts: [bigint, bigint]; tokens: [DevnetToken, DevnetToken] }[] = [];
  for (const spec of specs) {
    const tokens: [DevnetToken, DevnetToken] = [token(spec.pair[0]), token(spec.pair[1])];
    const amounts: [bigint, bigint] = [
      parseUnits(spec.depth[0], tokens[0].decimals),
      parseUnits(spec.depth[1], tokens[1].decimals),
    ];
    const address = await poolAddress(spec, tokens[0].address, tokens[1].address);
    if (address !== zeroAddress && (await hasLiquidity(spec, address))) {
      pools.push({ venue: spec.venue, pair: spec.pair, fee: spec.fee, address, depth: spec.depth });
    } else {
      toSeed.push({ spec, amounts, tokens });
    }
  }
  if (toSeed.length === 0) return pools;

  // Fund the maker: ether for gas and WETH, minted USDC and EURC.
  const needs = new Map<string, bigint>();
  for (const s of toSeed) {
    s.tokens.forEach((t, i) => needs.set(t.symbol, (needs.get(t.symbol) ?? 0n) + (s.amounts[i] ?? 0n)));
  }
  const wethNeeded = needs.get('WETH') ?? 0n;
  await createTestClient({ mode: 'anvil', chain, transport }).setBalance({
    address: maker.address,
    value: wethNeeded + parseEther('100'),
  });
  let nonce = await publicClient.getTransactionCount({ address: maker.address });
  const hashes: Hex[] = [];
  const send = async (to: Address, data: Hex, value = 0n): Promise<void> => {
    hashes.push(await wallet.sendTransaction({ to, data, value, nonce: nonce++, gas: 12_000_000n }));
  };
  for (const [symbol, amount] of needs) {
    const t = token(symbol);
    if (t.address === c.weth) {
      await send(t.address, encodeFunctionData({ abi: erc20, functionName: 'deposit' }), amount);
    } else {
      await send(
        t.address,
        encodeFunctionData({ abi: erc20, functionName: 'mint', args: [maker.address, amount] }),
      );
    }
    await send(
      t.address,
      encodeFunctionData({ abi: erc20, functionName: 'approve', args: [c.uniswapV3PositionManager, amount] }),
    );
  }
  await settle();

  for (const { spec, amounts, tokens } of toSeed) {
    const [a, b] = [tokens[0].address, tokens[1].address];
    if (spec.venue === 'uniswap-v3') {
      const fee = spec.fee ?? 3000;
      const [token0, token1] = sortTokens(a, b);
      const [amount0, amount1] = token0 === a ? amounts : [amounts[1], amounts[0]];
      const tick = FULL_RANGE_TICK[fee];
      if (tick === undefined) throw new Error(`devnet markets: no tick range for fee ${fee}`);
      await send(
        c.uniswapV3PositionManager,
        encodeFunctionData({
          abi: positionManager,
          functionName: 'createAndInitializePoolIfNecessary',
          args: [token0, token1, fee, sqrtPriceX96(amount0, amount1)],
        }),
      );
      await send(
        c.uniswapV3PositionManager,
        encodeFunctionData({
          abi: positionManager,
          functionName: 'mint',
          args: [
            {
              token0,
              token1,
              fee,
              tickLower: -tick,
              tickUpper: tick,
              amount0Desired: amount0,
              amount1Desired: amount1,
              amount0Min: 0n,
              amount1Min: 0n,
              recipient: maker.address,
              deadline: 2n ** 32n,
            },
          ],
        }),
      );
    } else {
      const factory = spec.venue === 'devnet-amm' ? c.uniswapV2Factory : c.aerodromePoolFactory;
      let pair = await publicClient.readContract({
        address: factory,
        abi: v2Factory,
        functionName: 'getPair',
        args: [a, b],
      });
      if (pair === zeroAddress) {
        await send(factory, encodeFunctionData({ abi: v2Factory, functionName: 'createPair', args: [a, b] }));
        await settle();
        pair = await publicClient.readContract({
          address: factory,
          abi: v2Factory,
          functionName: 'getPair',
          args: [a, b],
        });
      }
      await send(a, encodeFunctionData({ abi: erc20, functionName: 'transfer', args: [pair, amounts[0]] }));
      await send(b, encodeFunctionData({ abi: erc20, functionName: 'transfer', args: [pair, amounts[1]] }));
      await send(pair, encodeFunctionData({ abi: v2Pair, functionName: 'mint', args: [maker.address] }));
    }
  }
  await settle();

  for (const { spec, tokens } of toSeed) {
    const address = await poolAddress(spec, tokens[0].address, tokens[1].address);
    if (address === zeroAddress || !(await hasLiquidity(spec, address))) {
      throw new Error(`devnet markets: seeding the ${spec.venue} ${spec.pair.join('/')} pool failed`);
    }
    pools.push({ venue: spec.venue, pair: spec.pair, fee: spec.fee, address, depth: spec.depth });
  }
  return pools;

  async function settle(): Promise<void> {
    for (const hash of hashes.splice(0)) {
      const receipt = await publicClient.waitForTransactionReceipt({
        hash,
        pollingInterval: 20,
        timeout: 30_000,
      });
      if (receipt.status !== 'success') {
        const tx = await publicClient.getTransaction({ hash });
        const reason = await publicClient
          .call({
            account: tx.from,
            to: tx.to,
            data: tx.input,
            value: tx.value,
            blockNumber: receipt.blockNumber - 1n,
          })
          .then(
            () => 'no reason given',
            (err: Error) => err.message.split('\n')[0],
          );
        throw new Error(`devnet markets: transaction ${hash} to ${tx.to} reverted (${reason}})`);
      }
    }
  }

  async function poolAddress(spec: PoolSpec, a: Address, b: Address): Promise<Address> {
    if (spec.venue === 'uniswap-v3') {
      return publicClient.readContract({
        address: c.uniswapV3Factory as Address,
        abi: v3Factory,
        functionName: 'getPool',
        args: [a, b, spec.fee ?? 3000],
      });
    }
    const factory = (spec.venue === 'devnet-amm' ? c.uniswapV2Factory : c.aerodromePoolFactory) as Address;
    return publicClient.readContract({
      address: factory,
      abi: v2Factory,
      functionName: 'getPair',
      args: [a, b],
    });
  }

  async function hasLiquidity(spec: PoolSpec, address: Address): Promise<boolean> {
    if (spec.venue === 'uniswap-v3') {
      return (await publicClient.readContract({ address, abi: v3Pool, functionName: 'liquidity' })) > 0n;
    }
    return (await publicClient.readContract({ address, abi: erc20, functionName: 'totalSupply' })) > 0n;
  }
}
