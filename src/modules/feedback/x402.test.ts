// POST /v1/feedback paid with x402 v1 against the devnet: the official client library
// (@x402/fetch + @x402/evm's v1 exact scheme) pays a running service on a loopback port; the same
// X-PAYMENT again never pays twice; every malformed or wrong payment is refused with nothing
// broadcast, credited or debited; a settlement whose outcome is unknown answers 202 until the
// reconciler finishes it.

import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client, x402HTTPClient } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
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

/** The requirement of the 402's PAYMENT-REQUIRED header, as a v2 client echoes it in `accepted`. */
function acceptedOffer(over: Record<string, unknown> = {}) {
  return {
    scheme: 'exact',
    network: `eip155:${PAYMENTS_CHAIN}`,
    amount: String(USD),
    asset: setup.usdc,
    payTo: setup.treasury,
    maxTimeoutSeconds: 300,
    extra: { name: 'USD Coin', version: '2' },
    ...over,
  };
}

/** A PAYMENT-SIGNATURE header as an x402 v2 client builds it, from a signed authorization. */
async function v2Payment(
  payer: Payer,
  fields: Partial<AuthorizationFields> = {},
  accepted: Record<string, unknown> = {},
) {
  const payload = await signAuthorization(setup, payer, { to: setup.treasury, value: USD, ...fields });
  return encode({
    x402Version: 2,
    resource: { url: `${url}/v1/feedback`, description: 'fee', mimeType: 'application/json' },
    accepted: acceptedOffer(accepted),
    payload,
  });
}

/** POST /v1/feedback, with `header` as the payment of `version` (X-PAYMENT for 1, PAYMENT-SIGNATURE for 2). */
function post(
  token: string,
  header: string | undefined,
  payload: unknown = { title: TITLE, body: BODY },
  version: 1 | 2 = 1,
) {
  const name = version === 1 ? 'x-payment' : 'payment-signature';
  return t.app.fastify.inject({
    method: 'POST',
    url: '/v1/feedback',
    headers: { ...bearer(token), ...(header === undefined ? {} : { [name]: header }) },
    payload: payload as object,
  });
}

/** How each version's official client pays, and what it sends and reads. */
const VERSIONS = [
  {
    version: 2 as const,
    name: 'x402 v2, its default (ExactEvmScheme on eip155:8453 through wrapFetchWithPayment)',
    paymentHeader: 'payment-signature',
    responseHeader: 'payment-response',
    network: `eip155:${PAYMENTS_CHAIN}`,
  },
  {
    version: 1 as const,
    name: 'x402 v1 (its v1 exact scheme, given the 402 body)',
    paymentHeader: 'x-payment',
    responseHeader: 'x-payment-response',
    network: 'base',
  },
];

/**
 * Pays POST /v1/feedback with the official client, unchanged. v2: `wrapFetchWithPayment` with the
 * v2 exact scheme, as the client's quick start sets it up (it reads PAYMENT-REQUIRED). v1: the same
 * library's v1 exact scheme, handed the 402's JSON body (a 2.x client reads the v2 header first when
 * there is one, so a v1 client is one that reads the body). Returns every answer seen, in order.
 */
async function payWithOfficialClient(version: 1 | 2, payer: Payer, token: string) {
  const account = privateKeyToAccount(payer.privateKey);
  const seen: { status: number; headers: Headers; sent: Headers; text: string }[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const sent = new Headers(request.headers);
    const res = await fetch(request);
    const text = await res.clone().text();
    seen.push({ status: res.status, headers: res.headers, sent, text });
    return res;
  };
  const request = {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json' },
    body: JSON.stringify({ title: TITLE, body: BODY }),
  };
  // The devnet's USDC is at Base's address: the client's default spend controls (its known
  // assets, up to 1 USD a payment) let it pay with nothing configured.
  if (version === 2) {
    const client = new x402Client().register(`eip155:${PAYMENTS_CHAIN}`, new ExactEvmScheme(account));
    await wrapFetchWithPayment(recordingFetch, client)(`${url}/v1/feedback`, request);
    return seen;
  }
  const client = new x402Client().registerV1('base', new ExactEvmSchemeV1(account));
  const http = new x402HTTPClient(client);
  const required = await recordingFetch(`${url}/v1/feedback`, request);
  const body: unknown = await required.json();
  const payload = await client.createPaymentPayload(http.getPaymentRequiredResponse(() => null, body));
  await recordingFetch(`${url}/v1/feedback`, {
    ...request,
    headers: { ...request.headers, ...http.encodePaymentSignatureHeader(payload) },
  });
  return seen;
}

