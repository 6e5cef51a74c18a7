// The real service killed with SIGKILL right after the venue accepted an order and before Purser
// recorded it (PURSER_FAULT_PM_ORDER_CRASH makes it kill itself there), then restarted without the
// fault: the order exists once at the venue and once in Purser, the reconciler finds it by its
// hash, and a retry with the same client_order_id transmits nothing. Two processes and a crash:
// PostgreSQL only.

import { randomBytes } from 'node:crypto';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import { fundPrepaid } from '../../../test/support/prepaid.ts';
import {
  describeExit,
  http,
  startServiceProcess,
  waitUntilReady,
  type ServiceProcess,
} from '../../../test/support/service-process.ts';
import { createPmVenuePorts } from '../../adapters/pm-venue/index.ts';
import { testConfig } from '../../config.ts';
import { systemClock } from '../../core/clock.ts';
import { keyringOf } from '../../core/sealing.ts';
import { startClobFake, type ClobFake } from '../../devnet/fakes/clob.ts';
import { buildTokenRegistry } from '../registry/index.ts';
import { reconcileTransmitting, RECONCILE_AFTER_MS } from './orders.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);
if (!onPostgres) console.log('Skipping the order kill test: it needs two processes on PostgreSQL.');

const MARKET = `0x${'c3'.repeat(32)}` as const;
const TOKEN = '3001';
const SEALING = { id: 'crash', key: randomBytes(32).toString('hex') };
let database: TestDatabase;
let clob: ClobFake;
const running: ServiceProcess[] = [];

beforeAll(async () => {
  if (!onPostgres) return;
  database = await createTestDatabase();
  clob = await startClobFake({
    markets: [
      {
        conditionId: MARKET,
        tokens: [
          { tokenId: TOKEN, outcome: 'Yes' },
          { tokenId: '3002', outcome: 'No' },
        ],
        tickSize: '0.01',
      },
    ],
  });
}, 60_000);
afterAll(async () => {
  for (const s of running) await s.stop('SIGKILL').catch(() => undefined);
  await clob?.stop();
  await database?.drop();
});

async function start(fault: string | null): Promise<ServiceProcess> {
  const service = await startServiceProcess({
    env: {
      DATABASE_URL: database.url!,
      DEVNET: 'false',
      POLYMARKET_CLOB_URL: clob.url,
      KALSHI_API_URL: `${clob.url}/trade-api/v2`,
      PURSER_SEALING_KEYS: `${SEALING.id}:${SEALING.key}`,
      JOBS_POLL_INTERVAL_MS: '100',
      ...(fault ? { PURSER_FAULT_PM_ORDER_CRASH: fault } : {}),
    },
  });
  running.push(service);
  await waitUntilReady(service);
  return service;
}

describe.skipIf(!onPostgres)('an order whose process is killed after the transmit', () => {
  it('is placed once at the venue and recorded once after the restart; a retry transmits nothing', async () => {
    const key = generatePrivateKey();
    const wallet = privateKeyToAddress(key).toLowerCase();
    const who = await createAccountWithSession(database.handle.db);
    const auth = bearer(who.sessionToken);
    const doomed = await start('after_transmit');
    const stored = await http(`${doomed.url}/v1/pm/credentials`, {
      method: 'POST',
      headers: auth,
      body: { venue: 'polymarket', signature_type: 0, signer_key: key },
    });
    expect(stored.status, stored.text).toBe(201);
    const credentialId = (JSON.parse(stored.text) as { id: string }).id;
    const policy = await http(`${doomed.url}/v1/policies`, {
      method: 'PUT',
      headers: auth,
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
    await fundPrepaid(database.handle.db, systemClock, who.accountId, 10_000_000n);

    const body = {
      wallet,
      credential_id: credentialId,
      condition_id: MARKET,
      token_id: TOKEN,
      action: 'buy',
      price_usd: '0.25',
      size_shares: '20',
      client_order_id: 'crash-1',
    };
    await http(`${doomed.url}/v1/pm/orders`, { method: 'POST', headers: auth, body }).catch(() => null);
    expect(describeExit(await doomed.exited), doomed.tail()).toBe('signal SIGKILL');
    const posts = () => clob.requests.filter((r) => r.method === 'POST' && r.path === '/order').length;
    expect(posts()).toBe(1);
    const [row] = await database.handle.db.selectFrom('pm_orders').selectAll().execute();
    expect(row).toMatchObject({ status: 'transmitting', client_order_id: 'crash-1' });
    expect(clob.order(row!.order_hash as `0x${string}`)?.status).toBe('LIVE');

    const survivor = await start(null);
    // A retry under the same client_order_id: 409, nothing transmitted.
    const retry = await http(`${survivor.url}/v1/pm/orders`, { method: 'POST', headers: auth, body });
    expect(retry.status, retry.text).toBe(409);
    expect(posts()).toBe(1);

    // The reconciler (the survivor's job, run here with a clock past its wait) finds it by hash.
    const config = testConfig({ sealingKeys: [SEALING] });
    const later = { now: () => new Date(Date.now() + RECONCILE_AFTER_MS + 1_000) };
    const done = await reconcileTransmitting(
      {
        config,
        db: database.handle.db,
        clock: later,
        keyring: keyringOf(config.sealingKeys),
        watch: config.pm.watch,
        registry: buildTokenRegistry('development'),
        venues: createPmVenuePorts({
          polymarketClobUrl: clob.url,
          kalshiApiUrl: clob.url,
          timeoutMs: 5_000,
          clock: systemClock,
        }),
        clob: createPmVenuePorts({
          polymarketClobUrl: clob.url,
          kalshiApiUrl: clob.url,
          timeoutMs: 5_000,
          clock: systemClock,
        }).polymarket,
      },
      { warn() {} },
    );
    expect(done.placed).toBe(1);
    const rows = await database.handle.db.selectFrom('pm_orders').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.status).toBe('placed');
    expect(posts()).toBe(1);
  });
});
