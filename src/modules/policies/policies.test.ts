// Policies over HTTP: publishing versions, defaults, verbatim resubmission, validation naming
// every bad field, the append-only table, concurrent publishers, the dry-run check and a fuzz of
// PUT /v1/policies.

import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../core/canonical-json.ts';
import { ManualClock } from '../../core/clock.ts';
import { withTransaction } from '../../core/db/database.ts';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { checkErrorShape, expectErrorBody } from '../../../test/support/error-body.ts';
import {
  bearer,
  createAccountWithSession,
  createKey,
  randomAddress,
  type AccountWithSession,
} from '../../../test/support/identity.ts';
import { reserveSpend } from './reservations.ts';

const clock = new ManualClock('2026-03-01T12:00:00.000Z');
const OPERATOR_TOKEN = 'op_'.padEnd(40, 'p');
let t: TestApp;
let owner: AccountWithSession;

beforeAll(async () => {
  t = await createTestApp({ clock, poolSize: 12, config: { operatorToken: OPERATOR_TOKEN } });
  owner = await createAccountWithSession(t.db.db, { now: clock.now() });
});
afterAll(async () => {
  await t?.close();
});

interface PolicyRecord {
  wallet: string;
  version: number;
  hash: string;
  created_at: string;
  unchanged?: boolean;
  document: Record<string, Record<string, unknown>> & { wallet: string };
  defaulted: string[];
}

const put = (body: unknown, token = owner.sessionToken) =>
  t.app.fastify.inject({
    method: 'PUT',
    url: '/v1/policies',
    headers: bearer(token),
    payload: body as object,
  });
const check = (body: unknown, token = owner.sessionToken) =>
  t.app.fastify.inject({
    method: 'POST',
    url: '/v1/checks',
    headers: bearer(token),
    payload: body as object,
  });
