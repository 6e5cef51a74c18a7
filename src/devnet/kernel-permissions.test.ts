// The devnet's session-key modules for Kernel permissions (devnet/KernelECDSASigner.sol,
// KernelCallPolicy.sol, KernelTimestampPolicy.sol, KernelRateLimitPolicy.sol), installed for a
// stand-in account with exactly the bytes the delegations module emits, and asked as Kernel asks
// them (calls from the account's address, UserOperations whose callData is Kernel's `execute`);
// then real Kernel v3.1 accounts running a session key through EntryPoint.handleOps, where each
// grant limit is refused by the account itself (AA22 for time windows, AA23 for policy reverts).

import {
  concat,
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  http,
  keccak256,
  pad,
  parseAbi,
  parseEther,
  slice,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, inject, it } from 'vitest';
import { testMarket } from '../../test/support/markets.ts';
import { executeCallData, kernelSession, type Call } from '../../test/support/kernel-session.ts';
import { createViemChainPort } from '../adapters/chain/viem.ts';
import { createVenueAdapters, venueContracts } from '../adapters/venues/index.ts';
import { testConfig } from '../config.ts';
import { devnetConfig } from './config-overrides.ts';
import { NARROWED_SELECTORS, rulesFor } from '../modules/delegations/rules.ts';
import { chainDefinition } from '../adapters/chain/viem.ts';
import {
  CALL_POLICY_PERMISSIONS,
  newPermissionId,
  PARAM_CONDITIONS,
  permissionElements,
  type KernelModules,
  type PermissionCall,
  type PermissionScope,
} from '../modules/delegations/kernel.ts';
import {
  BASE_CHAIN_ID,
  BASE_SEPOLIA_CHAIN_ID,
  devnetChain,
  devnetRpcUrls,
  expectedDevnetContracts,
} from './devnet.ts';
import { newFundedAccount } from './faucet.ts';

const devnet = inject('devnet');
const base = devnetChain(devnet, BASE_CHAIN_ID);
const viemChain = chainDefinition(base.chainId, base.rpcUrl);
const transport = http(base.rpcUrl, { retryCount: 0 });
const publicClient = createPublicClient({ chain: viemChain, transport, pollingInterval: 20 });
const modules: KernelModules = {
  ecdsaSigner: base.contracts.kernelEcdsaSigner!,
  callPolicy: base.contracts.kernelCallPolicy!,
  timestampPolicy: base.contracts.kernelTimestampPolicy!,
  rateLimitPolicy: base.contracts.kernelRateLimitPolicy!,
  ecdsaValidator: base.contracts.kernelEcdsaValidator!,
};
/** TestUSDC's `mint(address,uint256)`: anyone may mint on the devnet. */
const MINT: Hex = '0x40c10f19';
const mintAbi = parseAbi(['function mint(address to, uint256 amount) returns (bool)']);
const mint = (token: Address, to: Address, amount: bigint): Call => ({
  to: token,
  value: 0n,
  data: encodeFunctionData({ abi: mintAbi, functionName: 'mint', args: [to, amount] }),
});
const balanceOf = (token: Address, holder: Address) =>
  publicClient.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [holder] });
/** The EntryPoint's AA23 carrying the call policy's `CallViolatesParamRule()` (0x59d52e40). */
const PARAM_RULE_REFUSAL = /AA23 reverted[\s\S]*0x59d52e40/;
const randomAddress = () => privateKeyToAccount(generatePrivateKey()).address;
const mintTo = async (token: Address, to: Address, amount: bigint) => {
  const minter = await newFundedAccount(devnet, { chainId: BASE_CHAIN_ID });
  const wallet = createWalletClient({
    account: privateKeyToAccount(minter.privateKey),
    chain: viemChain,
    transport,
  });
  const hash = await wallet.writeContract({
    address: token,
    abi: mintAbi,
    functionName: 'mint',
    args: [to, amount],
  });
  await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
};

/** CallPolicy data with raw condition numbers (for what kernel.ts would never emit). */
function encodeCallPolicyRaw(
  permissions: Array<{
    callType: Hex;
    target: Address;
    selector: Hex;
    valueLimit: bigint;
    rules: Array<{ condition: number; offset: bigint; params: Hex[] }>;
  }>,
): Hex {
  return encodeAbiParameters(CALL_POLICY_PERMISSIONS, [permissions]);
}

