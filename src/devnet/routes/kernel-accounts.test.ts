import { createKernelAccount } from '@zerodev/sdk/accounts';
import { getEntryPoint } from '@zerodev/sdk/constants';
import { createPublicClient, erc20Abi, http, parseAbi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import { ecdsaRootValidator } from '../../../test/support/kernel.ts';
import { devnetToken } from '../devnet.ts';

const devnet = inject('devnet');
const BASE = 8453;
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ deps: { devnet } });
});
afterAll(async () => {
  await t.close();
});

const chain = devnet.chains[BASE]!;
const client = createPublicClient({ transport: http(chain.rpcUrl) });
const validatorAbi = parseAbi(['function ecdsaValidatorStorage(address) view returns (address)']);

const ask = (payload: Record<string, unknown>) =>
  t.app.fastify.inject({ method: 'POST', url: '/v1/dev/kernel-accounts', payload });

describe('POST /v1/dev/kernel-accounts', () => {
  it('gives the address the ZeroDev SDK computes for the owner and index, counterfactual until asked to deploy', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const sdk = await createKernelAccount(client, {
      entryPoint: getEntryPoint('0.7'),
      kernelVersion: '0.3.1',
      plugins: { sudo: ecdsaRootValidator(chain.contracts.kernelEcdsaValidator!, owner, BASE) },
      factoryAddress: chain.contracts.kernelFactory!,
      accountImplementationAddress: chain.contracts.kernelImplementation!,
      useMetaFactory: false,
      index: 7n,
    });
    const res = await ask({ chain_id: BASE, owner: owner.address, index: '7' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { address: Address; deployed: boolean; factory_data: string; index: string };
    expect(body).toMatchObject({ address: sdk.address, deployed: false, index: '7', tx_hashes: [] });
    expect(body.factory_data).toBe((await sdk.getFactoryArgs()).factoryData);
    expect(await client.getCode({ address: body.address })).toBeUndefined();

    // Another index is another account.
    const zero = (await ask({ chain_id: BASE, owner: owner.address })).json() as {
      address: Address;
      index: string;
    };
    expect(zero.index).toBe('0');
    expect(zero.address).not.toBe(body.address);
  });

  it('deploys and funds the account once, with the owner as its ECDSA signer; a repeat changes nothing', async () => {
    const owner = privateKeyToAccount(generatePrivateKey()).address;
    const payload = {
      chain_id: BASE,
      owner,
      deploy: true,
      eth_wei: '1000000000000000000',
      tokens: [
        { symbol: 'USDC', amount: '250000000' },
        { symbol: 'EURC', amount: '100000000' },
        { symbol: 'WETH', amount: '500000000000000000' },
      ],
    };
    const res = await ask(payload);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as {
      address: Address;
      deployed: boolean;
      balances: { eth_wei: string; tokens: Record<string, string> };
    };
    expect(body.deployed).toBe(true);
    expect(((await client.getCode({ address: body.address })) ?? '0x').length).toBeGreaterThan(2);
    expect(
      await client.readContract({
        address: chain.contracts.kernelEcdsaValidator!,
        abi: validatorAbi,
        functionName: 'ecdsaValidatorStorage',
        args: [body.address],
      }),
    ).toBe(owner);
    const balance = (symbol: string) =>
      client.readContract({
        address: devnetToken(devnet, BASE, symbol).address,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [body.address],
      });
    expect(await balance('USDC')).toBe(250_000_000n);
    expect(await balance('EURC')).toBe(100_000_000n);
    expect(await balance('WETH')).toBe(500_000_000_000_000_000n);
    expect(await client.getBalance({ address: body.address })).toBe(10n ** 18n);
    expect(body.balances.tokens).toMatchObject({ USDC: '250000000', EURC: '100000000' });

    const again = await ask({ chain_id: BASE, owner, deploy: true });
    expect(again.json()).toMatchObject({ address: body.address, deployed: true, tx_hashes: [] });
  });

  it('refuses a chain without Kernel and a malformed owner, naming them', async () => {
    const owner = privateKeyToAccount(generatePrivateKey()).address;
    const polygon = expectErrorBody(await ask({ chain_id: 137, owner }), 400, 'INVALID_REQUEST');
    expect(polygon.message).toContain('chain_id 137 has no Kernel v3.1');
    const bad = expectErrorBody(await ask({ chain_id: BASE, owner: '0x1234' }), 400, 'INVALID_REQUEST');
    expect(bad.message).toContain('owner');
  });
});
