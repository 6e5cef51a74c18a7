// ZeroDev Kernel v3 (target v3.1) permission encoding, pure: identifiers, the policies and signer
// that make up the enable data, the selector data, the owner's EIP-712 "Enable" typed data and
// its digest, and the owner's revocation calldata. Layouts from the protocol reference, §3.

import { randomBytes } from 'node:crypto';
import {
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  hashTypedData,
  pad,
  parseAbi,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';

export type KernelVersion = '0.3.1' | '0.3.2' | '0.3.3';
export const KERNEL_VERSIONS: readonly KernelVersion[] = ['0.3.1', '0.3.2', '0.3.3'];

/** Module addresses of one chain (ZeroDev SDK constants by default; see config). */
export interface KernelModules {
  ecdsaSigner: Address;
  callPolicy: Address;
  timestampPolicy: Address;
  rateLimitPolicy: Address;
  /** The root ECDSA validator whose owner signs the Enable typed data. */
  ecdsaValidator: Address;
}

/** `PolicyFlags`: FOR_ALL_VALIDATION, and NOT_FOR_VALIDATE_SIG (no ERC-1271 signing as the account). */
export const FLAG_FOR_ALL_VALIDATION: Hex = '0x0000';
export const FLAG_NOT_FOR_VALIDATE_SIG: Hex = '0x0002';
/** `execute(bytes32,bytes)`: the selector Kernel grants to the permission in enable mode. */
export const EXECUTE_SELECTOR: Hex = '0xe9ae5c53';
/** `keccak256("Enable(bytes21 validationId,uint32 nonce,address hook,bytes validatorData,bytes hookData,bytes selectorData)")`. */
export const ENABLE_TYPE_HASH: Hex = '0xb17ab1224aca0d4255ef8161acaf2ac121b8faa32a4b2258c912cc5f8308c505';
export const UINT48_MAX = 2n ** 48n - 1n;
export const UINT256_MAX = 2n ** 256n - 1n;
/** CallPolicy callType for a single call (batch items are checked as single calls too). */
const CALL_TYPE_SINGLE: Hex = '0x00';

/** CallPolicy's `ParamCondition` (v0.0.4 enum order; SLICE_EQUAL, 7, is v0.0.5 only). */
export const PARAM_CONDITIONS = [
  'equal',
  'greater_than',
  'less_than',
  'greater_than_or_equal',
  'less_than_or_equal',
  'not_equal',
  'one_of',
] as const;
export type ParamConditionName = (typeof PARAM_CONDITIONS)[number];

/**
 * A CallPolicy parameter rule: the 32-byte word of the call's data at `4 + offset` (offset from
 * the start of the arguments, after the selector) compared, unsigned, with `params[0]`, or, for
 * `one_of`, equal to one of `params`.
 */
export interface ParamRule {
  condition: ParamConditionName;
  offset: number;
  /** 32-byte words. */
  params: Hex[];
}

export interface PermissionCall {
  target: Address;
  selector: Hex;
  valueLimit: bigint;
  /** All must hold (none: any arguments). */
  rules?: readonly ParamRule[];
}

export interface PermissionScope {
  calls: PermissionCall[];
  /** Unix seconds. */
  validAfter: number;
  validUntil: number;
  /** RateLimitPolicy: `count` operations in total, at most one per `intervalSecs`, from validAfter. */
  rateLimit: { count: number; intervalSecs: number } | null;
}

export interface PermissionInput {
  account: Address;
  chainId: number;
  kernelVersion: KernelVersion;
  modules: KernelModules;
  permissionId: Hex;
  /** The executor's session-key address (the ECDSA signer's data). */
  sessionKey: Address;
  /** The account's `currentNonce()` (1 for an undeployed Kernel). */
  kernelNonce: number;
  scope: PermissionScope;
}

export interface EnableTypedData {
  domain: { name: 'Kernel'; version: string; chainId: number; verifyingContract: Address };
  types: { Enable: Array<{ name: string; type: string }> };
  primaryType: 'Enable';
  message: {
    validationId: Hex;
    nonce: number;
    hook: Address;
    validatorData: Hex;
    hookData: Hex;
    selectorData: Hex;
  };
}

export interface BuiltPermission {
  permissionId: Hex;
  validationId: Hex;
  /** `abi.encode(bytes[] policyAndSignerData)`: policies, then the signer (with the flag). */
  enableData: Hex;
  selectorData: Hex;
  typedData: EnableTypedData;
  /** The EIP-712 hash the owner signs. */
  digest: Hex;
}

/** A fresh random 4-byte permissionId (never zero). Uniqueness per account is the store's job. */
export function newPermissionId(): Hex {
  for (;;) {
    const id = toHex(randomBytes(4));
    if (id !== '0x00000000') return id;
  }
}

/** vId of a permission: `0x02 ‖ permissionId ‖ 0x00×16` (bytes21). */
export function validationIdOf(permissionId: Hex): Hex {
  return concat(['0x02', pad(permissionId, { size: 20, dir: 'right' })]);
}

/** CallPolicy's install data layout: `Permission[]` with their `ParamRule[]`. */
export const CALL_POLICY_PERMISSIONS = [
  {
    type: 'tuple[]',
    components: [
      { name: 'callType', type: 'bytes1' },
      { name: 'target', type: 'address' },
      { name: 'selector', type: 'bytes4' },
      { name: 'valueLimit', type: 'uint256' },
      {
        name: 'rules',
        type: 'tuple[]',
        components: [
          { name: 'condition', type: 'uint8' },
          { name: 'offset', type: 'uint64' },
          { name: 'params', type: 'bytes32[]' },
        ],
      },
    ],
  },
] as const;

/** CallPolicy data: `abi.encode(Permission[])`, callType 0x00, each call with its parameter rules. */
export function callPolicyData(calls: readonly PermissionCall[]): Hex {
  return encodeAbiParameters(CALL_POLICY_PERMISSIONS, [
    calls.map((c) => ({
      callType: CALL_TYPE_SINGLE,
      target: c.target,
      selector: c.selector,
      valueLimit: c.valueLimit,
      rules: (c.rules ?? []).map((r) => ({
        condition: PARAM_CONDITIONS.indexOf(r.condition),
        offset: BigInt(r.offset),
        params: r.params,
      })),
    })),
  ]);
}

/** TimestampPolicy data: `abi.encode(uint48 validAfter, uint48 validUntil)`. */
export function timestampPolicyData(validAfter: number, validUntil: number): Hex {
  return encodeAbiParameters(
    [
      { name: 'validAfter', type: 'uint48' },
      { name: 'validUntil', type: 'uint48' },
    ],
    [validAfter, validUntil],
  );
}

/** RateLimitPolicy data: `uint48 interval ‖ uint48 count ‖ uint48 startAt`, packed (18 bytes). */
export function rateLimitPolicyData(intervalSecs: number, count: number, startAt: number): Hex {
  return concat([toHex(intervalSecs, { size: 6 }), toHex(count, { size: 6 }), toHex(startAt, { size: 6 })]);
}

/** The policies' and the signer's install elements (`flag ‖ address ‖ data`), signer last. */
export function permissionElements(
  modules: KernelModules,
  sessionKey: Address,
  scope: PermissionScope,
): Hex[] {
  const policies: Hex[] = [
    concat([FLAG_FOR_ALL_VALIDATION, modules.callPolicy, callPolicyData(scope.calls)]),
    concat([
      FLAG_FOR_ALL_VALIDATION,
      modules.timestampPolicy,
      timestampPolicyData(scope.validAfter, scope.validUntil),
    ]),
  ];
  if (scope.rateLimit) {
    policies.push(
      concat([
        FLAG_FOR_ALL_VALIDATION,
        modules.rateLimitPolicy,
        rateLimitPolicyData(scope.rateLimit.intervalSecs, scope.rateLimit.count, scope.validAfter),
      ]),
    );
  }
  // The signer element's flag stops the session key from signing as the account (ERC-1271).
  return [...policies, concat([FLAG_NOT_FOR_VALIDATE_SIG, modules.ecdsaSigner, sessionKey])];
}

export function encodeEnableData(elements: readonly Hex[]): Hex {
  return encodeAbiParameters([{ name: 'policyAndSignerData', type: 'bytes[]' }], [elements]);
}

/** `execute selector ‖ action address (0) ‖ action hook (0) ‖ abi.encode(bytes 0xff, bytes 0x0000)`. */
export function selectorData(): Hex {
  return concat([
    EXECUTE_SELECTOR,
    zeroAddress,
    zeroAddress,
    encodeAbiParameters(
      [
        { name: 'selectorInitData', type: 'bytes' },
        { name: 'hookInitData', type: 'bytes' },
      ],
      ['0xff', '0x0000'],
    ),
  ]);
}

/** EIP-712 domain version of a Kernel version (0.3.0 signs as "0.3.0-beta"). */
export function domainVersion(version: string): string {
  return version === '0.3.0' ? '0.3.0-beta' : version;
}

export function enableTypedData(input: {
  account: Address;
  chainId: number;
  domainVersion: string;
  validationId: Hex;
  kernelNonce: number;
  enableData: Hex;
  selectorData: Hex;
}): EnableTypedData {
  return {
    domain: {
      name: 'Kernel',
      version: input.domainVersion,
      chainId: input.chainId,
      verifyingContract: input.account,
    },
    types: {
      Enable: [
        { name: 'validationId', type: 'bytes21' },
        { name: 'nonce', type: 'uint32' },
        { name: 'hook', type: 'address' },
        { name: 'validatorData', type: 'bytes' },
        { name: 'hookData', type: 'bytes' },
        { name: 'selectorData', type: 'bytes' },
      ],
    },
    primaryType: 'Enable',
    message: {
      validationId: input.validationId,
      nonce: input.kernelNonce,
      hook: zeroAddress,
      validatorData: input.enableData,
      hookData: '0x',
      selectorData: input.selectorData,
    },
  };
}

export function enableDigest(typedData: EnableTypedData): Hex {
  return hashTypedData(typedData);
}

/** Everything the owner signs and enable mode needs, for one permission. */
export function buildPermission(input: PermissionInput, version = domainVersion(input.kernelVersion)) {
  const validationId = validationIdOf(input.permissionId);
  // Lowercase hex throughout: stored, returned and hashed bytes are the same however spelled.
  const enableData = encodeEnableData(
    permissionElements(input.modules, input.sessionKey, input.scope),
  ).toLowerCase() as Hex;
  const selector = selectorData().toLowerCase() as Hex;
  const typedData = enableTypedData({
    account: input.account,
    chainId: input.chainId,
    domainVersion: version,
    validationId,
    kernelNonce: input.kernelNonce,
    enableData,
    selectorData: selector,
  });
  const built: BuiltPermission = {
    permissionId: input.permissionId,
    validationId,
    enableData,
    selectorData: selector,
    typedData,
    digest: enableDigest(typedData),
  };
  return built;
}

export const kernelAbi = parseAbi([
  'function uninstallValidation(bytes21 vId, bytes deinitData, bytes hookDeinitData)',
  'function invalidateNonce(uint32 nonce)',
  'function currentNonce() view returns (uint32)',
  'function rootValidator() view returns (bytes21)',
  'function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)',
]);

/**
 * The owner's calls that end a permission on-chain: uninstall (deinit data = the enable data,
 * one element per policy plus the signer) and invalidate every validation below `nextNonce`.
 */
export function revocationCalls(account: Address, validationId: Hex, enableData: Hex, nextNonce: number) {
  return {
    uninstall_call: {
      to: account,
      data: encodeFunctionData({
        abi: kernelAbi,
        functionName: 'uninstallValidation',
        args: [validationId, enableData, '0x'],
      }),
    },
    invalidate_nonce_call: {
      to: account,
      data: encodeFunctionData({ abi: kernelAbi, functionName: 'invalidateNonce', args: [nextNonce] }),
    },
  };
}
