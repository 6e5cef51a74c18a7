// Prediction-market orders against the CLOB fake, signed for real and verified by it: placement
// under the wallet's policy and exposure, the fee, client_order_id, venue refusals, the switches,
// the platform order cap, resting orders, cancels, exact exposure under concurrency, and one
// Idempotency-Key, one order (a hundred at once, and the SDK retrying past a venue that timed out).

import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import { getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import { fundPrepaid } from '../../../test/support/prepaid.ts';
import { createPmVenuePorts } from '../../adapters/pm-venue/index.ts';
import { testConfig } from '../../config.ts';
import { systemClock } from '../../core/clock.ts';
import { startClobFake, type ClobFake } from '../../devnet/fakes/clob.ts';
import { startKalshiFake, type KalshiFake } from '../../devnet/fakes/kalshi.ts';
import { Purser } from '../../../packages/sdk/src/index.ts';
import { readPrepaidBalance } from '../billing/index.ts';
import { setSwitch } from '../switches/index.ts';
import { Deadline } from '../../core/http/deadline.ts';
import {
  cancelAllOf,
  placeOrder,
  PREPARE_TTL_MS,
  reconcileTransmitting,
  RECONCILE_AFTER_MS,
  sweepPrepared,
  UNKNOWN_AFTER_MS,
} from './orders.ts';
import { orderDeps } from './routes.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);
const MARKET = `0x${'a1'.repeat(32)}` as const;
const OTHER_MARKET = `0x${'b2'.repeat(32)}` as const;
const YES = '1001';
const NO = '1002';
const OTHER_YES = '2001';

let t: TestApp;
let clob: ClobFake;
let kalshi: KalshiFake;

const config = testConfig();
config.pm = {
  ...config.pm,
  rateLanes: { ...config.pm.rateLanes, orders: { capacity: 1000, refillPerSecond: 1000 } },
};

beforeAll(async () => {
  clob = await startClobFake({
    markets: [
      {
        conditionId: MARKET,
        tokens: [
          { tokenId: YES, outcome: 'Yes' },
          { tokenId: NO, outcome: 'No' },
        ],
        tickSize: '0.01',
      },
      {
        conditionId: OTHER_MARKET,
        tokens: [
          { tokenId: OTHER_YES, outcome: 'Yes' },
          { tokenId: '2002', outcome: 'No' },
        ],
        tickSize: '0.001',
        negRisk: true,
      },
    ],
  });
  kalshi = await startKalshiFake();
  t = await createTestApp({
    config,
    poolSize: 12,
    deps: {
      pmVenues: createPmVenuePorts({
        polymarketClobUrl: clob.url,
        kalshiApiUrl: kalshi.baseUrl,
        timeoutMs: 5_000,
        clock: systemClock,
      }),
    },
  });
});
afterAll(async () => {
  await t?.close();
  await clob?.stop();
  await kalshi?.stop();
});

interface Trader {
  accountId: string;
  headers: { authorization: string };
  wallet: string;
  credentialId: string;
}

const OTHER_APPROVER = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

/** An account with a hosted EOA credential, a policy for its wallet and prepaid money. */
async function trader(
  policy: Record<string, unknown> | null = {},
  prepaidMicro = 100_000_000n,
  flow: 'hosted' | 'client_signed' = 'hosted',
): Promise<Trader & { key: `0x${string}` }> {
  const a = await createAccountWithSession(t.db.db);
  const headers = bearer(a.sessionToken);
  const key = generatePrivateKey();
  const wallet = privateKeyToAddress(key).toLowerCase();
  let payload: Record<string, unknown> = { venue: 'polymarket', signature_type: 0, signer_key: key };
  if (flow === 'client_signed') {
    const creds = await t.deps.pmVenues!.polymarket.deriveApiCredentials(key);
    payload = {
      venue: 'polymarket',
      signature_type: 0,
      signer_address: wallet,
      api_key: creds.apiKey,
      api_secret: creds.secret,
      api_passphrase: creds.passphrase,
    };
  }
  const stored = await t.app.fastify.inject({ method: 'POST', url: '/v1/pm/credentials', headers, payload });
  expect(stored.statusCode, stored.body).toBe(201);
  const tr = { accountId: a.accountId, headers, wallet, credentialId: stored.json().id as string, key };
  if (policy === null) return tr;
  // A `spend` key of `policy` is the spend section (the approval tier); the rest prediction_markets'.
  const { spend, ...markets } = policy;
  const put = await t.app.fastify.inject({
    method: 'PUT',
    url: '/v1/policies',
    headers,
    payload: {
      version: 1,
      wallet,
      chain_id: 137,
      ...(spend ? { spend } : {}),
      prediction_markets: {
        enabled: true,
        venues: ['polymarket'],
        max_order_usd: '50',
        max_exposure_usd: '500',
        ...markets,
      },
    },
  });
  expect(put.statusCode, put.body).toBeLessThan(300);
  if (prepaidMicro > 0n) await fundPrepaid(t.db.db, systemClock, a.accountId, prepaidMicro);
  return tr;
}

function order(tr: Trader, over: Record<string, unknown> = {}) {
  return t.app.fastify.inject({
    method: 'POST',
    url: '/v1/pm/orders',
    headers: tr.headers,
    payload: { ...orderBody(tr), ...over },
  });
}

/** A buy of 10 YES shares at 0.4 by the trader's wallet, as `POST /v1/pm/orders` takes it. */
function orderBody(tr: Trader, over: { price_usd?: string } = {}) {
  return {
    wallet: tr.wallet,
    credential_id: tr.credentialId,
    condition_id: MARKET,
    token_id: YES,
    action: 'buy' as const,
    price_usd: '0.4',
    size_shares: '10',
    ...over,
  };
}

/** The actor of a request made with the trader's session, for calling the service directly. */
function sessionActor(tr: Trader) {
  return {
    principal: {
      accountId: tr.accountId,
      kind: 'session' as const,
      credentialId: 'ses_test',
      scopes: [],
      wallets: null,
      address: '',
    },
    network: { clientIp: '127.0.0.1', userAgent: null },
  };
}

const posted = () => clob.requests.filter((r) => r.method === 'POST' && r.path === '/order').length;

describe('POST /v1/pm/orders', () => {
  it('places a signed order the venue verifies, charges the fee, lists it, and a cancel releases it', async () => {
    const tr = await trader();
    const before = await readPrepaidBalance(t.db.db, tr.accountId);
    const res = await order(tr, { client_order_id: 'first', state: { thesis: 'test' } });
    expect(res.statusCode, res.body).toBe(201);
    const placed = res.json();
    expect(placed).toMatchObject({ venue: 'polymarket', status: 'live', cost_usd: '4', policy_version: 1 });
    const venueOrder = clob.order(placed.order_id);
    expect(venueOrder).toMatchObject({
      status: 'LIVE',
      side: 'BUY',
      price: '0.4',
      original_size: '10',
      asset_id: YES,
    });
    // The fee: base plus bps of the notional, from the prepaid balance.
    const after = await readPrepaidBalance(t.db.db, tr.accountId);
    expect(before.balanceMicro - after.balanceMicro).toBe(BigInt(Math.round(Number(placed.fee_usd) * 1e6)));
    expect(Number(placed.fee_usd)).toBeGreaterThan(0);

    const list = await t.app.fastify.inject({
      method: 'GET',
      url: `/v1/pm/orders?credential_id=${tr.credentialId}`,
      headers: tr.headers,
    });
    expect(list.statusCode).toBe(200);
    expect(list.json().orders).toMatchObject([{ order_id: placed.order_id, status: 'LIVE', side: 'buy' }]);

    const cancel = await t.app.fastify.inject({
      method: 'DELETE',
      url: `/v1/pm/orders/polymarket/${placed.order_id}?credential_id=${tr.credentialId}`,
      headers: tr.headers,
    });
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect(cancel.json()).toEqual({ venue: 'polymarket', order_id: placed.order_id, status: 'cancelled' });
    expect(clob.order(placed.order_id)?.status).not.toBe('LIVE');
    const events = await t.db.db
      .selectFrom('events')
      .select('kind')
      .where('account_id', '=', tr.accountId)
      .where('kind', 'like', 'pm.order.%')
      .orderBy('created_at')
      .execute();
    expect(events.map((e) => e.kind)).toEqual(['pm.order.placed', 'pm.order.cancelled']);
    // The export lists the order as recorded, without its signature.
    const exported = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/account/export',
      headers: tr.headers,
    });
    expect(exported.json().pm_orders).toMatchObject([
      { order_id: placed.order_id, client_order_id: 'first', status: 'cancelled', state: { thesis: 'test' } },
    ]);
    expect(JSON.stringify(exported.json().pm_orders)).not.toMatch(/signature|order_struct/);
  });

  it('refuses what the policy forbids with 403 naming the rule, and transmits nothing', async () => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>, string]> = [
      [{ enabled: false }, {}, 'prediction_markets.enabled'],
      [{ max_order_usd: '3' }, {}, 'prediction_markets.max_order_usd'],
      [{ markets: [OTHER_MARKET] }, {}, 'prediction_markets.markets'],
      [{ min_price: '0.5' }, {}, 'prediction_markets.min_price'],
      [{ max_price: '0.3' }, {}, 'prediction_markets.max_price'],
      [{ max_exposure_usd: '3' }, {}, 'prediction_markets.max_exposure_usd'],
      [{ max_market_exposure_usd: '3' }, {}, 'prediction_markets.max_market_exposure_usd'],
      // Orders cannot wait for approvers: above the approval threshold they are refused.
      [
        { spend: { approvals: { above_usd: '1', approvers: [OTHER_APPROVER], quorum: 1, ttl_minutes: 60 } } },
        {},
        'spend.approvals',
      ],
    ];
    const before = posted();
    for (const [policy, over, rule] of cases) {
      const tr = await trader(policy);
      const res = await order(tr, over);
      expectErrorBody(res, 403, 'POLICY_VIOLATION');
      expect(res.json().message).toContain(rule);
      const rows = await t.db.db
        .selectFrom('pm_orders')
        .select('id')
        .where('account_id', '=', tr.accountId)
        .execute();
      expect(rows).toHaveLength(0);
    }
    expect(posted()).toBe(before);
  });

  it('counts open orders against the exposure caps, in all and per market', async () => {
    const tr = await trader({ max_exposure_usd: '10', max_market_exposure_usd: '6' });
    expect((await order(tr, { size_shares: '10', price_usd: '0.5' })).statusCode).toBe(201); // 5 USD
    const same = await order(tr, { size_shares: '5', price_usd: '0.4' }); // 2 more in the market: 7 > 6
    expectErrorBody(same, 403, 'POLICY_VIOLATION');
    expect(same.json().message).toContain('max_market_exposure_usd');
    expect(
      (
        await order(tr, {
          condition_id: OTHER_MARKET,
          token_id: OTHER_YES,
          size_shares: '10',
          price_usd: '0.4',
        })
      ).statusCode,
    ).toBe(201); // 4 USD: 9 in all
    const over = await order(tr, {
      condition_id: OTHER_MARKET,
      token_id: OTHER_YES,
      size_shares: '5',
      price_usd: '0.4',
    });
    expectErrorBody(over, 403, 'POLICY_VIOLATION');
    expect(over.json().message).toContain('max_exposure_usd');
  });

  it('claims client_order_id once: a second attempt is 409 and nothing is transmitted', async () => {
    const tr = await trader();
    expect((await order(tr, { client_order_id: 'once' })).statusCode).toBe(201);
    const before = posted();
    expectErrorBody(await order(tr, { client_order_id: 'once' }), 409, 'CONFLICT');
    expect(posted()).toBe(before);
  });

  it("a venue refusal is 422 with the venue's reason; the fee is reversed and nothing stays open", async () => {
    const tr = await trader();
    const before = await readPrepaidBalance(t.db.db, tr.accountId);
    const res = await order(tr, { size_shares: '1' }); // the fake's minimum is 5 shares
    expectErrorBody(res, 422, 'VENUE_REJECTED');
    expect(res.json().message).toMatch(/lower than the minimum/);
    expect((await readPrepaidBalance(t.db.db, tr.accountId)).balanceMicro).toBe(before.balanceMicro);
    const rows = await t.db.db
      .selectFrom('pm_orders')
      .select('status')
      .where('account_id', '=', tr.accountId)
      .execute();
    expect(rows.map((r) => r.status)).toEqual(['rejected']);
  });

  it('refuses bad input with 400 naming the field, and nothing is reserved, charged or transmitted', async () => {
    const tr = await trader();
    const before = posted();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ price_usd: '0.405' }, /price_usd/],
      [{ price_usd: '1' }, /price_usd/],
      [{ price_usd: '0' }, /price_usd/],
      [{ size_shares: '0' }, /size_shares/],
      [{ size_shares: '1.234' }, /size_shares/],
      [{ wallet: privateKeyToAddress(generatePrivateKey()) }, /wallet/],
      [{ condition_id: '0x12' }, /condition_id/],
      [{ token_id: 'abc' }, /token_id/],
      [{ action: 'short' }, /action/],
      [{ venue: 'kalshi' }, /venue/],
      [{ state: { a: 1 }, extra: true }, /extra/],
    ];
    for (const [over, field] of cases) {
      const res = await order(tr, over);
      expectErrorBody(res, 400, 'INVALID_REQUEST');
      expect(res.json().message).toMatch(field);
    }
    expect(posted()).toBe(before);
    const rows = await t.db.db
      .selectFrom('pm_orders')
      .select('id')
      .where('account_id', '=', tr.accountId)
      .execute();
    expect(rows).toHaveLength(0);
    expectErrorBody(await order(tr, { credential_id: crypto.randomUUID() }), 404, 'NOT_FOUND');
  });

  it('402 when the prepaid balance cannot cover the fee; 404 without a policy', async () => {
    const poor = await trader({}, 0n);
    expectErrorBody(await order(poor), 402, 'PAYMENT_REQUIRED');
    const tr = await trader();
    await t.db.db
      .deleteFrom('policies')
      .where('account_id', '=', tr.accountId)
      .execute()
      .catch(() => undefined);
    const other = await order(tr, { wallet: tr.wallet });
    expect([201, 404]).toContain(other.statusCode);
  });

  it.each(['environment', 'account', 'wallet'] as const)(
    'the %s switch refuses placement and preparation (403) while a cancel still works',
    async (scope) => {
      const tr = await trader();
      const cs = await trader({}, 100_000_000n, 'client_signed');
      const placed = (await order(tr)).json();
      const targets = {
        environment: [null],
        account: [tr.accountId, cs.accountId],
        wallet: [tr.wallet, cs.wallet],
      };
      const offs = targets[scope].map((target) => ({
        scope,
        target,
        enabled: false,
        reason: `${scope} drill`,
      }));
      for (const off of offs)
        await t.db.db.transaction().execute((tx) => setSwitch(tx, systemClock, off, null));
      try {
        const sent = posted();
        const refused = await order(tr);
        expectErrorBody(refused, 403, 'EXECUTION_DISABLED');
        expect(refused.json().message).toMatch(`${scope} drill`);
        const prepared = await t.app.fastify.inject({
          method: 'POST',
          url: '/v1/pm/orders/prepare',
          headers: cs.headers,
          payload: {
            wallet: cs.wallet,
            credential_id: cs.credentialId,
            condition_id: MARKET,
            token_id: YES,
            action: 'buy',
            price_usd: '0.2',
            size_shares: '10',
          },
        });
        expectErrorBody(prepared, 403, 'EXECUTION_DISABLED');
        expect(posted()).toBe(sent);
        const cancel = await t.app.fastify.inject({
          method: 'DELETE',
          url: `/v1/pm/orders/polymarket/${placed.order_id}?credential_id=${tr.credentialId}`,
          headers: tr.headers,
        });
        expect(cancel.statusCode, cancel.body).toBe(200);
        expect(clob.order(placed.order_id)?.status).toBe('CANCELED');
      } finally {
        for (const off of offs) {
          await t.db.db
            .transaction()
            .execute((tx) => setSwitch(tx, systemClock, { ...off, enabled: true }, null));
        }
      }
    },
  );

  it('a venue switched off refuses placement (403 naming it) while cancels keep working', async () => {
    const tr = await trader();
    const placed = (await order(tr)).json();
    const off = {
      scope: 'venue' as const,
      target: 'polymarket',
      enabled: false,
      reason: 'venue maintenance',
    };
    await t.db.db.transaction().execute((tx) => setSwitch(tx, systemClock, off, null));
    try {
      const refused = await order(tr);
      expectErrorBody(refused, 403, 'EXECUTION_DISABLED');
      expect(refused.json().message).toMatch(/polymarket.*venue maintenance/);
      const cancelAll = await t.app.fastify.inject({
        method: 'DELETE',
        url: `/v1/pm/orders?credential_id=${tr.credentialId}&market=${MARKET}`,
        headers: tr.headers,
      });
      expect(cancelAll.statusCode, cancelAll.body).toBe(200);
      expect(cancelAll.json()).toMatchObject({ cancelled: 1, order_ids: [placed.order_id], complete: true });
      // Reads and fill sync keep working too.
      const reads = await t.app.fastify.inject({
        method: 'GET',
        url: `/v1/pm/orders?credential_id=${tr.credentialId}`,
        headers: tr.headers,
      });
      expect(reads.statusCode, reads.body).toBe(200);
      const synced = await t.app.fastify.inject({
        method: 'POST',
        url: '/v1/pm/fills/sync',
        headers: tr.headers,
        payload: { wallet: tr.wallet, credential_id: tr.credentialId },
      });
      expect(synced.statusCode, synced.body).toBe(200);
    } finally {
      await t.db.db
        .transaction()
        .execute((tx) => setSwitch(tx, systemClock, { ...off, enabled: true }, null));
    }
  });

  it('answers 451 from a restricted origin on every order route', async () => {
    const tr = await trader();
    for (const [method, url] of [
      ['POST', '/v1/pm/orders'],
      ['GET', `/v1/pm/orders?credential_id=${tr.credentialId}`],
      ['DELETE', `/v1/pm/orders?credential_id=${tr.credentialId}`],
      ['DELETE', `/v1/pm/orders/polymarket/0x${'ab'.repeat(32)}?credential_id=${tr.credentialId}`],
      ['POST', '/v1/pm/orders/prepare'],
      ['POST', '/v1/pm/orders/submit'],
      ['POST', '/v1/pm/fills/sync'],
    ] as const) {
      const res = await t.app.fastify.inject({
        method,
        url,
        headers: tr.headers,
        remoteAddress: '198.51.100.77',
      });
      expectErrorBody(res, 451, 'JURISDICTION_BLOCKED');
    }
  });
});

