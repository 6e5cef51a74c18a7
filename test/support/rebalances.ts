// A rebalance test's world on the shared devnet: a fresh treasury executor (its own key, so its
// nonces are its own) with ETH on Base and Polygon and USDC on Base, an attestation service of the
// test's own (Circle's Iris API, signing with the devnet attester, knobs the test may turn), and
// an app whose executor it is, signed in, with a policy whose rebalance section the test chooses.

import { getAddress, parseEther, type Address } from 'viem';
import { createIrisAdapter } from '../../src/adapters/attestation/iris.ts';
import { createViemChainPort } from '../../src/adapters/chain/viem.ts';
import { testConfig, type CctpConfig, type Config } from '../../src/config.ts';
import { systemClock } from '../../src/core/clock.ts';
import { withDevnetCctp } from '../../src/devnet/config-overrides.ts';
import {
  DEVNET_CCTP_ATTESTER_PRIVATE_KEY,
  devnetRpcUrls,
  devnetTokenAddresses,
  type DevnetInfo,
} from '../../src/devnet/devnet.ts';
import { startIrisFake, type IrisFake, type IrisFakeOptions } from '../../src/devnet/fakes/iris.ts';
import { fundAddress, newFundedAccount } from '../../src/devnet/faucet.ts';
import { buildTokenRegistry } from '../../src/modules/registry/index.ts';
import { createTestApp, type TestApp } from './app.ts';
import { bearer, createAccountWithSession } from './identity.ts';

export const BASE = 8453;
export const POLYGON = 137;
export const USDC = 1_000_000n;

export interface RebalanceWorld {
  t: TestApp;
  iris: IrisFake;
  executor: { address: Address; privateKey: `0x${string}` };
  /** The executor's session. */
  auth: { authorization: string };
  accountId: string;
  usdc: Record<number, Address>;
  close(): Promise<void>;
}

export interface RebalanceWorldOptions {
  /** USDC (base units) the executor starts with on Base. */
  baseUsdc?: bigint;
  /** The executor wallet's `rebalance` section; null: no policy at all. */
  rebalance?: Record<string, unknown> | null;
  config?: Partial<Config>;
  poolSize?: number;
  /** Give the app no executor key. */
  noExecutorKey?: boolean;
  /** CCTP settings over the test defaults (receipt timeout 20 s, mint wait 10 s). */
  cctp?: Partial<CctpConfig>;
  /** Options of the test's own attestation service. */
  iris?: Pick<IrisFakeOptions, 'expirationBlocks' | 'delayMs' | 'fastFeeBps'>;
}

export async function rebalanceWorld(
  devnet: DevnetInfo,
  options: RebalanceWorldOptions = {},
): Promise<RebalanceWorld> {
  const funded = await newFundedAccount(devnet, {
    chainId: BASE,
    eth: parseEther('5'),
    tokens: [{ symbol: 'USDC', amount: options.baseUsdc ?? 5_000n * USDC }],
  });
  await fundAddress(devnet, { chainId: POLYGON, address: funded.address, eth: parseEther('5') });
  const executor = { address: getAddress(funded.address), privateKey: funded.privateKey };

  const chains: Record<
    number,
    { rpcUrl: string; domain: number; messageTransmitter: Address; tokenMessenger: Address }
  > = {};
  for (const id of [BASE, POLYGON]) {
    const c = devnet.chains[id];
    const domain = devnet.attestation?.domains[id];
    if (!c?.contracts.cctpMessageTransmitter || !c.contracts.cctpTokenMessenger || domain === undefined) {
      throw new Error(`the devnet has no CCTP contracts on chain ${id}`);
    }
    chains[id] = {
      rpcUrl: c.rpcUrl,
      domain,
      messageTransmitter: c.contracts.cctpMessageTransmitter,
      tokenMessenger: c.contracts.cctpTokenMessenger,
    };
  }
  const iris = await startIrisFake({
    chains,
    attesterPrivateKey: DEVNET_CCTP_ATTESTER_PRIVATE_KEY,
    ...options.iris,
  });

  const base = testConfig();
  const cctp = withDevnetCctp(
    { ...base.cctp, attestationUrl: iris.url, attestationUrlConfigured: true },
    devnet,
  );
  const config: Partial<Config> = {
    executorAddress: executor.address.toLowerCase(),
    executorPrivateKey: options.noExecutorKey ? null : executor.privateKey,
    cctp: { ...cctp, receiptTimeoutMs: 20_000, mintWaitMs: 10_000, ...options.cctp },
    ...options.config,
  };
  const chain = createViemChainPort({ rpcUrls: devnetRpcUrls(devnet), pollingIntervalMs: 50 });
  const tokens = devnetTokenAddresses(devnet);
  const tokenRegistry = buildTokenRegistry('development', tokens);
  const attestation = createIrisAdapter({
    baseUrl: iris.url,
    clock: systemClock,
    timeoutMs: 5_000,
    maxPerSecond: 35,
  });
  const t = await createTestApp({
    config,
    deps: { chain, tokenRegistry, attestation },
    ...(options.poolSize ? { poolSize: options.poolSize } : {}),
  });
  const who = await createAccountWithSession(t.db.db, { address: executor.address });
  const auth = bearer(who.sessionToken);
  if (options.rebalance !== null) {
    const res = await t.app.fastify.inject({
      method: 'PUT',
      url: '/v1/policies',
      headers: auth,
      payload: {
        version: 1,
        wallet: executor.address,
        chain_id: BASE,
        rebalance: options.rebalance ?? {
          enabled: true,
          corridors: [
            { from_chain_id: BASE, to_chain_id: POLYGON },
            { from_chain_id: POLYGON, to_chain_id: BASE },
          ],
          min_transfer_usd: '1',
          max_transfer_usd: '5000',
          daily_cap_usd: '20000',
        },
      },
    });
    if (res.statusCode !== 201) throw new Error(`policy: ${res.statusCode} ${res.body}`);
  }
  const usdc = {
    [BASE]: getAddress(tokens[BASE]!.USDC!),
    [POLYGON]: getAddress(tokens[POLYGON]!.USDC!),
  };
  return {
    t,
    iris,
    executor,
    auth,
    accountId: who.accountId,
    usdc,
    close: async () => {
      await t.close();
      await iris.stop();
    },
  };
}
