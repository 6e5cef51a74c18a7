// POST /v1/feedback without X-PAYMENT: paid from the prepaid balance in the transaction that
// records the request, free with metering off, and otherwise an x402 v1 402 with a recorded
// challenge; the challenges' retention by the housekeeping job, on a manual clock.

import { sql } from 'kysely';
import { getAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fundPrepaid } from '../../../test/support/prepaid.ts';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import { gate } from '../../../test/support/probes.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import { paymentsSetup, type PaymentsSetup } from '../../../test/support/payments.ts';
import { testConfig } from '../../config.ts';
import { ManualClock } from '../../core/clock.ts';
import type { Job } from '../../core/jobs/index.ts';
import { jobHandlers } from '../../jobs.ts';
import { listAudit } from '../audit/index.ts';
import { readPrepaidBalance, setMeteringEnforced } from '../billing/index.ts';
import { listEvents } from '../events/index.ts';
import { groupBatcher } from '../ledger/index.ts';
import { listChallenges, recordChallenge } from './challenges.ts';

const devnet = inject('devnet');
const USD = 1_000_000n;
let t: TestApp;
let setup: PaymentsSetup;

beforeAll(async () => {
  setup = await paymentsSetup(devnet, testConfig());
  t = await createTestApp({ config: setup.config, deps: setup.deps });
});
afterAll(async () => {
  await t?.close();
});

const TITLE = 'Support Polygon rebalances';
const BODY = 'Please add CCTP rebalances between Base and Polygon for the treasury.';

function post(token: string, payload: unknown, headers: Record<string, string> = {}) {
  return t.app.fastify.inject({
    method: 'POST',
    url: '/v1/feedback',
    headers: { ...bearer(token), ...headers },
    payload: payload as object,
  });
}

const fund = (accountId: string, micro: bigint) => fundPrepaid(t.db.db, t.deps.clock, accountId, micro);

const balanceOf = async (accountId: string) => (await readPrepaidBalance(t.db.db, accountId)).balanceMicro;
const requestsOf = (accountId: string) =>
  t.db.db.selectFrom('feature_requests').selectAll().where('account_id', '=', accountId).execute();
const groupsOf = (accountId: string) =>
  t.db.db
    .selectFrom('ledger_groups')
    .select(['id', 'kind', 'settlement_id'])
    .where('account_id', '=', accountId)
    .orderBy('seq')
    .execute();