describe('the platform order cap', () => {
  it('answers 429 with Retry-After once the lane is spent; nothing is transmitted', async () => {
    const tr = await trader();
    const lane = 'polymarket:orders';
    // Spend the lane, whatever earlier tests left in it.
    await sql`DELETE FROM rate_lanes WHERE lane = ${lane}`.execute(t.db.db);
    // The configuration's areas are frozen: the test swaps in a pm area with a one-token lane.
    const saved = t.deps.config.pm;
    t.deps.config.pm = {
      ...saved,
      rateLanes: { ...saved.rateLanes, orders: { capacity: 1, refillPerSecond: 0.001 } },
    };
    try {
      expect((await order(tr)).statusCode).toBe(201);
      const before = posted();
      const res = await order(tr);
      expectErrorBody(res, 429, 'RATE_LIMITED');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(posted()).toBe(before);
    } finally {
      t.deps.config.pm = saved;
      await sql`DELETE FROM rate_lanes WHERE lane = ${lane}`.execute(t.db.db);
    }
  });
});

describe.skipIf(!onPostgres)('exposure under concurrency (PostgreSQL)', () => {
  it('50 concurrent orders against a cap that fits 10: exactly 10 are transmitted', async () => {
    const tr = await trader({ max_exposure_usd: '40', max_order_usd: '4' }, 1_000_000_000n);
    const before = posted();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        order(tr, {
          size_shares: '10',
          price_usd: '0.4',
          client_order_id: `c-${i}-${randomBytes(3).toString('hex')}`,
        }),
      ),
    );
    const codes = answers.map((a) => a.statusCode);
    expect(codes.filter((c) => c === 201)).toHaveLength(10);
    expect(codes.filter((c) => c === 403)).toHaveLength(40);
    expect(posted() - before).toBe(10);
  });
});

