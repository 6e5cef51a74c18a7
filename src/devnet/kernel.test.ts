// ZeroDev Kernel v3.1 on the devnet: the published implementation and factory
// (devnet/vendor/kernel-v3.1.json), the devnet's own ECDSA validator module
// (devnet/KernelECDSAValidator.sol), accounts created the way @zerodev/sdk creates them, and
// UserOperations the owner signs, submitted to EntryPoint v0.7's handleOps without a bundler.

import { KernelV3_1AccountAbi, KernelV3FactoryAbi, type KernelValidator } from '@zerodev/sdk';
import { createKernelAccount } from '@zerodev/sdk/accounts';
import { getEntryPoint } from '@zerodev/sdk/constants';
import {
  concat,
  createPublicClient,
  createWalletClient,
  decodeFunctionData,
  encodeFunctionData,
  erc20Abi,
  getAbiItem,
  getAddress,
  hashMessage,
  http,
  isAddressEqual,
  keccak256,
  parseAbi,
  parseEther,
  parseEventLogs,
  slice,
  toFunctionSelector,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
  type Log,
} from 'viem';
import { entryPoint07Abi, toPackedUserOperation, type UserOperation } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ecdsaRootValidator } from '../../test/support/kernel.ts';
import { loadConfig } from '../config.ts';
import { withDevnetKernelModules } from './kernel-accounts.ts';
import { describe, expect, inject, it } from 'vitest';
import { chainDefinition } from '../adapters/chain/viem.ts';
import {
  BASE_CHAIN_ID,
  BASE_SEPOLIA_CHAIN_ID,
  devnetChain,
  ENTRY_POINT_V07,
  expectedDevnetContracts,
  type DevnetChain,
} from './devnet.ts';
import { fundAddress, newFundedAccount } from './faucet.ts';

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
  };
}

const validatorAbi = parseAbi([
  'struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }',
  'function ecdsaValidatorStorage(address smartAccount) view returns (address owner)',
  'function isInitialized(address smartAccount) view returns (bool)',
  'function isModuleType(uint256 typeId) pure returns (bool)',
  'function validateUserOp(PackedUserOperation userOp, bytes32 userOpHash) payable returns (uint256)',
  'function isValidSignatureWithSender(address sender, bytes32 hash, bytes sig) view returns (bytes4)',
]);
const mintAbi = parseAbi(['function mint(address to, uint256 amount) returns (bool)']);

