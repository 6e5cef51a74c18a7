// The locally derived Kernel v3.1 account address against the ZeroDev SDK's published init-code
// hash and against the devnet's real KernelFactory (`getAddress`, then `createAccount`).

import { KernelVersionToAddressesMap } from '@zerodev/sdk/constants';
import { createPublicClient, http, keccak256, toHex, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, inject, it } from 'vitest';
import {
  deployDevnetKernelAccount,
  devnetKernelAccount,
  devnetKernelDeployment,
} from '../../devnet/kernel-accounts.ts';
import {
  counterfactualKernelAccount,
  erc1967ProxyInitCode,
  kernelFactoryAbi,
  kernelInitData,
} from './kernel-account.ts';

const devnet = inject('devnet');

describe('counterfactual Kernel v3.1 accounts', () => {
  it("hash the proxy's creation code as the SDK publishes for the canonical implementation", () => {
    const canonical = KernelVersionToAddressesMap['0.3.1'];
    expect(keccak256(erc1967ProxyInitCode(canonical.accountImplementationAddress as Address))).toBe(
      canonical.initCodeHash,
    );
  });

  it('derive the address the devnet factory answers and then deploys, for any owner and index', async () => {
    for (const chainId of [8453, 84532]) {
      const deployment = devnetKernelDeployment(devnet, chainId);
      const client = createPublicClient({ transport: http(devnet.chains[chainId]!.rpcUrl) });
      for (const index of [0n, 1n, 2n ** 255n + 12345n]) {
        const owner = privateKeyToAccount(generatePrivateKey()).address;
        const local = counterfactualKernelAccount(deployment, owner, index);
        const onChain = await client.readContract({
          address: deployment.factory,
          abi: kernelFactoryAbi,
          functionName: 'getAddress',
          args: [kernelInitData(deployment.ecdsaValidator, owner), toHex(index, { size: 32 })],
        });
        expect(local.address).toBe(onChain);
      }
    }
    const owner = privateKeyToAccount(generatePrivateKey()).address;
    const account = await devnetKernelAccount(devnet, 8453, owner, 3n);
    expect(account.deployed).toBe(false);
    await deployDevnetKernelAccount(devnet, account);
    expect((await devnetKernelAccount(devnet, 8453, owner, 3n)).deployed).toBe(true);
  });

  it('refuse an index outside uint256', () => {
    const deployment = devnetKernelDeployment(devnet, 8453);
    expect(() =>
      counterfactualKernelAccount(deployment, privateKeyToAccount(generatePrivateKey()).address, -1n),
    ).toThrow(/uint256/);
    expect(() =>
      counterfactualKernelAccount(deployment, privateKeyToAccount(generatePrivateKey()).address, 2n ** 256n),
    ).toThrow(/uint256/);
  });
});
