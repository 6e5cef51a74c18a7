// The devnet bundler as a bundler client meets it: where it listens, its JSON-RPC errors in the
// ERC-4337 format, an execution revert seen at estimation and in the receipt, a replayed
// operation refused, and receipts that outlive a devnet restart from saved state.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createPublicClient,
  decodeErrorResult,
  encodeFunctionData,
  http,
  pad,
  parseAbi,
  parseEther,
  toHex,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  devnetKernelSmartAccount,
  draftUserOperation,
  signedUserOperation,
} from '../../test/support/kernel.ts';
import { createJsonRpcBundler } from '../adapters/bundler/json-rpc.ts';
import { BundlerError } from '../adapters/bundler/port.ts';
import { chainDefinition } from '../adapters/chain/viem.ts';
import {
  BASE_CHAIN_ID,
  BASE_SEPOLIA_CHAIN_ID,
  devnetBundlerUrls,
  devnetChain,
  ENTRY_POINT_V07,
  POLYGON_CHAIN_ID,
  startDevnet,
  type DevnetInfo,
} from './devnet.ts';
import { fundAddress } from './faucet.ts';

const devnet = inject('devnet');
const wethAbi = parseAbi(['function withdraw(uint256 wad)']);
const wethErrorAbi = parseAbi(['error Error(string)']);
const NOBODY = privateKeyToAccount(generatePrivateKey()).address;

function clientOf(info: DevnetInfo, chainId: number) {
  const chain = devnetChain(info, chainId);
  return {
    chain,
    publicClient: createPublicClient({
      chain: chainDefinition(chainId, chain.rpcUrl),
      transport: http(chain.rpcUrl, { retryCount: 0 }),
      pollingInterval: 20,
    }),
  };
}

