// A Polymarket funder Safe on the devnet's Polygon: real Safe 1.5.0 contracts, approvals and the
// wrap of USDC.e into pUSD executed through the Safe, the CTF's operator approvals and outcome
// shares, owner rotation seen by the Safe Transaction Service fake, multi-owner signatures; and a
// chain saved before these contracts existed, restored with them.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  concat,
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  erc20Abi,
  http,
  keccak256,
  maxUint256,
  parseAbi,
  toHex,
  zeroHash,
  type Address,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { chainDefinition } from '../adapters/chain/viem.ts';
import {
  buildSafeTx,
  ecdsaSafeSignature,
  encodeExecTransaction,
  encodeSwapOwner,
  SAFE_ABI,
  safeTxHash,
  safeTxTypedData,
} from '../adapters/safe/safe-tx.ts';
import {
  DEVNET_RAMP_ADMIN,
  DEVNET_RAMP_ADMIN_PRIVATE_KEY,
  devnetChain,
  expectedDevnetContracts,
  POLYGON_CHAIN_ID,
  startDevnet,
  type Devnet,
  type DevnetChain,
} from './devnet.ts';
import { fundAddress, newFundedAccount } from './faucet.ts';
import { createDevnetSafe, execSafeBatch, execSafeTransaction, readDevnetSafe } from './safes.ts';

const devnet = inject('devnet');
const polygon = devnetChain(devnet, POLYGON_CHAIN_ID);

const rampAbi = parseAbi([
  'function wrap(address _asset, address _to, uint256 _amount)',
  'function unwrap(address _asset, address _to, uint256 _amount)',
  'function pause(address _asset)',
  'function unpause(address _asset)',
  'function paused(address) view returns (bool)',
  'error OnlyUnpaused()',
  'error InvalidAsset()',
  'error NotAdmin()',
  'event Wrapped(address indexed sender, address indexed asset, address indexed to, uint256 amount)',
]);
const ctfAbi = parseAbi([
  'function setApprovalForAll(address operator, bool approved)',
  'function isApprovedForAll(address owner, address operator) view returns (bool)',
  'function balanceOf(address owner, uint256 id) view returns (uint256)',
  'function balanceOfBatch(address[] owners, uint256[] ids) view returns (uint256[])',
  'function safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes data)',
  'function prepareCondition(address oracle, bytes32 questionId, uint256 outcomeSlotCount)',
  'function getConditionId(address oracle, bytes32 questionId, uint256 outcomeSlotCount) pure returns (bytes32)',
  'function getCollectionId(bytes32 parentCollectionId, bytes32 conditionId, uint256 indexSet) view returns (bytes32)',
  'function getPositionId(address collateralToken, bytes32 collectionId) pure returns (uint256)',
  'function splitPosition(address collateralToken, bytes32 parentCollectionId, bytes32 conditionId, uint256[] partition, uint256 amount)',
]);

function client(chain: DevnetChain = polygon) {
  return createPublicClient({
    chain: chainDefinition(chain.chainId, chain.rpcUrl),
    transport: http(chain.rpcUrl),
    pollingInterval: 20,
  });
}

const balanceOf = (token: Address, holder: Address, chain: DevnetChain = polygon) =>
  client(chain).readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [holder] });

