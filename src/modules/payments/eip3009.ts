// EIP-3009 `transferWithAuthorization`: the typed data a payer signs, and the calldata the relayer
// submits. Facts from circlefin/stablecoin-evm EIP3009.sol (docs/payments.md cites them).

import {
  encodeFunctionData,
  hashTypedData,
  parseAbi,
  parseAbiItem,
  size,
  type Address,
  type Hex,
  type TypedDataDomain,
} from 'viem';

export interface TransferAuthorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  /** 32 random bytes chosen by the payer; (from, nonce) is usable once. */
  nonce: Hex;
}

export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

export const eip3009WriteAbi = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
]);

export const authorizationUsedEvent = parseAbiItem(
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
);
export const authorizationCanceledEvent = parseAbiItem(
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
);

/** The EIP-712 digest the payer signed. */
export function authorizationDigest(domain: TypedDataDomain, authorization: TransferAuthorization): Hex {
  return hashTypedData({
    domain,
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
}

/**
 * Calldata of `transferWithAuthorization`: the (v, r, s) overload for a 65-byte ECDSA signature
 * (every FiatToken version has it), the `bytes` overload (ERC-1271 smart-account payers, FiatToken
 * v2.2) otherwise.
 */
export function transferWithAuthorizationCalldata(authorization: TransferAuthorization, signature: Hex): Hex {
  const args = [
    authorization.from,
    authorization.to,
    authorization.value,
    authorization.validAfter,
    authorization.validBefore,
    authorization.nonce,
  ] as const;
  if (size(signature) === 65) {
    const r = `0x${signature.slice(2, 66)}` as Hex;
    const s = `0x${signature.slice(66, 130)}` as Hex;
    let v = Number.parseInt(signature.slice(130, 132), 16);
    if (v < 27) v += 27;
    return encodeFunctionData({
      abi: eip3009WriteAbi,
      functionName: 'transferWithAuthorization',
      args: [...args, v, r, s],
    });
  }
  return encodeFunctionData({
    abi: eip3009WriteAbi,
    functionName: 'transferWithAuthorization',
    args: [...args, signature],
  });
}
