// Rebalances end to end on the devnet: the treasury executor moves USDC from Base to Polygon over
// the devnet's CCTP V2 contracts and attestation service; what the chains hold, read back with
// viem, matches the ledger and the statement. Refusals change nothing and reach no chain.

import fc from 'fast-check';
import { createWalletClient, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  BASE,
  POLYGON,
  rebalanceWorld,
  USDC,
  type RebalanceWorld,
} from '../../../test/support/rebalances.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import { jobHandlers, jobSchedules } from '../../jobs.ts';
import type { Job } from '../../core/jobs/index.ts';
import { balanceOf, bridgeAccount, erc20Asset, walletAccount } from '../ledger/index.ts';
import { createIrisAdapter } from '../../adapters/attestation/iris.ts';
import { AttestationUnavailable } from '../../adapters/attestation/port.ts';
import { systemClock } from '../../core/clock.ts';
import { setSwitch } from '../switches/index.ts';
import { messageTransmitterAbi } from './cctp.ts';
import { rebalanceRunDeps, runBurn, type Rebalance } from './index.ts';

const devnet = inject('devnet');
let w: RebalanceWorld;

beforeAll(async () => {
  w = await rebalanceWorld(devnet);
}, 120_000);
afterAll(async () => {
  await w?.close();
});

const held = (world: RebalanceWorld, chainId: number): Promise<bigint> =>
  world.t.deps.chain!.erc20Balance(chainId, world.usdc[chainId]!, world.executor.address);

async function post(world: RebalanceWorld, payload: unknown, auth = world.auth) {
  return world.t.app.fastify.inject({
    method: 'POST',
    url: '/v1/rebalances',
    headers: auth,
    payload: payload as object,
  });
}
const complete = (world: RebalanceWorld, id: string, auth = world.auth) =>
  world.t.app.fastify.inject({ method: 'POST', url: `/v1/rebalances/${id}/complete`, headers: auth });
const read = async (world: RebalanceWorld, id: string): Promise<Rebalance> =>
  (
    await world.t.app.fastify.inject({ method: 'GET', url: `/v1/rebalances/${id}`, headers: world.auth })
  ).json();

/** Admits a rebalance and runs its burn job to the end. */
async function burned(world: RebalanceWorld, from: number, to: number, amount: bigint): Promise<Rebalance> {
  const res = await post(world, { from_chain_id: from, to_chain_id: to, amount: amount.toString() });
  expect(res.statusCode, res.body).toBe(201);
  const id = (res.json() as Rebalance).id;
  expect(await runBurn(rebalanceRunDeps(world.t.deps)!, id)).toEqual({ state: 'done' });
  return read(world, id);
}

const rows = async (world: RebalanceWorld) => world.t.db.db.selectFrom('rebalances').selectAll().execute();
const eventKinds = async (world: RebalanceWorld, id: string) =>
  (
    await world.t.db.db
      .selectFrom('events')
      .select('kind')
      .where('subject', '=', id)
      .orderBy('created_at')
      .execute()
  ).map((e) => e.kind);

