// ZeroDev Kernel v3.1 on the devnet: the published implementation and factory
// (devnet/vendor/kernel-v3.1.json), and accounts created the way @zerodev/sdk creates them.

import { KernelV3_1AccountAbi, KernelV3FactoryAbi, type KernelValidator } from '@zerodev/sdk';
import { createKernelAccount } from '@zerodev/sdk/accounts';
import { getEntryPoint } from '@zerodev/sdk/constants';
import {
  concat,
  createPublicClient,
  createTestClient,
  createWalletClient,
  decodeFunctionData,
  getAddress,
  http,
  isAddressEqual,
  keccak256,
  parseAbi,
  slice,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, toAccount } from 'viem/accounts';
import { describe, expect, inject, it } from 'vitest';
import { chainDefinition } from '../adapters/chain/viem.ts';
import {
  BASE_CHAIN_ID,
  BASE_SEPOLIA_CHAIN_ID,
  devnetChain,
  ENTRY_POINT_V07,
  expectedDevnetContracts,
} from './devnet.ts';
import { newFundedAccount } from './faucet.ts';

const devnet = inject('devnet');

const factoryAbi = [...KernelV3FactoryAbi, ...parseAbi(['error InitializeError()'])] as const;
/** ERC-1967's implementation slot: keccak256('eip1967.proxy.implementation') - 1. */
const IMPLEMENTATION_SLOT: Hex = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';

function clients(chainId: number) {
  const chain = devnetChain(devnet, chainId);
  const viemChain = chainDefinition(chainId, chain.rpcUrl);
  const transport = http(chain.rpcUrl, { retryCount: 0 });
  return {
    chain,
    viemChain,
    transport,
    publicClient: createPublicClient({ chain: viemChain, transport, pollingInterval: 20 }),
    testClient: createTestClient({ mode: 'anvil', chain: viemChain, transport }),
  };
}

/**
 * What @zerodev/ecdsa-validator's `signerToEcdsaValidator` hands the SDK for a root validator:
 * the validator module's address as identifier (type SECONDARY, 0x01) and the owner's address as
 * the data the module is installed with. Only account creation is exercised here, so nothing signs.
 */
function ecdsaRootValidator(validatorAddress: Address, owner: Address): KernelValidator<'ECDSAValidator'> {
  const unused = (): never => {
    throw new Error('this validator only describes an account for its creation');
  };
  return {
    ...toAccount({
      address: validatorAddress,
      signMessage: unused,
      signTransaction: unused,
      signTypedData: unused,
    }),
    source: 'ECDSAValidator',
    validatorType: 'SECONDARY',
    supportedKernelVersions: '>=0.3.0',
    getIdentifier: () => validatorAddress,
    getEnableData: () => Promise.resolve(owner),
    getNonceKey: () => Promise.resolve(0n),
    getStubSignature: unused,
    signUserOperation: unused,
    isEnabled: () => Promise.resolve(false),
  };
}

