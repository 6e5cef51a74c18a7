// The real service, killed between broadcasting an x402 feedback payment and recording its hash
// (PURSER_FAULT_CRASH_AFTER_BROADCAST=1 makes it SIGKILL itself there), then restarted without
// the fault: the reconciler finishes the settlement from chain truth, and the books end with
// exactly one credit, one fee debit and one feature request; a retry with the same X-PAYMENT
// answers 201 with that request. Two processes and a crash: PostgreSQL only.

import { x402Client, x402HTTPClient } from '@x402/fetch';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/client';
import { getAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import {
  newPayer,
  PAYMENTS_CHAIN,
  paymentsSetup,
  type PaymentsSetup,
} from '../../../test/support/payments.ts';
import {
  describeExit,
  http,
  startServiceProcess,
  waitUntilReady,
  type ServiceProcess,
} from '../../../test/support/service-process.ts';
import { ConfigError, loadConfig, testConfig } from '../../config.ts';
import { readPrepaidBalance } from '../billing/index.ts';
import { listChallenges } from './challenges.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);
if (!onPostgres) {
  console.log(
    'Skipping the x402 feedback kill test: it needs two processes on PostgreSQL. Set DATABASE_URL.',
  );
}

const devnet = inject('devnet');
const USD = 1_000_000n;
const TITLE = 'Survive a crash after broadcast';
const BODY = 'The process died between broadcasting the settlement and recording its hash.';

let database: TestDatabase;
let setup: PaymentsSetup;
const running: ServiceProcess[] = [];

beforeAll(async () => {
  if (!onPostgres) return;
  database = await createTestDatabase();
  setup = await paymentsSetup(devnet, testConfig());
});
afterAll(async () => {
  for (const service of running) await service.stop('SIGKILL');
  await database?.drop();
});

function serviceEnv(fault: boolean): Record<string, string> {
  const payments = setup.config.payments;
  if (!payments?.relayerPrivateKey || !database.url) throw new Error('incomplete setup');
  const rpc = devnet.chains[PAYMENTS_CHAIN]?.rpcUrl;
  if (!rpc) throw new Error(`the devnet has no chain ${PAYMENTS_CHAIN}`);
  return {
    DATABASE_URL: database.url,
    DEVNET: 'false',
    [`RPC_URL_${PAYMENTS_CHAIN}`]: rpc,
    // The registry must find the test devnet's USDC, not Base's real one (no devnet started here).
    DEVNET_TOKEN_ADDRESSES: JSON.stringify({ [PAYMENTS_CHAIN]: { USDC: setup.usdc } }),
    PAYMENTS_CHAIN_ID: String(PAYMENTS_CHAIN),
    PURSER_RELAYER_PRIVATE_KEY: payments.relayerPrivateKey,
    PURSER_TREASURY_ADDRESS: setup.treasury,
    PAYMENTS_RECONCILE_AFTER_SECONDS: '1',
    JOBS_POLL_INTERVAL_MS: '100',
    // The doomed process may die while its reconciler run holds the job: the survivor takes the
    // job over once that claim's lease runs out, so the lease is short here (60 s by default).
    JOBS_LEASE_MS: '3000',
    ...(fault ? { PURSER_FAULT_CRASH_AFTER_BROADCAST: '1' } : {}),
  };
}

async function start(fault: boolean): Promise<ServiceProcess> {
  const service = await startServiceProcess({ env: serviceEnv(fault) });
  running.push(service);
  await waitUntilReady(service);
  return service;
}

const chain = () => {
  const c = setup.deps.chain;
  if (!c) throw new Error('no chain');
  return c;
};
const usdcOf = (address: Address) => chain().erc20Balance(PAYMENTS_CHAIN, setup.usdc, address);
const relayerTxCount = () =>
  chain().publicClient(PAYMENTS_CHAIN).getTransactionCount({ address: setup.relayer });

describe.skipIf(!onPostgres)('a service killed right after broadcasting an x402 feedback payment', () => {
  it('ends, after a restart, with one credit, one fee debit and one feature request', async () => {
    const db = database.handle.db;
    const acc = await createAccountWithSession(db);
    const payer = await newPayer(devnet, 3n * USD);
    const treasuryBefore = await usdcOf(setup.treasury);
    const relayerBefore = await relayerTxCount();
    const send = (service: ServiceProcess, headers: Record<string, string> = {}) =>
      http(`${service.url}/v1/feedback`, {
        method: 'POST',
        headers: { ...bearer(acc.sessionToken), ...headers },
        body: { title: TITLE, body: BODY },
        timeoutMs: 30_000,
      });

    // 1. The doomed process asks for payment; the official client builds X-PAYMENT from the 402.
    const doomed = await start(true);
    const required = await send(doomed);
    expect(required.status, required.text).toBe(402);
    const client = new x402Client().registerV1(
      'base',
      new ExactEvmSchemeV1(privateKeyToAccount(payer.privateKey)),
    );
    const httpClient = new x402HTTPClient(client);
    const paymentRequired = httpClient.getPaymentRequiredResponse(() => null, JSON.parse(required.text));
    const paymentHeaders = httpClient.encodePaymentSignatureHeader(
      await httpClient.createPaymentPayload(paymentRequired),
    );
    const xPayment = paymentHeaders['X-PAYMENT'];
    if (!xPayment) throw new Error(`the client sent no X-PAYMENT: ${JSON.stringify(paymentHeaders)}`);
    const nonce = (
      JSON.parse(Buffer.from(xPayment, 'base64').toString('utf8')) as {
        payload: { authorization: { nonce: Hex } };
      }
    ).payload.authorization.nonce;

    // 2. The paid request: the process dies after the broadcast, before recording its hash.
    await expect(send(doomed, { 'x-payment': xPayment })).rejects.toThrow();
    const exit = await doomed.exited;
    expect(describeExit(exit), doomed.tail()).toBe('signal SIGKILL');

    // The money moved on-chain; the books know only the durable pending record with the request.
    await expect
      .poll(() => chain().authorizationState(PAYMENTS_CHAIN, setup.usdc, payer.address, nonce), {
        timeout: 10_000,
      })
      .toBe(true);
    expect(await usdcOf(payer.address)).toBe(2n * USD);
    expect(await relayerTxCount()).toBe(relayerBefore + 1);
    const pending = await db
      .selectFrom('payment_settlements')
      .selectAll()
      .where('account_id', '=', acc.accountId)
      .execute();
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ purpose: 'feedback', status: 'recorded', tx_hash: null });
    expect(pending[0]?.request).toMatchObject({ title: TITLE, body: BODY });
    expect(
      await db.selectFrom('feature_requests').select('id').where('account_id', '=', acc.accountId).execute(),
    ).toEqual([]);
    expect(
      await db.selectFrom('ledger_groups').select('id').where('account_id', '=', acc.accountId).execute(),
    ).toEqual([]);

    // 3. Restarted without the fault: the reconciler job finishes it from chain truth.
    const survivor = await start(false);
    const status = async () =>
      (
        await db
          .selectFrom('payment_settlements')
          .select('status')
          .where('id', '=', pending[0]?.id ?? '')
          .executeTakeFirst()
      )?.status;
    try {
      await expect.poll(status, { timeout: 40_000, interval: 250 }).toBe('settled');
    } catch (err) {
      const jobs = await db
        .selectFrom('jobs')
        .select(['state', 'attempts', 'locked_until', 'last_error'])
        .where('name', '=', 'payments.reconcile')
        .execute();
      throw new Error(
        `not settled; reconciler jobs: ${JSON.stringify(jobs)}; the restarted service said:\n${survivor.tail(60)}`,
        { cause: err },
      );
    }

    const settled = await db
      .selectFrom('payment_settlements')
      .selectAll()
      .where('account_id', '=', acc.accountId)
      .execute();
    expect(settled).toHaveLength(1);
    expect(settled[0]).toMatchObject({ status: 'settled', signature: null });
    const txHash = settled[0]?.tx_hash ?? '';
    expect(txHash).toMatch(/^0x[0-9a-f]{64}$/);

    const creditId = `eip3009:${PAYMENTS_CHAIN}:${payer.address.toLowerCase()}:${nonce.toLowerCase()}`;
    const groups = await db
      .selectFrom('ledger_groups')
      .select(['kind', 'settlement_id'])
      .where('account_id', '=', acc.accountId)
      .orderBy('seq')
      .execute();
    expect(groups).toEqual([
      { kind: 'topup', settlement_id: creditId },
      { kind: 'fee.feedback', settlement_id: `fee:feedback:${creditId}` },
    ]);
    expect((await readPrepaidBalance(db, acc.accountId)).balanceMicro).toBe(0n);
    const requests = await db
      .selectFrom('feature_requests')
      .select(['id', 'title', 'body', 'status'])
      .where('account_id', '=', acc.accountId)
      .execute();
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ title: TITLE, body: BODY, status: 'open' });
    // Not broadcast twice: the reconciler found the transfer instead of sending it again.
    expect(await relayerTxCount()).toBe(relayerBefore + 1);
    expect(await usdcOf(setup.treasury)).toBe(treasuryBefore + USD);
    // The 402's challenge was issued by the dead process; the reconciler linked it all the same.
    const challenges = await listChallenges(db, acc.accountId);
    expect(challenges.map((c) => c.settlement_id)).toEqual([settled[0]?.id]);

    // 4. The client retries with the same X-PAYMENT: the recorded request, nothing charged again.
    const retry = await send(survivor, { 'x-payment': xPayment });
    expect(retry.status, retry.text).toBe(201);
    expect(JSON.parse(retry.text)).toEqual({
      id: requests[0]?.id,
      status: 'open',
      charged_usd: '1',
      paid_ref: txHash,
    });
    const response = retry.headers['x-payment-response'];
    expect(typeof response).toBe('string');
    expect(JSON.parse(Buffer.from(String(response), 'base64').toString('utf8'))).toEqual({
      success: true,
      transaction: txHash,
      network: 'base',
      payer: getAddress(payer.address),
    });
    expect(await relayerTxCount()).toBe(relayerBefore + 1);
    expect(
      await db.selectFrom('feature_requests').select('id').where('account_id', '=', acc.accountId).execute(),
    ).toHaveLength(1);

    expect(describeExit(await survivor.stop()), survivor.tail()).toBe('code 0');
  }, 150_000);
});

