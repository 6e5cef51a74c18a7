// The Kernel v3.1 permission encoding, cross-checked against ZeroDev's own SDK
// (@zerodev/permissions + @zerodev/sdk, dev dependencies) and an independent EIP-712 hash.

import { PolicyFlags, toPermissionValidator } from '@zerodev/permissions';
import {
  CallPolicyVersion,
  ParamCondition,
  toCallPolicy,
  toRateLimitPolicy,
  toTimestampPolicy,
} from '@zerodev/permissions/policies';
import { toECDSASigner } from '@zerodev/permissions/signers';
import { addressToEmptyAccount, getPluginsEnableTypedData } from '@zerodev/sdk';
import { getEntryPoint } from '@zerodev/sdk/constants';
import fc from 'fast-check';
import {
  concat,
  createPublicClient,
  decodeFunctionData,
  encodeAbiParameters,
  getAddress,
  hashTypedData,
  http,
  keccak256,
  pad,
  parseAbi,
  toHex,
  type Address,
  type Hex,
} from 'viem';
import { base } from 'viem/chains';
import { describe, expect, it } from 'vitest';
import { DEFAULT_KERNEL_MODULES } from '../../config.ts';
import {
  buildPermission,
  ENABLE_TYPE_HASH,
  kernelAbi,
  revocationCalls,
  selectorData,
  validationIdOf,
  PARAM_CONDITIONS,
  type KernelModules,
  type ParamRule,
  type PermissionScope,
} from './kernel.ts';
import { NARROWED_SELECTORS, rulesFor } from './rules.ts';

const modules: KernelModules = {
  ecdsaSigner: getAddress(DEFAULT_KERNEL_MODULES.ecdsaSigner),
  callPolicy: getAddress(DEFAULT_KERNEL_MODULES.callPolicy),
  timestampPolicy: getAddress(DEFAULT_KERNEL_MODULES.timestampPolicy),
  rateLimitPolicy: getAddress(DEFAULT_KERNEL_MODULES.rateLimitPolicy),
  ecdsaValidator: getAddress(DEFAULT_KERNEL_MODULES.ecdsaValidator),
};
const account = getAddress('0x1111111111111111111111111111111111111111');
const sessionKey = getAddress('0x70997970c51812dc3a010c7d01b50e0d17dc79c8');
const client = createPublicClient({ chain: base, transport: http('http://127.0.0.1:1') });

async function sdkEncoding(scope: PermissionScope, permissionId: Hex, nonce: number) {
  const policies = [
    toCallPolicy({
      policyVersion: CallPolicyVersion.V0_0_4,
      permissions: scope.calls.map((c) => ({
        target: c.target,
        selector: c.selector,
        valueLimit: c.valueLimit,
        rules: (c.rules ?? []).map((r) => ({
          condition: PARAM_CONDITIONS.indexOf(r.condition),
          offset: r.offset,
          params: r.params,
        })),
      })),
    }),
    toTimestampPolicy({ validAfter: scope.validAfter, validUntil: scope.validUntil }),
    ...(scope.rateLimit
      ? [
          toRateLimitPolicy({
            count: scope.rateLimit.count,
            interval: scope.rateLimit.intervalSecs,
            startAt: scope.validAfter,
          }),
        ]
      : []),
  ];
  const signer = await toECDSASigner({ signer: addressToEmptyAccount(sessionKey) });
  const validator = await toPermissionValidator(client, {
    signer,
    policies,
    entryPoint: getEntryPoint('0.7'),
    kernelVersion: '0.3.1',
    flag: PolicyFlags.NOT_FOR_VALIDATE_SIG,
    permissionId,
  });
  const typedData = await getPluginsEnableTypedData({
    accountAddress: account,
    chainId: 8453,
    kernelVersion: '0.3.1',
    action: { selector: '0xe9ae5c53', address: '0x0000000000000000000000000000000000000000' },
    validator,
    validatorNonce: nonce,
  });
  return { enableData: await validator.getEnableData(account), typedData };
}

/** The object with every string value lowercased (hex case carries no meaning in bytes). */
const lower = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, typeof v === 'string' ? v.toLowerCase() : v]));

const wordArb = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => toHex(b));
const ruleArb: fc.Arbitrary<ParamRule> = fc
  .record({
    condition: fc.constantFrom(...PARAM_CONDITIONS),
    offset: fc.integer({ min: 0, max: 4096 }),
    params: fc.array(wordArb, { minLength: 0, maxLength: 4 }),
  })
  .map((r) => (r.condition === 'one_of' ? r : { ...r, params: [r.params[0] ?? pad('0x01', { size: 32 })] }));

