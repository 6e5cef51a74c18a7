// POST /v1/intents admission through the route on the devnet's registry and price references:
// every status of the spec's table (but the queue refusal), the reads, cancel (reservation
// released, fee reversed), wallet pins, supervisor cancels, tenant isolation and bad bodies.

import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fundPrepaid } from '../../../test/support/prepaid.ts';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { countRoundTrips } from '../../../test/support/db.ts';
import { devnetDeps } from '../../../test/support/devnet-deps.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import {
  bearer,
  createAccountWithSession,
  createKey,
  randomAddress,
} from '../../../test/support/identity.ts';
import { createViemChainPort } from '../../adapters/chain/viem.ts';
import { testConfig } from '../../config.ts';
import { formatUsd } from '../../core/money.ts';
import { devnetRpcUrls } from '../../devnet/devnet.ts';
import { readPrepaidBalance } from '../billing/index.ts';
import { readSpendUsage } from '../policies/index.ts';
import type { TokenRegistry } from '../registry/index.ts';
import type { Intent } from './service.ts';

const devnet = inject('devnet');
const USD = 1_000_000n;
const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE';
let t: TestApp;
let registry: TokenRegistry;
let fee: bigint;
let market: Awaited<ReturnType<typeof devnetDeps>>;

beforeAll(async () => {
  const config = testConfig();
  market = await devnetDeps(devnet, config, createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) }));
  t = await createTestApp({ deps: { ...market, devnet } });
  registry = market.tokenRegistry!;
  fee = t.deps.config.fees.conversionIntentMicro;
});
afterAll(async () => {
  await t?.close();
});

const token = (symbol: string, chainId = 8453) => registry.findToken(chainId, symbol)!.address;