async function rpc(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** A Kernel account of a fresh owner with `eth` on the chain, counterfactual. */
async function fundedKernelAccount(info: DevnetInfo, chainId: number, eth = parseEther('1')) {
  const { chain, publicClient } = clientOf(info, chainId);
  const account = await devnetKernelSmartAccount(
    publicClient,
    chain,
    privateKeyToAccount(generatePrivateKey()),
  );
  await fundAddress(info, { chainId, address: account.address, eth });
  return { chain, publicClient, account };
}

describe('the devnet bundler', () => {
  it('runs on 127.0.0.1 for each chain with Kernel, and answers as that chain', async () => {
    expect(Object.keys(devnetBundlerUrls(devnet)).map(Number).sort()).toEqual([
      BASE_CHAIN_ID,
      BASE_SEPOLIA_CHAIN_ID,
    ]);
    expect(devnet.chains[POLYGON_CHAIN_ID]?.bundlerUrl).toBeUndefined();
    for (const chainId of [BASE_CHAIN_ID, BASE_SEPOLIA_CHAIN_ID]) {
      const url = devnetChain(devnet, chainId).bundlerUrl!;
      expect(new URL(url).hostname).toBe('127.0.0.1');
      const { json } = await rpc(url, { jsonrpc: '2.0', id: 7, method: 'eth_chainId', params: [] });
      expect(json).toEqual({ jsonrpc: '2.0', id: 7, result: `0x${chainId.toString(16)}` });
      const entryPoints = await rpc(url, {
        jsonrpc: '2.0',
        id: 8,
        method: 'eth_supportedEntryPoints',
        params: [],
      });
      expect(entryPoints.json.result).toEqual([ENTRY_POINT_V07]);
    }
  });

  it('answers JSON-RPC errors in the ERC-4337 format: invalid params, unknown method, unparsable body', async () => {
    const url = devnetChain(devnet, BASE_CHAIN_ID).bundlerUrl!;
    const sender = privateKeyToAccount(generatePrivateKey()).address;
    const call = (method: string, params: unknown[]) => rpc(url, { jsonrpc: '2.0', id: 1, method, params });

    const noSender = await call('eth_sendUserOperation', [{ nonce: '0x0' }, ENTRY_POINT_V07]);
    expect(noSender.json.error).toEqual({ code: -32602, message: 'userOperation.sender must be an address' });
    const wrongEntryPoint = await call('eth_estimateUserOperationGas', [
      { sender, nonce: '0x0', callData: '0x', signature: '0x' },
      '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789',
    ]);
    expect(wrongEntryPoint.json.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('EntryPoint v0.7'),
    });
    const v06 = await call('eth_sendUserOperation', [
      { sender, nonce: '0x0', initCode: '0x', callData: '0x', signature: '0x' },
      ENTRY_POINT_V07,
    ]);
    expect(v06.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('v0.6 format') });
    const badHash = await call('eth_getUserOperationReceipt', ['0x1234']);
    expect(badHash.json.error).toMatchObject({ code: -32602 });
    const unknown = await call('eth_sendRawTransaction', []);
    expect(unknown.json.error).toMatchObject({ code: -32601 });
    const garbled = await rpc(url, '{"jsonrpc": "2.0", ');
    expect(garbled.json).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'parse error' },
    });
    // Through the adapter: the code and the message reach the caller.
    const bundler = createJsonRpcBundler({ urls: devnetBundlerUrls(devnet) });
    const refused = await bundler
      .sendUserOperation(BASE_CHAIN_ID, {
        sender,
        nonce: 0n,
        callData: '0x',
        callGasLimit: 0n,
        verificationGasLimit: 0n,
        preVerificationGas: 0n,
        maxFeePerGas: 0n,
        maxPriorityFeePerGas: 0n,
        signature: '0x',
      })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BundlerError);
    expect(refused).toMatchObject({ kind: 'rpc', code: -32602, aaCode: null });
  });

  it('reports an execution revert at estimation (-32521) and, sent anyway, a receipt with success false and the reason', async () => {
    const { chain, publicClient, account } = await fundedKernelAccount(devnet, BASE_CHAIN_ID);
    const bundler = createJsonRpcBundler({ urls: devnetBundlerUrls(devnet) });
    // Unwrapping WETH the account does not have reverts in WETH9.
    const draft = await draftUserOperation(publicClient, account, [
      {
        to: chain.contracts.weth,
        data: encodeFunctionData({ abi: wethAbi, functionName: 'withdraw', args: [1n] }),
      },
    ]);
    const estimate = await bundler.estimateUserOperationGas(BASE_CHAIN_ID, draft).catch((e: unknown) => e);
    expect(estimate).toBeInstanceOf(BundlerError);
    expect(estimate).toMatchObject({ kind: 'rpc', code: -32521 });

    const op = await signedUserOperation(account, draft, {
      callGasLimit: 200_000n,
      verificationGasLimit: 1_000_000n,
      preVerificationGas: 80_000n,
    });
    const hash = await bundler.sendUserOperation(BASE_CHAIN_ID, op);
    const receipt = await bundler.waitForUserOperationReceipt(BASE_CHAIN_ID, hash, {
      timeoutMs: 20_000,
      pollIntervalMs: 50,
    });
    expect(receipt.success).toBe(false);
    expect(receipt.receipt.status).toBe('success'); // the bundle went through; the operation did not
    expect(receipt.actualGasCost).toBeGreaterThan(0n);
    // Kernel passes WETH9's revert data up as its own.
    expect(receipt.reason).toMatch(/^0x/);
    expect(decodeErrorResult({ abi: wethErrorAbi, data: receipt.reason as Hex }).errorName).toBe('Error');
    // The nonce is used all the same. Resent as is, the operation is refused for its factory data
    // (AA10: the account exists now); without it, for its nonce (AA25).
    const replay = await bundler.sendUserOperation(BASE_CHAIN_ID, op).catch((e: unknown) => e);
    expect(replay).toMatchObject({ kind: 'rpc', code: -32500, aaCode: 'AA10' });
    const { factory: _factory, factoryData: _factoryData, ...deployedForm } = op;
    const again = { ...deployedForm, signature: '0x' as Hex };
    again.signature = await account.signUserOperation(again);
    const reused = await bundler.sendUserOperation(BASE_CHAIN_ID, again).catch((e: unknown) => e);
    expect(reused).toMatchObject({ kind: 'rpc', code: -32500, aaCode: 'AA25' });
  });

  it('estimates an operation as the next block runs it: later than the latest block, even in the same second', async () => {
    const { publicClient, account } = await fundedKernelAccount(devnet, BASE_CHAIN_ID);
    const bundler = createJsonRpcBundler({ urls: devnetBundlerUrls(devnet) });
    // A contract that, like a pool's first swap of a block, writes two slots from zero when the
    // block's time differs from the one it last saw (slot 0); set to the latest block's time.
    const clock = privateKeyToAccount(generatePrivateKey()).address;
    await publicClient.request({
      method: 'anvil_setCode' as never,
      params: [clock, '0x42600054146014574260005542600155426002555b00'] as never,
    });
    const latest = await publicClient.getBlock({ blockTag: 'latest' });
    await publicClient.request({
      method: 'anvil_setStorageAt' as never,
      params: [clock, '0x0', pad(toHex(latest.timestamp))] as never,
    });
    const draft = await draftUserOperation(publicClient, account, [{ to: clock, data: '0x' }]);
    const gas = await bundler.estimateUserOperationGas(BASE_CHAIN_ID, draft);
    const op = await signedUserOperation(account, draft, gas);
    // Sent a second later, it runs in a block of a later time, and writes both slots.
    await new Promise((r) => setTimeout(r, 1_100));
    const hash = await bundler.sendUserOperation(BASE_CHAIN_ID, op);
    const receipt = await bundler.waitForUserOperationReceipt(BASE_CHAIN_ID, hash, {
      timeoutMs: 20_000,
      pollIntervalMs: 50,
    });
    expect(receipt.success, 'the operation ran out of its estimated call gas').toBe(true);
    expect(await publicClient.getStorageAt({ address: clock, slot: '0x1' })).not.toBe(pad('0x0'));
  });

  describe('on a devnet restarted from its saved state', () => {
    const dirs: string[] = [];
    afterAll(() => {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    it('finds the receipts of operations sent before the restart, takes new ones, and stops with the devnet', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'purser-devnet-bundler-'));
      dirs.push(dir);
      const first = await startDevnet({ chainIds: [BASE_SEPOLIA_CHAIN_ID], stateDir: dir });
      let hash: Hex;
      let accountAddress: Hex;
      const firstUrl = first.chains[BASE_SEPOLIA_CHAIN_ID]!.bundlerUrl!;
      try {
        const { publicClient, account } = await fundedKernelAccount(first, BASE_SEPOLIA_CHAIN_ID);
        accountAddress = account.address;
        const bundler = createJsonRpcBundler({ urls: devnetBundlerUrls(first) });
        const draft = await draftUserOperation(publicClient, account, [{ to: NOBODY, value: 0n }]);
        const op = await signedUserOperation(
          account,
          draft,
          await bundler.estimateUserOperationGas(BASE_SEPOLIA_CHAIN_ID, draft),
        );
        hash = await bundler.sendUserOperation(BASE_SEPOLIA_CHAIN_ID, op);
        expect((await bundler.waitForUserOperationReceipt(BASE_SEPOLIA_CHAIN_ID, hash)).success).toBe(true);
      } finally {
        await first.stop();
      }
      await expect(
        rpc(firstUrl, { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      ).rejects.toThrow();

      const second = await startDevnet({ chainIds: [BASE_SEPOLIA_CHAIN_ID], stateDir: dir });
      try {
        const bundler = createJsonRpcBundler({ urls: devnetBundlerUrls(second) });
        const receipt = await bundler.getUserOperationReceipt(BASE_SEPOLIA_CHAIN_ID, hash);
        expect(receipt).toMatchObject({ success: true, userOpHash: hash });
        expect(receipt!.sender.toLowerCase()).toBe(accountAddress.toLowerCase());
        expect((await bundler.getUserOperationByHash(BASE_SEPOLIA_CHAIN_ID, hash))?.transactionHash).toBe(
          receipt!.receipt.transactionHash,
        );
        // The bundler's key carries on from its saved nonce: a new operation lands.
        const { publicClient, account } = await fundedKernelAccount(second, BASE_SEPOLIA_CHAIN_ID);
        const draft = await draftUserOperation(publicClient, account, [{ to: NOBODY, value: 0n }]);
        const op = await signedUserOperation(
          account,
          draft,
          await bundler.estimateUserOperationGas(BASE_SEPOLIA_CHAIN_ID, draft),
        );
        const next = await bundler.sendUserOperation(BASE_SEPOLIA_CHAIN_ID, op);
        expect((await bundler.waitForUserOperationReceipt(BASE_SEPOLIA_CHAIN_ID, next)).success).toBe(true);
      } finally {
        await second.stop();
      }
    }, 120_000);
  });
});