/** A Kernel v3.1 account on the devnet's implementation and factory (optionally at a known address). */
function kernelAccount(
  publicClient: ReturnType<typeof clients>['publicClient'],
  chain: DevnetChain,
  sudo: KernelValidator<'ECDSAValidator'>,
  address?: Address,
) {
  return createKernelAccount(publicClient, {
    entryPoint: getEntryPoint('0.7'),
    kernelVersion: '0.3.1',
    plugins: { sudo },
    factoryAddress: chain.contracts.kernelFactory!,
    accountImplementationAddress: chain.contracts.kernelImplementation!,
    useMetaFactory: false,
    ...(address ? { address } : {}),
  });
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
    const { chain, viemChain, transport, publicClient } = clients(BASE_CHAIN_ID);
    const impl = chain.contracts.kernelImplementation!;
    const factory = chain.contracts.kernelFactory!;
    const validator = chain.contracts.kernelEcdsaValidator!;
    const ownerAccount = privateKeyToAccount(generatePrivateKey());
    const owner = ownerAccount.address;
    const index = BigInt(keccak256(owner)) % 2n ** 64n;

    const account = await createKernelAccount(publicClient, {
      entryPoint: getEntryPoint('0.7'),
      kernelVersion: '0.3.1',
      plugins: { sudo: ecdsaRootValidator(validator, ownerAccount, BASE_CHAIN_ID) },
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
    // The module recorded the owner for the account (what the delegations module reads).
    const module = (functionName: 'ecdsaValidatorStorage' | 'isInitialized') =>
      publicClient.readContract({
        address: validator,
        abi: validatorAbi,
        functionName,
        args: [account.address],
      });
    expect(await module('ecdsaValidatorStorage')).toBe(owner);
    expect(await module('isInitialized')).toBe(true);
  });

  it('refuses to create an account whose root validator module has no code', async () => {
    const { chain, publicClient } = clients(BASE_CHAIN_ID);
    const factory = chain.contracts.kernelFactory!;
    const validator = privateKeyToAccount(generatePrivateKey()).address;
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await createKernelAccount(publicClient, {
      entryPoint: getEntryPoint('0.7'),
      kernelVersion: '0.3.1',
      plugins: { sudo: ecdsaRootValidator(validator, owner, BASE_CHAIN_ID) },
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
  it.each([BASE_CHAIN_ID, BASE_SEPOLIA_CHAIN_ID])(
    "chain %i has the ECDSA validator module, with the interface of ZeroDev's",
    async (chainId) => {
      const { chain, publicClient } = clients(chainId);
      const validator = chain.contracts.kernelEcdsaValidator;
      expect(validator).toBe(expectedDevnetContracts(chainId).kernelEcdsaValidator);
      if (!validator) throw new Error('no ECDSA validator on the devnet');
      const isType = (typeId: bigint) =>
        publicClient.readContract({
          address: validator,
          abi: validatorAbi,
          functionName: 'isModuleType',
          args: [typeId],
        });
      // 1 = validator, 4 = hook (ERC-7579); not an executor, fallback, policy or signer.
      expect(await Promise.all([1n, 2n, 3n, 4n, 5n, 6n].map(isType))).toEqual([
        true,
        false,
        false,
        true,
        false,
        false,
      ]);
      const nobody = privateKeyToAccount(generatePrivateKey()).address;
      expect(
        await publicClient.readContract({
          address: validator,
          abi: validatorAbi,
          functionName: 'ecdsaValidatorStorage',
          args: [nobody],
        }),
      ).toBe(zeroAddress);
      // Kernel calls validateUserOp by this selector (IValidator with EntryPoint v0.7's struct).
      expect(toFunctionSelector(getAbiItem({ abi: validatorAbi, name: 'validateUserOp' }))).toBe(
        '0x97003203',
      );
    },
  );

  it('runs UserOperations the owner signed through EntryPoint.handleOps, and refuses a foreign signature', async () => {
    const { chain, viemChain, transport, publicClient } = clients(BASE_CHAIN_ID);
    const validator = chain.contracts.kernelEcdsaValidator!;
    const usdc = chain.contracts.usdc;
    const owner = privateKeyToAccount(generatePrivateKey());
    const stranger = privateKeyToAccount(generatePrivateKey());
    const account = await kernelAccount(
      publicClient,
      chain,
      ecdsaRootValidator(validator, owner, BASE_CHAIN_ID),
    );
    // (a) the SDK's counterfactual address is the factory's.
    const { factory, factoryData } = await account.getFactoryArgs();
    const { args } = decodeFunctionData({ abi: factoryAbi, data: factoryData! });
    expect(
      await publicClient.readContract({
        address: factory!,
        abi: factoryAbi,
        functionName: 'getAddress',
        args: args as readonly [Hex, Hex],
      }),
    ).toBe(account.address);
    expect(await publicClient.getCode({ address: account.address })).toBeUndefined();

    // The account pays the EntryPoint for its gas from its own ETH; a funded EOA submits.
    await fundAddress(devnet, { chainId: BASE_CHAIN_ID, address: account.address, eth: parseEther('1') });
    const submitter = await newFundedAccount(devnet, { chainId: BASE_CHAIN_ID });
    const wallet = createWalletClient({
      account: privateKeyToAccount(submitter.privateKey),
      chain: viemChain,
      transport,
    });
    const beneficiary = privateKeyToAccount(generatePrivateKey()).address;
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const usdcBalance = (address: Address) =>
      publicClient.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [address] });
    const mint = (amount: bigint) =>
      account.encodeCalls([
        {
          to: usdc,
          value: 0n,
          data: encodeFunctionData({ abi: mintAbi, functionName: 'mint', args: [recipient, amount] }),
        },
      ]);

    const userOperation = async (callData: Hex, deployed: boolean): Promise<UserOperation<'0.7'>> => {
      const { maxFeePerGas, maxPriorityFeePerGas } = await publicClient.estimateFeesPerGas();
      return {
        sender: account.address,
        nonce: await account.getNonce({ key: 0n }),
        ...(deployed ? {} : { factory: factory!, factoryData: factoryData! }),
        callData,
        callGasLimit: 200_000n,
        verificationGasLimit: deployed ? 150_000n : 1_000_000n,
        preVerificationGas: 60_000n,
        maxFeePerGas,
        maxPriorityFeePerGas,
        signature: '0x',
      };
    };
    const handleOps = async (op: UserOperation<'0.7'>) => {
      const hash = await wallet.writeContract({
        address: ENTRY_POINT_V07,
        abi: entryPoint07Abi,
        functionName: 'handleOps',
        args: [[toPackedUserOperation(op)], beneficiary],
        gas: 3_000_000n,
      });
      return publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    };
    const executed = (receipt: { logs: Log[] }) =>
      parseEventLogs({ abi: entryPoint07Abi, eventName: 'UserOperationEvent', logs: receipt.logs }).map(
        (e) => ({
          sender: e.args.sender,
          nonce: e.args.nonce,
          success: e.args.success,
        }),
      );

    // (b) the first op creates the account from initCode and mints 5 USDC to the recipient.
    const first = await userOperation(await mint(5_000_000n), false);
    // Kernel's nonce key: default mode 0x00, root validation 0x00, the module's address, custom key 0.
    const nonceKey = BigInt(concat(['0x0000', validator, '0x0000']));
    expect(first.nonce).toBe(nonceKey << 64n);
    first.signature = await account.signUserOperation(first);
    const firstReceipt = await handleOps(first);
    expect(firstReceipt.status).toBe('success');
    expect(executed(firstReceipt)).toEqual([{ sender: account.address, nonce: first.nonce, success: true }]);
    expect(((await publicClient.getCode({ address: account.address })) ?? '0x').length).toBeGreaterThan(2);
    expect(await usdcBalance(recipient)).toBe(5_000_000n);
    expect(await publicClient.getBalance({ address: beneficiary })).toBeGreaterThan(0n);

    // (c) the second op runs on the deployed account with the next nonce.
    const second = await userOperation(await mint(2_000_000n), true);
    expect(second.nonce).toBe((nonceKey << 64n) + 1n);
    second.signature = await account.signUserOperation(second);
    const secondReceipt = await handleOps(second);
    expect(executed(secondReceipt)).toEqual([
      { sender: account.address, nonce: second.nonce, success: true },
    ]);
    expect(await usdcBalance(recipient)).toBe(7_000_000n);

    // (d) an op signed by another key fails validation (AA24) and nothing moves.
    const forged = await userOperation(await mint(9_000_000n), true);
    forged.signature = await (
      await kernelAccount(
        publicClient,
        chain,
        ecdsaRootValidator(validator, stranger, BASE_CHAIN_ID),
        account.address,
      )
    ).signUserOperation(forged);
    await expect(
      publicClient.simulateContract({
        address: ENTRY_POINT_V07,
        abi: entryPoint07Abi,
        functionName: 'handleOps',
        args: [[toPackedUserOperation(forged)], beneficiary],
        account: wallet.account,
        gas: 3_000_000n,
      }),
    ).rejects.toThrow(/AA24 signature error/);
    // Sent anyway (gas given, so nothing simulates it first), the transaction reverts on chain.
    expect((await handleOps(forged)).status).toBe('reverted');
    expect(await usdcBalance(recipient)).toBe(7_000_000n);
    expect(await account.getNonce({ key: 0n })).toBe((nonceKey << 64n) + 2n);

    // (e) the module holds the owner for the account.
    expect(
      await publicClient.readContract({
        address: validator,
        abi: validatorAbi,
        functionName: 'ecdsaValidatorStorage',
        args: [account.address],
      }),
    ).toBe(owner.address);

    // (f) ERC-1271: the owner's signature (over Kernel's EIP-712 wrapper) is the account's; another key's is not.
    const message = 'Purser devnet: ERC-1271 through the ECDSA validator';
    const signature = await account.signMessage({ message });
    expect(await publicClient.verifyMessage({ address: account.address, message, signature })).toBe(true);
    const isValid = (sig: Hex) =>
      publicClient.readContract({
        address: account.address,
        abi: KernelV3_1AccountAbi,
        functionName: 'isValidSignature',
        args: [hashMessage(message), sig],
      });
    expect(await isValid(signature)).toBe('0x1626ba7e');
    const foreign = await (
      await kernelAccount(
        publicClient,
        chain,
        ecdsaRootValidator(validator, stranger, BASE_CHAIN_ID),
        account.address,
      )
    ).signMessage({ message });
    expect(slice(foreign, 0, 21)).toBe(slice(signature, 0, 21));
    expect(await isValid(foreign)).toBe('0xffffffff');
    expect(await publicClient.verifyMessage({ address: account.address, message, signature: foreign })).toBe(
      false,
    );
  });
});

describe('the devnet’s Kernel modules in the delegations configuration', () => {
  it('replace ZeroDev’s addresses on the devnet’s chains, except where the operator configured them', () => {
    const config = loadConfig({
      KERNEL_MODULES_84532: JSON.stringify({ callPolicy: '0x000000000000000000000000000000000000c0de' }),
    });
    expect(config.kernel.configuredChains).toEqual([84532]);
    const modules = withDevnetKernelModules(config.kernel.modules, config.kernel.configuredChains, devnet);
    const base = devnet.chains[BASE_CHAIN_ID]!.contracts;
    expect(modules[BASE_CHAIN_ID]).toEqual({
      factory: base.kernelFactory,
      implementation: base.kernelImplementation,
      ecdsaSigner: base.kernelEcdsaSigner,
      callPolicy: base.kernelCallPolicy,
      timestampPolicy: base.kernelTimestampPolicy,
      rateLimitPolicy: base.kernelRateLimitPolicy,
      ecdsaValidator: base.kernelEcdsaValidator,
    });
    // Base Sepolia keeps what the operator set; Polygon (no Kernel on the devnet) keeps ZeroDev's.
    expect(modules[84532]?.callPolicy).toBe('0x000000000000000000000000000000000000c0de');
    expect(modules[137]).toEqual(config.kernel.modules[137]);
  });
});
