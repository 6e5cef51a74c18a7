// POST /v1/feedback paid with x402 v1 against the devnet: the official client library
// (@x402/fetch + @x402/evm's v1 exact scheme) pays a running service on a loopback port; the same
// X-PAYMENT again never pays twice; every malformed or wrong payment is refused with nothing
// broadcast, credited or debited; a settlement whose outcome is unknown answers 202 until the
// reconciler finishes it.

import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client, type Network } from '@x402/fetch';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/client';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { getAddress, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { checkErrorShape, expectErrorBody } from '../../../test/support/error-body.ts';
import { bearer, createAccountWithSession, type AccountWithSession } from '../../../test/support/identity.ts';
import {
  newPayer,
  PAYMENTS_CHAIN,
  paymentsSetup,
  signAuthorization,
  type AuthorizationFields,
  type Payer,
  type PaymentsSetup,
} from '../../../test/support/payments.ts';
import { testConfig } from '../../config.ts';
import { settlementEffects } from '../../settlement-effects.ts';
import { readPrepaidBalance, setMeteringEnforced } from '../billing/index.ts';
import { listEvents } from '../events/index.ts';
import { reconcileStaleSettlements, transferWithAuthorizationCalldata } from '../payments/index.ts';
import { listChallenges } from './challenges.ts';

const devnet = inject('devnet');
const USD = 1_000_000n;
const FUZZ_RUNS = 150;
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
let t: TestApp;
let setup: PaymentsSetup;
let url = '';

beforeAll(async () => {
  setup = await paymentsSetup(devnet, testConfig());
  t = await createTestApp({ config: setup.config, deps: setup.deps, poolSize: 10 });
  await t.app.fastify.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.fastify.server.address();
  if (!address || typeof address !== 'object') throw new Error('the app is not listening');
  url = `http://127.0.0.1:${address.port}`;
  // As PURSER_PUBLIC_URL would be: the resource of the 402 names where the service really is.
  t.deps.config.publicUrl = url;
});
afterAll(async () => {
  await t?.close();
});

const TITLE = 'Paid with x402 from an agent';
const BODY = 'The agent had no prepaid balance and paid the fee per request with x402.';

const chain = () => {
  const c = t.deps.chain;
  if (!c) throw new Error('no chain');
  return c;
};
const usdcOf = (address: Address) => chain().erc20Balance(PAYMENTS_CHAIN, setup.usdc, address);
const relayerTxCount = () =>
  chain().publicClient(PAYMENTS_CHAIN).getTransactionCount({ address: setup.relayer });
const requestsOf = (accountId: string) =>
  t.db.db.selectFrom('feature_requests').selectAll().where('account_id', '=', accountId).execute();
const groupsOf = (accountId: string) =>
  t.db.db
    .selectFrom('ledger_groups')
    .select(['kind', 'settlement_id'])
    .where('account_id', '=', accountId)
    .orderBy('seq')
    .execute();
const settlementsOf = (accountId: string) =>
  t.db.db.selectFrom('payment_settlements').selectAll().where('account_id', '=', accountId).execute();

function encode(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8').toString('base64');
}

/** An X-PAYMENT header as an x402 v1 client builds it, from a signed authorization. */
async function xPayment(
  payer: Payer,
  fields: Partial<AuthorizationFields> = {},
  top: Record<string, unknown> = {},
) {
  const payload = await signAuthorization(setup, payer, { to: setup.treasury, value: USD, ...fields });
  return encode({ x402Version: 1, scheme: 'exact', network: 'base', payload, ...top });
}

function post(token: string, header: string | undefined, payload: unknown = { title: TITLE, body: BODY }) {
  return t.app.fastify.inject({
    method: 'POST',
    url: '/v1/feedback',
    headers: { ...bearer(token), ...(header === undefined ? {} : { 'x-payment': header }) },
    payload: payload as object,
  });
}

