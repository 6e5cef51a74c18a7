// Safe (Safe{Wallet}, formerly Gnosis Safe) transactions as data: the SafeTx EIP-712 typed data an
// owner signs, the packed signature bytes `execTransaction` takes, and the calldata of the calls a
// treasury makes through a Safe (execTransaction, swapOwner, MultiSendCallOnly batches). Pure
// functions, no I/O; facts from safe-smart-account v1.5.0 (`contracts/Safe.sol`,
// `contracts/base/OwnerManager.sol`, `contracts/libraries/MultiSendCallOnly.sol`; protocols.md §9):
//
// - domain: `EIP712Domain(uint256 chainId,address verifyingContract)`, no name or version
//   (type hash 0x47e79534…9218), verifyingContract = the Safe (the proxy, not the singleton);
// - `SafeTx(address to,uint256 value,bytes data,uint8 operation,uint256 safeTxGas,uint256 baseGas,
//   uint256 gasPrice,address gasToken,address refundReceiver,uint256 nonce)`, type hash
//   0xbb8310d4…86d8; `nonce` is the Safe's current `nonce()`;
// - signatures: 65 bytes each, `r ‖ s ‖ v`, concatenated in strictly ascending order of the signer
//   address (`checkNSignatures` reverts GS026 otherwise). v = 27/28: ECDSA over the SafeTx hash
//   (what an EIP-712 signature is); v = 31/32: over the eth_sign-prefixed hash; v = 1: a
//   pre-validated hash (r = the owner, valid when the owner sends execTransaction or approved the
//   hash on chain); v = 0: a contract signature (not built here).

import {
  concat,
  encodeFunctionData,
  encodePacked,
  hashTypedData,
  isAddressEqual,
  keccak256,
  pad,
  parseAbi,
  size,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';

/** `SENTINEL_OWNERS` of OwnerManager: the head (and tail) of the owners' linked list. */
export const SAFE_SENTINEL_OWNERS: Address = '0x0000000000000000000000000000000000000001';

export const SAFE_TX_TYPE =
  'SafeTx(address to,uint256 value,bytes data,uint8 operation,uint256 safeTxGas,uint256 baseGas,uint256 gasPrice,address gasToken,address refundReceiver,uint256 nonce)';
/** keccak256(SAFE_TX_TYPE), Safe.sol's SAFE_TX_TYPEHASH. */
export const SAFE_TX_TYPEHASH: Hex = '0xbb8310d486368db6bd6f849402fdd73ad53d316b5a4b2644ad6efe0f941286d8';
/** keccak256("EIP712Domain(uint256 chainId,address verifyingContract)"), Safe.sol's DOMAIN_SEPARATOR_TYPEHASH. */
export const SAFE_DOMAIN_TYPEHASH: Hex = '0x47e79534a245952e8b16893a336b85a3d9ea9fa8c573f3d803afb92a79469218';

/** The EIP-712 types of a SafeTx, for viem's signTypedData / hashTypedData. */
export const SAFE_TX_TYPES = {
  SafeTx: [
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'data', type: 'bytes' },
    { name: 'operation', type: 'uint8' },
    { name: 'safeTxGas', type: 'uint256' },
    { name: 'baseGas', type: 'uint256' },
    { name: 'gasPrice', type: 'uint256' },
    { name: 'gasToken', type: 'address' },
    { name: 'refundReceiver', type: 'address' },
    { name: 'nonce', type: 'uint256' },
  ],
} as const;

/** 0 CALL, 1 DELEGATECALL (Enum.Operation). */
export type SafeOperation = 0 | 1;

export interface SafeTx {
  to: Address;
  value: bigint;
  data: Hex;
  operation: SafeOperation;
  safeTxGas: bigint;
  baseGas: bigint;
  gasPrice: bigint;
  gasToken: Address;
  refundReceiver: Address;
  nonce: bigint;
}

/**
 * A SafeTx with Safe's usual defaults for everything not given: no value, a CALL, no gas refund
 * (safeTxGas, baseGas and gasPrice 0, gasToken and refundReceiver the zero address). With
 * safeTxGas 0 and gasPrice 0 a failing inner call reverts the whole execTransaction, with the inner
 * call's revert data (Safe 1.5.0), and the nonce is not used up.
 */
