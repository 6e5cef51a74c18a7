// Devnet faucet: native balance through anvil_setBalance, tokens through the test tokens' open
// `mint`. Mints are sent from a throwaway key funded for the purpose, so concurrent callers
// (parallel test files sharing one devnet) never race on a shared sender's nonce.

import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  erc20Abi,
  http,
  parseAbi,
  parseEther,
  type Address,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { chainDefinition } from '../adapters/chain/viem.ts';
import { devnetChain, devnetToken, type DevnetInfo } from './devnet.ts';

const mintAbi = parseAbi(['function mint(address to, uint256 amount) returns (bool)']);
const wethAbi = parseAbi([
  'function deposit() payable',
  'function transfer(address to, uint256 value) returns (bool)',
]);

export interface FundRequest {
  chainId: number;
  address: Address;
  /** Wei to add to the native balance (bigint or decimal string). */
  eth?: bigint | string;
  /** Tokens to mint, by devnet symbol (e.g. USDC, USDC.e, pUSD), amounts in base units. */
  tokens?: { symbol: string; amount: bigint | string }[];
}

export interface FundResult {
  chainId: number;
  address: Address;
  /** Faucet transactions (a mint per token; deposit + transfer for WETH). */
  txHashes: Hex[];
  /** Native balance after funding, in wei. */
  eth: bigint;
  /** Balance after funding, per requested token symbol, in base units. */
  tokens: Record<string, bigint>;
}

function toAmount(v: bigint | string, what: string): bigint {
  if (typeof v === 'bigint') {
    if (v < 0n) throw new Error(`${what} must not be negative`);
    return v;
  }
  if (!/^\d+$/.test(v)) throw new Error(`${what} must be a non-negative integer in base units (got "${v}")`);
  return BigInt(v);
}

/** Adds ETH and mints tokens to `address` on one devnet chain; returns the new balances. */
export async function fundAddress(devnet: DevnetInfo, req: FundRequest): Promise<FundResult> {
  const chain = devnetChain(devnet, req.chainId);
  const viemChain = chainDefinition(chain.chainId, chain.rpcUrl);
  const transport = http(chain.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain: viemChain, transport, pollingInterval: 20 });
  const testClient = createTestClient({ mode: 'anvil', chain: viemChain, transport });

  const mints = (req.tokens ?? []).map((t) => ({
    token: devnetToken(devnet, chain.chainId, t.symbol),
    amount: toAmount(t.amount, `amount of ${t.symbol}`),
  }));
  const ethToAdd = req.eth === undefined ? 0n : toAmount(req.eth, 'eth');

  if (ethToAdd > 0n) {
    const current = await publicClient.getBalance({ address: req.address });
    await testClient.setBalance({ address: req.address, value: current + ethToAdd });
    // A block to hold the change: anvil's cheat alters the state after the latest block, which a
    // read at that block's number (as the service's reads pinned to a block are) does not see.
    await testClient.mine({ blocks: 1 });
  }

  const txHashes: Hex[] = [];
  const toMint = mints.filter((m) => m.amount > 0n);
  if (toMint.length > 0) {
    // WETH has no mint: the throwaway key wraps ether and transfers it.
    const wethNeeded = toMint
      .filter((m) => m.token.address === chain.contracts.weth)
      .reduce((sum, m) => sum + m.amount, 0n);
    const minter = privateKeyToAccount(generatePrivateKey());
    await testClient.setBalance({ address: minter.address, value: parseEther('1') + wethNeeded });
    const wallet = createWalletClient({ account: minter, chain: viemChain, transport });
    let nonce = 0;
    for (const m of toMint) {
      if (m.token.address === chain.contracts.weth) {
        txHashes.push(
          await wallet.writeContract({
            address: m.token.address,
            abi: wethAbi,
            functionName: 'deposit',
            value: m.amount,
            nonce: nonce++,
            gas: 200_000n,
          }),
          await wallet.writeContract({
            address: m.token.address,
            abi: wethAbi,
            functionName: 'transfer',
            args: [req.address, m.amount],
            nonce: nonce++,
            gas: 200_000n,
          }),
        );
      } else {
        txHashes.push(
          await wallet.writeContract({
            address: m.token.address,
            abi: mintAbi,
            functionName: 'mint',
            args: [req.address, m.amount],
            nonce: nonce++,
            gas: 200_000n,
          }),
        );
      }
    }
    for (const hash of txHashes) {
      const receipt = await publicClient.waitForTransactionReceipt({
        hash,
        pollingInterval: 20,
        timeout: 30_000,
      });
      if (receipt.status !== 'success') throw new Error(`Devnet faucet transaction ${hash} reverted`);
    }
  }

  const [eth, ...tokenBalances] = await Promise.all([
    publicClient.getBalance({ address: req.address }),
    ...mints.map((m) =>
      publicClient.readContract({
        address: m.token.address,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [req.address],
      }),
    ),
  ]);
  const tokens: Record<string, bigint> = {};
  mints.forEach((m, i) => {
    tokens[m.token.symbol] = tokenBalances[i] ?? 0n;
  });
  return { chainId: chain.chainId, address: req.address, txHashes, eth: eth ?? 0n, tokens };
}

export interface FundedAccount {
  privateKey: Hex;
  address: Address;
  funded: FundResult;
}

/** A fresh random key, funded on one chain: the usual way for a test to get a wallet of its own. */
export async function newFundedAccount(
  devnet: DevnetInfo,
  req: Omit<FundRequest, 'address'>,
): Promise<FundedAccount> {
  const privateKey = generatePrivateKey();
  const address = privateKeyToAccount(privateKey).address;
  const funded = await fundAddress(devnet, { ...req, address, eth: req.eth ?? parseEther('1') });
  return { privateKey, address, funded };
}