function req(method: 'GET' | 'POST' | 'PUT', url: string, auth: string, payload?: unknown, headers = {}) {
  return t.app.fastify.inject({
    method,
    url,
    headers: { ...bearer(auth), ...headers },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

const fund = (accountId: string, micro: bigint) => fundPrepaid(t.db.db, t.deps.clock, accountId, micro);

/** A funded account with a policy for a fresh wallet (platform defaults plus `sections`). */
async function setup(sections: Record<string, unknown> = {}, chainId = 8453, funds = 10n * USD) {
  const acc = await createAccountWithSession(t.db.db);
  if (funds > 0n) await fund(acc.accountId, funds);
  const wallet = randomAddress().toLowerCase();
  const put = await req('PUT', '/v1/policies', acc.sessionToken, {
    version: 1,
    wallet,
    chain_id: chainId,
    ...sections,
  });
  expect(put.statusCode, put.body).toBe(201);
  return { ...acc, wallet, policy: put.json<{ version: number; hash: string }>() };
}

const usdcAmount = (usd: number) => String(BigInt(usd) * USD);

const conversion = (wallet: string, extra: Record<string, unknown> = {}) => ({
  wallet,
  kind: 'conversion',
  sell_token: token('USDC'),
  buy_token: token('WETH'),
  sell_amount: usdcAmount(10),
  ...extra,
});

const balanceOf = async (accountId: string) => (await readPrepaidBalance(t.db.db, accountId)).balanceMicro;
const intentCount = async (accountId: string) =>
  (await t.db.db.selectFrom('intents').select('id').where('account_id', '=', accountId).execute()).length;

describe('POST /v1/intents', () => {
  it('admits a conversion: planned, policy pinned, fee debited, reservation held, event and job written', async () => {
    const acc = await setup();
    const res = await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet));
    expect(res.statusCode, res.body).toBe(201);
    const intent = res.json<Intent>();
    expect(intent).toMatchObject({
      wallet: acc.wallet,
      kind: 'conversion',
      status: 'planned',
      policy_version: acc.policy.version,
      policy_hash: acc.policy.hash,
      report: {},
    });
    expect(intent.params).toMatchObject({
      chain_id: 8453,
      sell_token: token('USDC').toLowerCase(),
      buy_token: token('WETH').toLowerCase(),
      sell_amount: usdcAmount(10),
      max_slippage_bps: 50,
      value_usd: '10',
    });
    expect(intent.params.venues.length).toBeGreaterThan(0);
    expect(await balanceOf(acc.accountId)).toBe(10n * USD - fee);
    const usage = await readSpendUsage(t.db.db, t.deps.clock, acc.accountId, acc.wallet);
    expect(usage).toEqual({ dayMicroUsd: 10n * USD, hourCount: 1 });
    const events = await t.db.db
      .selectFrom('events')
      .select('kind')
      .where('subject', '=', intent.id)
      .execute();
    expect(events.map((e) => e.kind)).toEqual(['intent.planned']);
    const jobs = await t.db.db
      .selectFrom('jobs')
      .select(['name', 'payload'])
      .where('singleton_key', '=', intent.id)
      .execute();
    expect(jobs).toEqual([{ name: 'intents.execute', payload: { intent_id: intent.id } }]);
    const audit = await t.db.db
      .selectFrom('audit_log')
      .select('action')
      .where('subject', '=', intent.id)
      .execute();
    expect(audit.map((a) => a.action)).toEqual(['intent.planned']);
    expect((await req('GET', `/v1/intents/${intent.id}`, acc.sessionToken)).json()).toEqual(intent);
  });

  it('admits a conversion naming its tokens by symbol, in any case, and stores their addresses', async () => {
    const acc = await setup();
    const res = await req(
      'POST',
      '/v1/intents',
      acc.sessionToken,
      conversion(acc.wallet, { sell_token: 'usdc', buy_token: 'WETH' }),
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json<Intent>().params).toMatchObject({
      sell_token: token('USDC').toLowerCase(),
      buy_token: token('WETH').toLowerCase(),
    });
    // A symbol the chain does not list is named, with where to find the chain's tokens.
    const unknown = await req(
      'POST',
      '/v1/intents',
      acc.sessionToken,
      conversion(acc.wallet, { buy_token: 'NOPE' }),
    );
    expect(expectErrorBody(unknown, 400, 'INVALID_REQUEST').message).toMatch(
      /buy_token NOPE is not a registry token of chain 8453.*GET \/v1\/tokens/,
    );
    // A gas top-up must sell the wrapped native token, however it is named.
    const gas = await req('POST', '/v1/intents', acc.sessionToken, {
      wallet: acc.wallet,
      kind: 'gas_topup',
      sell_token: 'USDC',
      buy_token: NATIVE,
      sell_amount: '1000',
    });
    expect(expectErrorBody(gas, 400, 'INVALID_REQUEST').message).toMatch(/wrapped native/);
    expect(await intentCount(acc.accountId)).toBe(1);
  });

  it('admits a gas top-up of wrapped native (named by symbol) valued through the cached ETH/USD reference', async () => {
    const acc = await setup();
    const res = await req('POST', '/v1/intents', acc.sessionToken, {
      wallet: acc.wallet,
      kind: 'gas_topup',
      sell_token: 'WETH',
      buy_token: NATIVE,
      sell_amount: '100000000000000', // 0.0001 ETH
    });
    expect(res.statusCode, res.body).toBe(201);
    const intent = res.json<Intent>();
    expect(intent.kind).toBe('gas_topup');
    expect(intent.params.buy_token).toBe(NATIVE.toLowerCase());
    expect(intent.params.sell_token).toBe(token('WETH').toLowerCase());
    const valued = t.deps.prices!.valueUsdMicro(8453, token('WETH'), 100_000_000_000_000n);
    if (!valued.ok) throw new Error('the devnet ETH/USD reference is not usable');
    expect(intent.params.value_usd).toBe(formatUsd(valued.usdMicro));
    expect(valued.usdMicro).toBeGreaterThan(0n);
  });

  it('admits a conversion on the testbed chain (the executor aborts it UNSUPPORTED_KIND)', async () => {
    const acc = await setup({}, 84532);
    const res = await req('POST', '/v1/intents', acc.sessionToken, {
      ...conversion(acc.wallet),
      sell_token: token('USDC', 84532),
      buy_token: token('WETH', 84532),
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json<Intent>()).toMatchObject({ status: 'planned', params: { chain_id: 84532, venues: [] } });
  });

  it('refuses a sell leg that is not a USD stable without a price reference (503), nothing stored', async () => {
    // The same devnet market without price references: only a stable leg can be valued.
    const { prices: _unused, ...withoutPrices } = market;
    const bare = await createTestApp({ deps: { ...withoutPrices, devnet } });
    try {
      const acc = await createAccountWithSession(bare.db.db);
      await fundPrepaid(bare.db.db, bare.deps.clock, acc.accountId, USD);
      const wallet = randomAddress().toLowerCase();
      const send = (method: 'PUT' | 'POST', url: string, payload: object) =>
        bare.app.fastify.inject({ method, url, headers: bearer(acc.sessionToken), payload });
      expect((await send('PUT', '/v1/policies', { version: 1, wallet, chain_id: 8453 })).statusCode).toBe(
        201,
      );
      const res = await send('POST', '/v1/intents', {
        ...conversion(wallet),
        sell_token: token('WETH'),
        buy_token: token('USDC'),
        sell_amount: '1000000000000000',
      });
      expect(expectErrorBody(res, 503, 'UNAVAILABLE').message).toMatch(/price reference .*WETH/);
      const rows = await bare.db.db
        .selectFrom('intents')
        .select('id')
        .where('account_id', '=', acc.accountId)
        .execute();
      expect(rows).toEqual([]);
      // A USD stable sell leg is valued 1:1 without any reference.
      expect((await send('POST', '/v1/intents', conversion(wallet))).statusCode).toBe(201);
    } finally {
      await bare.close();
    }
  });

  it('404 with next to PUT /v1/policies for a wallet without a policy', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const res = await req('POST', '/v1/intents', acc.sessionToken, conversion(randomAddress()));
    const body = expectErrorBody(res, 404, 'NOT_FOUND');
    expect(body.next).toEqual([expect.objectContaining({ method: 'PUT', path: '/v1/policies' })]);
  });

  it('400 for a token the chain does not list, and for a gas top-up that does not sell wrapped native', async () => {
    const acc = await setup();
    const stranger = randomAddress();
    const bad = await req(
      'POST',
      '/v1/intents',
      acc.sessionToken,
      conversion(acc.wallet, { buy_token: stranger }),
    );
    expect(expectErrorBody(bad, 400, 'INVALID_REQUEST').message).toContain(`buy_token ${stranger}`);
    const polygon = await req(
      'POST',
      '/v1/intents',
      acc.sessionToken,
      conversion(acc.wallet, { sell_token: token('PUSD', 137) }),
    );
    expect(expectErrorBody(polygon, 400, 'INVALID_REQUEST').message).toMatch(
      /not a registry token of chain 8453/,
    );
    const gas = await req('POST', '/v1/intents', acc.sessionToken, {
      wallet: acc.wallet,
      kind: 'gas_topup',
      sell_token: token('USDC'),
      buy_token: NATIVE,
      sell_amount: '1000',
    });
    expect(expectErrorBody(gas, 400, 'INVALID_REQUEST').message).toMatch(/wrapped native/);
    expect(await intentCount(acc.accountId)).toBe(0);
    expect(await balanceOf(acc.accountId)).toBe(10n * USD);
  });

  it('402 when the prepaid balance does not cover the fee: no intent, no reservation', async () => {
    const acc = await setup({}, 8453, 0n);
    const res = await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet));
    expectErrorBody(res, 402, 'PAYMENT_REQUIRED');
    expect(await intentCount(acc.accountId)).toBe(0);
    expect(await readSpendUsage(t.db.db, t.deps.clock, acc.accountId, acc.wallet)).toEqual({
      dayMicroUsd: 0n,
      hourCount: 0,
    });
  });

  it('403 EXECUTION_DISABLED after the account panics; cancel still works', async () => {
    const acc = await setup();
    const planned = (
      await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet))
    ).json<Intent>();
    const panic = await req('POST', '/v1/account/panic', acc.sessionToken, {});
    expect(panic.statusCode, panic.body).toBe(200);
    expectErrorBody(
      await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet)),
      403,
      'EXECUTION_DISABLED',
    );
    const cancelled = await req('POST', `/v1/intents/${planned.id}/cancel`, acc.sessionToken);
    expect(cancelled.statusCode, cancelled.body).toBe(200);
  });

  it('422 POLICY_VIOLATION naming the rule: slippage, venues, token allowlist', async () => {
    const acc = await setup({ spend: { token_allowlist: ['USDC', 'WETH'] } });
    const slip = await req(
      'POST',
      '/v1/intents',
      acc.sessionToken,
      conversion(acc.wallet, { max_slippage_bps: 51 }),
    );
    expect(expectErrorBody(slip, 422, 'POLICY_VIOLATION').message).toMatch(/execution\.max_slippage_bps/);
    const venue = await req(
      'POST',
      '/v1/intents',
      acc.sessionToken,
      conversion(acc.wallet, { venues: ['polymarket'] }),
    );
    expect(expectErrorBody(venue, 422, 'POLICY_VIOLATION').message).toMatch(/execution\.venues/);
    const eurc = await req(
      'POST',
      '/v1/intents',
      acc.sessionToken,
      conversion(acc.wallet, { buy_token: token('EURC') }),
    );
    expect(expectErrorBody(eurc, 422, 'POLICY_VIOLATION').message).toMatch(/spend\.token_allowlist/);
    expect(await intentCount(acc.accountId)).toBe(0);
    expect(await balanceOf(acc.accountId)).toBe(10n * USD);
  });

  it('422 for gas top-ups the policy refuses: above gas.max_top_up_usd, or gas disabled', async () => {
    const topUp = (wallet: string) => ({
      wallet,
      kind: 'gas_topup',
      sell_token: token('WETH'),
      buy_token: NATIVE,
      sell_amount: '1000000000000000', // 0.001 ETH, more than a cent at any devnet price
    });
    const capped = await setup({ gas: { max_top_up_usd: '0.01' } });
    const over = await req('POST', '/v1/intents', capped.sessionToken, topUp(capped.wallet));
    expect(expectErrorBody(over, 422, 'POLICY_VIOLATION').message).toMatch(/gas\.max_top_up_usd/);
    const off = await setup({ gas: { enabled: false } });
    const disabled = await req('POST', '/v1/intents', off.sessionToken, topUp(off.wallet));
    expect(expectErrorBody(disabled, 422, 'POLICY_VIOLATION').message).toMatch(/gas\.enabled/);
  });

  it('422 BUDGET_EXCEEDED naming spend.velocity_per_hour once the hour is used up', async () => {
    const acc = await setup({ spend: { velocity_per_hour: 1 } });
    expect((await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet))).statusCode).toBe(201);
    const second = await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet));
    const body = expectErrorBody(second, 422, 'BUDGET_EXCEEDED');
    expect(body.message).toBe('Refused by spend.velocity_per_hour: the limit is 1, the action would use 2.');
  });

  it('refuses venues on the testbed chain, where the policy allows none', async () => {
    const acc = await setup({}, 84532);
    const res = await req('POST', '/v1/intents', acc.sessionToken, {
      ...conversion(acc.wallet),
      sell_token: token('USDC', 84532),
      buy_token: token('WETH', 84532),
      venues: ['devnet-amm'],
    });
    expect(expectErrorBody(res, 422, 'POLICY_VIOLATION').message).toMatch(/execution\.venues/);
  });

  it('narrows venues and slippage within the policy', async () => {
    const acc = await setup();
    const policyVenues = (
      await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet))
    ).json<Intent>().params.venues;
    const res = await req(
      'POST',
      '/v1/intents',
      acc.sessionToken,
      conversion(acc.wallet, { venues: [policyVenues[0]], max_slippage_bps: 20 }),
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json<Intent>().params).toMatchObject({ venues: [policyVenues[0]], max_slippage_bps: 20 });
  });

  it('422 BUDGET_EXCEEDED naming the cap: per transaction, daily, and no USD stable leg', async () => {
    const acc = await setup({ spend: { per_tx_usd: '20', daily_usd: '30' } });
    const big = await req(
      'POST',
      '/v1/intents',
      acc.sessionToken,
      conversion(acc.wallet, { sell_amount: usdcAmount(25) }),
    );
    expect(expectErrorBody(big, 422, 'BUDGET_EXCEEDED').message).toMatch(/spend\.per_tx_usd/);
    const first = await req(
      'POST',
      '/v1/intents',
      acc.sessionToken,
      conversion(acc.wallet, { sell_amount: usdcAmount(15) }),
    );
    expect(first.statusCode, first.body).toBe(201);
    expect(
      (
        await req(
          'POST',
          '/v1/intents',
          acc.sessionToken,
          conversion(acc.wallet, { sell_amount: usdcAmount(15) }),
        )
      ).statusCode,
    ).toBe(201);
    const third = await req(
      'POST',
      '/v1/intents',
      acc.sessionToken,
      conversion(acc.wallet, { sell_amount: usdcAmount(15) }),
    );
    const refused = expectErrorBody(third, 422, 'BUDGET_EXCEEDED');
    expect(refused.message).toMatch(/spend\.daily_usd/);
    expect(refused.message).toContain('the limit is 30');
    const noStable = await req('POST', '/v1/intents', acc.sessionToken, {
      ...conversion(acc.wallet),
      sell_token: token('WETH'),
      buy_token: token('EURC'),
      sell_amount: '1000000000000',
    });
    expect(expectErrorBody(noStable, 422, 'BUDGET_EXCEEDED').message).toMatch(/stables\.accepted/);
    expect(await intentCount(acc.accountId)).toBe(2);
    expect(await balanceOf(acc.accountId)).toBe(10n * USD - 2n * fee);

    // Cancelling one gives its budget back.
    const cancel = await req('POST', `/v1/intents/${first.json<Intent>().id}/cancel`, acc.sessionToken);
    expect(cancel.statusCode, cancel.body).toBe(200);
    const again = await req(
      'POST',
      '/v1/intents',
      acc.sessionToken,
      conversion(acc.wallet, { sell_amount: usdcAmount(15) }),
    );
    expect(again.statusCode, again.body).toBe(201);
  });

  it('admits in at most two round trips to the database, with an Idempotency-Key or without', async () => {
    const acc = await setup();
    // The first request fills the caches a busy service keeps warm: the credential, the switches,
    // the metering setting and the executor queue's depth.
    expect((await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet))).statusCode).toBe(201);
    const plain = await countRoundTrips(() =>
      req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet)),
    );
    expect(plain.result.statusCode, plain.result.body).toBe(201);
    // Counting works (the admission did reach the database), and stays within two.
    expect(plain.roundTrips).toBeGreaterThan(0);
    expect(plain.roundTrips).toBeLessThanOrEqual(2);
    const headers = { 'idempotency-key': `trips-${Math.random()}` };
    // The caches live 2 s; a loaded machine can take that long between two requests: warm them again.
    expect((await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet))).statusCode).toBe(201);
    const keyed = await countRoundTrips(() =>
      req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet), headers),
    );
    expect(keyed.result.statusCode, keyed.result.body).toBe(201);
    expect(keyed.roundTrips).toBeLessThanOrEqual(2);
    // The replay reads the stored answer instead: nothing is written again.
    const replay = await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet), headers);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json<Intent>().id).toBe(keyed.result.json<Intent>().id);
    expect(await intentCount(acc.accountId)).toBe(4);
    expect(await balanceOf(acc.accountId)).toBe(10n * USD - 4n * fee);
  });

  it('reads an intent that never waited for approvers in one round trip; another account gets 404', async () => {
    const acc = await setup();
    const created = await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet));
    expect(created.statusCode, created.body).toBe(201);
    const intent = created.json<Intent>();
    // Warm the caches a busy service keeps (the credential among them), as for the admission above.
    expect((await req('GET', `/v1/intents/${intent.id}`, acc.sessionToken)).statusCode).toBe(200);
    const read = await countRoundTrips(() => req('GET', `/v1/intents/${intent.id}`, acc.sessionToken));
    expect(read.result.statusCode, read.result.body).toBe(200);
    expect(read.result.json<Intent>()).toMatchObject({ id: intent.id, status: intent.status });
    expect(read.result.json<Intent>().report).not.toHaveProperty('approval');
    expect(read.roundTrips).toBe(1);
    const other = await setup();
    const foreign = await req('GET', `/v1/intents/${intent.id}`, other.sessionToken);
    expect(foreign.statusCode).toBe(404);
  });

  it('a refusal does not hide an answer stored under the same Idempotency-Key', async () => {
    const acc = await setup();
    const headers = { 'idempotency-key': `stored-${Math.random()}` };
    const first = await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet), headers);
    expect(first.statusCode, first.body).toBe(201);
    // The wallet is panicked after the first answer: a new intent is refused, the retry replays.
    const panic = await req('POST', '/v1/account/panic', acc.sessionToken, {});
    expect(panic.statusCode, panic.body).toBe(200);
    const retry = await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet), headers);
    expect(retry.statusCode, retry.body).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json<Intent>().id).toBe(first.json<Intent>().id);
    const fresh = await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet));
    expectErrorBody(fresh, 403, 'EXECUTION_DISABLED');
    expect(await intentCount(acc.accountId)).toBe(1);
  });

  it('replays one Idempotency-Key: one intent, one fee', async () => {
    const acc = await setup();
    const headers = { 'idempotency-key': `intent-${Math.random()}` };
    const a = await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet), headers);
    const b = await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet), headers);
    expect(a.statusCode, a.body).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(b.json<Intent>().id).toBe(a.json<Intent>().id);
    expect(await intentCount(acc.accountId)).toBe(1);
    expect(await balanceOf(acc.accountId)).toBe(10n * USD - fee);
  });

  it('answers 400 to bad bodies and stores nothing', async () => {
    const acc = await setup();
    const good = conversion(acc.wallet);
    const bodies: unknown[] = [
      {},
      { ...good, kind: 'swap' },
      { ...good, sell_amount: '0' },
      { ...good, sell_amount: '-5' },
      { ...good, sell_amount: '1.5' },
      { ...good, sell_amount: 10 },
      { ...good, sell_token: 'USDC ' },
      { ...good, sell_token: '0x1234' },
      { ...good, buy_token: '' },
      { ...good, wallet: 'nope' },
      { ...good, max_slippage_bps: -1 },
      { ...good, max_slippage_bps: 1.5 },
      { ...good, venues: [] },
      { ...good, venues: 'devnet-amm' },
      { ...good, extra: true },
      { ...good, sell_token: good.buy_token },
      [good],
    ];
    for (const body of bodies) {
      expectErrorBody(await req('POST', '/v1/intents', acc.sessionToken, body), 400, 'INVALID_REQUEST');
    }
    expect(await intentCount(acc.accountId)).toBe(0);
    expect(await balanceOf(acc.accountId)).toBe(10n * USD);
  });
});

