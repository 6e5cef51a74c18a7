// The platform order cap through POST /v1/pm/orders from two service processes on one PostgreSQL
// database: the `polymarket:orders` lane holds 10 and refills almost nothing, 40 orders from five
// accounts go to both processes at once, and exactly 10 reach the venue; the rest are 429 with a
// Retry-After and leave nothing behind. Cancels have their own lane and still work. Two processes:
// PostgreSQL only.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import {
  binaryMarket,
  hostedTrader,
  type HostedTrader,
  ordersPosted,
  pmProcesses,
  startPmService,
  stopPmProcesses,
  type PmProcesses,
} from '../../../test/support/pm-service.ts';
import { http, type HttpResult } from '../../../test/support/service-process.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);
if (!onPostgres) console.log('Skipping the two-process order cap test: it needs PostgreSQL.');

const MARKET = `0x${'c4'.repeat(32)}` as const;
const TOKEN = '4001';
const CAP = 10;
let run: PmProcesses | undefined;

beforeAll(async () => {
  if (onPostgres) run = await pmProcesses(binaryMarket(MARKET, TOKEN, '4002'));
}, 60_000);
afterAll(() => stopPmProcesses(run));

describe.skipIf(!onPostgres)('the order cap across two processes', () => {
  it('transmits exactly the cap; the rest are 429 with Retry-After and nothing recorded; cancels still work', async () => {
    const world = run!;
    const { database, clob } = world;
    // One lane setting for both processes, as the docs ask: 10 orders, then about one per 17 minutes.
    const lanes = JSON.stringify({ orders: { capacity: CAP, refill_per_second: 0.001 } });
    const [one, two] = await Promise.all([
      startPmService(world, { PM_RATE_LANES: lanes }),
      startPmService(world, { PM_RATE_LANES: lanes }),
    ]);
    const traders: HostedTrader[] = [];
    for (let i = 0; i < 5; i += 1) traders.push(await hostedTrader(world, i % 2 ? two!.url : one!.url));
    const before = ordersPosted(clob);

    const sent = Array.from({ length: 40 }, (_, i) => {
      const tr = traders[i % traders.length]!;
      const via = i % 2 ? two! : one!;
      return http(`${via.url}/v1/pm/orders`, {
        method: 'POST',
        headers: tr.headers,
        body: {
          wallet: tr.wallet,
          credential_id: tr.credentialId,
          condition_id: MARKET,
          token_id: TOKEN,
          action: 'buy',
          price_usd: '0.1',
          size_shares: '10',
          client_order_id: `cap-${i}`,
        },
        timeoutMs: 30_000,
      }).then((answer) => ({ answer, via, tr }));
    });
    const results = await Promise.all(sent);
    const placed = results.filter((r) => r.answer.status === 201);
    const limited = results.filter((r) => r.answer.status === 429);
    expect(results.map((r) => r.answer.status).sort(), results.map((r) => r.answer.text).join('\n')).toEqual([
      ...Array<number>(CAP).fill(201),
      ...Array<number>(40 - CAP).fill(429),
    ]);
    for (const { answer } of limited) {
      expectErrorBody(
        { statusCode: answer.status, headers: answer.headers, body: answer.text },
        429,
        'RATE_LIMITED',
      );
      expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }

    // The venue got exactly the cap, and Purser recorded (and charged) only those.
    expect(ordersPosted(clob) - before).toBe(CAP);
    const rows = await database.handle.db.selectFrom('pm_orders').select(['status', 'order_hash']).execute();
    expect(rows.map((r) => r.status)).toEqual(Array<string>(CAP).fill('placed'));
    const ids = placed.map((r) => (JSON.parse(r.answer.text) as { order_id: string }).order_id).sort();
    expect(rows.map((r) => r.order_hash).sort()).toEqual(ids);
    const fees = await database.handle.db
      .selectFrom('ledger_groups')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('kind', '=', 'fee.pm_order')
      .executeTakeFirstOrThrow();
    expect(Number(fees.n)).toBe(CAP);

    // The cap is spent, yet a cancel through the other process goes through on its own lane.
    const first = placed[0]!;
    const other = first.via === one ? two! : one!;
    const orderId = (JSON.parse(first.answer.text) as { order_id: string }).order_id;
    const cancel = await http(
      `${other.url}/v1/pm/orders/polymarket/${orderId}?credential_id=${first.tr.credentialId}`,
      { method: 'DELETE', headers: first.tr.headers },
    );
    expect(cancel.status, cancel.text).toBe(200);
    expect(clob.order(orderId as `0x${string}`)?.status).toBe('CANCELED');
    const again: HttpResult = await http(`${other.url}/v1/pm/orders`, {
      method: 'POST',
      headers: first.tr.headers,
      body: {
        wallet: first.tr.wallet,
        credential_id: first.tr.credentialId,
        condition_id: MARKET,
        token_id: TOKEN,
        action: 'buy',
        price_usd: '0.1',
        size_shares: '10',
        client_order_id: 'cap-after-cancel',
      },
    });
    expect(again.status, again.text).toBe(429);
    expect(ordersPosted(clob) - before).toBe(CAP);
  }, 120_000);
});