describe('a rebalance from Base to Polygon', () => {
  it('burns, waits for the attestation (202), mints (200), and chains, ledger and statement agree', async () => {
    const base0 = await held(w, BASE);
    const polygon0 = await held(w, POLYGON);
    w.iris.knobs.delayMs = 600_000;

    const res = await post(w, {
      from_chain_id: BASE,
      to_chain_id: POLYGON,
      amount: (1_000n * USDC).toString(),
    });
    expect(res.statusCode, res.body).toBe(201);
    const planned = res.json() as Rebalance;
    expect(planned).toMatchObject({ status: 'planned', phase: 'burn_pending', burn_tx: null, mint_tx: null });
    expect(planned).toMatchObject({ finality: 'standard', max_fee: '0', amount: '1000000000' });

    expect(await runBurn(rebalanceRunDeps(w.t.deps)!, planned.id)).toEqual({ state: 'done' });
    const awaiting = await read(w, planned.id);
    expect(awaiting).toMatchObject({ status: 'executing', phase: 'awaiting_attestation' });
    expect(awaiting.burn_tx).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await held(w, BASE)).toBe(base0 - 1_000n * USDC);
    const inTransit = bridgeAccount('cctp', BASE, POLYGON);
    const baseUsdc = erc20Asset(BASE, w.usdc[BASE]!.toLowerCase());
    expect(await balanceOf(w.t.db.db, inTransit, baseUsdc)).toBeGreaterThanOrEqual(1_000n * USDC);

    const early = await complete(w, planned.id);
    expect(early.statusCode, early.body).toBe(202);
    expect(Number(early.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(early.json()).toMatchObject({ phase: 'awaiting_attestation', mint_tx: null });
    expect(await held(w, POLYGON)).toBe(polygon0);

    w.iris.knobs.delayMs = 0;
    const done = await complete(w, planned.id);
    expect(done.statusCode, done.body).toBe(200);
    const minted = done.json() as Rebalance;
    expect(minted).toMatchObject({
      status: 'filled',
      phase: 'minted',
      report: { fee: '0', minted: '1000000000' },
    });
    expect(minted.mint_tx).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await held(w, POLYGON)).toBe(polygon0 + 1_000n * USDC);

    // The ledger says what the chains say: Base down, Polygon up, nothing left in transit.
    const wallet = w.executor.address.toLowerCase();
    expect(await balanceOf(w.t.db.db, walletAccount(BASE, wallet), baseUsdc)).toBe(-(1_000n * USDC));
    expect(
      await balanceOf(
        w.t.db.db,
        walletAccount(POLYGON, wallet),
        erc20Asset(POLYGON, w.usdc[POLYGON]!.toLowerCase()),
      ),
    ).toBe(1_000n * USDC);
    expect(await balanceOf(w.t.db.db, inTransit, baseUsdc)).toBe(0n);
    expect(await eventKinds(w, planned.id)).toEqual([
      'rebalance.planned',
      'rebalance.burned',
      'rebalance.minted',
    ]);

    const period = new Date().toISOString().slice(0, 7);
    const statement = await w.t.app.fastify.inject({
      method: 'GET',
      url: `/v1/statements?wallet=${w.executor.address}&period=${period}`,
      headers: w.auth,
    });
    expect(statement.statusCode, statement.body).toBe(200);
    const text = statement.body;
    expect(text).toContain(`wallet:${BASE}:${wallet}`);
    expect(text).toContain(`wallet:${POLYGON}:${wallet}`);

    // Done is done: completing again is 409, and nothing is minted twice.
    const again = await complete(w, planned.id);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'CONFLICT' });
    expect(await held(w, POLYGON)).toBe(polygon0 + 1_000n * USDC);
  });

  it('a fast transfer pays Circle its fee out of the mint, booked as an entry of its own', async () => {
    const fast = await rebalanceWorld(devnet, {
      rebalance: {
        enabled: true,
        corridors: [{ from_chain_id: BASE, to_chain_id: POLYGON }],
        min_transfer_usd: '1',
        max_transfer_usd: '5000',
        finality: 'fast',
        max_fee_bps: 5,
      },
    });
    try {
      fast.iris.knobs.fastFeeBps = 1;
      const polygon0 = await held(fast, POLYGON);
      const r = await burned(fast, BASE, POLYGON, 1_000n * USDC);
      expect(r).toMatchObject({ finality: 'fast', max_fee: 500_000n.toString() });
      const done = await complete(fast, r.id);
      expect(done.statusCode, done.body).toBe(200);
      const fee = 100_000n; // 1 bp of 1,000 USDC
      expect(done.json()).toMatchObject({
        status: 'filled',
        report: { fee: fee.toString(), minted: (1_000n * USDC - fee).toString() },
      });
      expect(await held(fast, POLYGON)).toBe(polygon0 + 1_000n * USDC - fee);
      const wallet = fast.executor.address.toLowerCase();
      const polygonUsdc = erc20Asset(POLYGON, fast.usdc[POLYGON]!.toLowerCase());
      expect(await balanceOf(fast.t.db.db, walletAccount(POLYGON, wallet), polygonUsdc)).toBe(
        1_000n * USDC - fee,
      );
      const entries = await fast.t.db.db
        .selectFrom('ledger_entries')
        .select(['ledger_account', 'amount'])
        .where('ledger_account', '=', walletAccount(POLYGON, wallet))
        .where('asset', '=', polygonUsdc)
        .execute();
      expect(entries.map((e) => BigInt(e.amount)).sort()).toEqual([-fee, 1_000n * USDC].sort());
    } finally {
      await fast.close();
    }
  });

  it('a message the destination has received already is recorded as minted, never sent twice', async () => {
    const polygon0 = await held(w, POLYGON);
    const r = await burned(w, BASE, POLYGON, 40n * USDC);
    // The attested message is delivered outside Purser first (by the executor's key, the only
    // destination caller), as a crashed earlier attempt would have done.
    const answer = (await (
      await fetch(`${w.iris.url}/v2/messages/6?transactionHash=${r.burn_tx}`)
    ).json()) as {
      messages: { message: Hex; attestation: Hex; status: string }[];
    };
    expect(answer.messages[0]!.status).toBe('complete');
    const wallet = createWalletClient({
      account: privateKeyToAccount(w.executor.privateKey),
      transport: http(devnet.chains[POLYGON]!.rpcUrl),
    });
    const transmitter = devnet.chains[POLYGON]!.contracts.cctpMessageTransmitter! as Address;
    const outside = await wallet.writeContract({
      chain: null,
      address: transmitter,
      abi: messageTransmitterAbi,
      functionName: 'receiveMessage',
      args: [answer.messages[0]!.message, answer.messages[0]!.attestation],
    });
    await w.t.deps.chain!.waitForReceipt(POLYGON, outside);
    expect(await held(w, POLYGON)).toBe(polygon0 + 40n * USDC);

    const done = await complete(w, r.id);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ status: 'filled', phase: 'minted', mint_tx: outside.toLowerCase() });
    expect(await held(w, POLYGON)).toBe(polygon0 + 40n * USDC);
    const sent = await w.t.db.db
      .selectFrom('executor_transactions')
      .select('purpose')
      .where('rebalance_id', '=', r.id)
      .execute();
    expect(sent.map((s) => s.purpose).sort()).toEqual(['rebalance.approve', 'rebalance.burn']);
  });

  it('the hourly job completes a rebalance nobody completed by hand', async () => {
    const schedule = jobSchedules.find((s) => s.jobName === 'rebalances.complete');
    expect(schedule?.everySeconds).toBe(3600);
    const polygon0 = await held(w, POLYGON);
    const r = await burned(w, BASE, POLYGON, 25n * USDC);
    expect(r.phase).toBe('awaiting_attestation');
    await jobHandlers(w.t.deps)['rebalances.complete']!({} as Job, {
      attempt: 1,
      workerId: 'test',
      signal: new AbortController().signal,
    });
    expect(await read(w, r.id)).toMatchObject({ status: 'filled', phase: 'minted' });
    expect(await held(w, POLYGON)).toBe(polygon0 + 25n * USDC);
  });

  it('a burn that reverts (no USDC on Polygon) aborts: nothing left the wallet, the day is not counted', async () => {
    const polygon0 = await held(w, POLYGON);
    const base0 = await held(w, BASE);
    const r = await burned(w, POLYGON, BASE, polygon0 + 1n * USDC);
    expect(r).toMatchObject({
      status: 'aborted',
      phase: 'burn_submitted',
      report: { abort: { reason: 'BURN_REVERTED' } },
    });
    expect(await held(w, POLYGON)).toBe(polygon0);
    expect(await held(w, BASE)).toBe(base0);
    expect(await eventKinds(w, r.id)).toEqual(['rebalance.planned', 'rebalance.aborted']);
    expect((await complete(w, r.id)).statusCode).toBe(409);
  });
});

