// A Kernel account that holds only WETH gets ETH through the bundler: the relayer's EntryPoint
// deposit pays the prefund of the operation that unwraps its WETH; without it the bundler refuses.

import {
  createPublicClient,
  encodeFunctionData,
  erc20Abi,
  http,
  parseAbi,
  parseEther,
  type Address,
} from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, inject, it } from 'vitest';
import {
  devnetKernelSmartAccount,
  draftUserOperation,
  signedUserOperation,
} from '../../../test/support/kernel.ts';
import { createJsonRpcBundler } from '../../adapters/bundler/json-rpc.ts';
import { BundlerError } from '../../adapters/bundler/port.ts';
import { NoRelayerError } from '../../adapters/chain/port.ts';
import { chainDefinition, createViemChainPort } from '../../adapters/chain/viem.ts';
import {
  BASE_CHAIN_ID,
  devnetBundlerUrls,
  devnetChain,
  devnetRpcUrls,
  ENTRY_POINT_V07,
} from '../../devnet/devnet.ts';
import { fundAddress, newFundedAccount } from '../../devnet/faucet.ts';
import { ensurePrefund, requiredPrefundWei } from './index.ts';

const devnet = inject('devnet');
const CHAIN = BASE_CHAIN_ID;
const chain = devnetChain(devnet, CHAIN);
const publicClient = createPublicClient({
  chain: chainDefinition(CHAIN, chain.rpcUrl),
  transport: http(chain.rpcUrl, { retryCount: 0 }),
  pollingInterval: 20,
});
const wethAbi = parseAbi(['function withdraw(uint256 wad)']);
const depositOf = (account: Address) =>
  publicClient.readContract({
    address: ENTRY_POINT_V07,
    abi: entryPoint07Abi,
    functionName: 'balanceOf',
    args: [account],
  });
const wethOf = (account: Address) =>
  publicClient.readContract({
    address: chain.contracts.weth,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [account],
  });

describe('ensurePrefund: the relayer deposits for an account without ETH', () => {
  it('lets a WETH-only Kernel account unwrap WETH through the bundler; without the deposit the bundler refuses (AA21)', async () => {
    // A relayer of this test's own (the development relayer key is shared with other test files).
    const relayer = await newFundedAccount(devnet, { chainId: CHAIN, eth: parseEther('2') });
    const chainPort = createViemChainPort({
      rpcUrls: devnetRpcUrls(devnet),
      relayerPrivateKey: relayer.privateKey,
    });
    const bundler = createJsonRpcBundler({ urls: devnetBundlerUrls(devnet) });

    const account = await devnetKernelSmartAccount(
      publicClient,
      chain,
      privateKeyToAccount(generatePrivateKey()),
    );
    await fundAddress(devnet, {
      chainId: CHAIN,
      address: account.address,
      tokens: [{ symbol: 'WETH', amount: parseEther('0.2') }],
    });
    expect(await publicClient.getBalance({ address: account.address })).toBe(0n);
    expect(await depositOf(account.address)).toBe(0n);
    expect(await wethOf(account.address)).toBe(parseEther('0.2'));

    // The first operation deploys the account and unwraps 0.05 WETH into it.
    const draft = await draftUserOperation(publicClient, account, [
      {
        to: chain.contracts.weth,
        data: encodeFunctionData({ abi: wethAbi, functionName: 'withdraw', args: [parseEther('0.05')] }),
      },
    ]);
    const op = await signedUserOperation(
      account,
      draft,
      await bundler.estimateUserOperationGas(CHAIN, draft),
    );
    const required = requiredPrefundWei(op);
    expect(required).toBeGreaterThan(0n);

    const refused = await bundler.sendUserOperation(CHAIN, op).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BundlerError);
    expect(refused).toMatchObject({ kind: 'rpc', code: -32500, aaCode: 'AA21' });

    const relayerBefore = await publicClient.getBalance({ address: relayer.address });
    const funded = await ensurePrefund(chainPort, CHAIN, account.address, required);
    expect(funded).toMatchObject({
      requiredWei: required,
      depositWei: 0n,
      balanceWei: 0n,
      depositedWei: required,
    });
    expect(funded.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await depositOf(account.address)).toBe(required);
    const depositTx = await publicClient.getTransactionReceipt({ hash: funded.txHash! });
    expect(depositTx.from.toLowerCase()).toBe(relayer.address.toLowerCase());
    expect(relayerBefore - (await publicClient.getBalance({ address: relayer.address }))).toBe(
      required + depositTx.gasUsed * depositTx.effectiveGasPrice,
    );
    // Covered now: a second call deposits nothing.
    expect(await ensurePrefund(chainPort, CHAIN, account.address, required)).toMatchObject({
      depositedWei: 0n,
      txHash: null,
    });

    const hash = await bundler.sendUserOperation(CHAIN, op);
    const receipt = await bundler.waitForUserOperationReceipt(CHAIN, hash, {
      timeoutMs: 30_000,
      pollIntervalMs: 100,
    });
    expect(receipt.success).toBe(true);
    // The account now holds the unwrapped ETH; the gas came out of the deposit, the rest stays there.
    expect(await publicClient.getBalance({ address: account.address })).toBe(parseEther('0.05'));
    expect(await wethOf(account.address)).toBe(parseEther('0.15'));
    expect(await depositOf(account.address)).toBe(required - receipt.actualGasCost);
  });

  it('deposits only the shortfall when the account holds some ETH, and needs a relayer to deposit at all', async () => {
    const relayer = await newFundedAccount(devnet, { chainId: CHAIN });
    const chainPort = createViemChainPort({
      rpcUrls: devnetRpcUrls(devnet),
      relayerPrivateKey: relayer.privateKey,
    });
    const account = privateKeyToAccount(generatePrivateKey()).address;
    await fundAddress(devnet, { chainId: CHAIN, address: account, eth: 3_000n });
    const funded = await ensurePrefund(chainPort, CHAIN, account, 10_000n);
    expect(funded).toMatchObject({ depositWei: 0n, balanceWei: 3_000n, depositedWei: 7_000n });
    expect(await depositOf(account)).toBe(7_000n);

    const noRelayer = createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) });
    await expect(ensurePrefund(noRelayer, CHAIN, account, 20_000n)).rejects.toBeInstanceOf(NoRelayerError);
    expect(await ensurePrefund(noRelayer, CHAIN, account, 10_000n)).toMatchObject({
      depositedWei: 0n,
      txHash: null,
    });
  });
});
