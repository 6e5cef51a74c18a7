// A Uniswap v2 pool of a test's own on the shared devnet: its own Factory and Router02 (the npm
// build artifacts, as deployed on mainnet) and two fresh TestTokens with a seeded pair, all from a
// fresh funded key, so no other test file moves its price.

import { createRequire } from 'node:module';
import {
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  http,
  parseAbi,
  parseEther,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { artifact, loadArtifacts } from '../../devnet/compile.ts';
import { chainDefinition } from '../../src/adapters/chain/viem.ts';
import { devnetChain, type DevnetInfo } from '../../src/devnet/devnet.ts';
import { newFundedAccount } from '../../src/devnet/faucet.ts';

const require = createRequire(import.meta.url);

interface NpmArtifact {
  abi: Abi;
  /** Creation code without the 0x prefix. */
  bytecode: string;
}

const mintAbi = parseAbi(['function mint(address to, uint256 amount) returns (bool)']);
const routerAbi = parseAbi([
  'function addLiquidity(address tokenA, address tokenB, uint256 amountADesired, uint256 amountBDesired, uint256 amountAMin, uint256 amountBMin, address to, uint256 deadline) returns (uint256 amountA, uint256 amountB, uint256 liquidity)',
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
  const chainId = options.chainId ?? 8453;
  const chain = devnetChain(devnet, chainId);
  const viemChain = chainDefinition(chainId, chain.rpcUrl);
  const transport = http(chain.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain: viemChain, transport, pollingInterval: 20 });
  const owner = await newFundedAccount(devnet, { chainId, eth: parseEther('10') });
  const account = privateKeyToAccount(owner.privateKey);
  const wallet = createWalletClient({ account, chain: viemChain, transport });

  const confirm = async (hash: Hex): Promise<Address | null> => {
    const receipt = await publicClient.waitForTransactionReceipt({
      hash,
      pollingInterval: 20,
      timeout: 30_000,
    });
    if (receipt.status !== 'success') throw new Error(`test pool setup transaction ${hash} reverted`);
    return receipt.contractAddress ? getAddress(receipt.contractAddress) : null;
  };
  const deploy = async (abi: Abi, bytecode: Hex, args: readonly unknown[]): Promise<Address> => {
    const address = await confirm(await wallet.deployContract({ abi, bytecode, args }));
    if (!address) throw new Error('test pool setup: no contract address');
    return address;
  };

  const factoryArtifact = require('@uniswap/v2-core/build/UniswapV2Factory.json') as NpmArtifact;
  const routerArtifact = require('@uniswap/v2-periphery/build/UniswapV2Router02.json') as NpmArtifact;
  const factory = await deploy(factoryArtifact.abi, `0x${factoryArtifact.bytecode}`, [account.address]);
  const router = await deploy(routerArtifact.abi, `0x${routerArtifact.bytecode}`, [
    factory,
    chain.contracts.weth,
  ]);

  const testToken = artifact(await loadArtifacts(), 'TestToken');
  const tokenA = await deploy(testToken.abi, testToken.bytecode, ['Pool Alpha', 'ALPHA', 18]);
  const tokenB = await deploy(testToken.abi, testToken.bytecode, ['Pool Beta', 'BETA', 6]);
  const unpooled = await deploy(testToken.abi, testToken.bytecode, ['Lonely', 'LONE', 18]);

  const reserveA = options.reserveA ?? 1_000_000n * 10n ** 18n;
  const reserveB = options.reserveB ?? 2_000_000n * 10n ** 6n;
  for (const [token, amount] of [
    [tokenA, reserveA],
    [tokenB, reserveB],
  ] as const) {
    await confirm(
      await wallet.writeContract({
        address: token,
        abi: mintAbi,
        functionName: 'mint',
        args: [account.address, amount],
      }),
    );
    await confirm(
      await wallet.writeContract({
        address: token,
        abi: erc20Abi,
        functionName: 'approve',
        args: [router, amount],
      }),
    );
  }
  const head = await publicClient.getBlock();
  await confirm(
    await wallet.writeContract({
      address: router,
      abi: routerAbi,
      functionName: 'addLiquidity',
      args: [tokenA, tokenB, reserveA, reserveB, 0n, 0n, account.address, head.timestamp + 3600n],
    }),
  );

  return {
    chainId,
    rpcUrl: chain.rpcUrl,
    factory,
    router,
    tokenA,
    tokenB,
    unpooled,
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
    const hash = await wallet.sendTransaction({ to: call.to, data: call.data, value: call.value });
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
