// The real service killed with SIGKILL right after the venue accepted an order and before Purser
// recorded it (PURSER_FAULT_PM_ORDER_CRASH makes it kill itself there), then restarted without the
// fault: the order exists once at the venue and once in Purser, the reconciler finds it by its
// hash, and a retry with the same client_order_id transmits nothing. Two processes and a crash:
// PostgreSQL only.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  binaryMarket,
  hostedTrader,
  ordersPosted,
  pmProcesses,
  startPmService,
  stopPmProcesses,
  type PmProcesses,
} from '../../../test/support/pm-service.ts';
import { describeExit, http } from '../../../test/support/service-process.ts';
import { createPmVenuePorts } from '../../adapters/pm-venue/index.ts';
import { testConfig } from '../../config.ts';
import { systemClock } from '../../core/clock.ts';
import { keyringOf } from '../../core/sealing.ts';
import { buildTokenRegistry } from '../registry/index.ts';
import { reconcileTransmitting, RECONCILE_AFTER_MS } from './orders.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);
if (!onPostgres) console.log('Skipping the order kill test: it needs two processes on PostgreSQL.');

const MARKET = `0x${'c3'.repeat(32)}` as const;
const TOKEN = '3001';
let run: PmProcesses | undefined;

beforeAll(async () => {
  if (onPostgres) run = await pmProcesses(binaryMarket(MARKET, TOKEN, '3002'));
}, 60_000);
afterAll(() => stopPmProcesses(run));

describe.skipIf(!onPostgres)('an order whose process is killed after the transmit', () => {
  it('is placed once at the venue and recorded once after the restart; a retry transmits nothing', async () => {
    const world = run!;
    const { database, clob } = world;
    const doomed = await startPmService(world, { PURSER_FAULT_PM_ORDER_CRASH: 'after_transmit' });
    const { headers: auth, wallet, credentialId } = await hostedTrader(world, doomed.url);

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
    const posts = () => ordersPosted(clob);
    expect(posts()).toBe(1);
    const [row] = await database.handle.db.selectFrom('pm_orders').selectAll().execute();
    expect(row).toMatchObject({ status: 'transmitting', client_order_id: 'crash-1' });
    expect(clob.order(row!.order_hash as `0x${string}`)?.status).toBe('LIVE');

    const survivor = await startPmService(world);
    // A retry under the same client_order_id: 409, nothing transmitted.
    const retry = await http(`${survivor.url}/v1/pm/orders`, { method: 'POST', headers: auth, body });
    expect(retry.status, retry.text).toBe(409);
    expect(posts()).toBe(1);

    // The reconciler (the survivor's job, run here with a clock past its wait) finds it by hash.
    const config = testConfig({ sealingKeys: [world.sealing] });
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
