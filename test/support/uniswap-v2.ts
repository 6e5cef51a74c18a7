// A Uniswap v2 pool of a test's own on the shared devnet: a pair of two fresh TestTokens on the
// devnet's Router02 (`devnet-amm`, the npm build artifacts), so no other test file moves its price.

import {
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  erc20Abi,
  formatUnits,
  http,
  parseAbi,
  parseEther,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { chainDefinition } from '../../src/adapters/chain/viem.ts';
import { BASE_CHAIN_ID, devnetChain, type DevnetInfo } from '../../src/devnet/devnet.ts';
import { testMarket } from './markets.ts';
import { newFundedAccount } from '../../src/devnet/faucet.ts';

const mintAbi = parseAbi(['function mint(address to, uint256 amount) returns (bool)']);
const routerAbi = parseAbi([
  'function getAmountsOut(uint256 amountIn, address[] path) view returns (uint256[] amounts)',
]);

export interface V2TestPool {
  chainId: number;
  rpcUrl: string;
  factory: Address;
  router: Address;
  /** 18 decimals. */
  tokenA: Address;
  /** 6 decimals. */
  tokenB: Address;
  /** A token with no pool at all. */
  unpooled: Address;
  publicClient: PublicClient;
  /** What the pool gives now for amountIn of `sell` (Router02 getAmountsOut). */
  amountOut(sell: Address, buy: Address, amountIn: bigint): Promise<bigint>;
  balanceOf(token: Address, owner: Address): Promise<bigint>;
  /** The chain's clock (latest block timestamp). */
  chainTime(): Promise<bigint>;
}

export interface DeployV2PoolOptions {
  chainId?: number;
  /** Seeded reserves (default 1,000,000 A and 2,000,000 B). */
  reserveA?: bigint;
  reserveB?: bigint;
}

export async function deployV2TestPool(
  devnet: DevnetInfo,
  options: DeployV2PoolOptions = {},
): Promise<V2TestPool> {
  const chainId = options.chainId ?? BASE_CHAIN_ID;
  const chain = devnetChain(devnet, chainId);
  const router = chain.contracts.uniswapV2Router02;
  const factory = chain.contracts.uniswapV2Factory;
  if (!router || !factory) throw new Error(`devnet chain ${chainId} has no Uniswap v2 router`);
  const reserveA = options.reserveA ?? 1_000_000n * 10n ** 18n;
  const reserveB = options.reserveB ?? 2_000_000n * 10n ** 6n;
  // Fresh tokens, so the pair on the devnet's router is this test's alone.
  const market = await testMarket(devnet, { ALPHA: 18, BETA: 6, LONE: 18 }, [
    {
      venue: 'devnet-amm',
      pair: ['ALPHA', 'BETA'],
      fee: null,
      depth: [formatUnits(reserveA, 18), formatUnits(reserveB, 6)],
    },
  ]);
  const publicClient = createPublicClient({
    chain: chainDefinition(chainId, chain.rpcUrl),
    transport: http(chain.rpcUrl, { retryCount: 0 }),
    pollingInterval: 20,
  });
  return {
    chainId,
    rpcUrl: chain.rpcUrl,
    factory,
    router,
    tokenA: market.tokens.ALPHA!.address,
    tokenB: market.tokens.BETA!.address,
    unpooled: market.tokens.LONE!.address,
    publicClient,
    amountOut: async (sell, buy, amountIn) => {
      const amounts = await publicClient.readContract({
        address: router,
        abi: routerAbi,
        functionName: 'getAmountsOut',
        args: [amountIn, [sell, buy]],
      });
      return amounts[amounts.length - 1] ?? 0n;
    },
    balanceOf: (token, holder) =>
      publicClient.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [holder] }),
    chainTime: async () => (await publicClient.getBlock()).timestamp,
  };
}

/** A fresh funded taker holding `amount` of `token` (TestToken's open mint). */
export async function newTaker(
  devnet: DevnetInfo,
  pool: V2TestPool,
  token: Address,
  amount: bigint,
): Promise<{ address: Address; send(call: { to: Address; data: Hex; value: bigint }): Promise<void> }> {
  const funded = await newFundedAccount(devnet, { chainId: pool.chainId, eth: parseEther('1') });
  const account = privateKeyToAccount(funded.privateKey);
  const viemChain = chainDefinition(pool.chainId, pool.rpcUrl);
  const wallet = createWalletClient({
    account,
    chain: viemChain,
    transport: http(pool.rpcUrl, { retryCount: 0 }),
  });
  const send = async (call: { to: Address; data: Hex; value: bigint }): Promise<void> => {
    // An explicit limit: a Uniswap v2 swap costs more when its block is the first of a new second
    // (the pair writes its price accumulators), so an estimate made a second earlier can fall short.
    const hash = await wallet.sendTransaction({
      to: call.to,
      data: call.data,
      value: call.value,
      gas: 1_000_000n,
    });
    const receipt = await pool.publicClient.waitForTransactionReceipt({
      hash,
      pollingInterval: 20,
      timeout: 30_000,
    });
    if (receipt.status !== 'success') throw new Error(`transaction to ${call.to} reverted`);
  };
  await send({
    to: token,
    data: encodeFunctionData({ abi: mintAbi, functionName: 'mint', args: [account.address, amount] }),
    value: 0n,
  });
  return { address: account.address, send };
}