const countPolicies = async () =>
  Number(
    (
      await t.db.db
        .selectFrom('policies')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('PUT /v1/policies', () => {
  it('stores a minimal document with every section defaulted, hashed as stored', async () => {
    const wallet = randomAddress().toUpperCase().replace('0X', '0x');
    const res = await put({ version: 1, wallet, chain_id: 8453 });
    expect(res.statusCode, res.body).toBe(201);
    const record = res.json<PolicyRecord>();
    expect(Object.keys(record).sort()).toEqual([
      'created_at',
      'defaulted',
      'document',
      'hash',
      'version',
      'wallet',
    ]);
    expect(record.wallet).toBe(wallet.toLowerCase());
    expect(record.version).toBe(1);
    expect(record.created_at).toBe(clock.now().toISOString());
    expect(record.defaulted).toEqual([
      'float',
      'execution',
      'gas',
      'stables',
      'spend',
      'alerts',
      'prediction_markets',
      'rebalance',
    ]);
    expect(record.document['spend']).toEqual({
      per_tx_usd: '100',
      daily_usd: '1000',
      velocity_per_hour: 30,
      token_allowlist: ['USDC', 'WETH', 'EURC'],
      screening_required_above_usd: '0',
    });
    expect(record.hash).toBe(createHash('sha256').update(canonicalJson(record.document)).digest('hex'));
  });

  it('answers 200 unchanged for the latest document resubmitted verbatim, before or after defaults', async () => {
    const wallet = randomAddress();
    const original = { version: 1, wallet, chain_id: 8453, spend: { per_tx_usd: '50' } };
    const first = (await put(original)).json<PolicyRecord>();
    expect(first.defaulted).toContain('spend.daily_usd');
    expect(first.defaulted).not.toContain('spend.per_tx_usd');
    for (const body of [original, first.document]) {
      const again = await put(body);
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual({ ...first, unchanged: true });
    }
    const changed = await put({ ...original, spend: { per_tx_usd: '60' } });
    expect(changed.statusCode).toBe(201);
    const second = changed.json<PolicyRecord>();
    expect(second.version).toBe(2);
    expect(second.hash).not.toBe(first.hash);
    // back to the first document: a new version, never a rewrite of an old one
    const back = await put(original);
    expect(back.statusCode).toBe(201);
    expect(back.json<PolicyRecord>().version).toBe(3);
    expect(back.json<PolicyRecord>().hash).toBe(first.hash);

    const list = await t.app.fastify.inject({
      method: 'GET',
      url: `/v1/policies?wallet=${wallet}`,
      headers: bearer(owner.sessionToken),
    });
    expect(list.statusCode).toBe(200);
    expect(list.json<{ policies: PolicyRecord[] }>().policies.map((p) => p.version)).toEqual([3, 2, 1]);
    const limited = await t.app.fastify.inject({
      method: 'GET',
      url: `/v1/policies?wallet=${wallet}&limit=1`,
      headers: bearer(owner.sessionToken),
    });
    expect(limited.json<{ policies: PolicyRecord[] }>().policies).toHaveLength(1);
  });

  it('writes a policy.updated event and an audit fact in the same transaction', async () => {
    const wallet = randomAddress();
    const record = (await put({ version: 1, wallet, chain_id: 8453 })).json<PolicyRecord>();
    const events = await t.db.db.selectFrom('events').selectAll().where('subject', '=', wallet).execute();
    expect(events.map((e) => e.kind)).toEqual(['policy.updated']);
    expect(events[0]?.payload).toMatchObject({ wallet, version: 1, hash: record.hash });
    const audit = await t.db.db.selectFrom('audit_log').selectAll().where('subject', '=', wallet).execute();
    expect(audit.map((a) => [a.action, a.actor])).toEqual([['policy.updated', `session:${owner.sessionId}`]]);
  });

  it('takes only the venues its registry lists: no devnet AMM where the devnet did not configure one', async () => {
    // This app has no devnet: its registry lists the four real conversion venues.
    expect(t.deps.tokenRegistry.conversionVenues()).not.toContain('devnet-amm');
    const before = await countPolicies();
    const res = await put({
      version: 1,
      wallet: randomAddress(),
      chain_id: 8453,
      execution: { venues: ['devnet-amm'] },
    });
    const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
    expect(body.message).toContain('execution.venues[0]');
    expect(await countPolicies()).toBe(before);
    // The served document holds the same words, filled in when the app was built.
    const doc = (await t.app.fastify.inject({ method: 'GET', url: '/v1/openapi.json' })).body;
    expect(doc.includes('"enum":["0x","kyberswap","aerodrome","uniswap-v3"]')).toBe(true);
    expect(doc.includes('"enum":["0x","kyberswap","aerodrome","uniswap-v3","devnet-amm"]')).toBe(false);
    expect(doc.includes('x-vocabulary')).toBe(false);
  });

  it('refuses every bad field at once and stores nothing', async () => {
    const before = await countPolicies();
    const res = await put({
      version: 1,
      wallet: randomAddress(),
      chain_id: 8453,
      spend: { per_tx_usd: '1e3', daily_usd: '-5', token_allowlist: ['usdc'], dayly: 1 },
      execution: { venues: ['sushiswap'] },
      limits: {},
    });
    const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
    for (const name of [
      'spend.per_tx_usd',
      'spend.daily_usd',
      'spend.token_allowlist[0]',
      'spend.dayly',
      'execution.venues[0]',
      'limits',
    ]) {
      expect(body.message).toContain(name);
    }
    expect(await countPolicies()).toBe(before);
  });

  it('refuses symbols and venues that the registry does not list for the chain', async () => {
    const res = await put({
      version: 1,
      wallet: randomAddress(),
      chain_id: 84532,
      spend: { token_allowlist: ['USDC', 'EURC', 'PUSD'] },
      execution: { venues: ['uniswap-v3'] },
      stables: { accepted: ['WETH'] },
    });
    const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
    expect(body.message).toContain('spend.token_allowlist[1] "EURC"');
    expect(body.message).toContain('spend.token_allowlist[2] "PUSD"');
    expect(body.message).not.toContain('token_allowlist[0]');
    expect(body.message).toContain('execution.venues[0] "uniswap-v3"');
    expect(body.message).toContain('stables.accepted[0] "WETH" is not a USD stable');
  });

  it('refuses an unknown chain, a bad wallet and a document version other than 1', async () => {
    const res = await put({ version: 2, wallet: '0x1234', chain_id: 1 });
    const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
    for (const name of ['version', 'wallet', 'chain_id']) expect(body.message).toContain(name);
  });

  it('gives concurrent publishers of one wallet consecutive versions', async () => {
    const wallet = randomAddress();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        put({ version: 1, wallet, chain_id: 8453, spend: { per_tx_usd: String(i + 1) } }),
      ),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    const versions = results.map((r) => r.json<PolicyRecord>().version).sort((a, b) => a - b);
    expect(versions).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('keeps accounts apart: the same wallet has its own history per account', async () => {
    const other = await createAccountWithSession(t.db.db, { now: clock.now() });
    const wallet = randomAddress();
    await put({ version: 1, wallet, chain_id: 8453 });
    const theirs = await put({ version: 1, wallet, chain_id: 8453 }, other.sessionToken);
    expect(theirs.statusCode).toBe(201);
    expect(theirs.json<PolicyRecord>().version).toBe(1);
    const list = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/policies',
      headers: bearer(other.sessionToken),
    });
    expect(list.json<{ policies: PolicyRecord[] }>().policies.map((p) => p.wallet)).toEqual([wallet]);
  });

  it('admits a write key pinned to the wallet, and refuses a read key', async () => {
    const wallet = randomAddress();
    const writer = await createKey(t.db.db, owner.accountId, { scopes: ['write'], wallets: [wallet] });
    expect((await put({ version: 1, wallet, chain_id: 8453 }, writer.token)).statusCode).toBe(201);
    const reader = await createKey(t.db.db, owner.accountId, { scopes: ['read'] });
    expectErrorBody(await put({ version: 1, wallet, chain_id: 8453 }, reader.token), 403, 'FORBIDDEN');
  });

  it('is append-only in the database: UPDATE and DELETE of policy rows are refused', async () => {
    const wallet = randomAddress();
    await put({ version: 1, wallet, chain_id: 8453 });
    await expect(
      sql`UPDATE policies SET hash = 'x' WHERE wallet = ${wallet}`.execute(t.db.db),
    ).rejects.toThrow(/append-only/);
    await expect(sql`DELETE FROM policies WHERE wallet = ${wallet}`.execute(t.db.db)).rejects.toThrow(
      /append-only/,
    );
  });
});

describe('GET /v1/policies/defaults', () => {
  it('publishes the defaults of a chain', async () => {
    const res = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/policies/defaults?chain_id=137',
      headers: bearer(owner.sessionToken),
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<{ chain_id: number; sections: Record<string, Record<string, unknown>> }>();
    expect(body.chain_id).toBe(137);
    expect(body.sections['spend']?.['token_allowlist']).toEqual(['USDC', 'USDC.E', 'PUSD', 'WPOL']);
    expect(body.sections['execution']?.['venues']).toEqual([]);
    const bad = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/policies/defaults?chain_id=1',
      headers: bearer(owner.sessionToken),
    });
    expectErrorBody(bad, 400, 'INVALID_REQUEST');
  });
});