const moduleAbi = parseAbi([
  'struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }',
  'function onInstall(bytes data) payable',
  'function onUninstall(bytes data) payable',
  'function isModuleType(uint256 typeId) pure returns (bool)',
  'function isInitialized(address wallet) view returns (bool)',
  'function checkUserOpPolicy(bytes32 id, PackedUserOperation userOp) payable returns (uint256)',
  'function checkSignaturePolicy(bytes32 id, address sender, bytes32 hash, bytes sig) view returns (uint256)',
  'function checkUserOpSignature(bytes32 id, PackedUserOperation userOp, bytes32 userOpHash) payable returns (uint256)',
  'function checkSignature(bytes32 id, address sender, bytes32 hash, bytes sig) view returns (bytes4)',
  'error AlreadyInitialized(address smartAccount)',
  'error NotInitialized(address smartAccount)',
  'error InvalidCallData()',
  'error InvalidCallType()',
  'error CallViolatesValueRule()',
  'error CallToAccount()',
  'error CallViolatesParamRule()',
  'error UnknownCondition(uint8 condition)',
  'error ParamCountMismatch(uint8 condition, uint256 count)',
  'error InvalidTimeWindow(uint48 validAfter, uint48 validUntil)',
  'error InvalidSignature()',
]);
const wethAbi = parseAbi(['function withdraw(uint256 wad)']);

const HOUR = 3600;

function userOp(sender: Address, callData: Hex, signature: Hex = '0x') {
  return {
    sender,
    nonce: 0n,
    initCode: '0x' as Hex,
    callData,
    accountGasLimits: pad('0x', { size: 32 }),
    preVerificationGas: 0n,
    gasFees: pad('0x', { size: 32 }),
    paymasterAndData: '0x' as Hex,
    signature,
  };
}

/** How EntryPoint v0.7 reads validation data: accepted when no aggregator/failure and `now` is in the window. */
function acceptedAt(validationData: bigint, now: bigint): boolean {
  const mask48 = 2n ** 48n - 1n;
  if (validationData % 2n ** 160n !== 0n) return false;
  const until = (validationData >> 160n) & mask48;
  const after = validationData >> 208n;
  return now >= after && now <= (until === 0n ? mask48 : until);
}

/** A stand-in Kernel account on Base: an address the test sends from (anvil impersonation). */
async function standInAccount() {
  const chain = devnetChain(devnet, BASE_CHAIN_ID);
  const viemChain = chainDefinition(chain.chainId, chain.rpcUrl);
  const transport = http(chain.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain: viemChain, transport, pollingInterval: 20 });
  const testClient = createTestClient({ mode: 'anvil', chain: viemChain, transport });
  const address = privateKeyToAccount(generatePrivateKey()).address;
  await testClient.setBalance({ address, value: parseEther('1') });
  await testClient.impersonateAccount({ address });
  const wallet = createWalletClient({ account: address, chain: viemChain, transport });
  const modules: KernelModules = {
    ecdsaSigner: chain.contracts.kernelEcdsaSigner!,
    callPolicy: chain.contracts.kernelCallPolicy!,
    timestampPolicy: chain.contracts.kernelTimestampPolicy!,
    rateLimitPolicy: chain.contracts.kernelRateLimitPolicy!,
    ecdsaValidator: chain.contracts.kernelEcdsaValidator!,
  };
  const send = async (to: Address, data: Hex) => {
    const hash = await wallet.sendTransaction({ to, data, gas: 2_000_000n });
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== 'success') throw new Error(`transaction to ${to} reverted`);
  };
  const now = async () => (await publicClient.getBlock()).timestamp;

  /** Installs a permission as Kernel does: `onInstall(bytes32(permissionId) ‖ data)` per element. */
  const install = async (permissionId: Hex, elements: Hex[]) => {
    for (const element of elements) {
      const module = getAddress(slice(element, 2, 22));
      await send(
        module,
        encodeFunctionData({
          abi: moduleAbi,
          functionName: 'onInstall',
          args: [concat([idOf(permissionId), slice(element, 22)])],
        }),
      );
    }
  };
  /** `checkUserOpPolicy` as Kernel calls it (from the account), without keeping its effects. */
  const checkPolicy = async (policy: Address, permissionId: Hex, callData: Hex) =>
    (
      await publicClient.simulateContract({
        address: policy,
        abi: moduleAbi,
        functionName: 'checkUserOpPolicy',
        args: [idOf(permissionId), userOp(address, callData)],
        account: address,
      })
    ).result;
  /** The same call as a transaction: a use that counts (the rate limit). */
  const usePolicy = (policy: Address, permissionId: Hex) =>
    send(
      policy,
      encodeFunctionData({
        abi: moduleAbi,
        functionName: 'checkUserOpPolicy',
        args: [idOf(permissionId), userOp(address, executeCallData([]))],
      }),
    );
  return { chain, publicClient, address, modules, install, checkPolicy, usePolicy, send, now };
}

