// A Kernel account that holds only WETH gets ETH through the bundler: the relayer's EntryPoint
// deposit pays the prefund of the operation that unwraps its WETH; without it the bundler refuses.
// Every deposit is recorded before it is broadcast and booked from its receipt: two asking at once
// deposit once, and a deposit a crash left unbooked, or unsent, is finished by the sweep.

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
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { createAccountWithSession } from '../../../test/support/identity.ts';
import {
  devnetKernelSmartAccount,
  draftUserOperation,
  signedUserOperation,
} from '../../../test/support/kernel.ts';
import { createJsonRpcBundler } from '../../adapters/bundler/json-rpc.ts';
import { BundlerError } from '../../adapters/bundler/port.ts';
import { NoRelayerError, type ChainPort } from '../../adapters/chain/port.ts';
import { ManualClock } from '../../core/clock.ts';
import { chainDefinition, createViemChainPort } from '../../adapters/chain/viem.ts';
import {
  BASE_CHAIN_ID,
  devnetBundlerUrls,
  devnetChain,
  devnetRpcUrls,
  ENTRY_POINT_V07,
} from '../../devnet/devnet.ts';
import { fundAddress, newFundedAccount } from '../../devnet/faucet.ts';
import { balanceOf, externalAccount, nativeAsset, walletAccount } from '../ledger/index.ts';
import {
  DEPOSIT_SWEEP_AFTER_MS,
  reconcilePrefundDeposits,
  requiredPrefundWei,
  sponsorPrefund,
  type PrefundRequest,
} from './index.ts';

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

let db: TestDatabase;
let accountId: string;
const clock = new ManualClock(new Date());

beforeAll(async () => {
  db = await createTestDatabase();
  accountId = (await createAccountWithSession(db.handle.db)).accountId;
});
afterAll(async () => {
  await db?.drop();
});

/** A relayer of the test's own (the development relayer key is shared with other test files). */
async function ownRelayer(eth = parseEther('2')) {
  const relayer = await newFundedAccount(devnet, { chainId: CHAIN, eth });
  return createViemChainPort({ rpcUrls: devnetRpcUrls(devnet), relayerPrivateKey: relayer.privateKey });
}

const sponsor = (
  chain: ChainPort,
  account: Address,
  requiredWei: bigint,
  more: Partial<PrefundRequest> = {},
) =>
  sponsorPrefund(
    { db: db.handle.db, clock, chain },
    {
      accountId,
      chainId: CHAIN,
      account,
      intentId: null,
      sliceSeq: null,
      requiredWei: async () => requiredWei,
      ...more,
    },
    { receiptTimeoutMs: 30_000 },
  );

/** The account's deposits as recorded, oldest first. */
const recorded = (account: Address) =>
  db.handle.db
    .selectFrom('prefund_deposits')
    .select(['amount_wei', 'state', 'tx_hash'])
    .where('wallet', '=', account.toLowerCase())
    .orderBy('created_at')
    .execute();

/** What the ledger says the account's native coin is (balance plus EntryPoint deposit). */
const booked = (account: Address) =>
  balanceOf(db.handle.db, walletAccount(CHAIN, account), nativeAsset(CHAIN, 60));

const freshAccount = () => privateKeyToAccount(generatePrivateKey()).address;

