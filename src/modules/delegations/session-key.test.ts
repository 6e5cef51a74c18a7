// The proof that a delegation works on a real Kernel v3.1 account: a fresh owner gets a
// counterfactual account from the devnet faucet, prepares a delegation through the API, signs its
// digest and confirms; the executor's session key then sends, through the bundler, an enable-mode
// UserOperation that deploys the account, installs the permission and runs the allowed call, then a
// default-mode one. An operation outside the grant is refused by the chain, and the owner's
// revocation calls (uninstall, invalidate nonce) leave the session key useless.

import {
  createPublicClient,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  http,
  parseAbi,
  parseEther,
  type Address,
  type Hex,
} from 'viem';
import { entryPoint07Abi, entryPoint07Address, type UserOperation } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { TestApp } from '../../../test/support/app.ts';
import { devnetKernelApp } from '../../../test/support/devnet-deps.ts';
import { bearer, createAccountWithSession, type AccountWithSession } from '../../../test/support/identity.ts';
import { BundlerError, type BundlerPort } from '../../adapters/bundler/port.ts';
import { createJsonRpcBundler } from '../../adapters/bundler/json-rpc.ts';
import type { ChainPort } from '../../adapters/chain/port.ts';
import { chainDefinition, createViemChainPort } from '../../adapters/chain/viem.ts';
import { testConfig } from '../../config.ts';
import { devnetChain, devnetRpcUrls } from '../../devnet/devnet.ts';
import {
  delegatedOperation,
  permissionNonceKey,
  signDelegatedOperation,
  STUB_ECDSA_SIGNATURE,
  userOperationHash,
  withStubSignature,
  type Call,
  type EnableMaterial,
} from './operations.ts';
import type { Delegation, Revocation } from './service.ts';
import {
  permissionInstalled,
  signSessionOperation,
  submitSessionOperation,
} from '../executor/session-operation.ts';
import { findDelegation } from './store.ts';

const devnet = inject('devnet');
const CHAIN = 8453;
const chain = devnetChain(devnet, CHAIN);
const publicClient = createPublicClient({
  chain: chainDefinition(CHAIN, chain.rpcUrl),
  transport: http(chain.rpcUrl),
});
const config = testConfig();
const executor = privateKeyToAccount(config.executorPrivateKey!);
const signerAbi = parseAbi(['function signer(bytes32 id, address wallet) view returns (address)']);

let t: TestApp;
let user: AccountWithSession;
let bundler: BundlerPort;
let chainPort: ChainPort;

beforeAll(async () => {
  // The devnet's venues as `npm start` runs them: approvals may name only their contracts.
  t = await devnetKernelApp(devnet);
  user = await createAccountWithSession(t.db.db);
  bundler = createJsonRpcBundler({ urls: { [CHAIN]: chain.bundlerUrl! } });
  chainPort = createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) });
});
afterAll(async () => {
  await t?.close();
});

const api = async <T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) => {
  const res = await t.app.fastify.inject({
    method,
    url,
    headers: bearer(user.sessionToken),
    ...(payload ? { payload } : {}),
  });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res.json<T>();
};

const approve = (token: Address, spender: Address, amount: bigint): Call => ({
  to: token,
  value: 0n,
  data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, amount] }),
});

/** Estimates with a stub signature, sets the limits and fees, signs with `sign`, sends and waits. */
async function send(op: UserOperation<'0.7'>, stub: Hex, sign: (op: UserOperation<'0.7'>) => Promise<Hex>) {
  const fees = await publicClient.estimateFeesPerGas();
  const priced = { ...op, maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas };
  const gas = await bundler.estimateUserOperationGas(CHAIN, { ...priced, signature: stub });
  const ready = { ...priced, ...gas };
  const signed = { ...ready, signature: await sign(ready) };
  const hash = await bundler.sendUserOperation(CHAIN, signed);
  expect(hash).toBe(userOperationHash(signed, CHAIN));
  return bundler.waitForUserOperationReceipt(CHAIN, hash, { timeoutMs: 30_000, pollIntervalMs: 50 });
}

/** The session key's operation under the delegation, in enable mode (first use) or default mode. */
async function sessionOp(
  d: Delegation,
  calls: Call[],
  enable: EnableMaterial | null,
  deployment: { factory: Address; factoryData: Hex } | null = null,
) {
  const sender = getAddress(d.account);
  const nonce = await publicClient.readContract({
    address: entryPoint07Address,
    abi: entryPoint07Abi,
    functionName: 'getNonce',
    args: [sender, permissionNonceKey(d.permission_id as Hex, enable ? 'enable' : 'default')],
  });
  const op = delegatedOperation({ sender, nonce, calls, deployment });
  return send(op, withStubSignature(op, enable).signature, async (ready) => {
    const signed = await signDelegatedOperation(ready, CHAIN, executor, enable);
    return signed.signature;
  });
}

/** The owner's own operation (root ECDSA validator, nonce key 0): `callData` runs on the account. */
async function ownerOp(owner: PrivateKeyAccount, account: Address, callData: Hex) {
  const nonce = await publicClient.readContract({
    address: entryPoint07Address,
    abi: entryPoint07Abi,
    functionName: 'getNonce',
    args: [account, 0n],
  });
  const op: UserOperation<'0.7'> = {
    sender: account,
    nonce,
    callData,
    callGasLimit: 0n,
    verificationGasLimit: 0n,
    preVerificationGas: 0n,
    maxFeePerGas: 0n,
    maxPriorityFeePerGas: 0n,
    signature: '0x',
  };
  return send(op, STUB_ECDSA_SIGNATURE, (ready) =>
    owner.signMessage({ message: { raw: userOperationHash(ready, CHAIN) } }),
  );
}