describe('Kernel v3.1 on the devnet', () => {
  it.each([BASE_CHAIN_ID, BASE_SEPOLIA_CHAIN_ID])(
    'chain %i has the Kernel v3.1 implementation, bound to EntryPoint v0.7, and its factory',
    async (chainId) => {
      const { chain, publicClient } = clients(chainId);
      const expected = expectedDevnetContracts(chainId);
      const impl = chain.contracts.kernelImplementation;
      const factory = chain.contracts.kernelFactory;
      expect(impl).toBe(expected.kernelImplementation);
      expect(factory).toBe(expected.kernelFactory);
      if (!impl || !factory) throw new Error('no Kernel on the devnet');

      // Over EIP-170's 24,576 bytes: the devnet's anvil runs without the code size limit.
      expect(((await publicClient.getCode({ address: impl })) ?? '0x').length / 2 - 1).toBe(28_581);
      const read = <F extends 'accountId' | 'eip712Domain' | 'entrypoint'>(functionName: F) =>
        publicClient.readContract({ address: impl, abi: KernelV3_1AccountAbi, functionName });
      expect(await read('accountId')).toBe('kernel.advanced.v0.3.1');
      const [, name, version] = await read('eip712Domain');
      expect([name, version]).toEqual(['Kernel', '0.3.1']);
      expect(await read('entrypoint')).toBe(ENTRY_POINT_V07);
      expect(
        await publicClient.readContract({
          address: factory,
          abi: factoryAbi,
          functionName: 'implementation',
        }),
      ).toBe(impl);
    },
  );

  it('creates an account at the address @zerodev/sdk predicts, its root validator installed with the owner', async () => {
    const { chain, viemChain, transport, publicClient, testClient } = clients(BASE_CHAIN_ID);
    const impl = chain.contracts.kernelImplementation!;
    const factory = chain.contracts.kernelFactory!;
    // The ECDSA validator module is not on the devnet: a contract that accepts every call stands
    // in for it at a fresh address (Kernel calls only its onInstall while creating the account).
    const validator = privateKeyToAccount(generatePrivateKey()).address;
    await testClient.setCode({ address: validator, bytecode: '0x00' });
    const owner = privateKeyToAccount(generatePrivateKey()).address;
    const index = BigInt(keccak256(owner)) % 2n ** 64n;

    const account = await createKernelAccount(publicClient, {
      entryPoint: getEntryPoint('0.7'),
      kernelVersion: '0.3.1',
      plugins: { sudo: ecdsaRootValidator(validator, owner) },
      factoryAddress: factory,
      accountImplementationAddress: impl,
      useMetaFactory: false,
      index,
    });
    const { factory: sdkFactory, factoryData } = await account.getFactoryArgs();
    expect(sdkFactory).toBe(factory);
    const call = decodeFunctionData({ abi: factoryAbi, data: factoryData! });
    expect(call.functionName).toBe('createAccount');
    const [initData, salt] = call.args as readonly [Hex, Hex];
    expect(salt).toBe(toHex(index, { size: 32 }));
    // initialize(root validator 0x01‖module, no hook, the module's install data = the owner, …).
    const init = decodeFunctionData({ abi: KernelV3_1AccountAbi, data: initData });
    expect(init.functionName).toBe('initialize');
    expect(init.args).toEqual([
      concat(['0x01', validator.toLowerCase() as Hex]),
      zeroAddress,
      owner.toLowerCase(),
      '0x',
      [],
    ]);

    const predicted = await publicClient.readContract({
      address: factory,
      abi: factoryAbi,
      functionName: 'getAddress',
      args: [initData, salt],
    });
    expect(predicted).toBe(account.address);
    expect(await publicClient.getCode({ address: account.address })).toBeUndefined();

    const sender = await newFundedAccount(devnet, { chainId: BASE_CHAIN_ID });
    const wallet = createWalletClient({
      account: privateKeyToAccount(sender.privateKey),
      chain: viemChain,
      transport,
    });
    const hash = await wallet.sendTransaction({ to: factory, data: factoryData!, gas: 1_000_000n });
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    expect(receipt.status).toBe('success');

    const at = (functionName: 'accountId' | 'rootValidator' | 'eip712Domain') =>
      publicClient.readContract({ address: account.address, abi: KernelV3_1AccountAbi, functionName });
    expect(await at('accountId')).toBe('kernel.advanced.v0.3.1');
    expect(await at('rootValidator')).toBe(concat(['0x01', validator.toLowerCase() as Hex]));
    const domain = (await at('eip712Domain')) as readonly unknown[];
    expect(isAddressEqual(domain[4] as Address, account.address)).toBe(true);
    const slot = await publicClient.getStorageAt({ address: account.address, slot: IMPLEMENTATION_SLOT });
    expect(getAddress(slice(slot!, 12))).toBe(impl);
  });

  it('refuses to create an account whose root validator module has no code', async () => {
    const { chain, publicClient } = clients(BASE_CHAIN_ID);
    const factory = chain.contracts.kernelFactory!;
    const validator = privateKeyToAccount(generatePrivateKey()).address;
    const owner = privateKeyToAccount(generatePrivateKey()).address;
    const account = await createKernelAccount(publicClient, {
      entryPoint: getEntryPoint('0.7'),
      kernelVersion: '0.3.1',
      plugins: { sudo: ecdsaRootValidator(validator, owner) },
      factoryAddress: factory,
      accountImplementationAddress: chain.contracts.kernelImplementation!,
      useMetaFactory: false,
    });
    // The SDK asks the EntryPoint, which runs the factory: it gets no address either.
    expect(account.address).toBe(zeroAddress);
    const { factoryData } = await account.getFactoryArgs();
    const call = decodeFunctionData({ abi: factoryAbi, data: factoryData! });
    const [initData, salt] = call.args as readonly [Hex, Hex];
    await expect(
      publicClient.simulateContract({
        address: factory,
        abi: factoryAbi,
        functionName: 'createAccount',
        args: [initData, salt],
        account: privateKeyToAccount(generatePrivateKey()).address,
      }),
    ).rejects.toThrow(/InitializeError/);
  });
});