describe('the time budget', () => {
  it('runs out before the transmit: 504 saying nothing was transmitted, the fee reversed, nothing open', async () => {
    const tr = await trader();
    const balance = await readPrepaidBalance(t.db.db, tr.accountId);
    /** A budget that is spent once the order is admitted (the transmit is the only step after). */
    class SpentAtTransmit extends Deadline {
      override expired(): boolean {
        return true;
      }
      override check(): void {}
    }
    const before = posted();
    const actor = sessionActor(tr);
    const err = await placeOrder(orderDeps(t.deps), actor, orderBody(tr), new SpentAtTransmit(10_000)).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'DEADLINE_EXCEEDED' });
    expect((err as Error).message).toMatch(/Nothing was transmitted/);
    expect(posted()).toBe(before);
    expect((await readPrepaidBalance(t.db.db, tr.accountId)).balanceMicro).toBe(balance.balanceMicro);
    const rows = await t.db.db
      .selectFrom('pm_orders')
      .select('status')
      .where('account_id', '=', tr.accountId)
      .execute();
    expect(rows.map((r) => r.status)).toEqual(['rejected']);
  });
});

describe('cancel-all', () => {
  it('a run that runs out of budget after it started answers what it cancelled, complete: false, and the rest', async () => {
    const tr = await trader();
    const ids: string[] = [];
    for (const price of ['0.11', '0.12', '0.13']) {
      const placed = await order(tr, { price_usd: price });
      expect(placed.statusCode, placed.body).toBe(201);
      ids.push(placed.json().order_id as string);
    }
    /** A budget that lasts for the listing and the first batch of cancels, then is spent. */
    class SpentAfterFirstBatch extends Deadline {
      private looks = 0;
      override expired(): boolean {
        this.looks += 1;
        return this.looks > 2;
      }
    }
    const run = await cancelAllOf(
      orderDeps(t.deps),
      sessionActor(tr),
      { credential_id: tr.credentialId, market: MARKET },
      new SpentAfterFirstBatch(10_000),
      1,
    );
    expect(run).toMatchObject({ venue: 'polymarket', cancelled: 1, complete: false });
    expect(run.failed_order_ids).toHaveLength(2);
    expect([...run.order_ids, ...run.failed_order_ids!].sort()).toEqual([...ids].sort());
    const live = ids.filter((id) => clob.order(id as `0x${string}`)?.status === 'LIVE');
    expect(live.sort()).toEqual([...run.failed_order_ids!].sort());
    const statuses = await t.db.db
      .selectFrom('pm_orders')
      .select(['order_hash', 'status'])
      .where('account_id', '=', tr.accountId)
      .execute();
    expect(statuses.find((r) => r.order_hash === run.order_ids[0])?.status).toBe('cancelled');

    // The next run (through the route, with its whole budget) cancels the rest.
    const rest = await t.app.fastify.inject({
      method: 'DELETE',
      url: `/v1/pm/orders?credential_id=${tr.credentialId}&market=${MARKET}`,
      headers: tr.headers,
    });
    expect(rest.statusCode, rest.body).toBe(200);
    expect(rest.json()).toMatchObject({ cancelled: 2, complete: true });
    expect(rest.json().order_ids.sort()).toEqual([...run.failed_order_ids!].sort());
    expect(ids.every((id) => clob.order(id as `0x${string}`)?.status === 'CANCELED')).toBe(true);
  });
});

