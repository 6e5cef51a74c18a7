// Slices that survive a crash, on a real Kernel account with its owner's delegation on the devnet:
// a slice recorded but never sent is sent by the restart and lands once; one sent just before
// the crash is found, not sent again; one whose nonce another operation took is dropped. The
// EntryPoint's nonce says how many operations executed.

import { encodeFunctionData, erc20Abi, getAddress, parseEther, type Address } from 'viem';
import { entryPoint07Abi, entryPoint07Address } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { TestApp } from '../../../test/support/app.ts';
import { devnetKernelApp } from '../../../test/support/devnet-deps.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import { fundPrepaid } from '../../../test/support/prepaid.ts';
import { createJsonRpcBundler } from '../../adapters/bundler/json-rpc.ts';
import { createViemChainPort } from '../../adapters/chain/viem.ts';
import { testConfig } from '../../config.ts';
import { devnetChain, devnetRpcUrls } from '../../devnet/devnet.ts';
import type { Call, Delegation } from '../delegations/index.ts';
import { findDelegation } from '../delegations/index.ts';
import type { Intent } from '../intents/index.ts';
import { landSlice, recordSignedSlice, type SliceDeps } from './slices.ts';
import { findSlice, signedSlices } from './store.ts';

const devnet = inject('devnet');
const CHAIN = 8453;
const chainInfo = devnetChain(devnet, CHAIN);
const config = testConfig();
const WAIT = { timeoutMs: 30_000, pollIntervalMs: 50 };
let t: TestApp;
let deps: SliceDeps;

beforeAll(async () => {
  t = await devnetKernelApp(devnet);
  deps = {
    db: t.db.db,
    clock: t.deps.clock,
    chain: createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) }),
    bundler: createJsonRpcBundler({ urls: { [CHAIN]: chainInfo.bundlerUrl! } }),
    sessionKey: privateKeyToAccount(config.executorPrivateKey!),
  };
});
afterAll(async () => {
  await t?.close();
});

/** A fresh owner's Kernel account with USDC and ETH, its confirmed delegation, and one intent. */
async function setup() {
  const acc = await createAccountWithSession(t.db.db);
  await fundPrepaid(t.db.db, t.deps.clock, acc.accountId, 10_000_000n);
  const api = async <T>(method: 'POST' | 'PUT', url: string, payload: object) => {
    const res = await t.app.fastify.inject({ method, url, headers: bearer(acc.sessionToken), payload });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
    return res.json<T>();
  };
  const owner = privateKeyToAccount(generatePrivateKey());
  const account = await api<{ address: Address }>('POST', '/v1/dev/kernel-accounts', {
    chain_id: CHAIN,
    owner: owner.address,
    index: '0',
    eth_wei: parseEther('1').toString(),
    tokens: [{ symbol: 'USDC', amount: '100000000' }],
  });
  const wallet = account.address.toLowerCase();
  await api('PUT', '/v1/policies', { version: 1, wallet, chain_id: CHAIN });
  const block = await deps.chain.publicClient(CHAIN).getBlock();
  const d = await api<Delegation>('POST', '/v1/delegations/prepare', {
    account: account.address,
    chain_id: CHAIN,
    calls: [{ target: chainInfo.contracts.usdc, selector: '0x095ea7b3', value_limit: '0' }],
    valid_until: Math.max(Number(block.timestamp), Math.floor(Date.now() / 1000)) + 7 * 24 * 3600,
  });
  const enableSig = await owner.signTypedData(d.typed_data as Parameters<typeof owner.signTypedData>[0]);
  await api('POST', `/v1/delegations/${d.id}/confirm`, {
    enable_sig: enableSig,
    owner: owner.address,
    index: '0',
  });
  const intent = await api<Intent>('POST', '/v1/intents', {
    wallet,
    kind: 'conversion',
    sell_token: chainInfo.contracts.usdc,
    buy_token: chainInfo.contracts.weth,
    sell_amount: '10000000',
  });
  const grant = (await findDelegation(t.db.db, acc.accountId, d.id))!;
  return { account: getAddress(account.address), grant, intent };
}