async function safesOnService(owner: Address, version: 'v1' | 'v2'): Promise<Address[]> {
  const res = await fetch(`${polygon.safeTxServiceUrl}/api/${version}/owners/${owner}/safes/`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { safes?: Address[]; results?: { address: Address }[] };
  return version === 'v1' ? body.safes! : body.results!.map((r) => r.address);
}

function owner() {
  const privateKey = generatePrivateKey();
  return { privateKey, address: privateKeyToAccount(privateKey).address };
}

describe('the devnet’s Polymarket contracts on Polygon', () => {
  it('are deployed and listed in one object with Polymarket’s spenders', async () => {
    const c = polygon.contracts;
    expect(polygon.polymarket?.contracts).toEqual({
      collateral: c.pusd,
      usdce: c.usdce,
      onramp: c.collateralOnramp,
      offramp: c.collateralOfframp,
      conditionalTokens: c.conditionalTokens,
      exchange: '0xE111180000d2663C0091e4f400237545B87B996B',
      negRiskExchange: '0xe2222d279d744050d28e00520010520000310F59',
      negRiskAdapter: '0xd91E80cF2E7be2e162c6513ceD06f1dD0dA35296',
    });
    for (const key of [
      'safeSingleton',
      'safeL2Singleton',
      'safeProxyFactory',
      'safeFallbackHandler',
      'safeMultiSend',
      'safeMultiSendCallOnly',
      'conditionalTokens',
      'collateralOnramp',
      'collateralOfframp',
    ] as const) {
      const address = c[key];
      expect(address, key).toBeDefined();
      expect((await client().getCode({ address: address! }))?.length ?? 0, key).toBeGreaterThan(2);
    }
    const version = await client().readContract({
      address: c.safeL2Singleton!,
      abi: SAFE_ABI,
      functionName: 'VERSION',
    });
    expect(version).toBe('1.5.0');
    expect(polygon.safeTxServiceUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });
});

describe('a 1-of-1 funder Safe', () => {
  it('wraps USDC.e into pUSD, grants Polymarket’s approvals, holds outcome shares, and unwraps', async () => {
    const c = polygon.contracts;
    const pm = polygon.polymarket!.contracts!;
    const alice = owner();
    const safe = await createDevnetSafe(polygon, { owners: [alice.address], threshold: 1 });
    expect(await readDevnetSafe(polygon, safe.address)).toEqual({
      owners: [alice.address],
      threshold: 1,
      nonce: 0n,
    });
    await fundAddress(devnet, {
      chainId: POLYGON_CHAIN_ID,
      address: safe.address,
      tokens: [{ symbol: 'USDC.e', amount: 25_000_000n }],
    });
    const reserveBefore = await balanceOf(pm.usdce, pm.onramp);

    // approve(onramp) on USDC.e, then wrap — two Safe transactions, the second signed at nonce 1.
    const approve = await execSafeTransaction(polygon, {
      safe: safe.address,
      to: pm.usdce,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [pm.onramp, 20_000_000n] }),
      ownerPrivateKeys: [alice.privateKey],
    });
    expect(approve.safeTx.nonce).toBe(0n);
    // The hash signed is the one the Safe computes.
    const t = approve.safeTx;
    expect(
      await client().readContract({
        address: safe.address,
        abi: SAFE_ABI,
        functionName: 'getTransactionHash',
        args: [
          t.to,
          t.value,
          t.data,
          t.operation,
          t.safeTxGas,
          t.baseGas,
          t.gasPrice,
          t.gasToken,
          t.refundReceiver,
          t.nonce,
        ],
      }),
    ).toBe(approve.safeTxHash);
    const wrap = await execSafeTransaction(polygon, {
      safe: safe.address,
      to: pm.onramp,
      data: encodeFunctionData({
        abi: rampAbi,
        functionName: 'wrap',
        args: [pm.usdce, safe.address, 20_000_000n],
      }),
      ownerPrivateKeys: [alice.privateKey],
    });
    expect(wrap.safeTx.nonce).toBe(1n);
    expect(await balanceOf(pm.collateral, safe.address)).toBe(20_000_000n);
    expect(await balanceOf(pm.usdce, safe.address)).toBe(5_000_000n);
    expect((await balanceOf(pm.usdce, pm.onramp)) - reserveBefore).toBe(20_000_000n);
    const wrapped = wrap.receipt.logs.filter((l) => l.address.toLowerCase() === pm.onramp.toLowerCase());
    expect(wrapped).toHaveLength(1);

    // The six grants in one batch (MultiSendCallOnly): pUSD approve and CTF setApprovalForAll to the
    // exchange, the neg-risk exchange and the neg-risk adapter.
    const spenders = [pm.exchange, pm.negRiskExchange, pm.negRiskAdapter];
    await execSafeBatch(polygon, {
      safe: safe.address,
      ownerPrivateKeys: [alice.privateKey],
      calls: spenders.flatMap((spender) => [
        {
          to: pm.collateral,
          data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, maxUint256] }),
        },
        {
          to: pm.conditionalTokens,
          data: encodeFunctionData({ abi: ctfAbi, functionName: 'setApprovalForAll', args: [spender, true] }),
        },
      ]),
    });
    for (const spender of spenders) {
      expect(
        await client().readContract({
          address: pm.collateral,
          abi: erc20Abi,
          functionName: 'allowance',
          args: [safe.address, spender],
        }),
      ).toBe(maxUint256);
      expect(
        await client().readContract({
          address: pm.conditionalTokens,
          abi: ctfAbi,
          functionName: 'isApprovedForAll',
          args: [safe.address, spender],
        }),
      ).toBe(true);
    }

    // Outcome shares, minted the real way: a condition, then a split of pUSD by the Safe.
    const oracle = privateKeyToAccount(generatePrivateKey()).address;
    const questionId = keccak256(toHex(`safes.test ${safe.address}`));
    const preparer = await newFundedAccount(devnet, { chainId: POLYGON_CHAIN_ID });
    const preparerWallet = createWalletClient({
      account: privateKeyToAccount(preparer.privateKey),
      chain: chainDefinition(POLYGON_CHAIN_ID, polygon.rpcUrl),
      transport: http(polygon.rpcUrl),
    });
    await client().waitForTransactionReceipt({
      hash: await preparerWallet.writeContract({
        address: c.conditionalTokens!,
        abi: ctfAbi,
        functionName: 'prepareCondition',
        args: [oracle, questionId, 2n],
      }),
      pollingInterval: 20,
    });
    const read = <T>(
      functionName: 'getConditionId' | 'getCollectionId' | 'getPositionId',
      args: readonly unknown[],
    ) =>
      client().readContract({
        address: c.conditionalTokens!,
        abi: ctfAbi,
        functionName,
        args,
      } as never) as Promise<T>;
    const conditionId = await read<Hex>('getConditionId', [oracle, questionId, 2n]);
    const positions = await Promise.all(
      [1n, 2n].map(async (indexSet) =>
        read<bigint>('getPositionId', [
          pm.collateral,
          await read<Hex>('getCollectionId', [zeroHash, conditionId, indexSet]),
        ]),
      ),
    );
    await execSafeBatch(polygon, {
      safe: safe.address,
      ownerPrivateKeys: [alice.privateKey],
      calls: [
        {
          to: pm.collateral,
          data: encodeFunctionData({
            abi: erc20Abi,
            functionName: 'approve',
            args: [pm.conditionalTokens, 3_000_000n],
          }),
        },
        {
          to: pm.conditionalTokens,
          data: encodeFunctionData({
            abi: ctfAbi,
            functionName: 'splitPosition',
            args: [pm.collateral, zeroHash, conditionId, [1n, 2n], 3_000_000n],
          }),
        },
      ],
    });
    expect(
      await client().readContract({
        address: pm.conditionalTokens,
        abi: ctfAbi,
        functionName: 'balanceOfBatch',
        args: [[safe.address, safe.address], positions],
      }),
    ).toEqual([3_000_000n, 3_000_000n]);
    expect(await balanceOf(pm.collateral, safe.address)).toBe(17_000_000n);

    // Unwrap: approve pUSD to the offramp, get USDC.e back from the reserve.
    await execSafeBatch(polygon, {
      safe: safe.address,
      ownerPrivateKeys: [alice.privateKey],
      calls: [
        {
          to: pm.collateral,
          data: encodeFunctionData({
            abi: erc20Abi,
            functionName: 'approve',
            args: [pm.offramp, 7_000_000n],
          }),
        },
        {
          to: pm.offramp,
          data: encodeFunctionData({
            abi: rampAbi,
            functionName: 'unwrap',
            args: [pm.usdce, safe.address, 7_000_000n],
          }),
        },
      ],
    });
    expect(await balanceOf(pm.collateral, safe.address)).toBe(10_000_000n);
    expect(await balanceOf(pm.usdce, safe.address)).toBe(12_000_000n);
    expect((await readDevnetSafe(polygon, safe.address)).nonce).toBe(5n);
  });

  it('refuses to wrap an asset that is neither USDC.e nor USDC, and a failed inner call reverts the Safe transaction', async () => {
    const pm = polygon.polymarket!.contracts!;
    const holder = await newFundedAccount(devnet, { chainId: POLYGON_CHAIN_ID });
    await expect(
      client().simulateContract({
        address: pm.onramp,
        abi: rampAbi,
        functionName: 'wrap',
        args: [polygon.contracts.weth, holder.address, 1n],
        account: holder.address,
      }),
    ).rejects.toThrow(/InvalidAsset/);
    // Without an approval the onramp's transferFrom fails, and the Safe (no gas refund set)
    // reverts with the inner call's reason.
    const alice = owner();
    const safe = await createDevnetSafe(polygon, { owners: [alice.address], threshold: 1 });
    await fundAddress(devnet, {
      chainId: POLYGON_CHAIN_ID,
      address: safe.address,
      tokens: [{ symbol: 'USDC.e', amount: 1_000_000n }],
    });
    await expect(
      execSafeTransaction(polygon, {
        safe: safe.address,
        to: pm.onramp,
        data: encodeFunctionData({
          abi: rampAbi,
          functionName: 'wrap',
          args: [pm.usdce, safe.address, 1_000_000n],
        }),
        ownerPrivateKeys: [alice.privateKey],
      }),
    ).rejects.toThrow(/exceeds allowance/);
    expect((await readDevnetSafe(polygon, safe.address)).nonce).toBe(0n);
  });
});

