// Moving a devnet price feed (DevPriceFeed: anyone may post a round). Sent from a throwaway key
// funded for the purpose, like the faucet, so concurrent callers never race on a nonce.

import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  parseAbi,
  parseEther,
  type Address,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { chainDefinition } from '../adapters/chain/viem.ts';
import { aggregatorV3Abi } from '../adapters/prices/chainlink.ts';

const devPriceFeedAbi = parseAbi([
  'function setAnswer(int256 answer)',
  'function setRound(int256 answer, uint256 updatedAt)',
]);

export interface PostPriceRequest {
  rpcUrl: string;
  chainId: number;
  feed: Address;
  /** The answer in the feed's own scale (USD × 10^decimals); may be zero or negative on purpose. */
  answer: bigint;
  /** Unix seconds to stamp the round with; absent: the block's time. */
  updatedAt?: bigint;
}

export interface PostedRound {
  txHash: Hex;
  roundId: bigint;
  answer: bigint;
  updatedAt: bigint;
}

/** The feed's `decimals()` (to scale a decimal USD answer before posting). */
export async function devnetFeedDecimals(rpcUrl: string, chainId: number, feed: Address): Promise<number> {
  const client = createPublicClient({ chain: chainDefinition(chainId, rpcUrl), transport: http(rpcUrl) });
  return client.readContract({ address: feed, abi: aggregatorV3Abi, functionName: 'decimals' });
}

/** Posts a new round to a devnet feed and returns it as the feed now reports it. */
export async function postDevnetPrice(req: PostPriceRequest): Promise<PostedRound> {
  const chain = chainDefinition(req.chainId, req.rpcUrl);
  const transport = http(req.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 20 });
  const poster = privateKeyToAccount(generatePrivateKey());
  await createTestClient({ mode: 'anvil', chain, transport }).setBalance({
    address: poster.address,
    value: parseEther('1'),
  });
  const wallet = createWalletClient({ account: poster, chain, transport });
  const txHash =
    req.updatedAt === undefined
      ? await wallet.writeContract({
          address: req.feed,
          abi: devPriceFeedAbi,
          functionName: 'setAnswer',
          args: [req.answer],
          gas: 200_000n,
        })
      : await wallet.writeContract({
          address: req.feed,
          abi: devPriceFeedAbi,
          functionName: 'setRound',
          args: [req.answer, req.updatedAt],
          gas: 200_000n,
        });
  const receipt = await publicClient.waitForTransactionReceipt({
    hash: txHash,
    pollingInterval: 20,
    timeout: 30_000,
  });
  if (receipt.status !== 'success') throw new Error(`Devnet price feed transaction ${txHash} reverted`);
  const [roundId, answer, , updatedAt] = await publicClient.readContract({
    address: req.feed,
    abi: aggregatorV3Abi,
    functionName: 'latestRoundData',
    blockNumber: receipt.blockNumber,
  });
  return { txHash, roundId, answer, updatedAt };
}