describe('POST /v1/feedback from the prepaid balance', () => {
  it('charges 1 USD, records the request and lists it publicly without its body', async () => {
    const acc = await createAccountWithSession(t.db.db);
    await fund(acc.accountId, 3n * USD);

    const res = await post(acc.sessionToken, { title: TITLE, body: BODY });
    expect(res.statusCode, res.body).toBe(201);
    const receipt = res.json() as { id: string; status: string; charged_usd: string; paid_ref: string };
    expect(Object.keys(receipt).sort()).toEqual(['charged_usd', 'id', 'paid_ref', 'status']);
    expect(receipt).toMatchObject({ status: 'open', charged_usd: '1' });
    expect(receipt.id).toMatch(/^fr_[0-9a-z]{20}$/);
    expect(await balanceOf(acc.accountId)).toBe(2n * USD);

    // paid_ref is the fee's ledger group, booked once under the request's identity.
    const groups = await groupsOf(acc.accountId);
    const fee = groups.find((g) => g.kind === 'fee.feedback');
    expect(fee).toEqual({
      id: receipt.paid_ref,
      kind: 'fee.feedback',
      settlement_id: `fee:feedback:${receipt.id}`,
    });

    const stored = await requestsOf(acc.accountId);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ id: receipt.id, title: TITLE, body: BODY, status: 'open' });

    const list = await t.app.fastify.inject({ method: 'GET', url: '/v1/feedback?limit=200' });
    const listed = (list.json() as { requests: Record<string, unknown>[] }).requests.find(
      (r) => r['id'] === receipt.id,
    );
    expect(listed).toEqual({
      id: receipt.id,
      title: TITLE,
      status: 'open',
      created_at: stored[0]?.created_at.toISOString(),
    });
    expect(list.body).not.toContain(BODY);
    expect(list.body).not.toContain(acc.accountId);

    const events = await listEvents(t.db.db, acc.accountId, 10);
    const created = events.find((e) => e.kind === 'feedback.created');
    expect(created?.subject).toBe(receipt.id);
    expect(created?.payload).toMatchObject({
      charged_usd: '1',
      paid_by: 'prepaid',
      paid_ref: receipt.paid_ref,
    });
    // The debit's own event, booked in the same statement as the fee.
    const debited = events.find((e) => e.kind === 'balance.debited');
    expect(debited?.subject).toBe(receipt.paid_ref);
    expect(debited?.payload).toMatchObject({ product: 'feedback', fee_usd: '1', group_id: receipt.paid_ref });
    const audit = await listAudit(t.db.db, acc.accountId, 10);
    expect(audit.find((a) => a.action === 'feedback.create')).toMatchObject({
      subject: receipt.id,
      actor: `session:${acc.sessionId}`,
    });
    // No payment challenge: nothing was asked of an x402 client.
    expect(await listChallenges(t.db.db, acc.accountId)).toEqual([]);
  });

  it('charges once per Idempotency-Key: the retry replays the first answer', async () => {
    const acc = await createAccountWithSession(t.db.db);
    await fund(acc.accountId, 3n * USD);
    const key = { 'idempotency-key': `fb-${acc.accountId}` };
    const first = await post(acc.sessionToken, { title: TITLE, body: BODY }, key);
    expect(first.statusCode, first.body).toBe(201);
    const again = await post(acc.sessionToken, { title: TITLE, body: BODY }, key);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(await balanceOf(acc.accountId)).toBe(2n * USD);
    expect(await requestsOf(acc.accountId)).toHaveLength(1);
    // Without a key, a second submission is a second request, charged again.
    expect((await post(acc.sessionToken, { title: TITLE, body: BODY })).statusCode).toBe(201);
    expect(await balanceOf(acc.accountId)).toBe(1n * USD);
  });

  it.skipIf(!process.env.DATABASE_URL)(
    'lets concurrent requests spend the balance only as far as it goes (PostgreSQL)',
    async () => {
      const acc = await createAccountWithSession(t.db.db);
      await fund(acc.accountId, 2n * USD);
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => post(acc.sessionToken, { title: TITLE, body: BODY })),
      );
      expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 201, 402, 402, 402]);
      expect(await balanceOf(acc.accountId)).toBe(0n);
      expect(await requestsOf(acc.accountId)).toHaveLength(2);
      expect(await listChallenges(t.db.db, acc.accountId)).toHaveLength(3);
    },
  );

  it.skipIf(!process.env.DATABASE_URL)(
    '48 parallel requests over 8 accounts, keyed and not, pay whole or not at all, each key once (PostgreSQL)',
    async () => {
      // Each account holds 3 USD and sends 6 requests at once, all through the batcher: two
      // without a key, two with keys of their own, and two with one key between them (a retry
      // racing its first attempt). That is 5 distinct requests for 3 USD: 3 are paid.
      const accounts = await Promise.all(Array.from({ length: 8 }, () => createAccountWithSession(t.db.db)));
      for (const acc of accounts) await fund(acc.accountId, 3n * USD);
      const keys = [null, null, 'own-1', 'own-2', 'shared', 'shared'];
      const sends = accounts.flatMap((acc) =>
        keys.map((key) => ({
          acc,
          key,
          headers: key === null ? {} : { 'idempotency-key': `${key}-${acc.accountId}` },
        })),
      );
      const batcher = groupBatcher(t.deps.db);
      const batchedBefore = batcher.stats.bookings;
      const answers = await Promise.all(
        sends.map(({ acc, headers }) => post(acc.sessionToken, { title: TITLE, body: BODY }, headers)),
      );
      expect(batcher.stats.bookings - batchedBefore).toBeGreaterThanOrEqual(40); // no transactional path
      for (const acc of accounts) {
        const own = sends.map((send, i) => ({ ...send, answer: answers[i]! })).filter((x) => x.acc === acc);
        for (const { answer } of own) expect([201, 402], answer.body).toContain(answer.statusCode);
        const paid = own.filter((x) => x.answer.statusCode === 201);
        const receipts = new Map(paid.map((x) => [x.answer.json<{ id: string }>().id, x.answer.json()]));
        expect(receipts.size, own.map((x) => `${x.key}: ${x.answer.statusCode}`).join(', ')).toBe(3);
        // The two attempts under one key answer alike when the first was paid (one of them replays).
        const shared = own.filter((x) => x.key === 'shared').map((x) => x.answer);
        if (shared.every((a) => a.statusCode === 201)) {
          expect(shared[0]!.body).toBe(shared[1]!.body);
          expect(shared.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(1);
        }
        expect(await balanceOf(acc.accountId)).toBe(0n);
        const requests = await requestsOf(acc.accountId);
        expect(requests.map((r) => r.id).sort()).toEqual([...receipts.keys()].sort());
        const fees = (await groupsOf(acc.accountId)).filter((g) => g.kind === 'fee.feedback');
        expect(fees.map((g) => g.id).sort()).toEqual(
          [...receipts.values()].map((r) => (r as { paid_ref: string }).paid_ref).sort(),
        );
        // A paid key's answer is stored as sent; a refused key is given back (no row).
        for (const { key, answer } of own.filter((x) => x.key !== null && x.key !== 'shared')) {
          const stored = await t.db.db
            .selectFrom('idempotency_keys')
            .select(['response_status', 'response_body'])
            .where('key', '=', `${key}-${acc.accountId}`)
            .execute();
          expect(stored).toEqual(
            answer.statusCode === 201 ? [{ response_status: 201, response_body: answer.body }] : [],
          );
        }
      }
    },
    30_000,
  );

  it.skipIf(!process.env.DATABASE_URL)(
    '20 concurrent attempts with one Idempotency-Key charge once and answer alike (PostgreSQL)',
    async () => {
      const acc = await createAccountWithSession(t.db.db);
      await fund(acc.accountId, 5n * USD);
      const key = { 'idempotency-key': `race-${acc.accountId}` };
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => post(acc.sessionToken, { title: TITLE, body: BODY }, key)),
      );
      expect(answers.map((a) => a.statusCode)).toEqual(Array(20).fill(201));
      expect(new Set(answers.map((a) => a.body)).size).toBe(1);
      expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
      expect(await balanceOf(acc.accountId)).toBe(4n * USD);
      expect(await requestsOf(acc.accountId)).toHaveLength(1);
      expect((await groupsOf(acc.accountId)).filter((g) => g.kind === 'fee.feedback')).toHaveLength(1);
    },
    30_000,
  );

  it.skipIf(!process.env.DATABASE_URL)(
    'keys held by requests in flight hold up only their own retries, which then answer 409 (PostgreSQL)',
    async () => {
      const acc = await createAccountWithSession(t.db.db);
      await fund(acc.accountId, 10n * USD);
      const heldKeys = [`held-a-${acc.accountId}`, `held-b-${acc.accountId}`];
      const released = gate();
      const held = gate();
      // First requests still in flight (as many as the batcher runs statements at once): their
      // claims on the keys, not committed.
      const first = t.db.db.transaction().execute(async (tx) => {
        for (const heldKey of heldKeys) {
          await sql`INSERT INTO idempotency_keys
              (scope, method, path, key, fingerprint, response_status, response_body, response_type, created_at, expires_at)
            VALUES (${acc.accountId}, 'POST', '/v1/feedback', ${heldKey}, 'f', 0, '', '', now(), now() + interval '1 day')`.execute(
            tx,
          );
        }
        held.open();
        await released.opened;
        throw new Error('the first request fails: its claim goes away');
      });
      await held.opened;
      try {
        const started = performance.now();
        const retries = heldKeys.map((heldKey) =>
          post(acc.sessionToken, { title: TITLE, body: BODY }, { 'idempotency-key': heldKey }),
        );
        const others = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            post(
              acc.sessionToken,
              { title: TITLE, body: BODY },
              { 'idempotency-key': `free-${i}-${acc.accountId}` },
            ),
          ),
        );
        const othersTook = performance.now() - started;
        expect(others.map((o) => o.statusCode)).toEqual(Array(6).fill(201));
        // Not held up by the 3 s the retries wait for their keys (they may have shared a batch).
        expect(othersTook).toBeLessThan(2000);
        for (const answered of await Promise.all(retries))
          expectErrorBody(answered, 409, 'IDEMPOTENCY_CONFLICT');
      } finally {
        released.open();
      }
      await expect(first).rejects.toThrow(/first request fails/);
      expect(await balanceOf(acc.accountId)).toBe(4n * USD);
      expect(await requestsOf(acc.accountId)).toHaveLength(6);
    },
    20_000,
  );

  it('gives the key back when the balance does not cover the fee: the retry after a top-up pays', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const key = { 'idempotency-key': `later-${acc.accountId}` };
    expect((await post(acc.sessionToken, { title: TITLE, body: BODY }, key)).statusCode).toBe(402);
    await fund(acc.accountId, 1n * USD);
    const paid = await post(acc.sessionToken, { title: TITLE, body: BODY }, key);
    expect(paid.statusCode, paid.body).toBe(201);
    expect(paid.headers['idempotent-replayed']).toBeUndefined();
    const again = await post(acc.sessionToken, { title: TITLE, body: BODY }, key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(paid.body);
    expect(await balanceOf(acc.accountId)).toBe(0n);
    expect(await requestsOf(acc.accountId)).toHaveLength(1);
  });

  it('records for free with metering switched off', async () => {
    const acc = await createAccountWithSession(t.db.db);
    await setMeteringEnforced(t.db.db, false, 'test', new Date());
    try {
      const res = await post(acc.sessionToken, { title: TITLE, body: BODY });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ status: 'open', charged_usd: '0', paid_ref: null });
      // With a key, the free request is recorded once and replayed.
      const key = { 'idempotency-key': `free-${acc.accountId}` };
      const keyed = await post(acc.sessionToken, { title: TITLE, body: BODY }, key);
      expect(keyed.json()).toMatchObject({ charged_usd: '0' });
      const again = await post(acc.sessionToken, { title: TITLE, body: BODY }, key);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(keyed.body);
    } finally {
      await setMeteringEnforced(t.db.db, null, 'test', new Date());
    }
    expect(await balanceOf(acc.accountId)).toBe(0n);
    expect(await groupsOf(acc.accountId)).toEqual([]);
    expect(await requestsOf(acc.accountId)).toHaveLength(2);
    expect(await listChallenges(t.db.db, acc.accountId)).toEqual([]);
  });

  it.each([
    ['a short title', { title: 'Short', body: BODY }, /title/],
    ['a long title', { title: 'x'.repeat(121), body: BODY }, /title/],
    ['a short body', { title: TITLE, body: 'too short' }, /body/],
    ['a long body', { title: TITLE, body: 'y'.repeat(4001) }, /body/],
    ['no body', { title: TITLE }, /body is required/],
    ['an unknown field', { title: TITLE, body: BODY, wallet: '0x00' }, /unknown field wallet/],
  ])('refuses %s with 400 and writes nothing', async (_name, payload, says) => {
    const acc = await createAccountWithSession(t.db.db);
    await fund(acc.accountId, 3n * USD);
    const err = expectErrorBody(await post(acc.sessionToken, payload), 400, 'INVALID_REQUEST');
    expect(err.message).toMatch(says);
    expect(await balanceOf(acc.accountId)).toBe(3n * USD);
    expect(await requestsOf(acc.accountId)).toEqual([]);
  });

  it('accepts the exact bounds of title and body', async () => {
    const acc = await createAccountWithSession(t.db.db);
    await fund(acc.accountId, 2n * USD);
    expect((await post(acc.sessionToken, { title: 't'.repeat(8), body: 'b'.repeat(20) })).statusCode).toBe(
      201,
    );
    expect(
      (await post(acc.sessionToken, { title: 't'.repeat(120), body: 'b'.repeat(4000) })).statusCode,
    ).toBe(201);
  });

  it('needs a bearer credential', async () => {
    const res = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/feedback',
      payload: { title: TITLE, body: BODY },
    });
    expectErrorBody(res, 401, 'UNAUTHORIZED');
  });
});