describe('who may rebalance', () => {
  it('any other account gets 403 on every rebalance route, and nothing is written or sent', async () => {
    const other = await createAccountWithSession(w.t.db.db);
    const before = (await rows(w)).length;
    const jobsBefore = await w.t.db.db
      .selectFrom('jobs')
      .select('id')
      .where('name', '=', 'rebalances.burn')
      .execute();
    const res = await post(
      w,
      { from_chain_id: BASE, to_chain_id: POLYGON, amount: '1000000' },
      bearer(other.sessionToken),
    );
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'FORBIDDEN' });
    // 403 comes before validation too.
    expect((await post(w, { nonsense: true }, bearer(other.sessionToken))).statusCode).toBe(403);
    const some = (await rows(w))[0]!;
    expect((await complete(w, some.id, bearer(other.sessionToken))).statusCode).toBe(403);
    const get = await w.t.app.fastify.inject({
      method: 'GET',
      url: `/v1/rebalances/${some.id}`,
      headers: bearer(other.sessionToken),
    });
    expect(get.statusCode).toBe(403);
    expect((await rows(w)).length).toBe(before);
    const jobsAfter = await w.t.db.db
      .selectFrom('jobs')
      .select('id')
      .where('name', '=', 'rebalances.burn')
      .execute();
    expect(jobsAfter.length).toBe(jobsBefore.length);
  });

  it('the executor without a policy gets 404; without a key, 503', async () => {
    const bare = await rebalanceWorld(devnet, { rebalance: null, baseUsdc: 0n });
    try {
      const res = await post(bare, { from_chain_id: BASE, to_chain_id: POLYGON, amount: '1000000' });
      expect(res.statusCode).toBe(404);
      expect(res.json().next[0]).toMatchObject({ method: 'PUT', path: '/v1/policies' });
    } finally {
      await bare.close();
    }
    const keyless = await rebalanceWorld(devnet, { noExecutorKey: true, baseUsdc: 0n });
    try {
      const res = await post(keyless, { from_chain_id: BASE, to_chain_id: POLYGON, amount: '1000000' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ code: 'UNAVAILABLE' });
      expect((await rows(keyless)).length).toBe(0);
    } finally {
      await keyless.close();
    }
  });
});

