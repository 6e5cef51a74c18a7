// Kernel v3.1 accounts in tests: the root ECDSA validator the ZeroDev SDK is given, built the way
// @zerodev/ecdsa-validator's `signerToEcdsaValidator` builds it (that package is not a dependency).

import type { KernelValidator } from '@zerodev/sdk';
import type { Address, Hex } from 'viem';
import { getUserOperationHash, type UserOperation } from 'viem/account-abstraction';
import { toAccount, type LocalAccount } from 'viem/accounts';
import { ENTRY_POINT_V07 } from '../../src/devnet/devnet.ts';

/**
 * What @zerodev/ecdsa-validator's `signerToEcdsaValidator` hands the SDK for a root validator:
 * the validator module's address as identifier (type SECONDARY, 0x01), the owner's address as the
 * data the module is installed with, and the owner's signatures — over the userOpHash as an
 * EIP-191 message, and over Kernel's EIP-712 wrapper for ERC-1271.
 */
export function ecdsaRootValidator(
  validatorAddress: Address,
  owner: LocalAccount,
  chainId: number,
): KernelValidator<'ECDSAValidator'> {
  return {
    ...toAccount({
      address: validatorAddress,
      signMessage: ({ message }) => owner.signMessage({ message }),
      signTransaction: () => Promise.reject(new Error('a validator signs no transactions')),
      signTypedData: (typedData) => owner.signTypedData(typedData),
    }),
    source: 'ECDSAValidator',
    validatorType: 'SECONDARY',
    supportedKernelVersions: '>=0.3.0',
    getIdentifier: () => validatorAddress,
    getEnableData: () => Promise.resolve(owner.address),
    getNonceKey: (_account, customNonceKey) => Promise.resolve(customNonceKey ?? 0n),
    // A well-formed 65-byte signature nobody made (gas estimation only).
    getStubSignature: () => Promise.resolve(STUB_SIGNATURE),
    signUserOperation: (userOperation) => {
      const { chainId: opChainId, ...op } = userOperation;
      const hash = getUserOperationHash({
        userOperation: { ...op, signature: '0x' } as UserOperation<'0.7'>,
        entryPointAddress: ENTRY_POINT_V07,
        entryPointVersion: '0.7',
        chainId: opChainId ?? chainId,
      });
      return owner.signMessage({ message: { raw: hash } });
    },
    isEnabled: () => Promise.resolve(false),
  };
}

export const STUB_SIGNATURE: Hex =
  '0xfffffffffffffffffffffffffffffff0000000000000000000000000000000007aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1c';