describe('POST /v1/feedback when the balance does not cover the fee', () => {
  it('answers 402 with the x402 v1 body beside the error body and records the challenge', async () => {
    const acc = await createAccountWithSession(t.db.db);
    await fund(acc.accountId, USD / 2n);
    const res = await post(
      acc.sessionToken,
      { title: TITLE, body: BODY },
      { 'idempotency-key': 'pay-later' },
    );
    expect(res.statusCode, res.body).toBe(402);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json() as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(
      [
        'accepts',
        'error',
        'x402Version',
        'code',
        'message',
        'remediation',
        'docs_url',
        'request_id',
        'next',
      ].sort(),
    );
    expect(body).toEqual({
      code: 'PAYMENT_REQUIRED',
      message: expect.stringContaining('1 USD') as unknown,
      remediation: expect.stringContaining('X-PAYMENT') as unknown,
      docs_url: `${t.deps.config.publicUrl}/docs/errors#PAYMENT_REQUIRED`,
      request_id: res.headers['x-request-id'],
      next: expect.arrayContaining([
        expect.objectContaining({ method: 'POST', path: '/v1/balance/topups' }),
      ]) as unknown,
      x402Version: 1,
      error: 'X-PAYMENT header is required',
      accepts: [
        {
          scheme: 'exact',
          network: 'base',
          maxAmountRequired: '1000000',
          resource: `${t.deps.config.publicUrl}/v1/feedback`,
          description: expect.stringContaining('1 USD') as unknown,
          mimeType: 'application/json',
          payTo: getAddress(setup.treasury),
          maxTimeoutSeconds: 300,
          asset: getAddress(setup.usdc),
          extra: { name: setup.domain.name, version: setup.domain.version },
        },
      ],
    });
    const accepts = (body['accepts'] as Record<string, unknown>[])[0] ?? {};
    expect(Object.keys(accepts).sort()).toEqual(
      [
        'asset',
        'description',
        'extra',
        'maxAmountRequired',
        'maxTimeoutSeconds',
        'mimeType',
        'network',
        'payTo',
        'resource',
        'scheme',
      ].sort(),
    );

    const challenges = await listChallenges(t.db.db, acc.accountId);
    expect(challenges).toHaveLength(1);
    expect(challenges[0]).toMatchObject({
      resource: `${t.deps.config.publicUrl}/v1/feedback`,
      amount: '1000000',
      payee: setup.treasury.toLowerCase(),
      asset: setup.usdc.toLowerCase(),
      network: 'base',
      used_at: null,
      settlement_id: null,
    });
    // Nothing charged or recorded, and the 402 is not stored under the key: once the balance
    // covers the fee, the same key records the request.
    expect(await balanceOf(acc.accountId)).toBe(USD / 2n);
    expect(await requestsOf(acc.accountId)).toEqual([]);
    await fund(acc.accountId, USD);
    const retry = await post(
      acc.sessionToken,
      { title: TITLE, body: BODY },
      { 'idempotency-key': 'pay-later' },
    );
    expect(retry.statusCode, retry.body).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await balanceOf(acc.accountId)).toBe(USD / 2n);
  });

  it('answers 503 UNAVAILABLE when payments are not configured, and still takes the prepaid balance', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payments = t.deps.config.payments;
    t.deps.config.payments = { ...payments, treasury: null };
    try {
      const err = expectErrorBody(
        await post(acc.sessionToken, { title: TITLE, body: BODY }),
        503,
        'UNAVAILABLE',
      );
      expect(err.message).toMatch(/Payments are not configured/);
      expect(await listChallenges(t.db.db, acc.accountId)).toEqual([]);
      await fund(acc.accountId, USD);
      expect((await post(acc.sessionToken, { title: TITLE, body: BODY })).statusCode).toBe(201);
    } finally {
      t.deps.config.payments = payments;
    }
    expect(await balanceOf(acc.accountId)).toBe(0n);
  });
});