describe('reads and cancel', () => {
  it('lists newest first, filters by wallet, pages with limit and offset', async () => {
    const acc = await setup();
    const other = randomAddress().toLowerCase();
    const put = await req('PUT', '/v1/policies', acc.sessionToken, {
      version: 1,
      wallet: other,
      chain_id: 8453,
    });
    expect(put.statusCode).toBe(201);
    const ids: string[] = [];
    for (const wallet of [acc.wallet, other, acc.wallet]) {
      const res = await req('POST', '/v1/intents', acc.sessionToken, conversion(wallet));
      expect(res.statusCode, res.body).toBe(201);
      ids.push(res.json<Intent>().id);
    }
    const list = (q: string) =>
      req('GET', `/v1/intents${q}`, acc.sessionToken).then((r) => {
        expect(r.statusCode, r.body).toBe(200);
        return r.json<{ intents: Intent[] }>().intents.map((i) => i.id);
      });
    expect(await list('')).toEqual([...ids].reverse());
    expect(await list(`?wallet=${acc.wallet}`)).toEqual([ids[2], ids[0]]);
    expect(await list('?limit=1&offset=1')).toEqual([ids[1]]);
    expectErrorBody(await req('GET', '/v1/intents?limit=201', acc.sessionToken), 400, 'INVALID_REQUEST');
  });

  it('cancel releases the reservation, reverses the fee, emits intent.cancelled; a second cancel is 404', async () => {
    const acc = await setup();
    const intent = (
      await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet))
    ).json<Intent>();
    expect(await balanceOf(acc.accountId)).toBe(10n * USD - fee);
    const res = await req('POST', `/v1/intents/${intent.id}/cancel`, acc.sessionToken);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<Intent>()).toMatchObject({ id: intent.id, status: 'cancelled' });
    expect(await balanceOf(acc.accountId)).toBe(10n * USD);
    expect(await readSpendUsage(t.db.db, t.deps.clock, acc.accountId, acc.wallet)).toEqual({
      dayMicroUsd: 0n,
      hourCount: 0,
    });
    const kinds = (
      await t.db.db
        .selectFrom('events')
        .select('kind')
        .where('subject', '=', intent.id)
        .orderBy('created_at')
        .execute()
    ).map((e) => e.kind);
    expect(kinds).toEqual(['intent.planned', 'intent.cancelled']);
    expectErrorBody(await req('POST', `/v1/intents/${intent.id}/cancel`, acc.sessionToken), 404, 'NOT_FOUND');
    expect((await req('GET', `/v1/intents/${intent.id}`, acc.sessionToken)).json<Intent>().status).toBe(
      'cancelled',
    );
  });

  it('supervisor keys cancel; pinned keys reach their wallet only; read keys cannot cancel', async () => {
    const acc = await setup();
    const create = () =>
      req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet)).then((r) => r.json<Intent>());
    const a = await create();
    const supervisor = await createKey(t.db.db, acc.accountId, { scopes: ['supervisor'] });
    const reader = await createKey(t.db.db, acc.accountId, { scopes: ['read'] });
    const pinnedHere = await createKey(t.db.db, acc.accountId, { scopes: ['write'], wallets: [acc.wallet] });
    const pinnedElsewhere = await createKey(t.db.db, acc.accountId, {
      scopes: ['write'],
      wallets: [randomAddress()],
    });
    expectErrorBody(await req('POST', `/v1/intents/${a.id}/cancel`, reader.token), 403, 'FORBIDDEN');
    expectErrorBody(await req('POST', `/v1/intents/${a.id}/cancel`, pinnedElsewhere.token), 403, 'FORBIDDEN');
    expectErrorBody(await req('GET', `/v1/intents/${a.id}`, pinnedElsewhere.token), 403, 'FORBIDDEN');
    expect((await req('GET', `/v1/intents/${a.id}`, pinnedHere.token)).statusCode).toBe(200);
    const bySupervisor = await req('POST', `/v1/intents/${a.id}/cancel`, supervisor.token);
    expect(bySupervisor.statusCode, bySupervisor.body).toBe(200);
    const b = await create();
    const byPinned = await req('POST', `/v1/intents/${b.id}/cancel`, pinnedHere.token);
    expect(byPinned.statusCode, byPinned.body).toBe(200);
    // A supervisor key cannot open exposure.
    expectErrorBody(
      await req('POST', '/v1/intents', supervisor.token, conversion(acc.wallet)),
      403,
      'FORBIDDEN',
    );
  });

  it("the wallet's statement carries each intent's fee, and the refund of a cancelled one", async () => {
    const acc = await setup();
    const kept = (await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet))).json<Intent>();
    const dropped = (
      await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet))
    ).json<Intent>();
    expect((await req('POST', `/v1/intents/${dropped.id}/cancel`, acc.sessionToken)).statusCode).toBe(200);
    const day = t.deps.clock.now().toISOString().slice(0, 10);
    const res = await req('GET', `/v1/statements?wallet=${acc.wallet}&period=${day}`, acc.sessionToken);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{ statement: { fees_usd: string }; export: { download_path: string } }>();
    // Two fees charged, one refunded: the statement nets one.
    expect(body.statement.fees_usd).toBe(`${fee / USD}.${(fee % USD).toString().padStart(6, '0')}`);
    const exported = await req('GET', body.export.download_path, acc.sessionToken);
    const entries = JSON.parse(exported.body) as {
      entries: {
        settlement_id: string;
        kind: string;
        amount: string;
        reverses: string | null;
        group_id: string;
      }[];
    };
    const feeOf = (intent: Intent) =>
      entries.entries.find((e) => e.settlement_id === `fee:conversion_intent:${intent.id}`);
    expect(feeOf(kept)).toMatchObject({ kind: 'fee.conversion_intent', amount: fee.toString() });
    const droppedFee = feeOf(dropped);
    expect(droppedFee).toMatchObject({ kind: 'fee.conversion_intent', amount: fee.toString() });
    expect(entries.entries.filter((e) => e.reverses === droppedFee?.group_id)).toMatchObject([
      { kind: 'reversal', amount: (-fee).toString() },
    ]);
  });

  it("another account's intent is 404 to read and to cancel, and absent from its list", async () => {
    const owner = await setup();
    const intent = (
      await req('POST', '/v1/intents', owner.sessionToken, conversion(owner.wallet))
    ).json<Intent>();
    const stranger = await createAccountWithSession(t.db.db);
    expectErrorBody(await req('GET', `/v1/intents/${intent.id}`, stranger.sessionToken), 404, 'NOT_FOUND');
    expectErrorBody(
      await req('POST', `/v1/intents/${intent.id}/cancel`, stranger.sessionToken),
      404,
      'NOT_FOUND',
    );
    expectErrorBody(await req('GET', '/v1/intents/not-a-uuid', owner.sessionToken), 404, 'NOT_FOUND');
    const list = await req('GET', `/v1/intents?wallet=${owner.wallet}`, stranger.sessionToken);
    expect(list.json()).toEqual({ intents: [] });
    expect((await req('GET', `/v1/intents/${intent.id}`, owner.sessionToken)).json<Intent>().status).toBe(
      'planned',
    );
  });
});

