// Kernel v3.1 accounts in tests: the root ECDSA validator the ZeroDev SDK is given, built the way
// @zerodev/ecdsa-validator's `signerToEcdsaValidator` builds it (that package is not a dependency).

import type { KernelValidator } from '@zerodev/sdk';
import { createKernelAccount } from '@zerodev/sdk/accounts';
import { getEntryPoint } from '@zerodev/sdk/constants';
import type { Address, Chain, Hex, PublicClient, Transport } from 'viem';
import { getUserOperationHash, type UserOperation } from 'viem/account-abstraction';
import { toAccount, type LocalAccount } from 'viem/accounts';
import type {
  UserOperationGasEstimate,
  UserOperationToEstimate,
  UserOperationV07,
} from '../../src/adapters/bundler/port.ts';
import { ENTRY_POINT_V07, type DevnetChain } from '../../src/devnet/devnet.ts';
import { STUB_ECDSA_SIGNATURE } from '../../src/modules/delegations/operations.ts';

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
    getStubSignature: () => Promise.resolve(STUB_ECDSA_SIGNATURE),
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

/** A Kernel v3.1 account of `owner` on a devnet chain (root: the devnet's ECDSA validator), counterfactual until its first op. */
export function devnetKernelSmartAccount(
  publicClient: PublicClient<Transport, Chain>,
  chain: DevnetChain,
  owner: LocalAccount,
  index = 0n,
) {
  const { kernelFactory, kernelImplementation, kernelEcdsaValidator } = chain.contracts;
  if (!kernelFactory || !kernelImplementation || !kernelEcdsaValidator) {
    throw new Error(`devnet chain ${chain.chainId} has no Kernel`);
  }
  return createKernelAccount(publicClient, {
    entryPoint: getEntryPoint('0.7'),
    kernelVersion: '0.3.1',
    plugins: { sudo: ecdsaRootValidator(kernelEcdsaValidator, owner, chain.chainId) },
    factoryAddress: kernelFactory,
    accountImplementationAddress: kernelImplementation,
    useMetaFactory: false,
    index,
  });
}

export type DevnetKernelSmartAccount = Awaited<ReturnType<typeof devnetKernelSmartAccount>>;

/**
 * An unsigned operation of `account` running `calls` (with the factory call while the account has
 * no code), its fees at twice the chain's estimate, and the stub signature for estimation.
 */
export async function draftUserOperation(
  publicClient: PublicClient<Transport, Chain>,
  account: DevnetKernelSmartAccount,
  calls: { to: Address; value?: bigint; data?: Hex }[],
): Promise<UserOperationToEstimate> {
  const deployed = ((await publicClient.getCode({ address: account.address }))?.length ?? 0) > 2;
  const { factory, factoryData } = await account.getFactoryArgs();
  const fees = await publicClient.estimateFeesPerGas();
  const draft: UserOperationToEstimate = {
    sender: account.address,
    nonce: await account.getNonce({ key: 0n }),
    ...(deployed || !factory || !factoryData ? {} : { factory, factoryData }),
    callData: await account.encodeCalls(
      calls.map((c) => ({ to: c.to, value: c.value ?? 0n, data: c.data ?? '0x' })),
    ),
    maxFeePerGas: fees.maxFeePerGas * 2n,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas * 2n,
    signature: '0x',
  };
  draft.signature = await account.getStubSignature(draft as UserOperation<'0.7'>);
  return draft;
}

/** The draft with the bundler's gas limits, signed by the account's owner. */
export async function signedUserOperation(
  account: DevnetKernelSmartAccount,
  draft: UserOperationToEstimate,
  gas: UserOperationGasEstimate,
): Promise<UserOperationV07> {
  const op: UserOperationV07 = {
    ...draft,
    callGasLimit: gas.callGasLimit,
    verificationGasLimit: gas.verificationGasLimit,
    preVerificationGas: gas.preVerificationGas,
  };
  op.signature = await account.signUserOperation(op);
  return op;
}