/** The deps with a venue that takes each order but answers after the caller stopped waiting. */
function answersTooLate(base: ReturnType<typeof orderDeps>): ReturnType<typeof orderDeps> {
  return {
    ...base,
    clob: {
      ...base.clob,
      postOrder: async (...args: Parameters<typeof base.clob.postOrder>) => {
        clob.knobs.latencyMs = 600;
        try {
          return await base.clob.postOrder(args[0], args[1], args[2], { timeoutMs: 150 });
        } finally {
          clob.knobs.latencyMs = 0;
        }
      },
    },
  };
}

describe('an order whose transmit got no answer', () => {
  it('stays transmitting (503), is never sent again, and the reconciler finds it placed at the venue', async () => {
    const tr = await trader();
    const base = orderDeps(t.deps);
    const slow = answersTooLate(base);
    const actor = sessionActor(tr);
    const before = posted();
    const err = await placeOrder(
      slow,
      actor,
      orderBody(tr, { price_usd: '0.3' }),
      new Deadline(10_000),
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'UNAVAILABLE' });
    const [row] = await t.db.db
      .selectFrom('pm_orders')
      .selectAll()
      .where('account_id', '=', tr.accountId)
      .execute();
    expect(row!.status).toBe('transmitting');
    await new Promise((r) => setTimeout(r, 800)); // the venue handles it after its delay
    expect(clob.order(row!.order_hash as `0x${string}`)?.status).toBe('LIVE');

    // Not yet: the reconciler waits before asking.
    expect(await reconcileTransmitting(base, { warn() {} })).toMatchObject({ placed: 0 });
    const later = { ...base, clock: { now: () => new Date(Date.now() + RECONCILE_AFTER_MS + 1_000) } };
    expect(await reconcileTransmitting(later, { warn() {} })).toMatchObject({ placed: 1 });
    const after = await t.db.db
      .selectFrom('pm_orders')
      .selectAll()
      .where('id', '=', row!.id)
      .executeTakeFirstOrThrow();
    expect(after.status).toBe('placed');
    // Sent once: one POST /order for it, and the venue holds one order.
    expect(posted() - before).toBe(1);
  });

  it('an order that matched at once is found in its trades when the venue no longer shows it', async () => {
    const seller = await trader();
    // Above every resting buy of the market, so it rests; the buy below then matches at once.
    const rest = await order(seller, { action: 'sell', price_usd: '0.97', size_shares: '10' });
    expect(rest.statusCode, rest.body).toBe(201);
    const tr = await trader();
    const base = orderDeps(t.deps);
    const slow = answersTooLate(base);
    const actor = sessionActor(tr);
    const body = orderBody(tr, { price_usd: '0.97' });
    await expect(placeOrder(slow, actor, body, new Deadline(10_000))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
    await new Promise((r) => setTimeout(r, 800)); // the venue matches it after its delay
    const [row] = await t.db.db
      .selectFrom('pm_orders')
      .selectAll()
      .where('account_id', '=', tr.accountId)
      .execute();
    expect(row!.status).toBe('transmitting');
    expect(clob.order(row!.order_hash as `0x${string}`)?.status).toBe('MATCHED');
    const charged = (await readPrepaidBalance(t.db.db, tr.accountId)).balanceMicro;

    clob.knobs.forgetMatchedOrders = true;
    try {
      const hidden = await base.clob.getOrder(
        {
          address: getAddress(tr.wallet),
          creds: await t.deps.pmVenues!.polymarket.deriveApiCredentials(tr.key),
        },
        row!.order_hash!,
      );
      expect(hidden).toBeNull();
      const later = { ...base, clock: { now: () => new Date(Date.now() + RECONCILE_AFTER_MS + 1_000) } };
      expect(await reconcileTransmitting(later, { warn() {} })).toMatchObject({ placed: 1, closed: 0 });
    } finally {
      clob.knobs.forgetMatchedOrders = false;
    }
    const after = await t.db.db
      .selectFrom('pm_orders')
      .selectAll()
      .where('id', '=', row!.id)
      .executeTakeFirstOrThrow();
    expect(after).toMatchObject({ status: 'placed', venue_status: 'matched' });
    // Its fee stays charged: the order was placed.
    expect((await readPrepaidBalance(t.db.db, tr.accountId)).balanceMicro).toBe(charged);
    expect(charged).toBeLessThan(100_000_000n);
  });

  it('an order the venue never got is closed after a while and its fee reversed', async () => {
    const tr = await trader();
    const balance = await readPrepaidBalance(t.db.db, tr.accountId);
    const base = orderDeps(t.deps);
    // The venue fails the post itself (a 503 before it handles anything).
    const failing = {
      ...base,
      clob: {
        ...base.clob,
        postOrder: async (...args: Parameters<typeof base.clob.postOrder>) => {
          clob.knobs.serverError = 503;
          try {
            return await base.clob.postOrder(...args);
          } finally {
            clob.knobs.serverError = null;
          }
        },
      },
    };
    const actor = sessionActor(tr);
    const body = orderBody(tr, { price_usd: '0.2' });
    await expect(placeOrder(failing, actor, body, new Deadline(10_000))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
    const [row] = await t.db.db
      .selectFrom('pm_orders')
      .selectAll()
      .where('account_id', '=', tr.accountId)
      .execute();
    expect(row!.status).toBe('transmitting');
    expect(clob.order(row!.order_hash as `0x${string}`)).toBeUndefined();
    // The fee stays charged and the exposure held while the order is unknown.
    expect((await readPrepaidBalance(t.db.db, tr.accountId)).balanceMicro).toBeLessThan(balance.balanceMicro);
    const soon = { ...base, clock: { now: () => new Date(Date.now() + RECONCILE_AFTER_MS + 1_000) } };
    expect(await reconcileTransmitting(soon, { warn() {} })).toMatchObject({ placed: 0, closed: 0 });
    const much = { ...base, clock: { now: () => new Date(Date.now() + UNKNOWN_AFTER_MS + 60_000) } };
    expect(await reconcileTransmitting(much, { warn() {} })).toMatchObject({ closed: 1 });
    const closed = await t.db.db
      .selectFrom('pm_orders')
      .select('status')
      .where('id', '=', row!.id)
      .executeTakeFirstOrThrow();
    expect(closed.status).toBe('rejected');
    expect((await readPrepaidBalance(t.db.db, tr.accountId)).balanceMicro).toBe(balance.balanceMicro);
  });
});

describe('one Idempotency-Key, one order', () => {
  const keyed = (tr: Trader, key: string, over: Record<string, unknown> = {}) =>
    t.app.fastify.inject({
      method: 'POST',
      url: '/v1/pm/orders',
      headers: { ...tr.headers, 'idempotency-key': key },
      payload: { ...orderBody(tr), ...over },
    });
  const ordersOf = (tr: Trader) =>
    t.db.db.selectFrom('pm_orders').selectAll().where('account_id', '=', tr.accountId).execute();
  const feesOf = async (tr: Trader) =>
    (
      await t.db.db
        .selectFrom('ledger_groups')
        .select('id')
        .where('account_id', '=', tr.accountId)
        .where('settlement_id', 'like', 'fee:pm_order:%')
        .execute()
    ).length;

  it('100 concurrent requests with one key place one order and charge one fee; a retry replays it, another body is refused', async () => {
    const tr = await trader();
    const before = posted();
    const balance = await readPrepaidBalance(t.db.db, tr.accountId);
    const answers = await Promise.all(Array.from({ length: 100 }, () => keyed(tr, 'order-key-1')));
    const statuses = answers.map((r) => r.statusCode);
    // One was admitted and transmitted; the others replayed it, or were told it was in flight.
    expect(
      statuses.filter((c) => c !== 201 && c !== 409),
      JSON.stringify(answers.map((r) => r.body)),
    ).toEqual([]);
    const placed = answers.filter((r) => r.statusCode === 201).map((r) => r.json<{ order_id: string }>());
    expect(placed.length).toBeGreaterThanOrEqual(1);
    expect(new Set(placed.map((p) => p.order_id)).size).toBe(1);
    for (const r of answers.filter((a) => a.statusCode === 409))
      expect(expectErrorBody(r, 409, 'IDEMPOTENCY_CONFLICT').message).toContain('in flight');
    expect(posted() - before).toBe(1);
    expect(await ordersOf(tr)).toHaveLength(1);
    expect(await feesOf(tr)).toBe(1);
    const fee = BigInt((await ordersOf(tr))[0]!.fee_micro);
    expect((await readPrepaidBalance(t.db.db, tr.accountId)).balanceMicro).toBe(balance.balanceMicro - fee);

    // Later, the same key: the first answer again, marked as a replay; nothing sent.
    const again = await keyed(tr, 'order-key-1');
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(placed[0]);
    // The same key with another order: refused, nothing sent or charged.
    const other = await keyed(tr, 'order-key-1', { price_usd: '0.3' });
    expectErrorBody(other, 422, 'IDEMPOTENCY_CONFLICT');
    expect(posted() - before).toBe(1);
    expect(await feesOf(tr)).toBe(1);
    // A cancel under a key replays too: the venue is asked once.
    const cancel = () =>
      t.app.fastify.inject({
        method: 'DELETE',
        url: `/v1/pm/orders/polymarket/${placed[0]!.order_id}?credential_id=${tr.credentialId}`,
        headers: { ...tr.headers, 'idempotency-key': 'cancel-key-1' },
      });
    const first = await cancel();
    expect(first.statusCode, first.body).toBe(200);
    const cancels = clob.requests.filter((r) => r.method === 'DELETE').length;
    const second = await cancel();
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual(first.json());
    expect(clob.requests.filter((r) => r.method === 'DELETE').length).toBe(cancels);
  });

  it('a venue that times out once while the SDK retries: one order at the venue, one fee, and the SDK gets it', async () => {
    const tr = await trader();
    const port = t.deps.pmVenues!.polymarket;
    const postOrder = port.postOrder.bind(port);
    let timedOut = 0;
    // The first transmit reaches the venue, which answers after the caller stopped waiting.
    port.postOrder = async (auth, signed, options, call) => {
      if (timedOut > 0) return postOrder(auth, signed, options, call);
      timedOut += 1;
      clob.knobs.latencyMs = 400;
      try {
        return await postOrder(auth, signed, options, { timeoutMs: 100 });
      } finally {
        clob.knobs.latencyMs = 0;
      }
    };
    const address = await t.app.fastify.listen({ host: '127.0.0.1', port: 0 });
    try {
      const before = posted();
      const exchanges: number[] = [];
      const traced = new Purser({
        baseUrl: address,
        token: tr.headers.authorization.slice(7),
        retries: 6,
        onExchange: (e) => exchanges.push(e.status),
      });
      const { data } = await traced.api.POST('/v1/pm/orders', { body: orderBody(tr) });
      expect(timedOut).toBe(1);
      // The first attempt was 503 (no answer from the venue); a retry under the same key found the
      // order at the venue by its hash.
      expect(exchanges[0]).toBe(503);
      expect(exchanges.at(-1)).toBe(201);
      const [row] = await ordersOf(tr);
      expect(data).toMatchObject({ order_id: row!.order_hash, venue: 'polymarket' });
      expect(row!.status).toBe('placed');
      expect(clob.order(row!.order_hash as `0x${string}`)?.status).toBe('LIVE');
      expect(posted() - before).toBe(1);
      expect(await feesOf(tr)).toBe(1);
    } finally {
      port.postOrder = postOrder;
    }
  });

  it('prepare and submit replay under their keys: one prepared order, one transmit', async () => {
    const tr = await trader({}, 100_000_000n, 'client_signed');
    const body = {
      wallet: tr.wallet,
      credential_id: tr.credentialId,
      condition_id: MARKET,
      token_id: YES,
      action: 'buy',
      price_usd: '0.4',
      size_shares: '10',
    };
    const prep = () =>
      t.app.fastify.inject({
        method: 'POST',
        url: '/v1/pm/orders/prepare',
        headers: { ...tr.headers, 'idempotency-key': 'prep-1' },
        payload: body,
      });
    const [a, b] = await Promise.all([prep(), prep()]);
    expect([a.statusCode, b.statusCode]).toEqual([201, 201]);
    expect(a.json()).toEqual(b.json());
    expect(await ordersOf(tr)).toHaveLength(1);
    expect(await feesOf(tr)).toBe(1);
    const p = a.json<{ prepare_id: string; typed_data: Parameters<typeof signTyped>[1] }>();
    const signature = await signTyped(tr.key, p.typed_data);
    const before = posted();
    const sub = () =>
      t.app.fastify.inject({
        method: 'POST',
        url: '/v1/pm/orders/submit',
        headers: { ...tr.headers, 'idempotency-key': 'sub-1' },
        payload: { prepare_id: p.prepare_id, signature },
      });
    const first = await sub();
    expect(first.statusCode, first.body).toBe(201);
    const second = await sub();
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json()).toEqual(first.json());
    expect(posted() - before).toBe(1);
  });
});

