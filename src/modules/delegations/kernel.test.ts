// The Kernel v3.1 permission encoding, cross-checked against ZeroDev's own SDK
// (@zerodev/permissions + @zerodev/sdk, dev dependencies) and an independent EIP-712 hash.

import { PolicyFlags, toPermissionValidator } from '@zerodev/permissions';
import {
  CallPolicyVersion,
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
  type KernelModules,
  type PermissionScope,
} from './kernel.ts';

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

const scopeArb: fc.Arbitrary<PermissionScope> = fc.record({
  calls: fc.array(
    fc.record({
      target: fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => getAddress(toHex(b))),
      selector: fc.uint8Array({ minLength: 4, maxLength: 4 }).map((b) => toHex(b)),
      valueLimit: fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }),
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
});