describe('POST /v1/checks', () => {
  interface Check {
    allowed: boolean;
    policy_version: number;
    refusal: { code: string; rule: string } | null;
    rules: { rule: string; pass: boolean; limit: unknown; value: unknown }[];
  }

  it('returns every rule with its limit and would-be usage, reserving nothing', async () => {
    const wallet = randomAddress();
    await put({ version: 1, wallet, chain_id: 8453, spend: { per_tx_usd: '100', daily_usd: '250' } });
    for (const n of [1, 2]) {
      const reserved = await withTransaction(t.db.db, (tx) =>
        reserveSpend(tx, clock, {
          accountId: owner.accountId,
          wallet,
          amountMicroUsd: 100_000_000n,
          reservationId: `res_${n}_${wallet}`,
          expiresAt: new Date(clock.now().getTime() + 60_000),
        }),
      );
      expect(reserved.ok).toBe(true);
    }
    const before = await t.db.db
      .selectFrom('spend_reservations')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    const body = {
      wallet,
      kind: 'conversion',
      amount_usd: '60',
      sell_token: 'USDC',
      buy_token: 'WETH',
      venue: '0x',
    };
    const res = await check(body);
    expect(res.statusCode, res.body).toBe(200);
    const result = res.json<Check>();
    expect(result.allowed).toBe(false);
    expect(result.refusal).toMatchObject({ code: 'BUDGET_EXCEEDED', rule: 'spend.daily_usd' });
    const byRule = Object.fromEntries(result.rules.map((r) => [r.rule, r]));
    expect(byRule['spend.per_tx_usd']).toEqual({
      rule: 'spend.per_tx_usd',
      pass: true,
      limit: '100',
      value: '60',
      code: 'BUDGET_EXCEEDED',
    });
    expect(byRule['spend.daily_usd']).toMatchObject({ pass: false, limit: '250', value: '260' });
    expect(byRule['spend.velocity_per_hour']).toMatchObject({ pass: true, limit: 30, value: 3 });
    expect(byRule['spend.token_allowlist']?.pass).toBe(true);
    expect(byRule['execution.venues']?.pass).toBe(true);
    const ok = (await check({ ...body, amount_usd: '50' })).json<Check>();
    expect(ok.allowed).toBe(true);
    expect(ok.refusal).toBeNull();
    const after = await t.db.db
      .selectFrom('spend_reservations')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });

  it('names policy rules: allowlist, venue, gas and prediction markets', async () => {
    const wallet = randomAddress();
    await put({ version: 1, wallet, chain_id: 8453, spend: { token_allowlist: ['USDC'] } });
    const conv = (
      await check({ wallet, kind: 'conversion', amount_usd: '1', sell_token: 'USDC', buy_token: 'WETH' })
    ).json<Check>();
    expect(conv.refusal).toMatchObject({ code: 'POLICY_VIOLATION', rule: 'spend.token_allowlist' });
    const gas = (await check({ wallet, kind: 'gas_topup', amount_usd: '6' })).json<Check>();
    expect(gas.refusal).toMatchObject({ rule: 'gas.max_top_up_usd' });
    const pm = (
      await check({ wallet, kind: 'prediction_market_order', amount_usd: '1', venue: 'polymarket' })
    ).json<Check>();
    expect(pm.refusal).toMatchObject({ rule: 'prediction_markets.enabled' });
    const missing = await check({ wallet, kind: 'conversion', amount_usd: '1' });
    const err = expectErrorBody(missing, 400, 'INVALID_REQUEST');
    expect(err.message).toContain('sell_token');
    expect(err.message).toContain('buy_token');
  });

  it('screens the counterparty of a transfer above the threshold', async () => {
    const wallet = randomAddress();
    await put({ version: 1, wallet, chain_id: 8453, spend: { screening_required_above_usd: '10' } });
    const clean = (
      await check({
        wallet,
        kind: 'transfer',
        amount_usd: '20',
        token: 'USDC',
        counterparty: randomAddress(),
      })
    ).json<Check>();
    expect(clean.allowed).toBe(true);
    const listed = (
      await check({
        wallet,
        kind: 'transfer',
        amount_usd: '20',
        token: 'USDC',
        counterparty: '0x7987FFfd095501F3A5D57eca0dfdC19EF1157eAb',
      })
    ).json<Check>();
    expect(listed.refusal).toMatchObject({
      code: 'COUNTERPARTY_BLOCKED',
      rule: 'spend.screening_required_above_usd',
    });
    const below = (
      await check({
        wallet,
        kind: 'transfer',
        amount_usd: '5',
        token: 'USDC',
        counterparty: '0x7987FFfd095501F3A5D57eca0dfdC19EF1157eAb',
      })
    ).json<Check>();
    expect(below.allowed).toBe(true);
  });

  it('answers 404 with a next step for a wallet without a policy', async () => {
    const res = await check({ wallet: randomAddress(), kind: 'gas_topup', amount_usd: '1' });
    const body = expectErrorBody(res, 404, 'NOT_FOUND');
    expect(body.next).toEqual([expect.objectContaining({ method: 'PUT', path: '/v1/policies' })]);
  });
});