/** The bytes32 id Kernel passes modules: the 4-byte permissionId, left-aligned. */
function idOf(permissionId: Hex): Hex {
  return pad(permissionId, { size: 32, dir: 'right' });
}

function scopeOf(calls: PermissionCall[], validAfter: number, validUntil: number, rateLimit = null) {
  return { calls, validAfter, validUntil, rateLimit } as PermissionScope;
}

describe('session-key modules for Kernel permissions on the devnet', () => {
  it.each([BASE_CHAIN_ID, BASE_SEPOLIA_CHAIN_ID])(
    'chain %i has the ECDSA signer (module type 6) and the call, timestamp and rate-limit policies (type 5)',
    async (chainId) => {
      const chain = devnetChain(devnet, chainId);
      const client = createPublicClient({
        chain: chainDefinition(chainId, chain.rpcUrl),
        transport: http(chain.rpcUrl, { retryCount: 0 }),
      });
      const expected = expectedDevnetContracts(chainId);
      const keys = [
        'kernelEcdsaSigner',
        'kernelCallPolicy',
        'kernelTimestampPolicy',
        'kernelRateLimitPolicy',
      ] as const;
      for (const key of keys) {
        const address = chain.contracts[key];
        expect(address).toBe(expected[key]);
        const types = await Promise.all(
          [1n, 4n, 5n, 6n].map((typeId) =>
            client.readContract({
              address: address!,
              abi: moduleAbi,
              functionName: 'isModuleType',
              args: [typeId],
            }),
          ),
        );
        expect(types).toEqual(
          key === 'kernelEcdsaSigner' ? [false, false, false, true] : [false, false, true, false],
        );
      }
    },
  );

  it('call policy: allowed single and batch calls pass; an off-list target or selector, a value over the limit, a self-call fail', async () => {
    const a = await standInAccount();
    const { usdc, weth } = a.chain.contracts;
    const payee = privateKeyToAccount(generatePrivateKey()).address;
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    const calls: PermissionCall[] = [
      { target: usdc, selector: '0xa9059cbb', valueLimit: 0n }, // transfer
      { target: weth, selector: '0x2e1a7d4d', valueLimit: 0n }, // withdraw
      { target: payee, selector: '0x00000000', valueLimit: parseEther('0.1') }, // plain ETH
    ];
    const pid = newPermissionId();
    const [callElement] = permissionElements(a.modules, stranger, scopeOf(calls, 0, 0));
    expect(slice(callElement!, 2, 22).toLowerCase()).toBe(a.modules.callPolicy.toLowerCase());
    await a.install(pid, [callElement!]);

    const transfer = (to: Address = usdc): Call => ({
      to,
      value: 0n,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [payee, 1_000_000n] }),
    });
    const withdraw: Call = {
      to: weth,
      value: 0n,
      data: encodeFunctionData({ abi: wethAbi, functionName: 'withdraw', args: [1n] }),
    };
    const pay = (value: bigint): Call => ({ to: payee, value, data: '0x' });
    const check = (callsOfOp: Call[], batch?: boolean) =>
      a.checkPolicy(a.modules.callPolicy, pid, executeCallData(callsOfOp, batch));

    expect(await check([transfer()])).toBe(0n);
    expect(await check([pay(parseEther('0.1'))])).toBe(0n);
    expect(await check([transfer(), withdraw, pay(1n)])).toBe(0n);
    expect(await check([withdraw], true)).toBe(0n);

    await expect(check([transfer(weth)])).rejects.toThrow(/InvalidCallData/); // off-list target
    const approve: Call = {
      to: usdc,
      value: 0n,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [payee, 1n] }),
    };
    await expect(check([approve])).rejects.toThrow(/InvalidCallData/); // off-list selector
    await expect(check([transfer(), approve])).rejects.toThrow(/InvalidCallData/); // one bad batch item
    await expect(check([pay(parseEther('0.1') + 1n)])).rejects.toThrow(/CallViolatesValueRule/);
    await expect(check([{ ...transfer(), value: 1n }])).rejects.toThrow(/CallViolatesValueRule/);
    await expect(check([{ ...transfer(), to: a.address }])).rejects.toThrow(/CallToAccount/);
    // Not `execute`: refused whatever it calls.
    await expect(
      a.checkPolicy(
        a.modules.callPolicy,
        pid,
        concat(['0x12345678', slice(executeCallData([transfer()]), 4)]),
      ),
    ).rejects.toThrow(/InvalidCallData/);
    // Another permission id of the same account has no grant.
    expect(await a.checkPolicy(a.modules.callPolicy, newPermissionId(), executeCallData([transfer()]))).toBe(
      1n,
    );
    // A permission id is installed once.
    await expect(a.install(pid, [callElement!])).rejects.toThrow(/reverted/);
  });

  it('timestamp policy: answers the window, which the EntryPoint refuses before valid_after and after valid_until', async () => {
    const a = await standInAccount();
    const now = Number(await a.now());
    const op = executeCallData([{ to: a.chain.contracts.usdc, value: 0n, data: '0x' }]);
    const windows = {
      current: [now - HOUR, now + HOUR],
      expired: [now - 3 * HOUR, now - 2 * HOUR],
      future: [now + 2 * HOUR, now + 3 * HOUR],
    } as const;
    const results: Record<string, boolean> = {};
    for (const [name, [after, until]] of Object.entries(windows)) {
      const pid = newPermissionId();
      const [, timeElement] = permissionElements(a.modules, a.address, scopeOf([], after, until));
      expect(slice(timeElement!, 2, 22).toLowerCase()).toBe(a.modules.timestampPolicy.toLowerCase());
      await a.install(pid, [timeElement!]);
      const data = await a.checkPolicy(a.modules.timestampPolicy, pid, op);
      expect(data).toBe((BigInt(until) << 160n) | (BigInt(after) << 208n));
      results[name] = acceptedAt(data, await a.now());
      const sigPolicy = await a.publicClient.readContract({
        address: a.modules.timestampPolicy,
        abi: moduleAbi,
        functionName: 'checkSignaturePolicy',
        args: [idOf(pid), a.address, keccak256('0x01'), '0x'],
        account: a.address,
      });
      expect(sigPolicy).toBe(name === 'current' ? 0n : 1n);
    }
    expect(results).toEqual({ current: true, expired: false, future: false });

    // validUntil before validAfter is refused at install.
    const [, bad] = permissionElements(a.modules, a.address, scopeOf([], now, now - 1));
    await expect(a.install(newPermissionId(), [bad!])).rejects.toThrow(/reverted/);
  });

  it('rate-limit policy: count uses in total, one per interval from the start; the (count+1)-th use fails', async () => {
    const a = await standInAccount();
    const now = Number(await a.now());
    const policy = a.modules.rateLimitPolicy;
    const op = executeCallData([]);
    const rateLimited = (startAt: number, count: number, intervalSecs: number) => {
      const scope = {
        calls: [],
        validAfter: startAt,
        validUntil: now + 10 * HOUR,
        rateLimit: { count, intervalSecs },
      };
      const elements = permissionElements(a.modules, a.address, scope);
      const element = elements[2]!;
      expect(slice(element, 2, 22).toLowerCase()).toBe(policy.toLowerCase());
      return element;
    };

    // Started 10 h ago, two uses one hour apart: both due now, the third is refused.
    const spent = newPermissionId();
    await a.install(spent, [rateLimited(now - 10 * HOUR, 2, HOUR)]);
    const first = await a.checkPolicy(policy, spent, op);
    expect(first).toBe(BigInt(now - 10 * HOUR) << 208n);
    expect(acceptedAt(first, await a.now())).toBe(true);
    await a.usePolicy(policy, spent);
    const second = await a.checkPolicy(policy, spent, op);
    expect(second).toBe(BigInt(now - 9 * HOUR) << 208n);
    expect(acceptedAt(second, await a.now())).toBe(true);
    await a.usePolicy(policy, spent);
    expect(await a.checkPolicy(policy, spent, op)).toBe(1n);

    // Started now, five uses an hour apart: the second inside the first hour is not due yet.
    const hourly = newPermissionId();
    await a.install(hourly, [rateLimited(now - 10, 5, HOUR)]);
    expect(acceptedAt(await a.checkPolicy(policy, hourly, op), await a.now())).toBe(true);
    await a.usePolicy(policy, hourly);
    const early = await a.checkPolicy(policy, hourly, op);
    expect(early).toBe(BigInt(now - 10 + HOUR) << 208n);
    expect(acceptedAt(early, await a.now())).toBe(false);
  });

  it("ECDSA signer: the session key's signature passes (EIP-191 or raw), a foreign signer's fails", async () => {
    const a = await standInAccount();
    const sessionKey = privateKeyToAccount(generatePrivateKey());
    const stranger = privateKeyToAccount(generatePrivateKey());
    const pid = newPermissionId();
    const elements = permissionElements(a.modules, sessionKey.address, scopeOf([], 0, 0));
    const signerElement = elements[elements.length - 1]!;
    // kernel.ts's signer element: flag NOT_FOR_VALIDATE_SIG ‖ signer ‖ the session key.
    expect(signerElement.toLowerCase()).toBe(
      concat(['0x0002', a.modules.ecdsaSigner, sessionKey.address]).toLowerCase(),
    );
    await a.install(pid, [signerElement]);

    const userOpHash = keccak256(toHex(`purser ${pid}`));
    const check = async (signature: Hex, id = pid) =>
      (
        await a.publicClient.simulateContract({
          address: a.modules.ecdsaSigner,
          abi: moduleAbi,
          functionName: 'checkUserOpSignature',
          args: [idOf(id), userOp(a.address, executeCallData([]), signature), userOpHash],
          account: a.address,
        })
      ).result;
    expect(await check(await sessionKey.signMessage({ message: { raw: userOpHash } }))).toBe(0n);
    expect(await check(await sessionKey.sign({ hash: userOpHash }))).toBe(0n);
    const foreign = await stranger.signMessage({ message: { raw: userOpHash } });
    expect(await check(foreign)).toBe(1n);
    // The key signed another hash: not this op.
    expect(await check(await sessionKey.signMessage({ message: { raw: keccak256('0x02') } }))).toBe(1n);
    // Another permission id of the account has no key.
    expect(
      await check(await sessionKey.signMessage({ message: { raw: userOpHash } }), newPermissionId()),
    ).toBe(1n);

    const erc1271 = (sig: Hex) =>
      a.publicClient.readContract({
        address: a.modules.ecdsaSigner,
        abi: moduleAbi,
        functionName: 'checkSignature',
        args: [idOf(pid), zeroAddress, userOpHash, sig],
        account: a.address,
      });
    expect(await erc1271(await sessionKey.signMessage({ message: { raw: userOpHash } }))).toBe('0x1626ba7e');
    expect(await erc1271(foreign)).toBe('0xffffffff');
    expect(
      await a.publicClient.readContract({
        address: a.modules.ecdsaSigner,
        abi: moduleAbi,
        functionName: 'isInitialized',
        args: [a.address],
      }),
    ).toBe(true);
    await expect(a.install(pid, [signerElement])).rejects.toThrow(/reverted/);
  });

  it('a Kernel account runs a session key: enable mode installs the grant and executes, default mode follows, an off-grant op is refused', async () => {
    const { usdc } = base.contracts;
    const recipient = randomAddress();
    const s = await kernelSession(devnet, (_account, now) => ({
      calls: [{ target: usdc, selector: MINT, valueLimit: 0n }],
      validAfter: now - 60,
      validUntil: now + HOUR,
      rateLimit: { count: 5, intervalSecs: 1 },
    }));
    const balance = () => balanceOf(usdc, recipient);

    // Enable mode: the owner's Enable signature installs the permission, the session key's op runs.
    expect(await s.run(await s.op([mint(usdc, recipient, 5_000_000n)], 'enable'))).toBe('success');
    expect(await balance()).toBe(5_000_000n);
    expect(
      await publicClient.readContract({
        address: modules.ecdsaSigner,
        abi: parseAbi(['function signer(bytes32 id, address wallet) view returns (address)']),
        functionName: 'signer',
        args: [idOf(s.permission.permissionId), s.account],
      }),
    ).toBe(s.sessionKey.address);

    // Default mode: the installed permission alone, a batch of two allowed calls.
    const batch = [mint(usdc, recipient, 1_000_000n), mint(usdc, recipient, 2_000_000n)];
    expect(await s.run(await s.op(batch))).toBe('success');
    expect(await balance()).toBe(8_000_000n);

    // Off the grant (USDC.transfer): validation reverts in the call policy, nothing moves.
    const transfer = {
      to: usdc,
      value: 0n,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [recipient, 1n] }),
    };
    await expect(s.simulate(await s.op([transfer]))).rejects.toThrow(/AA23/);
    // Signed by another key: refused too.
    const stranger = privateKeyToAccount(generatePrivateKey());
    await expect(s.simulate(await s.op([mint(usdc, recipient, 1n)], 'default', stranger))).rejects.toThrow(
      /AA24 signature error/,
    );
    expect(await balance()).toBe(8_000_000n);
  });

  it("the account refuses a value over the call's limit (AA23) and takes one at the limit", async () => {
    const payee = randomAddress();
    const s = await kernelSession(devnet, (_account, now) => ({
      calls: [{ target: payee, selector: '0x00000000', valueLimit: 1_000n }],
      validAfter: now - 60,
      validUntil: now + HOUR,
      rateLimit: null,
    }));
    const pay = (value: bigint) => [{ to: payee, value, data: '0x' as Hex }];
    // Refused in enable mode (nothing installs) and, once installed, in default mode.
    await expect(s.simulate(await s.op(pay(1_001n), 'enable'))).rejects.toThrow(/AA23/);
    expect(await s.run(await s.op(pay(1_000n), 'enable'))).toBe('success');
    await expect(s.simulate(await s.op(pay(1_001n)))).rejects.toThrow(/AA23/);
    expect(await s.run(await s.op(pay(1_001n)))).toBe('refused');
    expect(await publicClient.getBalance({ address: payee })).toBe(1_000n);
  });

  it('the account refuses the (count+1)-th use inside the interval (AA23), after count uses ran', async () => {
    const { usdc } = base.contracts;
    const recipient = randomAddress();
    // Two uses, no spacing between them; the third finds none left.
    const s = await kernelSession(devnet, (_account, now) => ({
      calls: [{ target: usdc, selector: MINT, valueLimit: 0n }],
      validAfter: now - 60,
      validUntil: now + HOUR,
      rateLimit: { count: 2, intervalSecs: 0 },
    }));
    expect(await s.run(await s.op([mint(usdc, recipient, 1n)], 'enable'))).toBe('success');
    expect(await s.run(await s.op([mint(usdc, recipient, 1n)]))).toBe('success');
    await expect(s.simulate(await s.op([mint(usdc, recipient, 1n)]))).rejects.toThrow(/AA23/);
    expect(await balanceOf(usdc, recipient)).toBe(2n);

    // One use an hour: the second, inside the first hour, is not due (the EntryPoint's AA22).
    const hourly = await kernelSession(devnet, (_account, now) => ({
      calls: [{ target: usdc, selector: MINT, valueLimit: 0n }],
      validAfter: now - 60,
      validUntil: now + 10 * HOUR,
      rateLimit: { count: 5, intervalSecs: HOUR },
    }));
    expect(await hourly.run(await hourly.op([mint(usdc, recipient, 1n)], 'enable'))).toBe('success');
    await expect(hourly.simulate(await hourly.op([mint(usdc, recipient, 1n)]))).rejects.toThrow(
      /AA22 expired or not due/,
    );
  });

  it('the account refuses a use after valid_until (AA22), the grant having worked before', async () => {
    const { usdc } = base.contracts;
    const recipient = randomAddress();
    // The devnet is shared by test files running in parallel: moving its clock (evm_increaseTime,
    // evm_setNextBlockTimestamp) would move theirs. Instead the grant ends a few seconds after the
    // chain's current time and the test waits for the chain to pass that second, mining empty
    // blocks (which changes nothing for anyone else).
    const TTL = 3;
    const s = await kernelSession(devnet, (_account, now) => ({
      calls: [{ target: usdc, selector: MINT, valueLimit: 0n }],
      validAfter: now - 60,
      validUntil: now + TTL,
      rateLimit: null,
    }));
    expect(await s.run(await s.op([mint(usdc, recipient, 1n)], 'enable'))).toBe('success');
    const validUntil = s.scope.validUntil;
    const testClient = createTestClient({ mode: 'anvil', chain: viemChain, transport });
    while ((await s.chainNow()) <= validUntil) {
      await new Promise((r) => setTimeout(r, 250));
      await testClient.mine({ blocks: 1 });
    }
    await expect(s.simulate(await s.op([mint(usdc, recipient, 1n)]))).rejects.toThrow(
      /AA22 expired or not due/,
    );
    expect(await s.run(await s.op([mint(usdc, recipient, 1n)]))).toBe('refused');
    expect(await balanceOf(usdc, recipient)).toBe(1n);
  });
});