describe('the rebalance policy', () => {
  it('refuses what the section does not allow with 422 naming the rule, and writes nothing', async () => {
    const narrow = await rebalanceWorld(devnet, {
      baseUsdc: 0n,
      rebalance: {
        enabled: true,
        corridors: [{ from_chain_id: BASE, to_chain_id: POLYGON }],
        min_transfer_usd: '10',
        max_transfer_usd: '100',
        daily_cap_usd: '150',
      },
    });
    try {
      const cases: [unknown, string][] = [
        [{ from_chain_id: POLYGON, to_chain_id: BASE, amount: '20000000' }, 'rebalance.corridors'],
        [{ from_chain_id: BASE, to_chain_id: POLYGON, amount: '9999999' }, 'rebalance.min_transfer_usd'],
        [{ from_chain_id: BASE, to_chain_id: POLYGON, amount: '100000001' }, 'rebalance.max_transfer_usd'],
      ];
      for (const [body, rule] of cases) {
        const res = await post(narrow, body);
        expect(res.statusCode, JSON.stringify(body)).toBe(422);
        expect(res.json()).toMatchObject({ code: 'POLICY_VIOLATION' });
        expect(res.json().message).toContain(rule);
      }
      expect((await rows(narrow)).length).toBe(0);
    } finally {
      await narrow.close();
    }
  });

  it('holds the daily cap exactly under concurrent admissions', async () => {
    const capped = await rebalanceWorld(devnet, {
      baseUsdc: 0n,
      poolSize: 8,
      rebalance: {
        enabled: true,
        corridors: [{ from_chain_id: BASE, to_chain_id: POLYGON }],
        min_transfer_usd: '1',
        max_transfer_usd: '500',
        daily_cap_usd: '3000',
      },
    });
    try {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          post(capped, { from_chain_id: BASE, to_chain_id: POLYGON, amount: '500000000' }),
        ),
      );
      const codes = answers.map((a) => a.statusCode).sort();
      expect(codes).toEqual([201, 201, 201, 201, 201, 201, 422, 422, 422, 422]);
      for (const a of answers.filter((x) => x.statusCode === 422)) {
        expect(a.json().message).toContain('rebalance.daily_cap_usd');
      }
      expect((await rows(capped)).length).toBe(6);
    } finally {
      await capped.close();
    }
  });

  it('rejects a policy whose daily cap is below its largest transfer', async () => {
    const res = await w.t.app.fastify.inject({
      method: 'PUT',
      url: '/v1/policies',
      headers: w.auth,
      payload: {
        version: 1,
        wallet: w.executor.address,
        chain_id: BASE,
        rebalance: { max_transfer_usd: '5000', daily_cap_usd: '100' },
      },
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('rebalance.daily_cap_usd');
  });
});