export function buildSafeTx(tx: Pick<SafeTx, 'to' | 'nonce'> & Partial<SafeTx>): SafeTx {
  return {
    to: tx.to,
    value: tx.value ?? 0n,
    data: tx.data ?? '0x',
    operation: tx.operation ?? 0,
    safeTxGas: tx.safeTxGas ?? 0n,
    baseGas: tx.baseGas ?? 0n,
    gasPrice: tx.gasPrice ?? 0n,
    gasToken: tx.gasToken ?? zeroAddress,
    refundReceiver: tx.refundReceiver ?? zeroAddress,
    nonce: tx.nonce,
  };
}

/** The typed data an owner signs (viem `signTypedData(safeTxTypedData(…))`). */
export function safeTxTypedData(chainId: number, safe: Address, tx: SafeTx) {
  return {
    domain: { chainId, verifyingContract: safe },
    types: SAFE_TX_TYPES,
    primaryType: 'SafeTx' as const,
    message: tx,
  };
}

/** The SafeTx hash (what Safe's `getTransactionHash` answers and owners sign). */
export function safeTxHash(chainId: number, safe: Address, tx: SafeTx): Hex {
  return hashTypedData(safeTxTypedData(chainId, safe, tx));
}

/** One owner's part of the signatures: an ECDSA signature (65 bytes) or a pre-validated one. */
export interface SafeSignature {
  signer: Address;
  /** 65 bytes r ‖ s ‖ v. */
  data: Hex;
}

/**
 * An owner's EIP-712 signature of the SafeTx in Safe's form: v 27/28 (a signature with v 0/1, the
 * y-parity form, is moved up by 27). Refuses anything but 65 bytes with v in {0, 1, 27, 28}.
 */
export function ecdsaSafeSignature(signer: Address, signature: Hex): SafeSignature {
  if (size(signature) !== 65) throw new Error(`A Safe ECDSA signature is 65 bytes, not ${size(signature)}`);
  const v = Number.parseInt(signature.slice(-2), 16);
  if (![0, 1, 27, 28].includes(v)) throw new Error(`Signature v must be 0, 1, 27 or 28, not ${v}`);
  const adjusted = v < 27 ? v + 27 : v;
  return { signer, data: `${signature.slice(0, -2)}${adjusted.toString(16)}` as Hex };
}

/**
 * The pre-validated signature of `owner` (v = 1, r = the owner): valid when that owner is the one
 * sending execTransaction, or has approved the SafeTx hash on chain with `approveHash`.
 */
export function prevalidatedSafeSignature(owner: Address): SafeSignature {
  return { signer: owner, data: concat([pad(owner, { size: 32 }), pad('0x', { size: 32 }), '0x01']) };
}

/**
 * The `signatures` bytes of execTransaction: each 65-byte signature, ordered by ascending signer
 * address (as Safe checks them). Refuses two signatures of one signer and contract signatures.
 */
