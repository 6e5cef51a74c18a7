// A market of a test's own on the devnet's Base venues: two fresh tokens and their pools on
// Uniswap v3, devnet-amm and the Aerodrome-format router, so no other test file trading on the
// shared devnet moves this test's prices.

import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  erc20Abi,
  http,
  parseAbi,
  parseEther,
  type Abi,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { artifact, loadArtifacts } from '../../devnet/compile.ts';
import { chainDefinition } from '../../src/adapters/chain/viem.ts';
import type { Call } from '../../src/adapters/venues/port.ts';
import { BASE_CHAIN_ID, devnetChain, type DevnetInfo } from '../../src/devnet/devnet.ts';
import { seedPools, type DevnetPool, type PoolSpec } from '../../src/devnet/markets.ts';

export interface TestToken {
  symbol: string;
  address: Address;
  decimals: number;
}

export interface TestMarket {
  chainId: number;
  rpcUrl: string;
  tokens: Record<string, TestToken>;
  pools: DevnetPool[];
}

const mintAbi = parseAbi(['function mint(address to, uint256 amount) returns (bool)']);

/**
 * Deploys tokens (symbol → decimals) and seeds `specs` over them on chain 8453 of the devnet.
 * Symbols are the test's own (`TKA`, `TKB`…); WETH, USDC and EURC of the devnet may be named too.
 */
export async function testMarket(
  devnet: DevnetInfo,
  tokens: Record<string, number>,
  specs: PoolSpec[],
): Promise<TestMarket> {
  const chain = devnetChain(devnet, BASE_CHAIN_ID);
  const viemChain = chainDefinition(chain.chainId, chain.rpcUrl);
  const transport = http(chain.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain: viemChain, transport, pollingInterval: 20 });
  const deployer = privateKeyToAccount(generatePrivateKey());
  await createTestClient({ mode: 'anvil', chain: viemChain, transport }).setBalance({
    address: deployer.address,
    value: parseEther('10'),
  });
  const wallet = createWalletClient({ account: deployer, chain: viemChain, transport });
  const built = artifact(await loadArtifacts(), 'TestToken');
  const deployed: TestToken[] = [];
  for (const [symbol, decimals] of Object.entries(tokens)) {
    const hash = await wallet.deployContract({
      abi: built.abi as Abi,
      bytecode: built.bytecode,
      args: [`Test ${symbol}`, symbol, decimals],
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (!receipt.contractAddress) throw new Error(`deploying ${symbol} failed`);
    deployed.push({ symbol, address: receipt.contractAddress, decimals });
  }
  const all = [
    ...chain.tokens.map((t) => ({ symbol: t.symbol, address: t.address, decimals: t.decimals })),
    ...deployed,
  ];
  const pools = await seedPools(
    { chainId: chain.chainId, rpcUrl: chain.rpcUrl, contracts: chain.contracts, tokens: all },
    specs,
    generatePrivateKey(),
  );
  return {
    chainId: chain.chainId,
    rpcUrl: chain.rpcUrl,
    tokens: Object.fromEntries(all.map((t) => [t.symbol, t])),
    pools,
  };
}

/** A fresh key holding `amount` of `token` (minted) and some ether, on the market's chain. */
export async function marketTrader(market: TestMarket, token: TestToken, amount: bigint) {
  const key = generatePrivateKey();
  const account = privateKeyToAccount(key);
  const viemChain = chainDefinition(market.chainId, market.rpcUrl);
  const transport = http(market.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain: viemChain, transport, pollingInterval: 20 });
  await createTestClient({ mode: 'anvil', chain: viemChain, transport }).setBalance({
    address: account.address,
    value: parseEther('1'),
  });
  const wallet = createWalletClient({ account, chain: viemChain, transport });
  const minted = await wallet.writeContract({
    address: token.address,
    abi: mintAbi,
    functionName: 'mint',
    args: [account.address, amount],
  });
  await publicClient.waitForTransactionReceipt({ hash: minted, pollingInterval: 20 });

  return {
    address: account.address,
    balanceOf: (t: TestToken) =>
      publicClient.readContract({
        address: t.address,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [account.address],
      }),
    /** Sends the calls in order, each mined before the next; returns each receipt. */
    async receipts(calls: Call[]): Promise<TransactionReceipt[]> {
      const receipts: TransactionReceipt[] = [];
      for (const call of calls) {
        const hash: Hex = await wallet.sendTransaction({
          to: call.to,
          data: call.data,
          value: call.value,
          gas: 1_000_000n,
        });
        receipts.push(
          await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20, timeout: 30_000 }),
        );
      }
      return receipts;
    },
    /** Sends the calls in order, each mined before the next; returns each receipt's status. */
    async send(calls: Call[]): Promise<('success' | 'reverted')[]> {
      return (await this.receipts(calls)).map((r) => r.status);
    },
    /** The account's native balance. */
    nativeBalance: () => publicClient.getBalance({ address: account.address }),
  };
}