describe('sponsorPrefund: the relayer deposits for an account without ETH, and books it', () => {
  it('lets a WETH-only Kernel account unwrap WETH through the bundler; without the deposit the bundler refuses (AA21)', async () => {
    const chainPort = await ownRelayer();
    const relayer = chainPort.relayerAddress()!;
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

    const relayerBefore = await publicClient.getBalance({ address: relayer });
    const funded = await sponsor(chainPort, account.address, required);
    expect(funded).toMatchObject({
      requiredWei: required,
      depositWei: 0n,
      balanceWei: 0n,
      inFlightWei: 0n,
      depositedWei: required,
    });
    expect(funded.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await depositOf(account.address)).toBe(required);
    const depositTx = await publicClient.getTransactionReceipt({ hash: funded.txHash! });
    expect(depositTx.from.toLowerCase()).toBe(relayer.toLowerCase());
    expect(relayerBefore - (await publicClient.getBalance({ address: relayer }))).toBe(
      required + depositTx.gasUsed * depositTx.effectiveGasPrice,
    );
    // Recorded and booked: the account's native coin in the books is what the chain holds for it.
    expect(await recorded(account.address)).toEqual([
      { amount_wei: required.toString(), state: 'booked', tx_hash: funded.txHash },
    ]);
    expect(await booked(account.address)).toBe(required);
    expect(await balanceOf(db.handle.db, externalAccount(CHAIN), nativeAsset(CHAIN, 60))).toBeLessThanOrEqual(
      -required,
    );
    // Covered now: a second call deposits nothing.
    expect(await sponsor(chainPort, account.address, required)).toMatchObject({
      depositedWei: 0n,
      txHash: null,
    });
    expect(await recorded(account.address)).toHaveLength(1);

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
    const chainPort = await ownRelayer(parseEther('1'));
    const account = freshAccount();
    await fundAddress(devnet, { chainId: CHAIN, address: account, eth: 3_000n });
    const funded = await sponsor(chainPort, account, 10_000n);
    expect(funded).toMatchObject({ depositWei: 0n, balanceWei: 3_000n, depositedWei: 7_000n });
    expect(await depositOf(account)).toBe(7_000n);
    expect(await booked(account)).toBe(7_000n);

    const noRelayer = createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) });
    await expect(sponsor(noRelayer, account, 20_000n)).rejects.toBeInstanceOf(NoRelayerError);
    expect(await sponsor(noRelayer, account, 10_000n)).toMatchObject({ depositedWei: 0n, txHash: null });
    // The refusal recorded nothing.
    expect((await recorded(account)).map((r) => r.amount_wei)).toEqual(['7000']);
  });

  it('deposits once when two ask at once for the same operations, counting the deposit in flight', async () => {
    const chainPort = await ownRelayer(parseEther('1'));
    const account = freshAccount();
    const results = await Promise.all([
      sponsor(chainPort, account, 50_000n),
      sponsor(chainPort, account, 50_000n),
    ]);
    expect(results.map((r) => r.depositedWei).sort()).toEqual([0n, 50_000n]);
    expect(await depositOf(account)).toBe(50_000n);
    expect(await recorded(account)).toHaveLength(1);
    expect(await booked(account)).toBe(50_000n);
  });

  it('books a deposit whose receipt the sender never saw, and sends again one recorded but never sent', async () => {
    const real = await ownRelayer(parseEther('1'));
    // The receipt wait times out (the process died after the broadcast).
    const blind: ChainPort = {
      ...real,
      waitForReceipt: () => Promise.reject(new Error('timed out waiting for the receipt')),
    };
    const first = freshAccount();
    await expect(sponsor(blind, first, 40_000n)).rejects.toThrow(/timed out/);
    await expect.poll(() => depositOf(first), { timeout: 10_000 }).toBe(40_000n); // on chain
    expect(await booked(first)).toBe(0n); // not yet in the books
    expect((await recorded(first))[0]!.state).toBe('signed');

    // Recorded, then the process died before the broadcast (it never answers).
    const mute: ChainPort = { ...real, sendRawTransaction: () => new Promise<never>(() => {}) };
    const second = freshAccount();
    void sponsor(mute, second, 25_000n);
    await expect.poll(async () => (await recorded(second)).length, { timeout: 10_000 }).toBe(1);
    expect(await depositOf(second)).toBe(0n);

    // Too fresh for the sweep: left alone.
    expect(await reconcilePrefundDeposits({ db: db.handle.db, clock, chain: real })).toBe(0);
    clock.advance(DEPOSIT_SWEEP_AFTER_MS + 1_000);
    // The first is booked from its receipt; the second is broadcast again (its nonce is still free).
    expect(await reconcilePrefundDeposits({ db: db.handle.db, clock, chain: real })).toBe(1);
    expect(await booked(first)).toBe(40_000n);
    expect(await recorded(first)).toMatchObject([{ state: 'booked' }]);
    await expect.poll(() => depositOf(second), { timeout: 10_000 }).toBe(25_000n);
    // The next sweeps book it from its receipt (as the job does every minute).
    await expect
      .poll(
        async () => {
          await reconcilePrefundDeposits({ db: db.handle.db, clock, chain: real });
          return booked(second);
        },
        { timeout: 10_000 },
      )
      .toBe(25_000n);
    expect(await recorded(second)).toMatchObject([{ state: 'booked' }]);
    // Once each, whatever the sweeps: another finds nothing, and the books equal the chain.
    expect(await reconcilePrefundDeposits({ db: db.handle.db, clock, chain: real })).toBe(0);
    expect(await booked(first)).toBe(await depositOf(first));
    expect(await booked(second)).toBe(await depositOf(second));
  });
});