describe.each(VERSIONS)('the official client pays POST /v1/feedback with $name', (v) => {
  let acc: AccountWithSession;
  let payer: Payer;
  let sentHeader = '';
  let firstId = '';

  it('answers 402, then 201 once the payment settled: 1 USD moved, one credit and one fee booked', async () => {
    acc = await createAccountWithSession(t.db.db);
    payer = await newPayer(devnet, 5n * USD);
    const treasuryBefore = await usdcOf(setup.treasury);
    const relayerBefore = await relayerTxCount();

    const seen = await payWithOfficialClient(v.version, payer, acc.sessionToken);
    expect(
      seen.map((s) => s.status),
      seen.at(-1)?.text,
    ).toEqual([402, 201]);
    const [challenge, paid] = seen as [(typeof seen)[0], (typeof seen)[0]];
    // The 402 speaks both versions: the v1 body and the v2 header, for the same payment.
    const v1Body = JSON.parse(challenge.text) as { x402Version: number; accepts: Record<string, unknown>[] };
    const v2Header = JSON.parse(
      Buffer.from(challenge.headers.get('payment-required') ?? '', 'base64').toString('utf8'),
    ) as { x402Version: number; resource: { url: string }; accepts: Record<string, unknown>[] };
    expect(v1Body).toMatchObject({ x402Version: 1, code: 'PAYMENT_REQUIRED' });
    expect(v2Header).toMatchObject({ x402Version: 2, resource: { url: `${url}/v1/feedback` } });
    expect(v2Header.accepts).toEqual([
      {
        scheme: 'exact',
        network: `eip155:${PAYMENTS_CHAIN}`,
        amount: '1000000',
        asset: v1Body.accepts[0]?.['asset'],
        payTo: v1Body.accepts[0]?.['payTo'],
        maxTimeoutSeconds: 300,
        extra: v1Body.accepts[0]?.['extra'],
      },
    ]);
    expect(challenge.sent.get('x-payment')).toBeNull();
    expect(challenge.sent.get('payment-signature')).toBeNull();
    // Exactly one payment header, the version's own.
    const other = v.paymentHeader === 'x-payment' ? 'payment-signature' : 'x-payment';
    expect(paid.sent.get(other)).toBeNull();
    sentHeader = paid.sent.get(v.paymentHeader) ?? '';
    expect(sentHeader).not.toBe('');

    const receipt = JSON.parse(paid.text) as {
      id: string;
      status: string;
      charged_usd: string;
      paid_ref: string;
    };
    firstId = receipt.id;
    expect(receipt).toMatchObject({ status: 'open', charged_usd: '1' });
    expect(receipt.paid_ref).toMatch(/^0x[0-9a-f]{64}$/);
    expect(paid.headers.get(other === 'x-payment' ? 'x-payment-response' : 'payment-response')).toBeNull();
    expect(decodePaymentResponseHeader(paid.headers.get(v.responseHeader) ?? '')).toEqual({
      success: true,
      transaction: receipt.paid_ref,
      network: v.network,
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

  it('answers a replay of the same payment with the same request, charging nothing again', async () => {
    expect(sentHeader).not.toBe('');
    const relayerBefore = await relayerTxCount();
    const treasuryBefore = await usdcOf(setup.treasury);
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${url}/v1/feedback`, {
        method: 'POST',
        headers: {
          ...bearer(acc.sessionToken),
          'content-type': 'application/json',
          [v.paymentHeader]: sentHeader,
        },
        body: JSON.stringify({ title: TITLE, body: BODY }),
      });
      const text = await res.text();
      expect(res.status, text).toBe(201);
      expect(JSON.parse(text)).toMatchObject({ id: firstId, charged_usd: '1' });
      expect(decodePaymentResponseHeader(res.headers.get(v.responseHeader) ?? '')).toMatchObject({
        success: true,
        network: v.network,
      });
    }
    expect(await relayerTxCount()).toBe(relayerBefore);
    expect(await usdcOf(payer.address)).toBe(4n * USD);
    expect(await usdcOf(setup.treasury)).toBe(treasuryBefore);
    expect(await groupsOf(acc.accountId)).toHaveLength(2);
    expect(await requestsOf(acc.accountId)).toHaveLength(1);
    expect((await readPrepaidBalance(t.db.db, acc.accountId)).balanceMicro).toBe(0n);
  });

  it('refuses the same payment for another request or from another account', async () => {
    expect(sentHeader).not.toBe('');
    const other = expectErrorBody(
      await post(acc.sessionToken, sentHeader, { title: 'Another title here', body: BODY }, v.version),
      400,
      'PAYMENT_INVALID',
    );
    expect(other.message).toMatch(/invalid_transaction_state/);
    const stranger = await createAccountWithSession(t.db.db);
    expectErrorBody(
      await post(stranger.sessionToken, sentHeader, undefined, v.version),
      400,
      'PAYMENT_INVALID',
    );
    expect(await requestsOf(stranger.accountId)).toEqual([]);
    expect(await requestsOf(acc.accountId)).toHaveLength(1);
  });
});

/**
 * After concurrent submissions of one payment: every answer 201 or 202 (at least one 201), one
 * transfer by the relayer, 1 USD gone from a payer funded with 3, one credit and one fee booked.
 */
async function expectSettledOnce(
  answers: { statusCode: number; body: string }[],
  accountId: string,
  payer: Payer,
  relayerBefore: number,
) {
  const statuses = answers.map((a) => a.statusCode);
  expect(
    statuses.every((s) => s === 201 || s === 202),
    answers.map((a) => a.body).join('\n'),
  ).toBe(true);
  expect(statuses).toContain(201);
  expect(await relayerTxCount()).toBe(relayerBefore + 1);
  expect(await usdcOf(payer.address)).toBe(2n * USD);
  expect((await groupsOf(accountId)).map((g) => g.kind)).toEqual(['topup', 'fee.feedback']);
}

describe.skipIf(!process.env.DATABASE_URL)('concurrent submissions of one X-PAYMENT (PostgreSQL)', () => {
  it('settle it once: one transfer, one credit, one fee, one request', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 3n * USD);
    const header = await xPayment(payer);
    const relayerBefore = await relayerTxCount();
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(acc.sessionToken, header)));
    await expectSettledOnce(answers, acc.accountId, payer, relayerBefore);
    const requests = await requestsOf(acc.accountId);
    expect(requests).toHaveLength(1);
    for (const a of answers.filter((x) => x.statusCode === 201)) expect(a.json().id).toBe(requests[0]?.id);
    // Once settled, every retry reads the same request.
    const again = await post(acc.sessionToken, header);
    expect(again.statusCode).toBe(201);
    expect(again.json().id).toBe(requests[0]?.id);
  });
});

describe('a v2 payment racing its own v1 twin', () => {
  it('settles once: one transfer, one credit, one fee, one request; each version reads it in its own header', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 3n * USD);
    // One authorization, sent as an x402 v2 payment and as its v1 twin, three times each, at once.
    const payload = await signAuthorization(setup, payer, { to: setup.treasury, value: USD });
    const twins = {
      1: encode({ x402Version: 1, scheme: 'exact', network: 'base', payload }),
      2: encode({ x402Version: 2, accepted: acceptedOffer(), payload }),
    };
    const relayerBefore = await relayerTxCount();
    const order = [2, 1, 2, 1, 2, 1] as const;
    const answers = await Promise.all(
      order.map((version) => post(acc.sessionToken, twins[version], undefined, version)),
    );
    await expectSettledOnce(answers, acc.accountId, payer, relayerBefore);
    expect((await readPrepaidBalance(t.db.db, acc.accountId)).balanceMicro).toBe(0n);
    const requests = await requestsOf(acc.accountId);
    expect(requests).toHaveLength(1);
    for (const a of answers.filter((x) => x.statusCode === 201)) expect(a.json().id).toBe(requests[0]?.id);

    // Settled: each twin reads the one request, its answer in its own version's header.
    const v1 = await post(acc.sessionToken, twins[1], undefined, 1);
    const v2 = await post(acc.sessionToken, twins[2], undefined, 2);
    expect([v1.json().id, v2.json().id]).toEqual([requests[0]?.id, requests[0]?.id]);
    expect(v1.headers['payment-response']).toBeUndefined();
    expect(v2.headers['x-payment-response']).toBeUndefined();
    expect(decodePaymentResponseHeader(String(v1.headers['x-payment-response']))).toMatchObject({
      success: true,
      network: 'base',
    });
    expect(decodePaymentResponseHeader(String(v2.headers['payment-response']))).toMatchObject({
      success: true,
      network: `eip155:${PAYMENTS_CHAIN}`,
      transaction: v1.json().paid_ref,
    });
    expect(await relayerTxCount()).toBe(relayerBefore + 1);
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

    const cases: { name: string; header: () => Promise<string> | string; says: RegExp; version?: 2 }[] = [
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
      // PAYMENT-SIGNATURE (x402 v2): the same authorization checks, and the accepted requirement.
      {
        name: 'v2: an x402 v1 payment in PAYMENT-SIGNATURE',
        header: () => encode({ x402Version: 1, scheme: 'exact', network: 'base', payload: good }),
        says: /invalid_x402_version/,
        version: 2,
      },
      {
        name: 'v2: not base64',
        header: () => '%%%',
        says: /PAYMENT-SIGNATURE header is not standard base64/,
        version: 2,
      },
      {
        name: 'v2: another scheme',
        header: () => v2Payment(payer, {}, { scheme: 'upto' }),
        says: /unsupported_scheme/,
        version: 2,
      },
      {
        name: 'v2: another network',
        header: () => v2Payment(payer, {}, { network: 'eip155:84532' }),
        says: /invalid_network/,
        version: 2,
      },
      {
        name: 'v2: a v1 network name',
        header: () => v2Payment(payer, {}, { network: 'base' }),
        says: /invalid_network/,
        version: 2,
      },
      {
        name: 'v2: another payee accepted',
        header: () => v2Payment(payer, {}, { payTo: stranger.address }),
        says: /invalid_payment_requirements/,
        version: 2,
      },
      {
        name: 'v2: another asset accepted',
        header: () => v2Payment(payer, {}, { asset: weth }),
        says: /invalid_payment_requirements/,
        version: 2,
      },
      {
        name: 'v2: less accepted and signed',
        header: () => v2Payment(payer, { value: USD - 1n }, { amount: String(USD - 1n) }),
        says: /authorization_value_mismatch/,
        version: 2,
      },
      {
        name: 'v2: the offer accepted but more signed',
        header: () => v2Payment(payer, { value: 2n * USD }),
        says: /authorization_value/,
        version: 2,
      },
      {
        name: 'v2: no accepted requirement',
        header: async () => {
          const payload = await signAuthorization(setup, payer, { to: setup.treasury, value: USD });
          return encode({ x402Version: 2, payload });
        },
        says: /unsupported_scheme/,
        version: 2,
      },
      {
        name: 'v2: expired',
        header: () => v2Payment(payer, { validBefore: now - 10n }),
        says: /valid_before/,
        version: 2,
      },
      {
        name: 'v2: forged',
        header: async () => {
          const forged = await signAuthorization(setup, stranger, { to: setup.treasury, value: USD });
          const payload = { ...forged, authorization: { ...forged.authorization, from: payer.address } };
          return encode({ x402Version: 2, accepted: acceptedOffer(), payload });
        },
        says: /invalid_exact_evm_payload_signature/,
        version: 2,
      },
    ];
    // Both versions at once: one payment per request.
    const both = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/feedback',
      headers: {
        ...bearer(acc.sessionToken),
        'x-payment': await xPayment(payer),
        'payment-signature': await v2Payment(payer),
      },
      payload: { title: TITLE, body: BODY },
    });
    expect(expectErrorBody(both, 400, 'PAYMENT_INVALID').message).toMatch(
      /both X-PAYMENT and PAYMENT-SIGNATURE/,
    );
    for (const c of cases) {
      const res = await post(acc.sessionToken, await c.header(), undefined, c.version ?? 1);
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

  it('refuses random garbage in X-PAYMENT and PAYMENT-SIGNATURE (fast-check)', async () => {
    console.log(`x402 header fuzz seed: ${seed} (set FUZZ_SEED to replay)`);
    const acc = await createAccountWithSession(t.db.db);
    const relayerBefore = await relayerTxCount();
    const printable = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,300}[\x21-\x7e]$/);
    const payloadish = fc.record(
      {
        x402Version: fc.oneof(fc.constant(1), fc.constant(2), fc.integer(), fc.string(), fc.constant(null)),
        scheme: fc.oneof(fc.constant('exact'), fc.string()),
        network: fc.oneof(fc.constant('base'), fc.string()),
        accepted: fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.dictionary(
            fc.constantFrom(
              'scheme',
              'network',
              'amount',
              'asset',
              'payTo',
              'maxTimeoutSeconds',
              'extra',
              'other',
            ),
            fc.oneof(
              fc.constantFrom('exact', `eip155:${PAYMENTS_CHAIN}`, '1000000'),
              fc.string(),
              fc.integer(),
              fc.stringMatching(/^0x[0-9a-f]{40}$/),
            ),
          ),
        ),
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
      fc.asyncProperty(headers, fc.constantFrom(1 as const, 2 as const), async (header, version) => {
        const res = await post(acc.sessionToken, header, undefined, version);
        expect(res.statusCode, `${header} → ${res.body}`).toBe(400);
        const body = checkErrorShape(
          JSON.parse(res.body) as Record<string, unknown>,
          res.headers['x-request-id'],
          'PAYMENT_INVALID',
        );
        expect(res.statusCode, `${header} → ${res.body}`).toBe(400);
        expect(body.message).toMatch(
          /\((invalid_payload|invalid_x402_version|unsupported_scheme|invalid_network|invalid_payment_requirements|invalid_exact_evm_payload_authorization_value_mismatch)\)/,
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

describe.each([1, 2] as const)('an unknown settlement outcome (x402 v%i)', (version) => {
  it('answers 202 while pending, then 201 with the request the reconciler recorded', async () => {
    const payments = t.deps.config.payments;
    t.deps.config.payments = { ...payments, confirmTimeoutMs: 0, reconcileAfterSeconds: 0 };
    try {
      const acc = await createAccountWithSession(t.db.db);
      const payer = await newPayer(devnet, 3n * USD);
      const nonce = toHex(randomBytes(32));
      const header = version === 1 ? await xPayment(payer, { nonce }) : await v2Payment(payer, { nonce });

      for (let i = 0; i < 2; i++) {
        const res = await post(acc.sessionToken, header, undefined, version);
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

      // The broadcast may still be on its way to a block on a loaded machine: the reconciler
      // leaves it pending until its receipt is there, and a later pass settles it.
      let settled = 0;
      let last: unknown = null;
      for (let i = 0; i < 100 && settled === 0; i++) {
        const counts = await reconcileStaleSettlements(t.deps, settlementEffects());
        settled = counts.settled;
        last = counts;
        if (settled === 0) await new Promise((r) => setTimeout(r, 100));
      }
      // A failure names where the settlement stood (a CI run once ended here with nothing settled).
      const rows = await t.db.db
        .selectFrom('payment_settlements')
        .selectAll()
        .where('nonce', '=', nonce)
        .execute();
      expect(settled, JSON.stringify({ last, rows })).toBeGreaterThanOrEqual(1);
      const requests = await requestsOf(acc.accountId);
      expect(requests).toHaveLength(1);

      const res = await post(acc.sessionToken, header, undefined, version);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ id: requests[0]?.id, charged_usd: '1' });
      expect(res.headers[version === 1 ? 'x-payment-response' : 'payment-response']).toBeTypeOf('string');
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