describe('POST /v1/checks: the intent kind', () => {
  it('is gas_topup as in the spec; the old spelling gas_top_up is a 400 naming the kinds', async () => {
    const wallet = randomAddress();
    await put({ version: 1, wallet, chain_id: 8453, gas: { max_top_up_usd: '5' } });
    const ok = await check({ wallet, kind: 'gas_topup', amount_usd: '2' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ allowed: true, refusal: null });
    expect(ok.json().rules.map((r: { rule: string }) => r.rule)).toContain('gas.max_top_up_usd');
    const old = await check({ wallet, kind: 'gas_top_up', amount_usd: '2' });
    const err = expectErrorBody(old, 400, 'INVALID_REQUEST');
    expect(err.message).toContain('kind must be one of');
    expect(err.message).toContain('gas_topup');
  });
});

describe('POST /v1/checks under the execution switches', () => {
  interface Check {
    allowed: boolean;
    refusal: { code: string; rule: string; message: string } | null;
    rules: { rule: string; pass: boolean; limit: unknown; value: unknown; code: string }[];
  }
  const ops = (payload: object) =>
    t.app.fastify.inject({
      method: 'PUT',
      url: '/v1/ops/switches',
      headers: bearer(OPERATOR_TOKEN),
      payload,
    });
  const switchOff = async (payload: object) => {
    const res = await ops({ ...payload, enabled: false });
    expect(res.statusCode, res.body).toBe(200);
  };
  const switchOn = async (payload: object) => {
    const res = await ops({ ...payload, enabled: true });
    expect(res.statusCode, res.body).toBe(200);
  };
  const checked = async (body: object, token: string) => {
    const res = await check(body, token);
    expect(res.statusCode, res.body).toBe(200); // a check is a read: it answers under every switch
    return res.json<Check>();
  };
  const switchRules = (c: Check) => c.rules.filter((r) => r.rule.startsWith('switch.'));

  /** Refused by `rule` first, with the reason in the message; then allowed once it is back on. */
  const expectRefusedBy = (c: Check, rule: string, code: string, ...mentions: string[]) => {
    expect(c.allowed).toBe(false);
    expect(c.refusal).toMatchObject({ code, rule });
    for (const m of mentions) expect(c.refusal?.message).toContain(m);
    expect(switchRules(c)).toEqual([{ rule, pass: false, limit: 'on', value: 'off', code }]);
  };
  const expectNoSwitch = (c: Check) => {
    expect(switchRules(c)).toEqual([]);
    expect(c.allowed).toBe(true);
    expect(c.refusal).toBeNull();
  };

  let acc: AccountWithSession;
  let wallet: string;
  const conversion = () => ({
    wallet,
    kind: 'conversion',
    amount_usd: '10',
    sell_token: 'USDC',
    buy_token: 'WETH',
  });
  const actions = () => [
    conversion(),
    { wallet, kind: 'gas_topup', amount_usd: '1' },
    { wallet, kind: 'transfer', amount_usd: '1', token: 'USDC' },
    { wallet, kind: 'prediction_market_order', amount_usd: '1', venue: 'polymarket' },
  ];

  beforeAll(async () => {
    acc = await createAccountWithSession(t.db.db, { now: clock.now() });
    wallet = randomAddress();
    const res = await put(
      {
        version: 1,
        wallet,
        chain_id: 8453,
        execution: { venues: ['aerodrome', 'uniswap-v3'] },
        spend: { screening_required_above_usd: null },
        prediction_markets: { enabled: true, venues: ['polymarket'] },
      },
      acc.sessionToken,
    );
    expect(res.statusCode, res.body).toBe(201);
    for (const body of actions()) expectNoSwitch(await checked(body, acc.sessionToken));
  });

  it('environment: every action is refused with EXECUTION_DISABLED and the reason, then allowed', async () => {
    await switchOff({ scope: 'environment', reason: 'Chain incident under investigation' });
    try {
      for (const body of actions()) {
        const c = await checked(body, acc.sessionToken);
        expectRefusedBy(c, 'switch.environment', 'EXECUTION_DISABLED', 'Chain incident under investigation');
        expect(c.rules[0]?.rule).toBe('switch.environment'); // before any policy rule, as at admission
      }
      // Another account is refused too.
      const other = await createAccountWithSession(t.db.db, { now: clock.now() });
      const otherWallet = randomAddress();
      await put({ version: 1, wallet: otherWallet, chain_id: 8453 }, other.sessionToken);
      const c = await checked(
        { wallet: otherWallet, kind: 'gas_topup', amount_usd: '1' },
        other.sessionToken,
      );
      expect(c.refusal).toMatchObject({ rule: 'switch.environment' });
    } finally {
      await switchOn({ scope: 'environment' });
    }
    for (const body of actions()) expectNoSwitch(await checked(body, acc.sessionToken));
  });

  it("account panic: the account's own switch, with its reason; lifted, the rule is gone", async () => {
    const panic = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/account/panic',
      headers: bearer(acc.sessionToken),
      payload: { reason: 'Key may have leaked' },
    });
    expect(panic.statusCode, panic.body).toBe(200);
    for (const body of actions()) {
      expectRefusedBy(
        await checked(body, acc.sessionToken),
        'switch.panic',
        'EXECUTION_DISABLED',
        'panic',
        'Key may have leaked',
      );
    }
    const unpanic = await t.app.fastify.inject({
      method: 'DELETE',
      url: '/v1/account/panic',
      headers: bearer(acc.sessionToken),
    });
    expect(unpanic.statusCode, unpanic.body).toBe(200);
    for (const body of actions()) expectNoSwitch(await checked(body, acc.sessionToken));
  });

  it("account: the operator's switch on the account, with its reason; back on, the rule is gone", async () => {
    await switchOff({ scope: 'account', target: acc.accountId, reason: 'Unpaid invoice' });
    for (const body of actions()) {
      expectRefusedBy(
        await checked(body, acc.sessionToken),
        'switch.account',
        'EXECUTION_DISABLED',
        'this account by the operator',
        'Unpaid invoice',
      );
    }
    await switchOn({ scope: 'account', target: acc.accountId });
    for (const body of actions()) expectNoSwitch(await checked(body, acc.sessionToken));
  });

  it('wallet: only that wallet is refused, with the reason; back on, the rule is gone', async () => {
    const otherWallet = randomAddress();
    await put({ version: 1, wallet: otherWallet, chain_id: 8453 }, acc.sessionToken);
    await switchOff({ scope: 'wallet', target: wallet, reason: 'Suspicious outflows' });
    for (const body of actions()) {
      expectRefusedBy(
        await checked(body, acc.sessionToken),
        'switch.wallet',
        'EXECUTION_DISABLED',
        `wallet ${wallet}`,
        'Suspicious outflows',
      );
    }
    expectNoSwitch(
      await checked({ wallet: otherWallet, kind: 'gas_topup', amount_usd: '1' }, acc.sessionToken),
    );
    await switchOn({ scope: 'wallet', target: wallet });
    for (const body of actions()) expectNoSwitch(await checked(body, acc.sessionToken));
  });

  it('venue: refuses an order at that venue, and a conversion once no venue is left', async () => {
    await switchOff({ scope: 'venue', target: 'polymarket', reason: 'Venue outage' });
    const order = { wallet, kind: 'prediction_market_order', amount_usd: '1', venue: 'polymarket' };
    expectRefusedBy(
      await checked(order, acc.sessionToken),
      'switch.venue',
      'EXECUTION_DISABLED',
      'venue polymarket',
      'Venue outage',
    );
    // Other kinds do not use the venue.
    expectNoSwitch(await checked(conversion(), acc.sessionToken));
    expectNoSwitch(await checked({ wallet, kind: 'gas_topup', amount_usd: '1' }, acc.sessionToken));

    // A conversion loses the switched-off venue from planning: refused only when none is left.
    await switchOff({ scope: 'venue', target: 'aerodrome', reason: 'Router upgrade' });
    const atAerodrome = await checked({ ...conversion(), venue: 'aerodrome' }, acc.sessionToken);
    expectRefusedBy(atAerodrome, 'switch.venue', 'VENUE_UNAVAILABLE', 'venue aerodrome', 'Router upgrade');
    expect(atAerodrome.rules.at(-1)?.rule).toBe('switch.venue'); // after the policy's rules
    expectNoSwitch(await checked({ ...conversion(), venue: 'uniswap-v3' }, acc.sessionToken));
    expectNoSwitch(await checked(conversion(), acc.sessionToken)); // uniswap-v3 is left
    await switchOff({ scope: 'venue', target: 'uniswap-v3', reason: 'Pool paused' });
    expectRefusedBy(
      await checked(conversion(), acc.sessionToken),
      'switch.venue',
      'VENUE_UNAVAILABLE',
      'Router upgrade',
      'Pool paused',
    );
    // A policy rule that fails first stays the refusal; the switch is still listed.
    const outside = await checked({ ...conversion(), amount_usd: '1000' }, acc.sessionToken);
    expect(outside.refusal).toMatchObject({ rule: 'spend.per_tx_usd' });
    expect(switchRules(outside)).toEqual([expect.objectContaining({ rule: 'switch.venue', pass: false })]);

    for (const venue of ['polymarket', 'aerodrome', 'uniswap-v3'])
      await switchOn({ scope: 'venue', target: venue });
    for (const body of [...actions(), { ...conversion(), venue: 'aerodrome' }]) {
      expectNoSwitch(await checked(body, acc.sessionToken));
    }
  });
});