describe('bad input', () => {
  const cases: [string, unknown, string][] = [
    [
      'the same chain on both sides',
      { from_chain_id: BASE, to_chain_id: BASE, amount: '1000000' },
      'to_chain_id',
    ],
    [
      'a chain outside CCTP here',
      { from_chain_id: 84532, to_chain_id: POLYGON, amount: '1000000' },
      'from_chain_id',
    ],
    ['an unknown chain', { from_chain_id: BASE, to_chain_id: 1, amount: '1000000' }, 'to_chain_id'],
    ['zero', { from_chain_id: BASE, to_chain_id: POLYGON, amount: '0' }, 'amount'],
    ['a fraction', { from_chain_id: BASE, to_chain_id: POLYGON, amount: '1.5' }, 'amount'],
    ['a negative amount', { from_chain_id: BASE, to_chain_id: POLYGON, amount: '-5' }, 'amount'],
    ['a number, not a string', { from_chain_id: BASE, to_chain_id: POLYGON, amount: 5 }, 'amount'],
    [
      'an oversized amount',
      { from_chain_id: BASE, to_chain_id: POLYGON, amount: '1' + '0'.repeat(20) },
      'amount',
    ],
    ['a missing amount', { from_chain_id: BASE, to_chain_id: POLYGON }, 'amount'],
    ['a chain id as a string', { from_chain_id: 'base', to_chain_id: POLYGON, amount: '1' }, 'from_chain_id'],
    ['an unknown field', { from_chain_id: BASE, to_chain_id: POLYGON, amount: '1', extra: 1 }, 'extra'],
  ];
  it.each(cases)('%s: 400 naming the field, nothing reserved or sent', async (_, body, field) => {
    const before = (await rows(w)).length;
    const res = await post(w, body);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ code: 'INVALID_REQUEST' });
    expect(res.json().message).toContain(field);
    expect((await rows(w)).length).toBe(before);
  });

  it('an unknown or malformed id is 404', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', "'; drop table rebalances; --"]) {
      const res = await w.t.app.fastify.inject({
        method: 'GET',
        url: `/v1/rebalances/${encodeURIComponent(id)}`,
        headers: w.auth,
      });
      expect(res.statusCode).toBe(404);
      expect((await complete(w, encodeURIComponent(id))).statusCode).toBe(404);
    }
  });
});

