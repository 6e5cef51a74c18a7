// DevPriceFeed contracts of a test's own, deployed on the shared devnet by a fresh funded key, so
// moving an answer never disturbs another test file.

import { createPublicClient, createWalletClient, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { artifact, loadArtifacts } from '../../devnet/compile.ts';
import { chainDefinition } from '../../src/adapters/chain/viem.ts';
import { devnetChain, type DevnetInfo } from '../../src/devnet/devnet.ts';
import { newFundedAccount } from '../../src/devnet/faucet.ts';

export interface TestFeed {
  address: Address;
  /** Posts a new round answering `answer` now (the chain's time). */
  setAnswer(answer: bigint): Promise<void>;
  /** Posts a new round stamped `updatedAt` (unix seconds). */
  setRound(answer: bigint, updatedAt: bigint): Promise<void>;
}

export interface TestFeedDeployer {
  deploy(description: string, answer: bigint, decimals?: number): Promise<TestFeed>;
  /** Timestamp of the chain's latest block (unix seconds). */
  chainTime(): Promise<bigint>;
}

export async function testFeedDeployer(devnet: DevnetInfo, chainId: number): Promise<TestFeedDeployer> {
  const chain = devnetChain(devnet, chainId);
  const viemChain = chainDefinition(chainId, chain.rpcUrl);
  const transport = http(chain.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain: viemChain, transport, pollingInterval: 20 });
  const { privateKey } = await newFundedAccount(devnet, { chainId });
  const wallet = createWalletClient({
    account: privateKeyToAccount(privateKey),
    chain: viemChain,
    transport,
  });
  const feedArtifact = artifact(await loadArtifacts(), 'DevPriceFeed');

  const confirm = async (hash: Hex) => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return receipt;
  };

  return {
    async deploy(description, answer, decimals = 8) {
      const receipt = await confirm(
        await wallet.deployContract({
          abi: feedArtifact.abi,
          bytecode: feedArtifact.bytecode,
          args: [decimals, description, answer],
        }),
      );
      const address = receipt.contractAddress;
      if (!address) throw new Error('DevPriceFeed deployment has no address');
      const post = async (functionName: 'setAnswer' | 'setRound', args: readonly unknown[]) => {
        await confirm(await wallet.writeContract({ address, abi: feedArtifact.abi, functionName, args }));
      };
      return {
        address,
        setAnswer: (a) => post('setAnswer', [a]),
        setRound: (a, updatedAt) => post('setRound', [a, updatedAt]),
      };
    },
    chainTime: async () => (await publicClient.getBlock()).timestamp,
  };
}