describe('owner rotation', () => {
  it('swaps the owner through the Safe; the transaction service follows at once', async () => {
    const alice = owner();
    const bob = owner();
    const safe = await createDevnetSafe(polygon, { owners: [alice.address], threshold: 1 });
    expect(await safesOnService(alice.address, 'v1')).toEqual([safe.address]);
    expect(await safesOnService(alice.address, 'v2')).toEqual([safe.address]);
    expect(await safesOnService(bob.address, 'v1')).toEqual([]);

    const { owners } = await readDevnetSafe(polygon, safe.address);
    await execSafeTransaction(polygon, {
      safe: safe.address,
      to: safe.address,
      data: encodeSwapOwner(owners, alice.address, bob.address),
      ownerPrivateKeys: [alice.privateKey],
    });
    expect(await readDevnetSafe(polygon, safe.address)).toEqual({
      owners: [bob.address],
      threshold: 1,
      nonce: 1n,
    });
    expect(await safesOnService(bob.address, 'v1')).toEqual([safe.address]);
    expect(await safesOnService(bob.address, 'v2')).toEqual([safe.address]);
    expect(await safesOnService(alice.address, 'v1')).toEqual([]);
    expect(await safesOnService(alice.address, 'v2')).toEqual([]);

    // The old owner can no longer sign for it (GS026).
    await expect(
      execSafeTransaction(polygon, {
        safe: safe.address,
        to: safe.address,
        data: '0x',
        ownerPrivateKeys: [alice.privateKey],
      }),
    ).rejects.toThrow(/GS026/);
  });
});