describe('completing under pressure', () => {
  it('two completions at once mint once: the other is 409 or sees it minted', async () => {
    const polygon0 = await held(w, POLYGON);
    const r = await burned(w, BASE, POLYGON, 30n * USDC);
    const answers = await Promise.all([complete(w, r.id), complete(w, r.id), complete(w, r.id)]);
    const codes = answers.map((a) => a.statusCode);
    expect(codes.filter((c) => c === 200).length).toBeGreaterThanOrEqual(1);
    expect(codes.every((c) => c === 200 || c === 409)).toBe(true);
    expect(await read(w, r.id)).toMatchObject({ status: 'filled', phase: 'minted' });
    expect(await held(w, POLYGON)).toBe(polygon0 + 30n * USDC);
    const mints = await w.t.db.db
      .selectFrom('executor_transactions')
      .select('hash')
      .where('rebalance_id', '=', r.id)
      .where('purpose', '=', 'rebalance.mint')
      .execute();
    expect(mints).toHaveLength(1);
  });

  it('an attestation service that fails is 503 and changes nothing; a held message stays 202', async () => {
    const r = await burned(w, BASE, POLYGON, 20n * USDC);
    w.iris.knobs.serverError = 503;
    try {
      const res = await complete(w, r.id);
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toMatchObject({ code: 'UNAVAILABLE' });
    } finally {
      w.iris.knobs.serverError = null;
    }
    w.iris.hold(r.burn_tx as Hex);
    const held202 = await complete(w, r.id);
    expect(held202.statusCode).toBe(202);
    expect(held202.json()).toMatchObject({
      phase: 'awaiting_attestation',
      report: { attestation: { status: 'pending_confirmations' } },
    });
    w.iris.release(r.burn_tx as Hex);
    expect((await complete(w, r.id)).statusCode).toBe(200);
  });

  it('the Iris adapter treats a 404 and a pending status as not ready, and keeps quiet after a 429', async () => {
    const adapter = createIrisAdapter({
      baseUrl: w.iris.url,
      clock: systemClock,
      timeoutMs: 2_000,
      maxPerSecond: 35,
      rateLimitPauseMs: 60_000,
    });
    const unknown = `0x${'ab'.repeat(32)}` as Hex;
    expect(await adapter.lookup(6, unknown)).toMatchObject({ ready: false, why: 'not_found' });
    const r = await burned(w, BASE, POLYGON, 15n * USDC);
    w.iris.hold(r.burn_tx as Hex);
    expect(await adapter.lookup(6, r.burn_tx as Hex)).toMatchObject({
      ready: false,
      why: 'pending',
      status: 'pending_confirmations',
    });
    w.iris.knobs.rateLimitRetryAfter = '300';
    try {
      expect(await adapter.lookup(6, r.burn_tx as Hex)).toMatchObject({ ready: false, why: 'rate_limited' });
      const asked = w.iris.requests.length;
      w.iris.knobs.rateLimitRetryAfter = null;
      w.iris.release(r.burn_tx as Hex);
      // Within the quiet time it does not ask at all, though Iris would answer now.
      const quiet = await adapter.lookup(6, r.burn_tx as Hex);
      expect(quiet).toMatchObject({ ready: false, why: 'rate_limited' });
      expect(w.iris.requests.length).toBe(asked);
    } finally {
      w.iris.knobs.rateLimitRetryAfter = null;
    }
    const fresh = createIrisAdapter({
      baseUrl: w.iris.url,
      clock: systemClock,
      timeoutMs: 2_000,
      maxPerSecond: 35,
    });
    expect(await fresh.lookup(6, r.burn_tx as Hex)).toMatchObject({ ready: true, status: 'complete' });
    w.iris.knobs.serverError = 500;
    try {
      await expect(fresh.lookup(6, r.burn_tx as Hex)).rejects.toBeInstanceOf(AttestationUnavailable);
    } finally {
      w.iris.knobs.serverError = null;
    }
    expect((await complete(w, r.id)).statusCode).toBe(200);
  });
});

describe('an attested message past its expiration block', () => {
  it('is not sent (it would revert): 202 saying expired, nothing minted, no mint recorded', async () => {
    const e = await rebalanceWorld(devnet, { baseUsdc: 50n * USDC, iris: { expirationBlocks: 1 } });
    try {
      const polygon0 = await held(e, POLYGON);
      const r = await burned(e, BASE, POLYGON, 10n * USDC);
      // The attestation service fills expirationBlock = the destination's block + 1 when it signs.
      const signed = await fetch(`${e.iris.url}/v2/messages/6?transactionHash=${r.burn_tx}`);
      expect(((await signed.json()) as { messages: { status: string }[] }).messages[0]!.status).toBe(
        'complete',
      );
      await e.t.deps
        .chain!.publicClient(POLYGON)
        .request({ method: 'anvil_mine' as never, params: ['0x2'] as never });
      const res = await complete(e, r.id);
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json()).toMatchObject({
        phase: 'awaiting_attestation',
        report: { attestation: { status: 'expired' } },
      });
      expect(await held(e, POLYGON)).toBe(polygon0);
      const mints = await e.t.db.db
        .selectFrom('executor_transactions')
        .select('hash')
        .where('purpose', '=', 'rebalance.mint')
        .execute();
      expect(mints).toEqual([]);
    } finally {
      await e.close();
    }
  });
});