describe('the official x402 client pays POST /v1/feedback', () => {
  let acc: AccountWithSession;
  let payer: Payer;
  let sentHeader = '';
  let firstId = '';

  it('answers 402, then 201 once the payment settled: 1 USD moved, one credit and one fee booked', async () => {
    acc = await createAccountWithSession(t.db.db);
    payer = await newPayer(devnet, 5n * USD);
    const treasuryBefore = await usdcOf(setup.treasury);
    const relayerBefore = await relayerTxCount();

    const sent: { status: number; xPayment: string | null }[] = [];
    const recordingFetch: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const res = await fetch(request);
      sent.push({ status: res.status, xPayment: request.headers.get('x-payment') });
      return res;
    };
    const client = new x402Client()
      .registerV1('base', new ExactEvmSchemeV1(privateKeyToAccount(payer.privateKey)))
      // The devnet's USDC is not one of the library's known assets: allow it, capped at the fee.
      // (Network is typed as CAIP-2 for v2; v1 names match the same way.)
      .setSpendControls({
        allowedAssets: [{ network: 'base' as Network, asset: setup.usdc, maxAmountPerPayment: '1000000' }],
      });
    const payingFetch = wrapFetchWithPayment(recordingFetch, client);
    const res = await payingFetch(`${url}/v1/feedback`, {
      method: 'POST',
      headers: { ...bearer(acc.sessionToken), 'content-type': 'application/json' },
      body: JSON.stringify({ title: TITLE, body: BODY }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(201);
    expect(sent.map((s) => s.status)).toEqual([402, 201]);
    expect(sent[0]?.xPayment).toBeNull();
    sentHeader = sent[1]?.xPayment ?? '';
    expect(sentHeader).not.toBe('');

    const receipt = JSON.parse(text) as { id: string; status: string; charged_usd: string; paid_ref: string };
    firstId = receipt.id;
    expect(receipt).toMatchObject({ status: 'open', charged_usd: '1' });
    expect(receipt.paid_ref).toMatch(/^0x[0-9a-f]{64}$/);
    const header = res.headers.get('x-payment-response');
    expect(header).not.toBeNull();
    expect(decodePaymentResponseHeader(header ?? '')).toEqual({
      success: true,
      transaction: receipt.paid_ref,
      network: 'base',
      payer: getAddress(payer.address),
    });
    expect((await chain().getReceipt(PAYMENTS_CHAIN, receipt.paid_ref as Hex))?.status).toBe('success');

    // The money: exactly 1 USD from the payer to the treasury, one transaction by the relayer.
    expect(await usdcOf(payer.address)).toBe(4n * USD);
    expect(await usdcOf(setup.treasury)).toBe(treasuryBefore + USD);
    expect(await relayerTxCount()).toBe(relayerBefore + 1);

    // The books: one credit (the authorization) and one fee debit (the feature request), net zero.
    const nonce = (
      JSON.parse(Buffer.from(sentHeader, 'base64').toString('utf8')) as {
        payload: { authorization: { nonce: string } };
      }
    ).payload.authorization.nonce;
    const creditId = `eip3009:${PAYMENTS_CHAIN}:${payer.address.toLowerCase()}:${nonce}`;
    expect(await groupsOf(acc.accountId)).toEqual([
      { kind: 'topup', settlement_id: creditId },
      { kind: 'fee.feedback', settlement_id: `fee:feedback:${creditId}` },
    ]);
    expect((await readPrepaidBalance(t.db.db, acc.accountId)).balanceMicro).toBe(0n);
    const requests = await requestsOf(acc.accountId);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ id: receipt.id, title: TITLE, body: BODY, status: 'open' });
    // The credit's event gives the balance as GET /v1/balance does, with six decimals.
    const events = await listEvents(t.db.db, acc.accountId, 10);
    expect(events.find((e) => e.kind === 'balance.credited')?.payload).toEqual({
      source: 'x402',
      value_usd: '1',
      balance_usd: '1.000000',
      payer: expect.stringMatching(new RegExp(`^${payer.address}$`, 'i')),
      tx_hash: receipt.paid_ref,
    });

    // The settlement carried the request before broadcast; it is settled, its signature gone.
    const settlements = await settlementsOf(acc.accountId);
    expect(settlements).toHaveLength(1);
    expect(settlements[0]).toMatchObject({
      purpose: 'feedback',
      status: 'settled',
      signature: null,
      tx_hash: receipt.paid_ref,
      request: {
        title: TITLE,
        body: BODY,
        actor: `session:${acc.sessionId}`,
        resource: `${url}/v1/feedback`,
      },
    });
    // The 402's challenge is linked to the payment that answered it.
    const challenges = await listChallenges(t.db.db, acc.accountId);
    expect(challenges).toHaveLength(1);
    expect(challenges[0]?.settlement_id).toBe(settlements[0]?.id);
    expect(challenges[0]?.used_at).toBeInstanceOf(Date);

    const listed = await t.app.fastify.inject({ method: 'GET', url: '/v1/feedback?limit=200' });
    expect(listed.json().requests.map((r: { id: string }) => r.id)).toContain(receipt.id);
    expect(listed.body).not.toContain(BODY);
  });

  it('answers a retry with the same X-PAYMENT with the same request, charging nothing again', async () => {
    expect(sentHeader).not.toBe('');
    const relayerBefore = await relayerTxCount();
    const treasuryBefore = await usdcOf(setup.treasury);
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${url}/v1/feedback`, {
        method: 'POST',
        headers: { ...bearer(acc.sessionToken), 'content-type': 'application/json', 'x-payment': sentHeader },
        body: JSON.stringify({ title: TITLE, body: BODY }),
      });
      const text = await res.text();
      expect(res.status, text).toBe(201);
      expect(JSON.parse(text)).toMatchObject({ id: firstId, charged_usd: '1' });
      expect(decodePaymentResponseHeader(res.headers.get('x-payment-response') ?? '')).toMatchObject({
        success: true,
      });
    }
    expect(await relayerTxCount()).toBe(relayerBefore);
    expect(await usdcOf(payer.address)).toBe(4n * USD);
    expect(await usdcOf(setup.treasury)).toBe(treasuryBefore);
    expect(await groupsOf(acc.accountId)).toHaveLength(2);
    expect(await requestsOf(acc.accountId)).toHaveLength(1);
  });

  it('refuses the same X-PAYMENT for another request or from another account', async () => {
    expect(sentHeader).not.toBe('');
    const other = expectErrorBody(
      await post(acc.sessionToken, sentHeader, { title: 'Another title here', body: BODY }),
      400,
      'PAYMENT_INVALID',
    );
    expect(other.message).toMatch(/invalid_transaction_state/);
    const stranger = await createAccountWithSession(t.db.db);
    expectErrorBody(await post(stranger.sessionToken, sentHeader), 400, 'PAYMENT_INVALID');
    expect(await requestsOf(stranger.accountId)).toEqual([]);
    expect(await requestsOf(acc.accountId)).toHaveLength(1);
  });
});

describe.skipIf(!process.env.DATABASE_URL)('concurrent submissions of one X-PAYMENT (PostgreSQL)', () => {
  it('settle it once: one transfer, one credit, one fee, one request', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 3n * USD);
    const header = await xPayment(payer);
    const relayerBefore = await relayerTxCount();
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(acc.sessionToken, header)));
    const statuses = answers.map((a) => a.statusCode);
    expect(
      statuses.every((s) => s === 201 || s === 202),
      answers.map((a) => a.body).join('\n'),
    ).toBe(true);
    expect(statuses).toContain(201);
    expect(await relayerTxCount()).toBe(relayerBefore + 1);
    expect(await usdcOf(payer.address)).toBe(2n * USD);
    expect((await groupsOf(acc.accountId)).map((g) => g.kind)).toEqual(['topup', 'fee.feedback']);
    const requests = await requestsOf(acc.accountId);
    expect(requests).toHaveLength(1);
    for (const a of answers.filter((x) => x.statusCode === 201)) expect(a.json().id).toBe(requests[0]?.id);
    // Once settled, every retry reads the same request.
    const again = await post(acc.sessionToken, header);
    expect(again.statusCode).toBe(201);
    expect(again.json().id).toBe(requests[0]?.id);
  });
});

describe('bad payments are refused with nothing broadcast, credited or debited', () => {
  it('refuses each malformed header and each wrong authorization by name', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 5n * USD);
    const stranger = await newPayer(devnet, 0n);
    const now = BigInt(Math.floor(Date.now() / 1000));
    const weth = getAddress(devnet.chains[PAYMENTS_CHAIN]!.contracts.weth);
    const good = await signAuthorization(setup, payer, { to: setup.treasury, value: USD });
    const relayerBefore = await relayerTxCount();

    // A nonce already used on-chain, outside this service (the payer paid someone directly).
    const spent = await signAuthorization(setup, payer, { to: stranger.address, value: 1n });
    await chain().sendTransaction(PAYMENTS_CHAIN, {
      to: setup.usdc,
      data: transferWithAuthorizationCalldata(
        {
          from: payer.address,
          to: stranger.address,
          value: 1n,
          validAfter: BigInt(spent.authorization['validAfter'] ?? '0'),
          validBefore: BigInt(spent.authorization['validBefore'] ?? '0'),
          nonce: spent.authorization['nonce'] as Hex,
        },
        spent.signature,
      ),
    });
    await expect
      .poll(() =>
        chain().authorizationState(
          PAYMENTS_CHAIN,
          setup.usdc,
          payer.address,
          spent.authorization['nonce'] as Hex,
        ),
      )
      .toBe(true);
    const relayerAfterSetup = await relayerTxCount();
    expect(relayerAfterSetup).toBe(relayerBefore + 1);
    const payerUsdc = await usdcOf(payer.address);

    const cases: { name: string; header: () => Promise<string> | string; says: RegExp }[] = [
      { name: 'not base64', header: () => '%%% not base64 %%%', says: /not standard base64/ },
      { name: 'base64 but not JSON', header: () => encode('hello, world'), says: /not decode to JSON/ },
      {
        name: 'base64 of invalid UTF-8',
        header: () => Buffer.from([0xff, 0xfe, 0x7b]).toString('base64'),
        says: /UTF-8/,
      },
      { name: 'a JSON array', header: () => encode([1, 2, 3]), says: /JSON object/ },
      {
        name: 'x402 version 2',
        header: () => encode({ x402Version: 2, scheme: 'exact', network: 'base', payload: good }),
        says: /invalid_x402_version/,
      },
      {
        name: 'no version',
        header: () => encode({ scheme: 'exact', payload: good }),
        says: /invalid_x402_version/,
      },
      {
        name: 'another scheme',
        header: () => encode({ x402Version: 1, scheme: 'upto', network: 'base', payload: good }),
        says: /unsupported_scheme/,
      },
      {
        name: 'another network',
        header: () => encode({ x402Version: 1, scheme: 'exact', network: 'base-sepolia', payload: good }),
        says: /invalid_network/,
      },
      {
        name: 'no payload',
        header: () => encode({ x402Version: 1, scheme: 'exact', network: 'base' }),
        says: /payload is required/,
      },
      {
        name: 'an unknown field in the authorization',
        header: () =>
          encode({
            x402Version: 1,
            scheme: 'exact',
            network: 'base',
            payload: { ...good, authorization: { ...good.authorization, amount: '1' } },
          }),
        says: /unknown field payload\.authorization\.amount/,
      },
      {
        name: 'a malformed signature',
        header: () =>
          encode({
            x402Version: 1,
            scheme: 'exact',
            network: 'base',
            payload: { ...good, signature: '0x12' },
          }),
        says: /payload\.signature/,
      },
      {
        name: 'wrong payee',
        header: () => xPayment(payer, { to: stranger.address }),
        says: /recipient_mismatch/,
      },
      {
        name: 'wrong asset (signed for another token)',
        header: () => xPayment(payer, { domain: { verifyingContract: weth } }),
        says: /invalid_exact_evm_payload_signature/,
      },
      {
        name: 'wrong chain in the signed domain',
        header: () => xPayment(payer, { domain: { chainId: 84532 } }),
        says: /invalid_exact_evm_payload_signature/,
      },
      { name: 'too much', header: () => xPayment(payer, { value: 2n * USD }), says: /authorization_value/ },
      { name: 'too little', header: () => xPayment(payer, { value: USD - 1n }), says: /authorization_value/ },
      { name: 'expired', header: () => xPayment(payer, { validBefore: now - 10n }), says: /valid_before/ },
      {
        name: 'not yet valid',
        header: () => xPayment(payer, { validAfter: now + 3600n, validBefore: now + 7200n }),
        says: /valid_after/,
      },
      {
        name: 'forged (signed by someone else)',
        header: async () => {
          const forged = await signAuthorization(setup, stranger, { to: setup.treasury, value: USD });
          const payload = { ...forged, authorization: { ...forged.authorization, from: payer.address } };
          return encode({ x402Version: 1, scheme: 'exact', network: 'base', payload });
        },
        says: /invalid_exact_evm_payload_signature/,
      },
      {
        name: 'a payer without the USDC',
        header: () => xPayment(stranger),
        says: /insufficient_funds/,
      },
      {
        name: 'a replayed nonce (used on-chain already)',
        header: () => xPayment(payer, { nonce: spent.authorization['nonce'] as Hex }),
        says: /invalid_transaction_state/,
      },
    ];
    for (const c of cases) {
      const res = await post(acc.sessionToken, await c.header());
      const err = expectErrorBody(res, 400, 'PAYMENT_INVALID');
      expect(err.message, c.name).toMatch(c.says);
      expect(err.message, c.name).toMatch(/Nothing was broadcast or credited/);
    }

    expect(await relayerTxCount()).toBe(relayerAfterSetup);
    expect(await usdcOf(payer.address)).toBe(payerUsdc);
    expect(await settlementsOf(acc.accountId)).toEqual([]);
    expect(await groupsOf(acc.accountId)).toEqual([]);
    expect(await requestsOf(acc.accountId)).toEqual([]);
    expect(await listChallenges(t.db.db, acc.accountId)).toEqual([]);
  });

  it('refuses random garbage in X-PAYMENT (fast-check)', async () => {
    console.log(`x402 header fuzz seed: ${seed} (set FUZZ_SEED to replay)`);
    const acc = await createAccountWithSession(t.db.db);
    const relayerBefore = await relayerTxCount();
    const printable = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,300}[\x21-\x7e]$/);
    const payloadish = fc.record(
      {
        x402Version: fc.oneof(fc.constant(1), fc.integer(), fc.string(), fc.constant(null)),
        scheme: fc.oneof(fc.constant('exact'), fc.string()),
        network: fc.oneof(fc.constant('base'), fc.string()),
        payload: fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.record({
            signature: fc.oneof(fc.stringMatching(/^0x[0-9a-f]{0,200}$/), fc.string()),
            authorization: fc.dictionary(
              fc.constantFrom('from', 'to', 'value', 'validAfter', 'validBefore', 'nonce', 'extra'),
              fc.oneof(fc.string(), fc.integer(), fc.stringMatching(/^0x[0-9a-f]{40}$/)),
            ),
          }),
        ),
      },
      { requiredKeys: [] },
    );
    const headers = fc.oneof(
      printable,
      fc.base64String({ minLength: 4, maxLength: 400 }),
      fc.jsonValue({ maxDepth: 3 }).map((v) => encode(v)),
      payloadish.map((v) => encode(v)),
      fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => Buffer.from(b).toString('base64')),
    );
    await fc.assert(
      fc.asyncProperty(headers, async (header) => {
        const res = await post(acc.sessionToken, header);
        expect(res.statusCode, `${header} → ${res.body}`).toBe(400);
        const body = checkErrorShape(
          JSON.parse(res.body) as Record<string, unknown>,
          res.headers['x-request-id'],
          'PAYMENT_INVALID',
        );
        expect(res.statusCode, `${header} → ${res.body}`).toBe(400);
        expect(body.message).toMatch(
          /\((invalid_payload|invalid_x402_version|unsupported_scheme|invalid_network)\)/,
        );
      }),
      { seed, numRuns: FUZZ_RUNS },
    );
    expect(await relayerTxCount()).toBe(relayerBefore);
    expect(await settlementsOf(acc.accountId)).toEqual([]);
    expect(await groupsOf(acc.accountId)).toEqual([]);
    expect(await requestsOf(acc.accountId)).toEqual([]);
  });
});

describe('an unknown settlement outcome', () => {
  it('answers 202 while pending, then 201 with the request the reconciler recorded', async () => {
    const payments = t.deps.config.payments;
    t.deps.config.payments = { ...payments, confirmTimeoutMs: 0, reconcileAfterSeconds: 0 };
    try {
      const acc = await createAccountWithSession(t.db.db);
      const payer = await newPayer(devnet, 3n * USD);
      const nonce = toHex(randomBytes(32));
      const header = await xPayment(payer, { nonce });

      for (let i = 0; i < 2; i++) {
        const res = await post(acc.sessionToken, header);
        expect(res.statusCode, res.body).toBe(202);
        expect(res.json()).toEqual({
          settlement_status: 'pending',
          nonce,
          value_usd: '1',
          remediation: expect.stringMatching(/Do not sign a new authorization/) as unknown,
        });
      }
      expect(await requestsOf(acc.accountId)).toEqual([]);
      expect(await groupsOf(acc.accountId)).toEqual([]);

      const done = await reconcileStaleSettlements(t.deps, settlementEffects());
      expect(done.settled).toBeGreaterThanOrEqual(1);
      const requests = await requestsOf(acc.accountId);
      expect(requests).toHaveLength(1);

      const res = await post(acc.sessionToken, header);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ id: requests[0]?.id, charged_usd: '1' });
      expect(res.headers['x-payment-response']).toBeTypeOf('string');
      expect(await usdcOf(payer.address)).toBe(2n * USD);
      expect((await groupsOf(acc.accountId)).map((g) => g.kind)).toEqual(['topup', 'fee.feedback']);
      expect((await reconcileStaleSettlements(t.deps, settlementEffects())).settled).toBe(0);
      expect(await requestsOf(acc.accountId)).toHaveLength(1);
    } finally {
      t.deps.config.payments = payments;
    }
  });
});

describe('payments unconfigured', () => {
  it('answers a paid request with 503 UNAVAILABLE and nothing broadcast', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 2n * USD);
    const header = await xPayment(payer);
    const relayerBefore = await relayerTxCount();
    const payments = t.deps.config.payments;
    t.deps.config.payments = { ...payments, relayerPrivateKey: null };
    try {
      expectErrorBody(await post(acc.sessionToken, header), 503, 'UNAVAILABLE');
    } finally {
      t.deps.config.payments = payments;
    }
    expect(await relayerTxCount()).toBe(relayerBefore);
    expect(await settlementsOf(acc.accountId)).toEqual([]);
  });
});

describe('metering switched off', () => {
  it('still settles and charges a request that carries X-PAYMENT: the caller chose to pay', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 2n * USD);
    const header = await xPayment(payer);
    await setMeteringEnforced(t.db.db, false, 'test', new Date());
    try {
      const res = await post(acc.sessionToken, header);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ status: 'open', charged_usd: '1' });
      // Its retry keeps answering from the same settlement, metering still off.
      const again = await post(acc.sessionToken, header);
      expect(again.json().id).toBe(res.json().id);
      // Without X-PAYMENT the same account is recorded free.
      const free = await post(acc.sessionToken, undefined);
      expect(free.json()).toMatchObject({ charged_usd: '0', paid_ref: null });
    } finally {
      await setMeteringEnforced(t.db.db, null, 'test', new Date());
    }
    expect(await usdcOf(payer.address)).toBe(USD);
    expect((await groupsOf(acc.accountId)).map((g) => g.kind)).toEqual(['topup', 'fee.feedback']);
    expect(await requestsOf(acc.accountId)).toHaveLength(2);
    expect((await readPrepaidBalance(t.db.db, acc.accountId)).balanceMicro).toBe(0n);
  });
});