describe("the executor's queue", () => {
  it('refuses a wallet at its bound with 503: the intent is kept aborted (queue_refused), nothing held or charged, no event, the answer not stored', async () => {
    const acc = await setup();
    const bounds = t.deps.config.intentQueue;
    t.deps.config.intentQueue = { perWallet: 2, max: bounds.max };
    try {
      const admitted: Intent[] = [];
      for (let i = 0; i < 2; i++) {
        const ok = await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet));
        expect(ok.statusCode, ok.body).toBe(201);
        admitted.push(ok.json<Intent>());
      }
      const balance = await balanceOf(acc.accountId);
      const usage = await readSpendUsage(t.db.db, t.deps.clock, acc.accountId, acc.wallet);
      const key = { 'idempotency-key': `queue-${acc.accountId}` };

      const refused = await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet), key);
      const body = expectErrorBody(refused, 503, 'UNAVAILABLE');
      expect(body.message).toMatch(/queue refused .*2 open intents .*INTENT_QUEUE_PER_WALLET/);
      const path = (body.next as Array<{ path: string }>)[0]?.path ?? '';
      const refusedId = path.split('/').pop() ?? '';
      const read = await req('GET', path, acc.sessionToken);
      expect(read.statusCode, read.body).toBe(200);
      expect(read.json<Intent>()).toMatchObject({
        id: refusedId,
        wallet: acc.wallet,
        status: 'aborted',
        params: {
          abort: { reason: 'EXECUTION_ERROR', detail: 'queue_refused' },
          sell_amount: usdcAmount(10),
          fee_usd: '0',
        },
      });
      // Nothing held or charged, no event, no job.
      expect(await balanceOf(acc.accountId)).toBe(balance);
      expect(await readSpendUsage(t.db.db, t.deps.clock, acc.accountId, acc.wallet)).toEqual(usage);
      const events = await t.db.db
        .selectFrom('events')
        .select('kind')
        .where('subject', '=', refusedId)
        .execute();
      expect(events).toEqual([]);
      const jobs = await t.db.db
        .selectFrom('jobs')
        .select('id')
        .where('singleton_key', '=', refusedId)
        .execute();
      expect(jobs).toEqual([]);

      // The 503 was not stored under the key: once a slot frees, the same request is admitted.
      const cancel = await req('POST', `/v1/intents/${admitted[0]!.id}/cancel`, acc.sessionToken);
      expect(cancel.statusCode, cancel.body).toBe(200);
      const again = await req('POST', '/v1/intents', acc.sessionToken, conversion(acc.wallet), key);
      expect(again.statusCode, again.body).toBe(201);
      expect(again.json<Intent>().id).not.toBe(refusedId);
      // Cancelling the refused intent is not possible: it was never admitted.
      expectErrorBody(
        await req('POST', `/v1/intents/${refusedId}/cancel`, acc.sessionToken),
        404,
        'NOT_FOUND',
      );
    } finally {
      t.deps.config.intentQueue = bounds;
    }
  });
});
