// The real service as child processes on one database, trading on one CLOB fake: for the
// prediction-market tests that need more than one process (a kill and a restart, a lane shared by
// two processes) and for the order benchmark. A trader (a hosted credential and a policy) is set
// up over the service's own HTTP API. No test framework here: a refusal throws.

import { randomBytes } from 'node:crypto';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { systemClock } from '../../src/core/clock.ts';
import { startClobFake, type ClobFake, type ClobFakeMarket } from '../../src/devnet/fakes/clob.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { bearer, createAccountWithSession } from './identity.ts';
import { fundPrepaid } from './prepaid.ts';
import { http, startServiceProcess, waitUntilReady, type ServiceProcess } from './service-process.ts';

/** A binary market of the CLOB fake: `yes` and `no` outcome token ids, tick 0.01. */
export function binaryMarket(conditionId: `0x${string}`, yes: string, no: string): ClobFakeMarket {
  return {
    conditionId,
    tokens: [
      { tokenId: yes, outcome: 'Yes' },
      { tokenId: no, outcome: 'No' },
    ],
    tickSize: '0.01',
  };
}

export interface PmProcesses {
  database: TestDatabase;
  clob: ClobFake;
  /** The sealing key every process of the run shares. */
  sealing: { id: string; key: string };
  /** Every process started, to stop after the run. */
  running: ServiceProcess[];
}

/** A fresh test database and a CLOB fake trading `market`, for service processes to share. */
export async function pmProcesses(market: ClobFakeMarket): Promise<PmProcesses> {
  const database = await createTestDatabase();
  const clob = await startClobFake({ markets: [market] });
  return { database, clob, sealing: { id: 'proc', key: randomBytes(32).toString('hex') }, running: [] };
}

/** Starts `purser serve` on the run's database and CLOB fake (no devnet), ready to answer. */
export async function startPmService(
  run: PmProcesses,
  env: Record<string, string> = {},
): Promise<ServiceProcess> {
  const service = await startServiceProcess({
    env: { ...pmServiceEnv(run.clob, run.sealing), DATABASE_URL: run.database.url!, ...env },
  });
  run.running.push(service);
  await waitUntilReady(service);
  return service;
}

/** What a service process needs to trade on `clob` with hosted keys sealed under `sealing`. */
export function pmServiceEnv(clob: ClobFake, sealing: { id: string; key: string }): Record<string, string> {
  return {
    DEVNET: 'false',
    POLYMARKET_CLOB_URL: clob.url,
    KALSHI_API_URL: `${clob.url}/trade-api/v2`,
    PURSER_SEALING_KEYS: `${sealing.id}:${sealing.key}`,
    JOBS_POLL_INTERVAL_MS: '100',
  };
}

/** Kills every process of the run, stops the fake and drops the database. */
export async function stopPmProcesses(run: PmProcesses | undefined): Promise<void> {
  for (const s of run?.running ?? []) await s.stop('SIGKILL');
  await run?.clob.stop();
  await run?.database.drop();
}

/** Stores a hosted EOA credential (signature type 0) of `signerKey`; returns its id. */
export async function storeHostedCredential(
  serviceUrl: string,
  headers: Record<string, string>,
  signerKey: `0x${string}`,
): Promise<string> {
  const stored = await http(`${serviceUrl}/v1/pm/credentials`, {
    method: 'POST',
    headers,
    body: { venue: 'polymarket', signature_type: 0, signer_key: signerKey },
  });
  if (stored.status !== 201)
    throw new Error(`POST /v1/pm/credentials answered ${stored.status}: ${stored.text}`);
  return (JSON.parse(stored.text) as { id: string }).id;
}

/** Puts a policy for `wallet` on chain 137 with prediction markets on, within `limits`. */
export async function putPmPolicy(
  serviceUrl: string,
  headers: Record<string, string>,
  wallet: string,
  limits: { max_order_usd: string; max_exposure_usd: string } = {
    max_order_usd: '50',
    max_exposure_usd: '500',
  },
): Promise<void> {
  const policy = await http(`${serviceUrl}/v1/policies`, {
    method: 'PUT',
    headers,
    body: {
      version: 1,
      wallet,
      chain_id: 137,
      prediction_markets: { enabled: true, venues: ['polymarket'], ...limits },
    },
  });
  if (policy.status >= 300) throw new Error(`PUT /v1/policies answered ${policy.status}: ${policy.text}`);
}

export interface HostedTrader {
  accountId: string;
  headers: { authorization: string };
  wallet: string;
  credentialId: string;
}

/**
 * A new account, through `serviceUrl`: a hosted EOA credential, a policy for its wallet with
 * prediction markets on, and `prepaidMicro` of prepaid money.
 */
export async function hostedTrader(
  run: PmProcesses,
  serviceUrl: string,
  prepaidMicro = 10_000_000n,
): Promise<HostedTrader> {
  const key = generatePrivateKey();
  const wallet = privateKeyToAddress(key).toLowerCase();
  const who = await createAccountWithSession(run.database.handle.db);
  const headers = bearer(who.sessionToken);
  const credentialId = await storeHostedCredential(serviceUrl, headers, key);
  await putPmPolicy(serviceUrl, headers, wallet);
  await fundPrepaid(run.database.handle.db, systemClock, who.accountId, prepaidMicro);
  return { accountId: who.accountId, headers, wallet, credentialId };
}

/** How many orders the CLOB fake has been sent (POST /order), accepted or not. */
export function ordersPosted(clob: ClobFake): number {
  return clob.requests.filter((r) => r.method === 'POST' && r.path === '/order').length;
}