/** Signs typed data as a wallet does with eth_signTypedData_v4 (uints as strings). */
async function signTyped(
  key: `0x${string}`,
  typed: { domain: object; types: Record<string, unknown>; message: object },
): Promise<string> {
  const { Wallet } = await import('@ethersproject/wallet');
  const { EIP712Domain: _, ...types } = typed.types as Record<string, Array<{ name: string; type: string }>>;
  return new Wallet(key)._signTypedData(typed.domain, types, typed.message);
}

describe('the client-signed flow', () => {
  async function clientSigned(policy: Record<string, unknown> = {}) {
    const tr = await trader(policy, 100_000_000n, 'client_signed');
    return { tr, key: tr.key };
  }

  const prepare = (tr: Trader, over: Record<string, unknown> = {}) =>
    t.app.fastify.inject({
      method: 'POST',
      url: '/v1/pm/orders/prepare',
      headers: tr.headers,
      payload: {
        wallet: tr.wallet,
        credential_id: tr.credentialId,
        condition_id: OTHER_MARKET,
        token_id: OTHER_YES,
        action: 'sell',
        price_usd: '0.655',
        size_shares: '12.5',
        ...over,
      },
    });
  const submit = (tr: Trader, payload: object) =>
    t.app.fastify.inject({ method: 'POST', url: '/v1/pm/orders/submit', headers: tr.headers, payload });

  it('prepares with every check, the signed order is submitted and verified by the venue, once', async () => {
    const { tr, key } = await clientSigned();
    const before = await readPrepaidBalance(t.db.db, tr.accountId);
    const prepared = await prepare(tr, { client_order_id: 'cs-1' });
    expect(prepared.statusCode, prepared.body).toBe(201);
    const p = prepared.json();
    expect(p).toMatchObject({
      venue: 'polymarket',
      client_order_id: 'cs-1',
      cost_usd: '8.1875',
      policy_version: 1,
    });
    expect(p.typed_data.domain).toMatchObject({
      name: 'Polymarket CTF Exchange',
      version: '2',
      chainId: 137,
    });
    expect(Date.parse(p.expires_at)).toBeGreaterThan(Date.now());
    // Reserved and charged at prepare.
    expect((await readPrepaidBalance(t.db.db, tr.accountId)).balanceMicro).toBeLessThan(before.balanceMicro);

    const wrongKey = await signTyped(generatePrivateKey(), p.typed_data);
    const sent = posted();
    const bad = await submit(tr, { prepare_id: p.prepare_id, signature: wrongKey });
    expectErrorBody(bad, 400, 'INVALID_REQUEST');
    expect(bad.json().message).toMatch(/recovers to/);
    expect(posted()).toBe(sent);

    const signature = await signTyped(key, p.typed_data);
    const ok = await submit(tr, { prepare_id: p.prepare_id, signature });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(clob.order(ok.json().order_id)).toMatchObject({ status: 'LIVE', side: 'SELL', price: '0.655' });
    expectErrorBody(await submit(tr, { prepare_id: p.prepare_id, signature }), 404, 'NOT_FOUND');
    expect(posted() - sent).toBe(1);

    // Listed, filled in part and journaled like a hosted order.
    const listed = await t.app.fastify.inject({
      method: 'GET',
      url: `/v1/pm/orders?credential_id=${tr.credentialId}`,
      headers: tr.headers,
    });
    expect(listed.json().orders.map((o: { order_id: string }) => o.order_id)).toContain(ok.json().order_id);
    clob.fill(ok.json().order_id, '2.5');
    const synced = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/pm/fills/sync',
      headers: tr.headers,
      payload: { wallet: tr.wallet, credential_id: tr.credentialId },
    });
    expect(synced.statusCode, synced.body).toBe(200);
    expect(synced.json()).toMatchObject({ journaled: 1, complete: true });
  });

  it('an unsigned prepared order is swept after expires_at: exposure released, fee reversed, submit 404', async () => {
    const { tr, key } = await clientSigned({ max_exposure_usd: '10' });
    const before = await readPrepaidBalance(t.db.db, tr.accountId);
    const p = (await prepare(tr)).json();
    expectErrorBody(await prepare(tr, { size_shares: '5' }), 403, 'POLICY_VIOLATION'); // 8.19 + 3.28 > 10
    const later = {
      ...orderDeps(t.deps),
      clock: { now: () => new Date(Date.now() + PREPARE_TTL_MS + 1_000) },
    };
    expect(await sweepPrepared(later)).toBeGreaterThanOrEqual(1);
    expect((await readPrepaidBalance(t.db.db, tr.accountId)).balanceMicro).toBe(before.balanceMicro);
    expectErrorBody(
      await submit(tr, { prepare_id: p.prepare_id, signature: await signTyped(key, p.typed_data) }),
      404,
      'NOT_FOUND',
    );
    expect((await prepare(tr, { size_shares: '5' })).statusCode).toBe(201);
  });

  it('each flow refuses the other kind of credential', async () => {
    const { tr } = await clientSigned();
    expectErrorBody(
      await order(tr, { condition_id: OTHER_MARKET, token_id: OTHER_YES }),
      400,
      'INVALID_REQUEST',
    );
    const hosted = await trader();
    expectErrorBody(await prepare(hosted), 400, 'INVALID_REQUEST');
  });
});