describe('narrow grants: parameter rules in the call policy', () => {
  it('call policy: each condition compares the word at 4 + offset of the call data; a rule that fails, or reads past the data, refuses the call', async () => {
    const a = await standInAccount();
    const target = randomAddress();
    const word = (n: bigint) => toHex(n, { size: 32 });
    const sel = (s: string) => s as Hex;
    // One selector per condition, each ruling the second argument word (offset 32) against 10.
    const conditions = PARAM_CONDITIONS.filter((c) => c !== 'one_of');
    const calls: PermissionCall[] = [
      ...conditions.map((condition, i) => ({
        target,
        selector: sel(`0x0000000${i + 1}`),
        valueLimit: 0n,
        rules: [{ condition, offset: 32, params: [word(10n)] }],
      })),
      {
        target,
        selector: sel('0x000000ff'),
        valueLimit: 0n,
        rules: [{ condition: 'one_of', offset: 0, params: [word(3n), word(5n)] }],
      },
    ];
    const pid = newPermissionId();
    const [callElement] = permissionElements(a.modules, a.address, scopeOf(calls, 0, 0));
    await a.install(pid, [callElement!]);
    const callWith = (selector: Hex, first: bigint, second: bigint) =>
      executeCallData([{ to: target, value: 0n, data: concat([selector, word(first), word(second)]) }]);
    const passes = async (selector: Hex, first: bigint, second: bigint) => {
      try {
        return (await a.checkPolicy(a.modules.callPolicy, pid, callWith(selector, first, second))) === 0n;
      } catch (e) {
        expect(String(e)).toMatch(/CallViolatesParamRule/);
        return false;
      }
    };
    const expected: Record<string, [boolean, boolean, boolean]> = {
      // second argument 9, 10, 11 against 10
      equal: [false, true, false],
      greater_than: [false, false, true],
      less_than: [true, false, false],
      greater_than_or_equal: [false, true, true],
      less_than_or_equal: [true, true, false],
      not_equal: [true, false, true],
    };
    for (const [i, condition] of conditions.entries()) {
      const selector = sel(`0x0000000${i + 1}`);
      const got = [
        await passes(selector, 0n, 9n),
        await passes(selector, 0n, 10n),
        await passes(selector, 0n, 11n),
      ];
      expect([condition, got]).toEqual([condition, expected[condition]]);
    }
    // ONE_OF on the first word; unsigned: 2^255 is above 10, not negative.
    expect([await passes(sel('0x000000ff'), 3n, 0n), await passes(sel('0x000000ff'), 5n, 0n)]).toEqual([
      true,
      true,
    ]);
    expect(await passes(sel('0x000000ff'), 4n, 0n)).toBe(false);
    expect(await passes(sel('0x00000002'), 0n, 2n ** 255n)).toBe(true);
    // Data too short for the word the rule reads: refused, not read as zero.
    const short = executeCallData([{ to: target, value: 0n, data: concat([sel('0x00000003'), word(0n)]) }]);
    await expect(a.checkPolicy(a.modules.callPolicy, pid, short)).rejects.toThrow(/CallViolatesParamRule/);
    // Rules are checked in a batch item by item too.
    const batch = executeCallData(
      [
        { to: target, value: 0n, data: concat([sel('0x000000ff'), word(3n), word(0n)]) },
        { to: target, value: 0n, data: concat([sel('0x000000ff'), word(4n), word(0n)]) },
      ],
      true,
    );
    await expect(a.checkPolicy(a.modules.callPolicy, pid, batch)).rejects.toThrow(/CallViolatesParamRule/);

    // Install refuses what ZeroDev's v0.0.4 refuses: a condition past ONE_OF (SLICE_EQUAL is
    // v0.0.5's), and a comparison with other than one param.
    const bad = (rules: { condition: number; offset: bigint; params: Hex[] }[]) =>
      concat([
        '0x0000',
        a.modules.callPolicy,
        encodeCallPolicyRaw([{ callType: '0x00', target, selector: '0x12345678', valueLimit: 0n, rules }]),
      ]);
    await expect(
      a.install(newPermissionId(), [bad([{ condition: 7, offset: 0n, params: [word(1n)] }])]),
    ).rejects.toThrow(/reverted/);
    await expect(
      a.install(newPermissionId(), [bad([{ condition: 0, offset: 0n, params: [word(1n), word(2n)] }])]),
    ).rejects.toThrow(/reverted/);
    await expect(
      a.install(newPermissionId(), [bad([{ condition: 6, offset: 0n, params: [] }])]),
    ).resolves.toBeUndefined();
  });

  it('a Kernel account with a narrow grant: approve to a venue router passes, to a stranger is refused (AA23); a swap paying the account passes, paying a stranger is refused', async () => {
    const market = await testMarket(devnet, { TKA: 18, TKB: 6 }, [
      { venue: 'uniswap-v3', pair: ['TKA', 'TKB'], fee: 3000, depth: ['1000', '2000000'] },
      { venue: 'devnet-amm', pair: ['TKA', 'TKB'], fee: null, depth: ['100', '200000'] },
      { venue: 'aerodrome', pair: ['TKA', 'TKB'], fee: null, depth: ['500', '1000000'] },
    ]);
    const tka = market.tokens.TKA!.address;
    const tkb = market.tokens.TKB!.address;
    const adapters = createVenueAdapters({
      config: devnetConfig(testConfig(), devnet),
      chain: createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) }),
    }).filter((v) => ['devnet-amm', 'uniswap-v3', 'aerodrome'].includes(v.venue));
    const venue = (name: string) => adapters.find((v) => v.venue === name)!;
    const routers = venueContracts(adapters, BASE_CHAIN_ID).map((c) => c.address);
    expect(routers).toHaveLength(3);
    const s = await kernelSession(devnet, (account, now) => {
      const ctx = { account, spenders: routers };
      const calls = [
        { target: tka, selector: NARROWED_SELECTORS.approve },
        { target: base.contracts.uniswapV2Router02!, selector: NARROWED_SELECTORS.uniswapV2Swap },
        { target: base.contracts.uniswapV3SwapRouter02!, selector: NARROWED_SELECTORS.multicallDeadline },
        { target: base.contracts.aerodromeRouter!, selector: NARROWED_SELECTORS.aerodromeSwap },
      ];
      return {
        calls: calls.map((c) => ({ ...c, valueLimit: 0n, rules: rulesFor(c.selector, ctx) })),
        validAfter: now - 60,
        validUntil: now + HOUR,
        rateLimit: null,
      };
    });
    await mintTo(tka, s.account, parseEther('10'));
    const stranger = randomAddress();
    const approve = (spender: Address): Call => ({
      to: tka,
      value: 0n,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, parseEther('1')] }),
    });
    const allowance = (spender: Address) =>
      publicClient.readContract({
        address: tka,
        abi: erc20Abi,
        functionName: 'allowance',
        args: [s.account, spender],
      });

    // Approvals: a stranger is refused even in enable mode (nothing installs); a venue router passes.
    await expect(s.simulate(await s.op([approve(stranger)], 'enable'))).rejects.toThrow(PARAM_RULE_REFUSAL);
    expect(await s.run(await s.op([approve(routers[0]!)], 'enable'))).toBe('success');
    expect(await allowance(routers[0]!)).toBe(parseEther('1'));
    expect(await s.run(await s.op([approve(stranger)]))).toBe('refused');
    expect(await allowance(stranger)).toBe(0n);

    // Swaps as each venue builds them (approve its router, then swap), to the account or a stranger.
    const plan = async (name: string, recipient: Address) => {
      const quote = await venue(name).quote({
        chainId: BASE_CHAIN_ID,
        sellToken: tka,
        buyToken: tkb,
        sellAmount: parseEther('0.1'),
        signal: AbortSignal.timeout(10_000),
      });
      const built = await venue(name).build({
        quote,
        taker: s.account,
        recipient,
        slippageBps: 100,
        deadline: BigInt((await s.chainNow()) + 600),
        signal: AbortSignal.timeout(10_000),
      });
      return built.calls;
    };
    for (const name of ['devnet-amm', 'uniswap-v3', 'aerodrome']) {
      const before = await balanceOf(tkb, s.account);
      await expect(s.simulate(await s.op(await plan(name, stranger))), name).rejects.toThrow(
        PARAM_RULE_REFUSAL,
      );
      expect([name, await s.run(await s.op(await plan(name, s.account)))]).toEqual([name, 'success']);
      expect(await balanceOf(tkb, s.account)).toBeGreaterThan(before);
    }
    expect(await balanceOf(tkb, stranger)).toBe(0n);
  });
});