describe('payment challenge retention', () => {
  it('deletes unused challenges after 1 day and used ones 7 days after use', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00.000Z');
    const acc = await createAccountWithSession(t.db.db);
    const terms = {
      accountId: acc.accountId,
      resource: 'http://purser.test/v1/feedback',
      amount: USD,
      payee: setup.treasury,
      asset: setup.usdc,
      network: 'base',
    };
    const oldUnused = await recordChallenge(t.db.db, clock, terms);
    const used = await recordChallenge(t.db.db, clock, terms);
    clock.advance(12 * 3600_000);
    const freshUnused = await recordChallenge(t.db.db, clock, terms);
    // Used half a day after it was issued.
    await t.db.db
      .updateTable('payment_challenges')
      .set({ used_at: clock.now() })
      .where('id', '=', used)
      .execute();

    const runJob = async (at: ManualClock) => {
      await jobHandlers({ ...t.deps, clock: at })['housekeeping.payment_challenges']!({} as Job, {
        attempt: 1,
        workerId: 'test',
        signal: new AbortController().signal,
      });
    };
    const ids = async () => (await listChallenges(t.db.db, acc.accountId)).map((c) => c.id).sort();

    // 1 day after the first two were issued: nothing is past its period yet.
    clock.set('2026-03-02T00:00:00.000Z');
    await runJob(clock);
    expect(await ids()).toEqual([oldUnused, used, freshUnused].sort());
    // Just past a day: the old unused one goes; the used one stays (used 12 h ago).
    clock.advance(1);
    await runJob(clock);
    expect(await ids()).toEqual([used, freshUnused].sort());
    // 1.5 days: the fresh unused one is past its day too.
    clock.set('2026-03-02T12:00:00.001Z');
    await runJob(clock);
    expect(await ids()).toEqual([used]);
    // The used one lives 7 days from its use (2026-03-01T12:00Z), and a second run changes nothing.
    clock.set('2026-03-08T12:00:00.000Z');
    await runJob(clock);
    expect(await ids()).toEqual([used]);
    clock.advance(1);
    await runJob(clock);
    await runJob(clock);
    expect(await ids()).toEqual([]);
  });
});