const scopeArb: fc.Arbitrary<PermissionScope> = fc.record({
  calls: fc.array(
    fc.record({
      target: fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => getAddress(toHex(b))),
      selector: fc.uint8Array({ minLength: 4, maxLength: 4 }).map((b) => toHex(b)),
      valueLimit: fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }),
      rules: fc.array(ruleArb, { maxLength: 3 }),
    }),
    { minLength: 1, maxLength: 32 },
  ),
  validAfter: fc.integer({ min: 0, max: 2 ** 40 }),
  validUntil: fc.integer({ min: 2 ** 40 + 1, max: 2 ** 48 - 1 }),
  rateLimit: fc.option(
    fc.record({
      count: fc.integer({ min: 1, max: 2 ** 48 - 1 }),
      intervalSecs: fc.integer({ min: 0, max: 2 ** 48 - 1 }),
    }),
    { nil: null },
  ),
});

describe('the Kernel v3.1 permission', () => {
  it('matches @zerodev/permissions byte for byte: enable data, typed data and digest', async () => {
    await fc.assert(
      fc.asyncProperty(
        scopeArb,
        fc.uint8Array({ minLength: 4, maxLength: 4 }).map((b) => toHex(b)),
        fc.integer({ min: 1, max: 2 ** 32 - 1 }),
        async (scope, permissionId, nonce) => {
          const ours = buildPermission({
            account,
            chainId: 8453,
            kernelVersion: '0.3.1',
            modules,
            permissionId,
            sessionKey,
            kernelNonce: nonce,
            scope,
          });
          const sdk = await sdkEncoding(scope, permissionId, nonce);
          expect(ours.enableData).toBe(sdk.enableData.toLowerCase());
          expect(lower(ours.typedData.message)).toEqual(lower(sdk.typedData.message));
          expect(ours.typedData.domain).toEqual(sdk.typedData.domain);
          expect(ours.digest).toBe(hashTypedData(sdk.typedData));
        },
      ),
      { numRuns: 25 },
    );
  });

  it('hashes the Enable struct as Kernel v3.1 does (ENABLE_TYPE_HASH, independent of viem typed data)', () => {
    const scope: PermissionScope = {
      calls: [
        {
          target: getAddress('0x4200000000000000000000000000000000000006'),
          selector: '0x2e1a7d4d',
          valueLimit: 0n,
        },
      ],
      validAfter: 0,
      validUntil: 1_900_000_000,
      rateLimit: { count: 10, intervalSecs: 60 },
    };
    const built = buildPermission({
      account,
      chainId: 84532,
      kernelVersion: '0.3.1',
      modules,
      permissionId: '0x12345678',
      sessionKey,
      kernelNonce: 1,
      scope,
    });
    expect(
      keccak256(
        new TextEncoder().encode(
          'Enable(bytes21 validationId,uint32 nonce,address hook,bytes validatorData,bytes hookData,bytes selectorData)',
        ),
      ),
    ).toBe(ENABLE_TYPE_HASH);
    const structHash = keccak256(
      encodeAbiParameters(
        [
          { type: 'bytes32' },
          { type: 'bytes21' },
          { type: 'uint32' },
          { type: 'address' },
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'bytes32' },
        ],
        [
          ENABLE_TYPE_HASH,
          built.validationId,
          1,
          '0x0000000000000000000000000000000000000000',
          keccak256(built.enableData),
          keccak256('0x'),
          keccak256(built.selectorData),
        ],
      ),
    );
    const domainSeparator = keccak256(
      encodeAbiParameters(
        [
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'bytes32' },
          { type: 'uint256' },
          { type: 'address' },
        ],
        [
          keccak256(
            new TextEncoder().encode(
              'EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)',
            ),
          ),
          keccak256(new TextEncoder().encode('Kernel')),
          keccak256(new TextEncoder().encode('0.3.1')),
          84532n,
          account,
        ],
      ),
    );
    expect(built.digest).toBe(keccak256(concat(['0x1901', domainSeparator, structHash])));
  });

  it('lays out identifiers, flags and selector data as the reference says', () => {
    expect(validationIdOf('0x12345678')).toBe('0x021234567800000000000000000000000000000000');
    const built = buildPermission({
      account,
      chainId: 8453,
      kernelVersion: '0.3.1',
      modules,
      permissionId: '0xdeadbeef',
      sessionKey,
      kernelNonce: 3,
      scope: {
        calls: [{ target: account, selector: '0x095ea7b3', valueLimit: 0n }],
        validAfter: 5,
        validUntil: 10,
        rateLimit: null,
      },
    });
    // The signer element (last) carries NOT_FOR_VALIDATE_SIG, the ECDSA signer and the session key.
    expect(built.enableData.toLowerCase()).toContain(
      `0002${modules.ecdsaSigner.slice(2)}${sessionKey.slice(2)}`.toLowerCase(),
    );
    expect(selectorData().slice(0, 10)).toBe('0xe9ae5c53');
    const calls = revocationCalls(account, built.validationId, built.enableData, 4);
    const uninstall = decodeFunctionData({ abi: kernelAbi, data: calls.uninstall_call.data });
    expect(uninstall.functionName).toBe('uninstallValidation');
    expect(uninstall.args).toEqual([built.validationId, built.enableData, '0x']);
    expect(calls.uninstall_call.data.slice(0, 10)).toBe('0xe6f3d50a');
    expect(calls.invalidate_nonce_call.data.slice(0, 10)).toBe('0x1f1b92e3');
    expect(decodeFunctionData({ abi: kernelAbi, data: calls.invalidate_nonce_call.data }).args).toEqual([4]);
    expect(calls.uninstall_call.to).toBe(account as Address);
  });
  it("narrowing rules encode as the SDK's own rules from the functions' ABIs (offset = 32 × argument index)", async () => {
    const spenders = [
      getAddress('0x0000000000001fF3684f28c67538d4D072C22734'),
      getAddress('0x2626664c2603336E57B271c5C0b26F421741e481'),
    ];
    const token = getAddress('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913');
    const v2Router = getAddress('0x4752ba5DBc23f44D87826276BF6Fd6b1C372aD24');
    const aerodrome = getAddress('0xcF77a3Ba9A5CA399B7c97c74d54e5b1Beb874E43');
    const ctx = { account, spenders };
    const approveAbi = parseAbi(['function approve(address spender, uint256 amount) returns (bool)']);
    const v2Abi = parseAbi([
      'function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline) returns (uint256[] amounts)',
    ]);
    const aeroAbi = parseAbi([
      'struct Route { address from; address to; bool stable; address factory; }',
      'function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, Route[] routes, address to, uint256 deadline) returns (uint256[] amounts)',
    ]);
    const scope: PermissionScope = {
      calls: [
        { target: token, selector: NARROWED_SELECTORS.approve, valueLimit: 0n },
        { target: v2Router, selector: NARROWED_SELECTORS.uniswapV2Swap, valueLimit: 0n },
        { target: aerodrome, selector: NARROWED_SELECTORS.aerodromeSwap, valueLimit: 0n },
      ].map((c) => ({ ...c, rules: rulesFor(c.selector, ctx) })),
      validAfter: 0,
      validUntil: 1_900_000_000,
      rateLimit: null,
    };
    const ours = buildPermission({
      account,
      chainId: 8453,
      kernelVersion: '0.3.1',
      modules,
      permissionId: '0x0badcafe',
      sessionKey,
      kernelNonce: 1,
      scope,
    });
    const fromAbi = toCallPolicy({
      policyVersion: CallPolicyVersion.V0_0_4,
      permissions: [
        {
          target: token,
          abi: approveAbi,
          functionName: 'approve',
          args: [{ condition: ParamCondition.ONE_OF, value: spenders }, null],
        },
        {
          target: v2Router,
          abi: v2Abi,
          functionName: 'swapExactTokensForTokens',
          args: [null, null, null, { condition: ParamCondition.EQUAL, value: account }, null],
        },
        {
          target: aerodrome,
          abi: aeroAbi,
          functionName: 'swapExactTokensForTokens',
          args: [null, null, null, { condition: ParamCondition.EQUAL, value: account }, null],
        },
      ],
    });
    const callElement =
      `0x0000${modules.callPolicy.slice(2)}${fromAbi.getPolicyData().slice(2)}`.toLowerCase();
    expect(ours.enableData).toContain(callElement.slice(2));
    const sdk = await sdkEncoding(scope, '0x0badcafe', 1);
    expect(ours.enableData).toBe(sdk.enableData.toLowerCase());
  });
});