describe('an execution switch', () => {
  it('turned off after admission cancels the rebalance before anything is signed', async () => {
    const s = await rebalanceWorld(devnet, { baseUsdc: 100n * USDC });
    try {
      const base0 = await held(s, BASE);
      const res = await post(s, {
        from_chain_id: BASE,
        to_chain_id: POLYGON,
        amount: (10n * USDC).toString(),
      });
      expect(res.statusCode, res.body).toBe(201);
      const id = (res.json() as Rebalance).id;
      await setSwitch(
        s.t.db.db,
        systemClock,
        {
          scope: 'wallet',
          target: s.executor.address.toLowerCase(),
          enabled: false,
          reason: 'treasury review',
        },
        null,
      );
      expect(await runBurn(rebalanceRunDeps(s.t.deps)!, id)).toEqual({ state: 'done' });
      expect(await read(s, id)).toMatchObject({
        status: 'cancelled',
        phase: 'burn_pending',
        burn_tx: null,
        report: { cancel: { reason: 'EXECUTION_DISABLED' } },
      });
      expect(await held(s, BASE)).toBe(base0);
      expect(await eventKinds(s, id)).toEqual(['rebalance.planned', 'rebalance.cancelled']);
      const signed = await s.t.db.db.selectFrom('executor_transactions').select('hash').execute();
      expect(signed).toEqual([]);
      const again = await post(s, {
        from_chain_id: BASE,
        to_chain_id: POLYGON,
        amount: (10n * USDC).toString(),
      });
      expect(again.statusCode).toBe(403);
      expect(again.json()).toMatchObject({ code: 'EXECUTION_DISABLED' });
    } finally {
      await s.close();
    }
  });
});

describe('fuzzing POST /v1/rebalances as the executor', () => {
  it('answers 201, 400 or 422 with the error body, and a refusal writes nothing', async () => {
    const f = await rebalanceWorld(devnet, {
      baseUsdc: 0n,
      rebalance: {
        enabled: true,
        corridors: [{ from_chain_id: BASE, to_chain_id: POLYGON }],
        min_transfer_usd: '1',
        max_transfer_usd: '100',
        daily_cap_usd: '100000',
      },
    });
    try {
      const chainId = fc.oneof(
        fc.constantFrom(BASE, POLYGON, 84532, 1, 0, -1),
        fc.integer(),
        fc.double(),
        fc.string({ maxLength: 6 }),
        fc.constant(null),
      );
      const amount = fc.oneof(
        fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }).map((b) => b.toString()),
        fc.stringMatching(/^[0-9.e+-]{0,24}$/),
        fc.string({ maxLength: 12 }),
        fc.integer(),
        fc.constant(null),
      );
      const body = fc.record(
        { from_chain_id: chainId, to_chain_id: chainId, amount, extra: fc.jsonValue({ maxDepth: 1 }) },
        { requiredKeys: [] },
      );
      await fc.assert(
        fc.asyncProperty(body, async (payload) => {
          const before = (await rows(f)).length;
          const res = await post(f, payload);
          expect([201, 400, 422], res.body).toContain(res.statusCode);
          if (res.statusCode === 201) return;
          expect(res.json()).toMatchObject({
            code: expect.stringMatching(/^(INVALID_REQUEST|POLICY_VIOLATION)$/),
          });
          expect((await rows(f)).length).toBe(before);
        }),
        { numRuns: 150 },
      );
    } finally {
      await f.close();
    }
  });
});