describe('POST /v1/pm/fills/sync', () => {
  const sync = (tr: Trader) =>
    t.app.fastify.inject({
      method: 'POST',
      url: '/v1/pm/fills/sync',
      headers: tr.headers,
      payload: { wallet: tr.wallet, credential_id: tr.credentialId },
    });

  it('journals each fill once as a balanced group; the position counts in the exposure floor', async () => {
    const tr = await trader({ max_exposure_usd: '10' });
    const placed = (await order(tr, { size_shares: '10', price_usd: '0.5' })).json(); // 5 USD open
    clob.fill(placed.order_id, '4'); // 4 shares filled: 2 USD held, 3 USD still open
    const first = await sync(tr);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ journaled: 1, skipped: 0, complete: true });
    const again = await sync(tr);
    expect(again.json()).toMatchObject({ journaled: 0, skipped: 1 });

    const { rows } = await sql<{ ledger_account: string; asset: string; total: string }>`
      SELECT e.ledger_account, e.asset, sum(e.amount)::text AS total FROM ledger_entries e
      JOIN ledger_groups g ON g.id = e.group_id
      WHERE g.account_id = ${tr.accountId} AND g.kind = 'pm.fill'
      GROUP BY e.ledger_account, e.asset ORDER BY e.ledger_account, e.asset`.execute(t.db.db);
    const wallet = rows.filter((r) => r.ledger_account === `wallet:137:${tr.wallet}`);
    expect(wallet.find((r) => r.asset.includes('/erc1155:'))?.total).toBe('4000000'); // 4 shares in
    expect(BigInt(wallet.find((r) => r.asset.includes('/erc20:'))!.total)).toBeLessThanOrEqual(-2_000_000n); // 2 USD out (+ fee)
    // Balanced: every asset sums to zero over the group's accounts.
    const byAsset = new Map<string, bigint>();
    for (const r of rows) byAsset.set(r.asset, (byAsset.get(r.asset) ?? 0n) + BigInt(r.total));
    expect([...byAsset.values()].every((v) => v === 0n)).toBe(true);
    const group = await t.db.db
      .selectFrom('ledger_groups')
      .select('policy_hash')
      .where('account_id', '=', tr.accountId)
      .where('kind', '=', 'pm.fill')
      .executeTakeFirstOrThrow();
    expect(group.policy_hash).toMatch(/^sha256:[0-9a-f]{64}$/);

    // The wallet's statement shows the fill: shares in, pUSD out.
    const period = new Date().toISOString().slice(0, 7);
    const statement = await t.app.fastify.inject({
      method: 'GET',
      url: `/v1/statements?wallet=${tr.wallet}&period=${period}`,
      headers: tr.headers,
    });
    expect(statement.statusCode, statement.body).toBe(200);
    const balances = statement.json().statement.balances as Array<{
      ledger_account: string;
      asset: string;
      closing: string;
    }>;
    const mine = balances.filter((b) => b.ledger_account === `wallet:137:${tr.wallet}`);
    expect(mine.find((b) => b.asset.includes('/erc1155:'))?.closing).toBe('4000000');
    expect(BigInt(mine.find((b) => b.asset.includes('/erc20:'))!.closing)).toBeLessThan(0n);
    const exported = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/account/export',
      headers: tr.headers,
    });
    expect(exported.json().pm_positions).toEqual([
      {
        venue: 'polymarket',
        wallet: tr.wallet,
        condition_id: MARKET,
        token_id: YES,
        shares: '4',
        net_cost_usd: '2',
        fills: 1,
      },
    ]);
    // Exposure: 3 open + 2 held (+ fee) = 5; a 5 USD order no longer fits under 10.
    expectErrorBody(await order(tr, { size_shares: '10', price_usd: '0.51' }), 403, 'POLICY_VIOLATION');
    expect((await order(tr, { size_shares: '5', price_usd: '0.5' })).statusCode).toBe(201);
  });

  it('two concurrent syncs journal each fill once', async () => {
    const tr = await trader();
    const a = (await order(tr, { size_shares: '10', price_usd: '0.3' })).json();
    const b = (await order(tr, { size_shares: '6', price_usd: '0.2' })).json();
    clob.fill(a.order_id);
    clob.fill(b.order_id, '5');
    const [x, y] = await Promise.all([sync(tr), sync(tr)]);
    expect(x.json().journaled + y.json().journaled).toBe(2);
    const groups = await t.db.db
      .selectFrom('ledger_groups')
      .select('id')
      .where('account_id', '=', tr.accountId)
      .where('kind', '=', 'pm.fill')
      .execute();
    expect(groups).toHaveLength(2);
    const filled = await t.db.db
      .selectFrom('pm_orders')
      .select(['order_hash', 'status', 'filled_micro'])
      .where('account_id', '=', tr.accountId)
      .execute();
    expect(filled.find((o) => o.order_hash === a.order_id)).toMatchObject({
      status: 'filled',
      filled_micro: '10000000',
    });
    expect(filled.find((o) => o.order_hash === b.order_id)).toMatchObject({
      status: 'placed',
      filled_micro: '5000000',
    });
  });

  it("refuses a wallet that is not the credential's funder", async () => {
    const tr = await trader();
    const res = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/pm/fills/sync',
      headers: tr.headers,
      payload: { wallet: privateKeyToAddress(generatePrivateKey()), credential_id: tr.credentialId },
    });
    expectErrorBody(res, 400, 'INVALID_REQUEST');
    expect(res.json().message).toMatch(/^wallet/);
  });
});

