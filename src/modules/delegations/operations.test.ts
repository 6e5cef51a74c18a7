// The session key's operations against ZeroDev's SDK (Kernel's execute calldata for one call and a
// batch) and against the EntryPoint's nonce layout; on-chain use is session-key.test.ts.

import { createKernelAccount } from '@zerodev/sdk/accounts';
import { getEntryPoint } from '@zerodev/sdk/constants';
import { createPublicClient, encodeFunctionData, erc20Abi, http, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, inject, it } from 'vitest';
import { ecdsaRootValidator } from '../../../test/support/kernel.ts';
import { devnetKernelDeployment } from '../../devnet/kernel-accounts.ts';
import { DUMMY_ECDSA_SIG } from '@zerodev/sdk/constants';
import { size } from 'viem';
import {
  delegatedOperation,
  kernelExecuteCallData,
  permissionNonceKey,
  permissionSignature,
  STUB_ECDSA_SIGNATURE,
} from './operations.ts';

const devnet = inject('devnet');
const BASE = 8453;

describe('delegated operations', () => {
  it("encode Kernel's execute exactly as the SDK does, for one call and for a batch", async () => {
    const deployment = devnetKernelDeployment(devnet, BASE);
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await createKernelAccount(
      createPublicClient({ transport: http(devnet.chains[BASE]!.rpcUrl) }),
      {
        entryPoint: getEntryPoint('0.7'),
        kernelVersion: '0.3.1',
        plugins: { sudo: ecdsaRootValidator(deployment.ecdsaValidator, owner, BASE) },
        factoryAddress: deployment.factory,
        accountImplementationAddress: deployment.implementation,
        useMetaFactory: false,
      },
    );
    const usdc = devnet.chains[BASE]!.contracts.usdc;
    const approve = {
      to: usdc,
      value: 0n,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [owner.address, 5n] }),
    };
    const pay = { to: owner.address, value: 7n, data: '0x' as Hex };
    expect(kernelExecuteCallData([approve])).toBe(await account.encodeCalls([approve]));
    expect(kernelExecuteCallData([approve, pay])).toBe(await account.encodeCalls([approve, pay]));
    expect(() => kernelExecuteCallData([approve, pay], false)).toThrow(/exactly one call/);
    expect(() => delegatedOperation({ sender: owner.address, nonce: 0n, calls: [] })).toThrow(
      /at least one call/,
    );
  });

  it('key the nonce by mode, permission and a 16-bit custom key', () => {
    const key = permissionNonceKey('0xa1b2c3d4', 'enable', 0x0102);
    expect(`0x${key.toString(16).padStart(48, '0')}`).toBe(`0x0102a1b2c3d4${'00'.repeat(16)}0102`);
    expect(permissionNonceKey('0xa1b2c3d4', 'default') >> 184n).toBe(0n);
    expect(() => permissionNonceKey('0xa1b2c3d4', 'default', 0x10000)).toThrow(/16-bit/);
    expect(() => permissionNonceKey('0xa1b2c3d4', 'default', -1)).toThrow(/16-bit/);
  });

  it('sign in default mode as 0xff ‖ signature, in enable mode behind the grant', () => {
    // The stub is the SDK's dummy: 65 bytes from which an address can be recovered.
    expect(STUB_ECDSA_SIGNATURE).toBe(DUMMY_ECDSA_SIG);
    expect(size(STUB_ECDSA_SIGNATURE)).toBe(65);
    const sig = `0x${'11'.repeat(65)}` as Hex;
    expect(permissionSignature(sig, null)).toBe(`0xff${'11'.repeat(65)}`);
    const enable = permissionSignature(sig, { enableData: '0xaa', selectorData: '0xbb', enableSig: '0xcc' });
    expect(enable.slice(0, 42)).toBe(`0x${'00'.repeat(20)}`);
    expect(enable).toContain(`ff${'11'.repeat(65)}`);
  });
});
