// The real service, killed with SIGKILL at the three moments a rebalance can be caught half done
// (PURSER_FAULT_REBALANCE_CRASH makes it kill itself there), then restarted without the fault:
// right after the burn was broadcast (before its receipt and record), right after the
// attestation came (before the mint), and right after the mint was broadcast (before its
// receipt: the restart finishes it at once, not at the hourly job). Each time the rebalance
// finishes, and the chains show one burn and one mint of exactly the amount. Two processes and a
// crash: PostgreSQL only.

import { sql } from 'kysely';
import { getAddress, parseEther, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import {
  describeExit,
  http,
  startServiceProcess,
  waitUntilReady,
  type ServiceProcess,
} from '../../../test/support/service-process.ts';
import { createViemChainPort } from '../../adapters/chain/viem.ts';
import { devnetRpcUrls, devnetTokenAddresses } from '../../devnet/devnet.ts';
import { fundAddress, newFundedAccount } from '../../devnet/faucet.ts';
import type { Rebalance } from './index.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);
if (!onPostgres) console.log('Skipping the rebalance kill tests: they need two processes on PostgreSQL.');

const devnet = inject('devnet');
const BASE = 8453;
const POLYGON = 137;
const USDC = 1_000_000n;
const chain = createViemChainPort({ rpcUrls: devnetRpcUrls(devnet), pollingIntervalMs: 50 });
const tokens = devnetTokenAddresses(devnet);
const usdc: Record<number, Address> = {
  [BASE]: getAddress(tokens[BASE]!.USDC!),
  [POLYGON]: getAddress(tokens[POLYGON]!.USDC!),
};

let database: TestDatabase;
let executor: { address: Address; privateKey: `0x${string}` };
let auth: { authorization: string };
const running: ServiceProcess[] = [];

beforeAll(async () => {
  if (!onPostgres) return;
  database = await createTestDatabase();
  const funded = await newFundedAccount(devnet, {
    chainId: BASE,
    eth: parseEther('5'),
    tokens: [{ symbol: 'USDC', amount: 3_000n * USDC }],
  });
  await fundAddress(devnet, { chainId: POLYGON, address: funded.address, eth: parseEther('5') });
  executor = { address: getAddress(funded.address), privateKey: funded.privateKey };
  const who = await createAccountWithSession(database.handle.db, { address: executor.address });
  auth = bearer(who.sessionToken);
}, 120_000);
afterAll(async () => {
  for (const s of running) await s.stop('SIGKILL');
  await database?.drop();
});

function env(fault: string | null): Record<string, string> {
  const cctp: Record<string, unknown> = {};
  for (const id of [BASE, POLYGON]) {
    const c = devnet.chains[id]!.contracts;
    cctp[id] = {
      domain: devnet.attestation!.domains[id],
      token_messenger: c.cctpTokenMessenger,
      message_transmitter: c.cctpMessageTransmitter,
    };
  }
  return {
    DATABASE_URL: database.url!,
    DEVNET: 'false',
    [`RPC_URL_${BASE}`]: devnet.chains[BASE]!.rpcUrl,
    [`RPC_URL_${POLYGON}`]: devnet.chains[POLYGON]!.rpcUrl,
    DEVNET_TOKEN_ADDRESSES: JSON.stringify({
      [BASE]: { USDC: usdc[BASE] },
      [POLYGON]: { USDC: usdc[POLYGON] },
    }),
    PURSER_EXECUTOR_ADDRESS: executor.address.toLowerCase(),
    PURSER_EXECUTOR_PRIVATE_KEY: executor.privateKey,
    CCTP_CONTRACTS: JSON.stringify(cctp),
    CCTP_ATTESTATION_URL: devnet.attestation!.irisBaseUrl,
    JOBS_POLL_INTERVAL_MS: '100',
    JOBS_LEASE_MS: '2000',
    ...(fault ? { PURSER_FAULT_REBALANCE_CRASH: fault } : {}),
  };
}

async function start(fault: string | null): Promise<ServiceProcess> {
  const service = await startServiceProcess({ env: env(fault) });
  running.push(service);
  await waitUntilReady(service);
  return service;
}

const held = (chainId: number) => chain.erc20Balance(chainId, usdc[chainId]!, executor.address);
const rebalance = async (service: ServiceProcess, id: string): Promise<Rebalance> =>
  JSON.parse((await http(`${service.url}/v1/rebalances/${id}`, { headers: auth })).text) as Rebalance;

describe.skipIf(!onPostgres)('a rebalance whose process is killed', () => {
  it('right after the burn broadcast: restarted, it burns once, mints once', async () => {
    const doomed = await start('after_burn_broadcast');
    const policy = await http(`${doomed.url}/v1/policies`, {
      method: 'PUT',
      headers: auth,
      body: {
        version: 1,
        wallet: executor.address,
        chain_id: BASE,
        rebalance: {
          enabled: true,
          corridors: [{ from_chain_id: BASE, to_chain_id: POLYGON }],
          min_transfer_usd: '1',
        },
      },
    });
    expect(policy.status, policy.text).toBe(201);
    const base0 = await held(BASE);
    const polygon0 = await held(POLYGON);
    const created = await http(`${doomed.url}/v1/rebalances`, {
      method: 'POST',
      headers: auth,
      body: { from_chain_id: BASE, to_chain_id: POLYGON, amount: (1_000n * USDC).toString() },
    });
    expect(created.status, created.text).toBe(201);
    const id = (JSON.parse(created.text) as Rebalance).id;
    // The burn job broadcasts, and the process dies before it reads a receipt or records anything.
    expect(describeExit(await doomed.exited), doomed.tail()).toBe('signal SIGKILL');
    await expect.poll(() => held(BASE), { timeout: 10_000 }).toBe(base0 - 1_000n * USDC);
    const rows = await database.handle.db
      .selectFrom('rebalances')
      .select(['phase'])
      .where('id', '=', id)
      .execute();
    expect(rows[0]?.phase).toBe('burn_submitted');

    const survivor = await start(null);
    await expect
      .poll(async () => (await rebalance(survivor, id)).phase, { timeout: 30_000, interval: 250 })
      .toBe('awaiting_attestation');
    const done = await http(`${survivor.url}/v1/rebalances/${id}/complete`, {
      method: 'POST',
      headers: auth,
    });
    expect(done.status, done.text).toBe(200);
    expect(JSON.parse(done.text)).toMatchObject({ status: 'filled', phase: 'minted' });
    expect(await held(BASE)).toBe(base0 - 1_000n * USDC);
    expect(await held(POLYGON)).toBe(polygon0 + 1_000n * USDC);
    const sent = await database.handle.db
      .selectFrom('executor_transactions')
      .select(['purpose', 'state'])
      .where('rebalance_id', '=', id)
      .orderBy('created_at')
      .orderBy('nonce')
      .execute();
    expect(sent).toEqual([
      { purpose: 'rebalance.approve', state: 'mined' },
      { purpose: 'rebalance.burn', state: 'mined' },
      { purpose: 'rebalance.mint', state: 'mined' },
    ]);
    await survivor.stop();
  });

  it('between the attestation and the mint: restarted, it mints once', async () => {
    const doomed = await start('after_attestation');
    const base0 = await held(BASE);
    const polygon0 = await held(POLYGON);
    const created = await http(`${doomed.url}/v1/rebalances`, {
      method: 'POST',
      headers: auth,
      body: { from_chain_id: BASE, to_chain_id: POLYGON, amount: (700n * USDC).toString() },
    });
    expect(created.status, created.text).toBe(201);
    const id = (JSON.parse(created.text) as Rebalance).id;
    await expect
      .poll(async () => (await rebalance(doomed, id)).phase, { timeout: 30_000, interval: 250 })
      .toBe('awaiting_attestation');
    await expect(
      http(`${doomed.url}/v1/rebalances/${id}/complete`, { method: 'POST', headers: auth }),
    ).rejects.toThrow();
    expect(describeExit(await doomed.exited), doomed.tail()).toBe('signal SIGKILL');
    expect(await held(POLYGON)).toBe(polygon0);

    const survivor = await start(null);
    const done = await http(`${survivor.url}/v1/rebalances/${id}/complete`, {
      method: 'POST',
      headers: auth,
    });
    expect(done.status, done.text).toBe(200);
    expect(JSON.parse(done.text)).toMatchObject({ status: 'filled', phase: 'minted' });
    expect(await held(BASE)).toBe(base0 - 700n * USDC);
    expect(await held(POLYGON)).toBe(polygon0 + 700n * USDC);
    const again = await http(`${survivor.url}/v1/rebalances/${id}/complete`, {
      method: 'POST',
      headers: auth,
    });
    expect(again.status).toBe(409);
    expect(await held(POLYGON)).toBe(polygon0 + 700n * USDC);
    await survivor.stop();
  });

  it('right after the mint broadcast: the restart finishes the mint at once, not at the hourly job', async () => {
    const doomed = await start('after_mint_broadcast');
    const base0 = await held(BASE);
    const polygon0 = await held(POLYGON);
    const created = await http(`${doomed.url}/v1/rebalances`, {
      method: 'POST',
      headers: auth,
      body: { from_chain_id: BASE, to_chain_id: POLYGON, amount: (300n * USDC).toString() },
    });
    expect(created.status, created.text).toBe(201);
    const id = (JSON.parse(created.text) as Rebalance).id;
    await expect
      .poll(async () => (await rebalance(doomed, id)).phase, { timeout: 30_000, interval: 250 })
      .toBe('awaiting_attestation');
    const broadcastAt = Date.now();
    await expect(
      http(`${doomed.url}/v1/rebalances/${id}/complete`, { method: 'POST', headers: auth }),
    ).rejects.toThrow();
    expect(describeExit(await doomed.exited), doomed.tail()).toBe('signal SIGKILL');
    // Left submitted, with its mint job due within a minute of the broadcast.
    const left = await database.handle.db
      .selectFrom('rebalances')
      .select(['phase', 'mint_tx'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(left.phase).toBe('mint_submitted');
    const jobs = await database.handle.db
      .selectFrom('jobs')
      .select(['run_at'])
      .where('name', '=', 'rebalances.settle_mint')
      .where(sql<boolean>`payload->>'rebalance_id' = ${id}`)
      .execute();
    expect(jobs).toHaveLength(1);
    expect(new Date(jobs[0]!.run_at).getTime()).toBeLessThanOrEqual(broadcastAt + 60_000);

    // The restart queues it at once: minted in seconds, the mint the dead process sent.
    const survivor = await start(null);
    await expect
      .poll(async () => (await rebalance(survivor, id)).phase, { timeout: 30_000, interval: 250 })
      .toBe('minted');
    const done = await rebalance(survivor, id);
    expect(done).toMatchObject({ status: 'filled', mint_tx: left.mint_tx });
    expect(await held(BASE)).toBe(base0 - 300n * USDC);
    expect(await held(POLYGON)).toBe(polygon0 + 300n * USDC);
    // Nothing is left to complete: 409, pointing at the rebalance as it is now.
    const again = await http(`${survivor.url}/v1/rebalances/${id}/complete`, {
      method: 'POST',
      headers: auth,
    });
    expect(again.status).toBe(409);
    expect(JSON.parse(again.text)).toMatchObject({
      code: 'CONFLICT',
      next: [{ method: 'GET', path: `/v1/rebalances/${id}` }],
    });
    await survivor.stop();
  });
});