describe('PUT /v1/policies under fuzzed bodies', () => {
  it('never answers 5xx, always with the error body, and stores nothing on a 400', async () => {
    const usdish = fc.oneof(
      fc.constantFrom(
        '0',
        '1',
        '1.5',
        '100.000001',
        '1e3',
        '-1',
        '01',
        '1.1234567',
        '',
        ' 1',
        '999999999999999',
      ),
      fc.string({ maxLength: 8 }),
      fc.integer(),
    );
    const anyJson = fc.jsonValue({ maxDepth: 2 });
    const section = fc.dictionary(
      fc.constantFrom(
        'per_tx_usd',
        'daily_usd',
        'venues',
        'token_allowlist',
        'enabled',
        'max_slippage_bps',
        'x',
      ),
      fc.oneof(
        usdish,
        anyJson,
        fc.array(fc.constantFrom('USDC', 'usdc', 'WETH', '0x', 'nope'), { maxLength: 3 }),
      ),
      { maxKeys: 4 },
    );
    const body = fc.record(
      {
        version: fc.oneof(fc.constant(1), anyJson),
        wallet: fc.oneof(fc.constant(randomAddress()), fc.string({ maxLength: 44 })),
        chain_id: fc.oneof(fc.constantFrom(8453, 84532, 137, 1), anyJson),
        spend: section,
        execution: section,
        gas: section,
        bogus: anyJson,
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const before = await countPolicies();
        const res = await put(payload);
        expect(res.statusCode).toBeLessThan(500);
        if (res.statusCode >= 400) {
          checkErrorShape(res.json(), res.headers['x-request-id'], res.json<{ code: string }>().code);
          expect(await countPolicies()).toBe(before);
        }
      }),
      { numRuns: 150, seed: Number(process.env.FC_SEED ?? Date.now() % 2 ** 31), verbose: 1 },
    );
  });
});
