// The real service as child processes on one PostgreSQL database, trading on one CLOB fake: for
// the prediction-market tests that need more than one process (a kill and a restart, a lane shared
// by two processes). An account with a hosted credential, a policy and prepaid money is made over
// the service's own HTTP API.

import { randomBytes } from 'node:crypto';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { expect } from 'vitest';
import { systemClock } from '../../src/core/clock.ts';
import type { ClobFake } from '../../src/devnet/fakes/clob.ts';
import type { TestDatabase } from './db.ts';
import { bearer, createAccountWithSession } from './identity.ts';
import { fundPrepaid } from './prepaid.ts';
import { http, startServiceProcess, waitUntilReady, type ServiceProcess } from './service-process.ts';

export interface PmProcesses {
  database: TestDatabase;
  clob: ClobFake;
  /** The sealing key every process of the run shares. */
  sealing: { id: string; key: string };
  /** Every process started, to stop after the run. */
  running: ServiceProcess[];
}

export function pmProcesses(database: TestDatabase, clob: ClobFake): PmProcesses {
  return { database, clob, sealing: { id: 'proc', key: randomBytes(32).toString('hex') }, running: [] };
}

/** Starts `purser serve` on the run's database and CLOB fake (no devnet), ready to answer. */
export async function startPmService(run: PmProcesses, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const service = await startServiceProcess({
    env: {
      DATABASE_URL: run.database.url!,
      DEVNET: 'false',
      POLYMARKET_CLOB_URL: run.clob.url,
      KALSHI_API_URL: `${run.clob.url}/trade-api/v2`,
      PURSER_SEALING_KEYS: `${run.sealing.id}:${run.sealing.key}`,
      JOBS_POLL_INTERVAL_MS: '100',
      ...env,
    },
  });
  run.running.push(service);
  await waitUntilReady(service);
  return service;
}

export async function stopPmProcesses(run: PmProcesses | undefined): Promise<void> {
  for (const s of run?.running ?? []) await s.stop('SIGKILL').catch(() => undefined);
}

export interface HostedTrader {
  accountId: string;
  headers: { authorization: string };
  wallet: string;
  credentialId: string;
}

/**
 * A new account, through `serviceUrl`: a hosted EOA credential (signature type 0), a policy for its
 * wallet on chain 137 with prediction markets on, and `prepaidMicro` of prepaid money.
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
  const stored = await http(`${serviceUrl}/v1/pm/credentials`, {
    method: 'POST',
    headers,
    body: { venue: 'polymarket', signature_type: 0, signer_key: key },
  });
  expect(stored.status, stored.text).toBe(201);
  const policy = await http(`${serviceUrl}/v1/policies`, {
    method: 'PUT',
    headers,
    body: {
      version: 1,
      wallet,
      chain_id: 137,
      prediction_markets: {
        enabled: true,
        venues: ['polymarket'],
        max_order_usd: '50',
        max_exposure_usd: '500',
      },
    },
  });
  expect(policy.status, policy.text).toBeLessThan(300);
  await fundPrepaid(run.database.handle.db, systemClock, who.accountId, prepaidMicro);
  return {
    accountId: who.accountId,
    headers,
    wallet,
    credentialId: (JSON.parse(stored.text) as { id: string }).id,
  };
}

/** How many orders the CLOB fake has been sent (POST /order), accepted or not. */
export function ordersPosted(clob: ClobFake): number {
  return clob.requests.filter((r) => r.method === 'POST' && r.path === '/order').length;
}