describe('DEVNET_TOKEN_ADDRESSES (the hook the child processes above need)', () => {
  const usdc = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
  it('parses chain id → symbol → address in development', () => {
    const config = loadConfig({
      DEVNET: 'false',
      DEVNET_TOKEN_ADDRESSES: JSON.stringify({ 8453: { USDC: usdc } }),
    });
    expect(config.devnet.tokenAddresses).toEqual({ 8453: { USDC: usdc } });
    expect(loadConfig({ DEVNET: 'false' }).devnet.tokenAddresses).toBeNull();
  });
  it.each([
    ['not JSON', 'nope'],
    ['an unsupported chain', JSON.stringify({ 1: { USDC: usdc } })],
    ['a bad address', JSON.stringify({ 8453: { USDC: '0x1234' } })],
  ])('refuses %s', (_name, value) => {
    expect(() => loadConfig({ DEVNET: 'false', DEVNET_TOKEN_ADDRESSES: value })).toThrow(ConfigError);
  });
  it('is refused in production', () => {
    expect(() =>
      loadConfig({
        PURSER_ENV: 'production',
        DEVNET_TOKEN_ADDRESSES: JSON.stringify({ 8453: { USDC: usdc } }),
      }),
    ).toThrow(/DEVNET_TOKEN_ADDRESSES is refused in production/);
  });
});