describe('a 2-of-3 Safe', () => {
  it('executes with two signatures sorted by owner, and refuses one, or two out of order', async () => {
    const owners = [owner(), owner(), owner()];
    const safe = await createDevnetSafe(polygon, { owners: owners.map((o) => o.address), threshold: 2 });
    expect((await readDevnetSafe(polygon, safe.address)).threshold).toBe(2);
    await fundAddress(devnet, {
      chainId: POLYGON_CHAIN_ID,
      address: safe.address,
      tokens: [{ symbol: 'pUSD', amount: 9_000_000n }],
    });
    const payee = privateKeyToAccount(generatePrivateKey()).address;
    const transfer = encodeFunctionData({
      abi: erc20Abi,
      functionName: 'transfer',
      args: [payee, 4_000_000n],
    });
    const pusd = polygon.contracts.pusd!;

    // One signature is below the threshold (GS020).
    await expect(
      execSafeTransaction(polygon, {
        safe: safe.address,
        to: pusd,
        data: transfer,
        ownerPrivateKeys: [owners[0]!.privateKey],
      }),
    ).rejects.toThrow(/GS020/);

    // Signed by the owners in descending address order: packed ascending, it passes.
    const signers = [...owners].sort((a, b) => (BigInt(a.address) > BigInt(b.address) ? -1 : 1)).slice(0, 2);
    await execSafeTransaction(polygon, {
      safe: safe.address,
      to: pusd,
      data: transfer,
      ownerPrivateKeys: signers.map((s) => s.privateKey),
    });
    expect(await balanceOf(pusd, payee)).toBe(4_000_000n);

    // The same two signatures concatenated out of order are refused (GS026).
    const tx = buildSafeTx({ to: pusd, data: transfer, nonce: 1n });
    const typed = safeTxTypedData(POLYGON_CHAIN_ID, safe.address, tx);
    const descending = await Promise.all(
      signers.map(async (s) =>
        ecdsaSafeSignature(s.address, await privateKeyToAccount(s.privateKey).signTypedData(typed)),
      ),
    );
    const sender = await newFundedAccount(devnet, { chainId: POLYGON_CHAIN_ID });
    await expect(
      client().call({
        account: sender.address,
        to: safe.address,
        data: encodeExecTransaction(tx, concat(descending.map((s) => s.data))),
      }),
    ).rejects.toThrow(/GS026/);
    expect(safeTxHash(POLYGON_CHAIN_ID, safe.address, tx)).toBe(
      await client().readContract({
        address: safe.address,
        abi: SAFE_ABI,
        functionName: 'getTransactionHash',
        args: [
          tx.to,
          tx.value,
          tx.data,
          tx.operation,
          tx.safeTxGas,
          tx.baseGas,
          tx.gasPrice,
          tx.gasToken,
          tx.refundReceiver,
          tx.nonce,
        ],
      }),
    );
  });
});

