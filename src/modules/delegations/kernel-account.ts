// Kernel v3.1 accounts before they exist: the init data an ECDSA-owned account is created with,
// the factory call that creates it (a first UserOperation's `factoryData`), and the address that
// call will deploy to, derived locally as the ZeroDev SDK does for `useMetaFactory: false`.
//
// Facts (Kernel v3.1 `KernelFactory`, Solady `LibClone`): `createAccount(bytes data, bytes32 salt)`
// deploys an ERC-1967 minimal proxy of the implementation with CREATE2 from the factory, salted
// with `keccak256(data ‖ salt)`; the proxy's creation code is fixed around the implementation's
// address. For the canonical implementation its hash is the SDK's published
// `0x85d96aa1…f03e6` (kernel-account.test.ts checks it).

import {
  concat,
  encodeFunctionData,
  getContractAddress,
  keccak256,
  parseAbi,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';

export const kernelInitAbi = parseAbi([
  'function initialize(bytes21 _rootValidator, address hook, bytes validatorData, bytes hookData, bytes[] initConfig)',
]);
export const kernelFactoryAbi = parseAbi([
  'function createAccount(bytes data, bytes32 salt) payable returns (address)',
  'function getAddress(bytes data, bytes32 salt) view returns (address)',
]);

/** The Kernel deployment an account is created from on one chain. */
export interface KernelDeployment {
  factory: Address;
  implementation: Address;
  /** The ECDSA validator installed as the account's root validator. */
  ecdsaValidator: Address;
}

/** A counterfactual account: its address and what a first UserOperation's initCode carries. */
export interface CounterfactualAccount {
  address: Address;
  owner: Address;
  index: bigint;
  factory: Address;
  /** `createAccount(initData, salt)` calldata. */
  factoryData: Hex;
}

const MAX_UINT256 = 2n ** 256n - 1n;

/** Kernel's `initialize` data for an account whose root validator is `validator` owned by `owner`. */
export function kernelInitData(validator: Address, owner: Address): Hex {
  return encodeFunctionData({
    abi: kernelInitAbi,
    functionName: 'initialize',
    // The root validation id: type 0x01 (a validator module) followed by its address.
    args: [concat(['0x01', validator]), zeroAddress, owner, '0x', []],
  });
}

/** Creation code of Solady's ERC-1967 minimal proxy pointing at `implementation`. */
export function erc1967ProxyInitCode(implementation: Address): Hex {
  return concat([
    '0x603d3d8160223d3973',
    implementation,
    '0x60095155f3363d3d373d3d363d7f360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc545af43d6000803e6038573d6000fd5b3d6000f3',
  ]);
}

/** The account `owner` gets at `index` from `deployment`, computed without a chain. */
export function counterfactualKernelAccount(
  deployment: KernelDeployment,
  owner: Address,
  index: bigint,
): CounterfactualAccount {
  if (index < 0n || index > MAX_UINT256) throw new RangeError('index must be a uint256');
  const initData = kernelInitData(deployment.ecdsaValidator, owner);
  const salt = toHex(index, { size: 32 });
  const address = getContractAddress({
    opcode: 'CREATE2',
    from: deployment.factory,
    salt: keccak256(concat([initData, salt])),
    bytecodeHash: keccak256(erc1967ProxyInitCode(deployment.implementation)),
  });
  return {
    address,
    owner,
    index,
    factory: deployment.factory,
    factoryData: encodeFunctionData({
      abi: kernelFactoryAbi,
      functionName: 'createAccount',
      args: [initData, salt],
    }),
  };
}
