import { createPublicClient, erc20Abi, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import { devnetToken } from '../devnet.ts';

const devnet = inject('devnet');
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ deps: { devnet } });
});
afterAll(async () => {
  await t.close();
});

const freshAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address;

async function onChain(chainId: number, address: Address) {
  const chain = devnet.chains[chainId]!;
  const client = createPublicClient({ transport: http(chain.rpcUrl) });
  const usdc = devnetToken(devnet, chainId, 'USDC').address;
  return {
    eth: await client.getBalance({ address }),
    usdc: await client.readContract({
      address: usdc,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [address],
    }),
  };
}

describe('POST /v1/dev/faucet', () => {
  it('funds an address with devnet ETH and USDC, visible on the chain', async () => {
    const address = freshAddress();
    const res = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/dev/faucet',
      payload: {
        chain_id: 84532,
        address,
        eth_wei: '2000000000000000000',
        tokens: [{ symbol: 'usdc', amount: '5000000' }],
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      chain_id: 84532,
      address,
      balances: { eth_wei: '2000000000000000000', tokens: { USDC: '5000000' } },
    });
    expect(body.tx_hashes.length).toBeGreaterThan(0);
    expect(await onChain(84532, address)).toEqual({ eth: 2000000000000000000n, usdc: 5000000n });
  });

  it('replays instead of minting twice when retried with the same Idempotency-Key', async () => {
    const address = freshAddress();
    const request = {
      method: 'POST' as const,
      url: '/v1/dev/faucet',
      headers: { 'idempotency-key': `faucet-${address}` },
      payload: { chain_id: 8453, address, tokens: [{ symbol: 'USDC', amount: '7' }] },
    };
    const first = await t.app.fastify.inject(request);
    const second = await t.app.fastify.inject(request);
    expect(first.statusCode, first.body).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toBe(first.body);
    expect((await onChain(8453, address)).usdc).toBe(7n);
  });

  it('refuses chains and tokens the devnet does not have, and empty requests', async () => {
    const address = freshAddress();
    const unknownChain = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/dev/faucet',
      payload: { chain_id: 1, address, eth_wei: '1' },
    });
    expect(expectErrorBody(unknownChain, 400, 'INVALID_REQUEST').message).toContain('84532');
    const unknownToken = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/dev/faucet',
      payload: { chain_id: 84532, address, tokens: [{ symbol: 'DOGE', amount: '1' }] },
    });
    expect(expectErrorBody(unknownToken, 400, 'INVALID_REQUEST').message).toContain('DOGE');
    const nothing = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/dev/faucet',
      payload: { chain_id: 84532, address },
    });
    expectErrorBody(nothing, 400, 'INVALID_REQUEST');
    const badAmount = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/dev/faucet',
      payload: { chain_id: 84532, address, eth_wei: '-5', extra: true },
    });
    const message = expectErrorBody(badAmount, 400, 'INVALID_REQUEST').message;
    expect(message).toContain('eth_wei');
    expect(message).toContain('extra');
    expect(await onChain(84532, address)).toEqual({ eth: 0n, usdc: 0n });
  });

  it('answers 503 when no devnet runs, and is not mounted in production', async () => {
    const noDevnet = await createTestApp();
    try {
      const res = await noDevnet.app.fastify.inject({
        method: 'POST',
        url: '/v1/dev/faucet',
        payload: { chain_id: 84532, address: freshAddress(), eth_wei: '1' },
      });
      expectErrorBody(res, 503, 'UNAVAILABLE');
    } finally {
      await noDevnet.close();
    }
    const production = await createTestApp({ config: { env: 'production' } });
    try {
      const res = await production.app.fastify.inject({
        method: 'POST',
        url: '/v1/dev/faucet',
        payload: { chain_id: 84532, address: freshAddress(), eth_wei: '1' },
      });
      expectErrorBody(res, 404, 'NOT_FOUND');
    } finally {
      await production.close();
    }
  });
});