const refusal = async (p: Promise<unknown>): Promise<BundlerError> => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BundlerError);
  return err as BundlerError;
};

describe('a delegation on a real Kernel v3.1 account', () => {
  it('deploys, installs and executes in enable mode, runs in default mode, refuses off-grant calls, and dies with the revocation', async () => {
    const { usdc, uniswapV2Router02: router, aerodromeRouter } = chain.contracts;
    const owner = privateKeyToAccount(generatePrivateKey());
    const stranger = privateKeyToAccount(generatePrivateKey()).address;

    // A fresh owner's counterfactual account, funded while it has no code (it pays its own gas).
    const account = await api<{ address: Address; deployed: boolean }>('POST', '/v1/dev/kernel-accounts', {
      chain_id: CHAIN,
      owner: owner.address,
      index: '2',
      eth_wei: parseEther('1').toString(),
      tokens: [{ symbol: 'USDC', amount: '100000000' }],
    });
    expect(account.deployed).toBe(false);
    const allowance = (spender: Address) =>
      publicClient.readContract({
        address: usdc,
        abi: erc20Abi,
        functionName: 'allowance',
        args: [account.address, spender],
      });

    await api('PUT', '/v1/policies', { version: 1, wallet: account.address.toLowerCase(), chain_id: CHAIN });
    const block = await publicClient.getBlock();
    const d = await api<Delegation>('POST', '/v1/delegations/prepare', {
      account: account.address,
      chain_id: CHAIN,
      calls: [{ target: usdc, selector: '0x095ea7b3', value_limit: '0' }],
      valid_until: Math.max(Number(block.timestamp), Math.floor(Date.now() / 1000)) + 7 * 24 * 3600,
    });
    expect(d.account_deployed).toBe(false);
    const enableSig = await owner.signTypedData(
      d.typed_data as Parameters<PrivateKeyAccount['signTypedData']>[0],
    );
    const active = await api<Delegation>('POST', `/v1/delegations/${d.id}/confirm`, {
      enable_sig: enableSig,
      owner: owner.address,
      index: '2',
    });
    expect(active).toMatchObject({ status: 'active', account_index: '2' });

    // The executor's first operation, as the executor builds it: enable mode, carrying the
    // deployment the confirm kept (the account has no code yet).
    const row = (await findDelegation(t.db.db, user.accountId, d.id))!;
    const enable: EnableMaterial = {
      enableData: row.enable_data as Hex,
      selectorData: row.selector_data as Hex,
      enableSig: row.enable_sig as Hex,
    };
    const sender = { chain: chainPort, bundler, sessionKey: executor };
    const wait = { timeoutMs: 30_000, pollIntervalMs: 50 };
    const firstOp = await signSessionOperation(sender, CHAIN, row, [approve(usdc, router!, 5_000_000n)]);
    expect(firstOp).toMatchObject({ mode: 'enable', deploys: true });
    expect(await permissionInstalled(chainPort, CHAIN, row)).toBe(false);
    const first = await submitSessionOperation(bundler, CHAIN, firstOp, wait);
    expect(first.success).toBe(true);
    expect(((await publicClient.getCode({ address: account.address })) ?? '0x').length).toBeGreaterThan(2);
    expect(await allowance(router!)).toBe(5_000_000n);
    const permissionKey = `0x${d.permission_id.slice(2)}${'0'.repeat(56)}` as Hex;
    expect(
      await publicClient.readContract({
        address: getAddress(d.modules.ecdsa_signer),
        abi: signerAbi,
        functionName: 'signer',
        args: [permissionKey, account.address],
      }),
    ).toBe(executor.address);

    // Installed: default mode from now on, a batch of two allowed calls.
    expect(await permissionInstalled(chainPort, CHAIN, row)).toBe(true);
    const secondOp = await signSessionOperation(sender, CHAIN, row, [
      approve(usdc, router!, 7_000_000n),
      approve(usdc, aerodromeRouter!, 1_000_000n),
    ]);
    expect(secondOp).toMatchObject({ mode: 'default', deploys: false });
    const second = await submitSessionOperation(bundler, CHAIN, secondOp, wait);
    expect(second.success).toBe(true);
    expect(await allowance(router!)).toBe(7_000_000n);
    expect(await allowance(aerodromeRouter!)).toBe(1_000_000n);

    // The grant the API prepared is narrow: an approval to anyone but a venue contract is refused.
    expect((await refusal(sessionOp(d, [approve(usdc, stranger, 1n)], null))).aaCode).toBe('AA23');
    expect(await allowance(stranger)).toBe(0n);

    // Outside the grant (USDC.transfer): the account's call policy refuses it in validation.
    const transfer: Call = {
      to: usdc,
      value: 0n,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [stranger, 1n] }),
    };
    expect((await refusal(sessionOp(d, [transfer], null))).aaCode).toBe('AA23');

    // Revocation: the owner sends both calls from the account; the session key is then useless.
    const revoked = await api<Revocation>('DELETE', `/v1/delegations/${d.id}`);
    expect(revoked.revocation.uninstall_call.to.toLowerCase()).toBe(account.address.toLowerCase());
    expect(
      (await ownerOp(owner, account.address, revoked.revocation.uninstall_call.data as Hex)).success,
    ).toBe(true);
    expect((await refusal(sessionOp(d, [approve(usdc, router!, 1n)], null))).aaCode).toMatch(/^AA2[34]$/);
    expect(
      (await ownerOp(owner, account.address, revoked.revocation.invalidate_nonce_call.data as Hex)).success,
    ).toBe(true);
    // Enabling again with the owner's old signature is refused too.
    expect((await refusal(sessionOp(d, [approve(usdc, router!, 1n)], enable))).aaCode).toMatch(/^AA2[34]$/);
    expect(await allowance(router!)).toBe(7_000_000n);
  });
});