export function packSafeSignatures(signatures: SafeSignature[]): Hex {
  const sorted = [...signatures].sort((a, b) => {
    const x = BigInt(a.signer);
    const y = BigInt(b.signer);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  for (let i = 0; i < sorted.length; i++) {
    const s = sorted[i]!;
    if (size(s.data) !== 65) throw new Error(`Signature of ${s.signer} is ${size(s.data)} bytes, not 65`);
    if (Number.parseInt(s.data.slice(-2), 16) === 0)
      throw new Error('Contract signatures (v = 0) are not supported');
    if (i > 0 && isAddressEqual(sorted[i - 1]!.signer, s.signer))
      throw new Error(`Two signatures of ${s.signer}`);
  }
  return sorted.length === 0 ? '0x' : concat(sorted.map((s) => s.data));
}

// ------------------------------------------------------------------------------ calldata

export const SAFE_ABI = parseAbi([
  'function execTransaction(address to, uint256 value, bytes data, uint8 operation, uint256 safeTxGas, uint256 baseGas, uint256 gasPrice, address gasToken, address refundReceiver, bytes signatures) payable returns (bool success)',
  'function setup(address[] _owners, uint256 _threshold, address to, bytes data, address fallbackHandler, address paymentToken, uint256 payment, address paymentReceiver)',
  'function getTransactionHash(address to, uint256 value, bytes data, uint8 operation, uint256 safeTxGas, uint256 baseGas, uint256 gasPrice, address gasToken, address refundReceiver, uint256 _nonce) view returns (bytes32)',
  'function nonce() view returns (uint256)',
  'function getOwners() view returns (address[])',
  'function getThreshold() view returns (uint256)',
  'function isOwner(address owner) view returns (bool)',
  'function domainSeparator() view returns (bytes32)',
  'function VERSION() view returns (string)',
  'function swapOwner(address prevOwner, address oldOwner, address newOwner)',
  'function addOwnerWithThreshold(address owner, uint256 _threshold)',
  'function removeOwner(address prevOwner, address owner, uint256 _threshold)',
  'function changeThreshold(uint256 _threshold)',
  'function approveHash(bytes32 hashToApprove)',
  'function getModulesPaginated(address start, uint256 pageSize) view returns (address[] array, address next)',
  'function getStorageAt(uint256 offset, uint256 length) view returns (bytes)',
  'event ExecutionSuccess(bytes32 indexed txHash, uint256 payment)',
  'event ExecutionFailure(bytes32 indexed txHash, uint256 payment)',
  'event AddedOwner(address indexed owner)',
  'event RemovedOwner(address indexed owner)',
  'event SafeSetup(address indexed initiator, address[] owners, uint256 threshold, address initializer, address fallbackHandler)',
]);

export const SAFE_PROXY_FACTORY_ABI = parseAbi([
  'function createProxyWithNonce(address _singleton, bytes initializer, uint256 saltNonce) returns (address proxy)',
  'function proxyCreationCode() pure returns (bytes)',
  'event ProxyCreation(address indexed proxy, address singleton)',
]);

export const MULTI_SEND_ABI = parseAbi(['function multiSend(bytes transactions) payable']);

/** execTransaction calldata for a SafeTx and its packed signatures. */
export function encodeExecTransaction(tx: SafeTx, signatures: Hex): Hex {
  return encodeFunctionData({
    abi: SAFE_ABI,
    functionName: 'execTransaction',
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
      signatures,
    ],
  });
}

/**
 * The `setup` initializer of a new Safe proxy: its owners and threshold, a fallback handler, and
 * no setup call, module or payment.
 */
export function encodeSafeSetup(args: {
  owners: Address[];
  threshold: number;
  fallbackHandler: Address;
}): Hex {
  return encodeFunctionData({
    abi: SAFE_ABI,
    functionName: 'setup',
    args: [
      args.owners,
      BigInt(args.threshold),
      zeroAddress,
      '0x',
      args.fallbackHandler,
      zeroAddress,
      0n,
      zeroAddress,
    ],
  });
}

/**
 * `swapOwner(prevOwner, oldOwner, newOwner)` calldata for a Safe whose `getOwners()` is `owners`
 * (read at the block the SafeTx executes against): prevOwner is the owner before `oldOwner` in
 * that list, or the sentinel when it is the first.
 */
export function encodeSwapOwner(owners: readonly Address[], oldOwner: Address, newOwner: Address): Hex {
  const i = owners.findIndex((o) => isAddressEqual(o, oldOwner));
  if (i < 0) throw new Error(`${oldOwner} is not an owner of the Safe`);
  if (owners.some((o) => isAddressEqual(o, newOwner))) throw new Error(`${newOwner} is already an owner`);
  const prevOwner = i === 0 ? SAFE_SENTINEL_OWNERS : owners[i - 1]!;
  return encodeFunctionData({
    abi: SAFE_ABI,
    functionName: 'swapOwner',
    args: [prevOwner, oldOwner, newOwner],
  });
}

export interface SafeCall {
  to: Address;
  value?: bigint;
  data: Hex;
}

/**
 * The MultiSendCallOnly batch of `calls` (each `uint8 operation ‖ address to ‖ uint256 value ‖
 * uint256 dataLength ‖ bytes data`, operation 0): send it as a SafeTx to MultiSendCallOnly with
 * operation 1 (DELEGATECALL), so each call comes from the Safe. All-or-nothing.
 */
export function encodeMultiSendCallOnly(calls: SafeCall[]): Hex {
  if (calls.length === 0) throw new Error('A MultiSend batch needs at least one call');
  const packed = concat(
    calls.map((c) =>
      encodePacked(
        ['uint8', 'address', 'uint256', 'uint256', 'bytes'],
        [0, c.to, c.value ?? 0n, BigInt(size(c.data)), c.data],
      ),
    ),
  );
  return encodeFunctionData({ abi: MULTI_SEND_ABI, functionName: 'multiSend', args: [packed] });
}

/** keccak256 of a type string (for checking the type hashes above). */
export function typeHash(type: string): Hex {
  return keccak256(toHex(type));
}