const router = () => chainInfo.contracts.uniswapV2Router02!;
const approve = (amount: bigint): Call => ({
  to: chainInfo.contracts.usdc,
  value: 0n,
  data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [router(), amount] }),
});
const allowance = (account: Address) =>
  deps.chain.publicClient(CHAIN).readContract({
    address: chainInfo.contracts.usdc,
    abi: erc20Abi,
    functionName: 'allowance',
    args: [account, router()],
  });
/** The sequence of the EntryPoint nonce under the operation's key: how many executed. */
const sequence = async (account: Address, nonce: bigint) =>
  (await deps.chain.publicClient(CHAIN).readContract({
    address: entryPoint07Address,
    abi: entryPoint07Abi,
    functionName: 'getNonce',
    args: [account, nonce >> 64n],
  })) &
  ((1n << 64n) - 1n);

describe('slices across a crash', () => {
  it('sends a slice recorded but never sent, once; finds one sent before the crash; drops one whose nonce was taken', async () => {
    const { account, grant, intent } = await setup();
    const slice = (seq: number, calls: Call[]) =>
      recordSignedSlice(deps, {
        intentId: intent.id,
        seq,
        chainId: CHAIN,
        venue: 'devnet-amm',
        grant,
        calls,
        facts: { part: 0, sell_amount: '0', quoted_buy_amount: '0', min_buy_amount: '0', reference: null },
      });

    // 1. Recorded, then the process died before sending: the restart finds it signed and sends it.
    const first = await slice(1, [approve(5_000_000n)]);
    expect(first.op.factory).toBeTruthy(); // the account is not deployed: the first one deploys it
    expect((await signedSlices(t.db.db)).map((s) => s.hash)).toContain(first.hash);
    // What the outcome means for the intent runs once, with the record's settlement.
    const settled: string[] = [];
    const onSettled = async (_tx: unknown, outcome: { state: string }) => {
      settled.push(outcome.state);
    };
    const landed = await landSlice(deps, first, WAIT, onSettled);
    expect(landed.state).toBe('landed');
    expect(landed.state === 'landed' && landed.gasCostWei > 0n).toBe(true);
    expect(await allowance(account)).toBe(5_000_000n);
    expect(await findSlice(t.db.db, intent.id, 1)).toMatchObject({
      state: 'landed',
      txHash: landed.state === 'landed' ? landed.txHash.toLowerCase() : null,
    });
    // Landing it again (a second restart) sends nothing: still one operation executed.
    const executed = await sequence(account, first.op.nonce);
    expect(await landSlice(deps, first, WAIT, onSettled)).toMatchObject({ state: 'landed' });
    expect(await sequence(account, first.op.nonce)).toBe(executed);
    expect(settled).toEqual(['landed']);

    // 2. Sent just before the crash: the restart finds it on chain and does not send it again.
    const second = await slice(2, [approve(7_000_000n)]);
    await deps.bundler.sendUserOperation(CHAIN, second.op);
    // Mined while the process was down. (Still in the bundler's mempool at the restart is another
    // case, not settled here: a run seen to call it dropped is being looked into.)
    await deps.bundler.waitForUserOperationReceipt(CHAIN, second.hash, WAIT);
    expect(await landSlice(deps, second, WAIT)).toMatchObject({ state: 'landed' });
    expect(await allowance(account)).toBe(7_000_000n);
    expect(await sequence(account, second.op.nonce)).toBe((second.op.nonce & ((1n << 64n) - 1n)) + 1n);

    // 3. Recorded, never sent, and another operation took its nonce: it can never land.
    const third = await slice(3, [approve(9_000_000n)]);
    const fourth = await slice(4, [approve(11_000_000n)]);
    expect(fourth.op.nonce).toBe(third.op.nonce);
    expect(await landSlice(deps, fourth, WAIT)).toMatchObject({ state: 'landed' });
    expect(await landSlice(deps, third, WAIT)).toEqual({ state: 'dropped' });
    expect(await allowance(account)).toBe(11_000_000n);
    expect(await findSlice(t.db.db, intent.id, 3)).toMatchObject({ state: 'dropped', txHash: null });
    expect((await signedSlices(t.db.db)).filter((s) => s.intentId === intent.id)).toEqual([]);
  });
});