describe('POST /v1/pm/orders under random bodies', () => {
  it('answers 201 or a clean refusal, never 5xx, and transmits only what it answers 201 for', async () => {
    const tr = await trader({ max_exposure_usd: '100000', max_order_usd: '100000' }, 1_000_000_000n);
    const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
    const garbage = fc.oneof(fc.string({ maxLength: 30 }), fc.integer(), fc.constant(null), fc.boolean());
    const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });
    const bodies = fc.record({
      wallet: maybe(
        fc.oneof(fc.constant(tr.wallet), fc.constant(privateKeyToAddress(generatePrivateKey())), garbage),
      ),
      credential_id: maybe(fc.oneof(fc.constant(tr.credentialId), fc.uuid(), garbage)),
      condition_id: maybe(fc.oneof(fc.constant(MARKET), fc.constant(OTHER_MARKET), garbage)),
      token_id: maybe(fc.oneof(fc.constantFrom(YES, NO, OTHER_YES, '999'), garbage)),
      action: maybe(fc.oneof(fc.constantFrom('buy', 'sell'), garbage)),
      price_usd: maybe(
        fc.oneof(fc.constantFrom('0.5', '0.01', '0.99', '0.123', '1', '0', '.5', '0.5000001'), garbage),
      ),
      size_shares: maybe(fc.oneof(fc.constantFrom('5', '10.5', '0', '1.234', '100000000000'), garbage)),
      client_order_id: maybe(fc.oneof(fc.stringMatching(/^[a-z0-9]{1,12}$/), garbage)),
    });
    await fc.assert(
      fc.asyncProperty(bodies, async (raw) => {
        const payload = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined));
        const before = posted();
        const res = await t.app.fastify.inject({
          method: 'POST',
          url: '/v1/pm/orders',
          headers: tr.headers,
          payload,
        });
        expect(res.statusCode, res.body).toBeLessThan(500);
        expect([201, 400, 402, 403, 404, 409, 422, 429]).toContain(res.statusCode);
        if (res.statusCode === 201) expect(posted()).toBe(before + 1);
        else if (res.statusCode !== 422) expect(posted()).toBe(before);
      }),
      { numRuns: 120, seed },
    );
  });
});