describe('a Polygon chain saved before the Safe contracts', () => {
  const started: Devnet[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'purser-devnet-safes-'));
  afterAll(async () => {
    await Promise.all(started.map((d) => d.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('gets them at the next start, keeps its Safes across restarts, and pauses per asset', async () => {
    const options = { chainIds: [POLYGON_CHAIN_ID], stateDir: dir, entryPoint: false, bundler: false };
    // The plan of 137 before this change: everything up to and including the CCTP messenger.
    const full = Object.keys(expectedDevnetContracts(POLYGON_CHAIN_ID)).length;
    const before = await startDevnet({ ...options, planLength: full - 9 });
    started.push(before);
    const old = devnetChain(before, POLYGON_CHAIN_ID);
    expect(old.contracts.safeProxyFactory).toBeUndefined();
    expect(old.safeTxServiceUrl).toBeUndefined();
    expect(old.polymarket?.contracts).toBeUndefined();
    await fundAddress(before, {
      chainId: POLYGON_CHAIN_ID,
      address: '0x00000000000000000000000000000000000b0b0b',
      tokens: [{ symbol: 'USDC.e', amount: 4_321n }],
    });
    await before.stop();

    const after = await startDevnet(options);
    started.push(after);
    const chain = devnetChain(after, POLYGON_CHAIN_ID);
    expect(chain.contracts).toEqual(expectedDevnetContracts(POLYGON_CHAIN_ID));
    expect(await balanceOf(chain.contracts.usdce!, '0x00000000000000000000000000000000000b0b0b', chain)).toBe(
      4_321n,
    );
    const alice = owner();
    const safe = await createDevnetSafe(chain, { owners: [alice.address], threshold: 1 });
    await after.stop();

    const again = await startDevnet(options);
    started.push(again);
    const restored = devnetChain(again, POLYGON_CHAIN_ID);
    expect(restored.contracts).toEqual(chain.contracts);
    expect(await readDevnetSafe(restored, safe.address)).toEqual({
      owners: [alice.address],
      threshold: 1,
      nonce: 0n,
    });
    const res = await fetch(`${restored.safeTxServiceUrl}/api/v1/owners/${alice.address}/safes/`);
    expect(await res.json()).toEqual({ safes: [safe.address] });

    // The ramp admin pauses USDC.e on the onramp: wraps of it revert OnlyUnpaused until unpaused.
    const pm = restored.polymarket!.contracts!;
    await fundAddress(again, { chainId: POLYGON_CHAIN_ID, address: DEVNET_RAMP_ADMIN, eth: 10n ** 18n });
    const admin = createWalletClient({
      account: privateKeyToAccount(DEVNET_RAMP_ADMIN_PRIVATE_KEY),
      chain: chainDefinition(POLYGON_CHAIN_ID, restored.rpcUrl),
      transport: http(restored.rpcUrl),
    });
    const c = client(restored);
    const send = async (functionName: 'pause' | 'unpause') =>
      c.waitForTransactionReceipt({
        hash: await admin.writeContract({ address: pm.onramp, abi: rampAbi, functionName, args: [pm.usdce] }),
        pollingInterval: 20,
      });
    const holder = await newFundedAccount(again, {
      chainId: POLYGON_CHAIN_ID,
      tokens: [{ symbol: 'USDC.e', amount: 10n }],
    });
    const holderWallet = createWalletClient({
      account: privateKeyToAccount(holder.privateKey),
      chain: chainDefinition(POLYGON_CHAIN_ID, restored.rpcUrl),
      transport: http(restored.rpcUrl),
    });
    await c.waitForTransactionReceipt({
      hash: await holderWallet.writeContract({
        address: pm.usdce,
        abi: erc20Abi,
        functionName: 'approve',
        args: [pm.onramp, 10n],
      }),
      pollingInterval: 20,
    });
    const simulateWrap = () =>
      c.simulateContract({
        address: pm.onramp,
        abi: rampAbi,
        functionName: 'wrap',
        args: [pm.usdce, holder.address, 10n],
        account: holder.address,
      });
    await send('pause');
    expect(
      await c.readContract({ address: pm.onramp, abi: rampAbi, functionName: 'paused', args: [pm.usdce] }),
    ).toBe(true);
    await expect(simulateWrap()).rejects.toThrow(/OnlyUnpaused/);
    // Only the admin pauses.
    await expect(
      c.simulateContract({
        address: pm.onramp,
        abi: rampAbi,
        functionName: 'unpause',
        args: [pm.usdce],
        account: holder.address,
      }),
    ).rejects.toThrow(/NotAdmin/);
    await send('unpause');
    await simulateWrap();
  });
});
