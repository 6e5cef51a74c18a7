// Prepaid top-ups against the devnet: an EIP-3009 authorization is checked, admitted against the
// caps, settled on-chain and credited once; every bad authorization is refused with nothing
// broadcast, credited or consumed; an unknown outcome answers 202 and the reconciler finishes it.

import { Wallet } from 'ethers';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { getAddress, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import {
  authorizationUsed,
  newPayer,
  PAYMENTS_CHAIN,
  paymentsSetup,
  signAuthorization,
  type PaymentsSetup,
} from '../../../test/support/payments.ts';
import { testConfig } from '../../config.ts';
import { settlementEffects } from '../../settlement-effects.ts';
import { listEvents } from '../events/index.ts';
import { reconcileStaleSettlements } from '../payments/index.ts';
import { readPrepaidBalance } from './prepaid.ts';
import { setAccountPrepaidCap, setPrepaidCap } from './settings.ts';

const devnet = inject('devnet');
const USD = 1_000_000n;
let t: TestApp;
let setup: PaymentsSetup;

beforeAll(async () => {
  setup = await paymentsSetup(devnet, testConfig());
  t = await createTestApp({ config: setup.config, deps: setup.deps, poolSize: 10 });
});
afterAll(async () => {
  await t?.close();
});

const chain = () => {
  const c = t.deps.chain;
  if (!c) throw new Error('no chain');
  return c;
};
const usdcOf = (address: Address) => chain().erc20Balance(PAYMENTS_CHAIN, setup.usdc, address);
const relayerNonce = () =>
  chain().publicClient(PAYMENTS_CHAIN).getTransactionCount({ address: setup.relayer });

async function topup(token: string, body: unknown) {
  return t.app.fastify.inject({
    method: 'POST',
    url: '/v1/balance/topups',
    headers: bearer(token),
    payload: body as object,
  });
}

describe('POST /v1/balance/topups', () => {
  it('publishes the terms an agent signs against', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const res = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/balance/topups/terms',
      headers: bearer(acc.sessionToken),
    });
    expect(res.statusCode, res.body).toBe(200);
    const terms = res.json();
    expect(terms).toMatchObject({
      chain_id: PAYMENTS_CHAIN,
      network: 'base',
      asset: getAddress(setup.usdc),
      pay_to: getAddress(setup.treasury),
      eip712_domain: { name: setup.domain.name, version: setup.domain.version, chainId: PAYMENTS_CHAIN },
      account_cap_usd: '1000',
    });
  });

  it('gives everything a wallet signs with: viem and ethers sign from the terms answer alone, and it settles', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const res = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/balance/topups/terms',
      headers: bearer(acc.sessionToken),
    });
    expect(res.statusCode, res.body).toBe(200);
    // Only what came over the wire: no import of the service's types, domain or addresses.
    const terms = JSON.parse(res.body) as {
      pay_to: Address;
      eip712_domain: { name: string; version: string; chainId: number; verifyingContract: Address };
      eip712_types: Record<string, { name: string; type: string }[]>;
      primary_type: string;
    };
    expect(terms.primary_type).toBe('TransferWithAuthorization');
    expect(terms.eip712_types).toEqual({
      TransferWithAuthorization: [
        { name: 'from', type: 'address' },
        { name: 'to', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' },
        { name: 'validBefore', type: 'uint256' },
        { name: 'nonce', type: 'bytes32' },
      ],
    });

    const payer = await newPayer(devnet, 10n * USD);
    const validBefore = BigInt(Math.floor(Date.now() / 1000) + 3600);
    const message = (nonce: Hex, value: bigint) => ({
      from: payer.address,
      to: terms.pay_to,
      value,
      validAfter: 0n,
      validBefore,
      nonce,
    });
    const wire = (m: ReturnType<typeof message>, signature: string) => ({
      authorization: {
        ...m,
        value: m.value.toString(),
        validAfter: m.validAfter.toString(),
        validBefore: m.validBefore.toString(),
      },
      signature,
    });

    // viem
    const viemMessage = message(toHex(randomBytes(32)), 2n * USD);
    const viemSignature = await privateKeyToAccount(payer.privateKey).signTypedData({
      domain: terms.eip712_domain,
      types: terms.eip712_types,
      primaryType: terms.primary_type,
      message: viemMessage,
    });
    const viaViem = await topup(acc.sessionToken, wire(viemMessage, viemSignature));
    expect(viaViem.statusCode, viaViem.body).toBe(201);
    expect(viaViem.json().balance_usd).toBe('2.000000');

    // ethers
    const ethersMessage = message(toHex(randomBytes(32)), 3n * USD);
    const ethersSignature = await new Wallet(payer.privateKey).signTypedData(
      terms.eip712_domain,
      terms.eip712_types,
      ethersMessage,
    );
    const viaEthers = await topup(acc.sessionToken, wire(ethersMessage, ethersSignature));
    expect(viaEthers.statusCode, viaEthers.body).toBe(201);
    expect(viaEthers.json().balance_usd).toBe('5.000000');
    expect(await usdcOf(payer.address)).toBe(5n * USD);
  });

  it('settles on-chain, credits once, and replays the same top-up for the same authorization', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 20n * USD);
    const treasuryBefore = await usdcOf(setup.treasury);
    const body = await signAuthorization(setup, payer, { to: setup.treasury, value: 5n * USD });

    const res = await topup(acc.sessionToken, body);
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json();
    expect(created.balance_usd).toBe('5.000000');
    expect(created.topup).toMatchObject({
      status: 'settled',
      value_usd: '5',
      payer: payer.address.toLowerCase(),
    });
    expect(created.topup.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await usdcOf(setup.treasury)).toBe(treasuryBefore + 5n * USD);
    expect(await usdcOf(payer.address)).toBe(15n * USD);
    const receipt = await chain().getReceipt(PAYMENTS_CHAIN, created.topup.tx_hash);
    expect(receipt?.status).toBe('success');

    const again = await topup(acc.sessionToken, body);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().topup.id).toBe(created.topup.id);
    expect((await readPrepaidBalance(t.db.db, acc.accountId)).balanceMicro).toBe(5n * USD);
    expect(await usdcOf(payer.address)).toBe(15n * USD);

    const balance = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/balance',
      headers: bearer(acc.sessionToken),
    });
    expect(balance.json()).toEqual({ balance_usd: '5.000000', currency: 'USD' });

    // The ledger group, its event and its audit fact, and no signature kept.
    const group = await t.db.db
      .selectFrom('ledger_groups')
      .select(['kind', 'memo'])
      .where('account_id', '=', acc.accountId)
      .executeTakeFirstOrThrow();
    expect(group.kind).toBe('topup');
    const events = await listEvents(t.db.db, acc.accountId, 50);
    expect(events.map((e) => e.kind)).toContain('balance.credited');
    const row = await t.db.db
      .selectFrom('payment_settlements')
      .select(['status', 'signature'])
      .where('account_id', '=', acc.accountId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'settled', signature: null });

    // The account export lists the payment, without its signature.
    const exported = await t.app.fastify.inject({
      method: 'GET',
      url: '/v1/account/export',
      headers: bearer(acc.sessionToken),
    });
    expect(exported.statusCode, exported.body).toBe(200);
    expect(exported.json().payment_credits).toEqual([
      expect.objectContaining({
        id: created.topup.id,
        purpose: 'topup',
        status: 'settled',
        value: String(5n * USD),
        tx_hash: created.topup.tx_hash,
      }),
    ]);
    expect(exported.body).not.toContain(body.signature.slice(2));
  });

  it('refuses bad authorizations with nothing broadcast, credited or consumed', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 5n * USD);
    const stranger = await newPayer(devnet, 0n);
    const now = BigInt(Math.floor(Date.now() / 1000));
    const nonceBefore = await relayerNonce();
    const cases: {
      name: string;
      body: () => Promise<unknown>;
      status: number;
      code: string;
      says: RegExp;
    }[] = [
      {
        name: 'wrong payee',
        body: () => signAuthorization(setup, payer, { to: stranger.address, value: USD }),
        status: 400,
        code: 'PAYMENT_INVALID',
        says: /recipient_mismatch/,
      },
      {
        name: 'wrong asset (signed for another token)',
        body: () =>
          signAuthorization(setup, payer, {
            to: setup.treasury,
            value: USD,
            domain: { verifyingContract: getAddress(devnet.chains[PAYMENTS_CHAIN]!.contracts.weth) },
          }),
        status: 400,
        code: 'PAYMENT_INVALID',
        says: /signature/,
      },
      {
        name: 'wrong chain in the domain',
        body: () =>
          signAuthorization(setup, payer, { to: setup.treasury, value: USD, domain: { chainId: 84532 } }),
        status: 400,
        code: 'PAYMENT_INVALID',
        says: /signature/,
      },
      {
        name: 'forged (signed by someone else)',
        body: async () => {
          const forged = await signAuthorization(setup, stranger, { to: setup.treasury, value: USD });
          return { ...forged, authorization: { ...forged.authorization, from: payer.address } };
        },
        status: 400,
        code: 'PAYMENT_INVALID',
        says: /signature/,
      },
      {
        name: 'expired',
        body: () =>
          signAuthorization(setup, payer, { to: setup.treasury, value: USD, validBefore: now - 10n }),
        status: 400,
        code: 'PAYMENT_INVALID',
        says: /valid_before/,
      },
      {
        name: 'not yet valid',
        body: () =>
          signAuthorization(setup, payer, {
            to: setup.treasury,
            value: USD,
            validAfter: now + 3600n,
            validBefore: now + 7200n,
          }),
        status: 400,
        code: 'PAYMENT_INVALID',
        says: /valid_after/,
      },
      {
        name: 'more than the payer holds',
        body: () => signAuthorization(setup, payer, { to: setup.treasury, value: 6n * USD }),
        status: 400,
        code: 'PAYMENT_INVALID',
        says: /insufficient_funds/,
      },
      {
        name: 'below the smallest top-up',
        body: () => signAuthorization(setup, payer, { to: setup.treasury, value: 9_999n }),
        status: 400,
        code: 'PAYMENT_INVALID',
        says: /value/,
      },
      {
        name: 'malformed signature',
        body: async () => ({
          ...(await signAuthorization(setup, payer, { to: setup.treasury, value: USD })),
          signature: '0x1234',
        }),
        status: 400,
        code: 'INVALID_REQUEST',
        says: /signature/,
      },
      {
        name: 'unknown field',
        body: async () => ({
          ...(await signAuthorization(setup, payer, { to: setup.treasury, value: USD })),
          amount: '1',
        }),
        status: 400,
        code: 'INVALID_REQUEST',
        says: /amount/,
      },
    ];
    for (const c of cases) {
      const res = await topup(acc.sessionToken, await c.body());
      const err = expectErrorBody(res, c.status, c.code);
      expect(err.message, c.name).toMatch(c.says);
    }
    expect(await relayerNonce()).toBe(nonceBefore);
    expect(await usdcOf(payer.address)).toBe(5n * USD);
    expect((await readPrepaidBalance(t.db.db, acc.accountId)).balanceMicro).toBe(0n);
    const rows = await t.db.db
      .selectFrom('payment_settlements')
      .select('id')
      .where('account_id', '=', acc.accountId)
      .execute();
    expect(rows).toEqual([]);
  });

  it('refuses a replayed nonce with other terms', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 10n * USD);
    const first = await signAuthorization(setup, payer, { to: setup.treasury, value: USD });
    expect((await topup(acc.sessionToken, first)).statusCode).toBe(201);
    const replay = await signAuthorization(setup, payer, {
      to: setup.treasury,
      value: 2n * USD,
      nonce: first.authorization.nonce as `0x${string}`,
    });
    const err = expectErrorBody(await topup(acc.sessionToken, replay), 400, 'PAYMENT_INVALID');
    expect(err.message).toMatch(/already submitted/);
    // Another account cannot claim a settled authorization either.
    const other = await createAccountWithSession(t.db.db);
    expectErrorBody(await topup(other.sessionToken, first), 400, 'PAYMENT_INVALID');
    expect((await readPrepaidBalance(t.db.db, other.accountId)).balanceMicro).toBe(0n);
    expect((await readPrepaidBalance(t.db.db, acc.accountId)).balanceMicro).toBe(USD);
    expect(await usdcOf(payer.address)).toBe(9n * USD);
  });

  it('refuses a top-up past the account cap or the float cap, naming the cap, with the authorization unused', async () => {
    const acc = await createAccountWithSession(t.db.db);
    await setAccountPrepaidCap(t.db.db, acc.accountId, 10n * USD, 'test', new Date());
    const payer = await newPayer(devnet, 30n * USD);
    expect(
      (
        await topup(
          acc.sessionToken,
          await signAuthorization(setup, payer, { to: setup.treasury, value: 8n * USD }),
        )
      ).statusCode,
    ).toBe(201);
    const over = await signAuthorization(setup, payer, { to: setup.treasury, value: 5n * USD });
    const nonceBefore = await relayerNonce();
    const err = expectErrorBody(await topup(acc.sessionToken, over), 422, 'LIMIT_EXCEEDED');
    expect(err.message).toContain('cap of 10 USD');
    expect(await relayerNonce()).toBe(nonceBefore);
    expect(await authorizationUsed(setup, over)).toBe(false);
    expect(await usdcOf(payer.address)).toBe(22n * USD);

    // The platform-wide float: everything prepaid across accounts.
    const float = await t.db.db
      .selectFrom('prepaid_balances')
      .select((eb) => eb.fn.sum<string>('balance_micro').as('total'))
      .executeTakeFirstOrThrow();
    await setPrepaidCap(t.db.db, 'float', BigInt(float.total) + USD, 'test', new Date());
    try {
      const other = await createAccountWithSession(t.db.db);
      const overFloat = await signAuthorization(setup, payer, { to: setup.treasury, value: 2n * USD });
      const floatNonceBefore = await relayerNonce();
      const floatErr = expectErrorBody(await topup(other.sessionToken, overFloat), 422, 'LIMIT_EXCEEDED');
      expect(floatErr.message).toMatch(/float cap of [0-9.]+ USD/);
      expect((await readPrepaidBalance(t.db.db, other.accountId)).balanceMicro).toBe(0n);
      expect(await relayerNonce()).toBe(floatNonceBefore);
      expect(await authorizationUsed(setup, overFloat)).toBe(false);
      expect(await usdcOf(payer.address)).toBe(22n * USD);
    } finally {
      await setPrepaidCap(t.db.db, 'float', null, 'test', new Date());
    }
  });

  it.skipIf(!process.env.DATABASE_URL)(
    'admits concurrent top-ups under one cap only while they fit',
    async () => {
      const acc = await createAccountWithSession(t.db.db);
      await setAccountPrepaidCap(t.db.db, acc.accountId, 10n * USD, 'test', new Date());
      const payers = await Promise.all([0, 1, 2, 3].map(() => newPayer(devnet, 10n * USD)));
      const bodies = await Promise.all(
        payers.map((p) => signAuthorization(setup, p, { to: setup.treasury, value: 4n * USD })),
      );
      const results = await Promise.all(bodies.map((b) => topup(acc.sessionToken, b)));
      const statuses = results.map((r) => r.statusCode).sort();
      expect(statuses).toEqual([201, 201, 422, 422]);
      expect((await readPrepaidBalance(t.db.db, acc.accountId)).balanceMicro).toBe(8n * USD);
    },
  );

  it('answers 202 when the outcome is unknown; the reconciler finishes it from chain truth', async () => {
    const slow = await createTestApp({
      config: {
        ...setup.config,
        payments: { ...setup.config.payments!, confirmTimeoutMs: 0, reconcileAfterSeconds: 0 },
      },
      deps: setup.deps,
    });
    try {
      const acc = await createAccountWithSession(slow.db.db);
      const payer = await newPayer(devnet, 5n * USD);
      const body = await signAuthorization(setup, payer, { to: setup.treasury, value: 3n * USD });
      const res = await slow.app.fastify.inject({
        method: 'POST',
        url: '/v1/balance/topups',
        headers: bearer(acc.sessionToken),
        payload: body,
      });
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json()).toMatchObject({
        settlement_status: 'pending',
        nonce: body.authorization.nonce,
        value_usd: '3',
      });
      expect((await readPrepaidBalance(slow.db.db, acc.accountId)).balanceMicro).toBe(0n);

      // The reconciler runs every few seconds: a loaded devnet may not have mined the transfer at
      // its first pass, which then leaves it pending for the next.
      let done = await reconcileStaleSettlements(slow.deps, settlementEffects());
      for (let pass = 0; pass < 50 && done.settled === 0 && done.failed === 0; pass += 1) {
        await new Promise((r) => setTimeout(r, 100));
        done = await reconcileStaleSettlements(slow.deps, settlementEffects());
      }
      expect(done.settled).toBe(1);
      expect((await readPrepaidBalance(slow.db.db, acc.accountId)).balanceMicro).toBe(3n * USD);
      const again = await slow.app.fastify.inject({
        method: 'POST',
        url: '/v1/balance/topups',
        headers: bearer(acc.sessionToken),
        payload: body,
      });
      expect(again.statusCode, again.body).toBe(200);
      expect(again.json().balance_usd).toBe('3.000000');
      expect(await usdcOf(payer.address)).toBe(2n * USD);
      // A second pass finds nothing to do and credits nothing twice.
      expect((await reconcileStaleSettlements(slow.deps, settlementEffects())).settled).toBe(0);
      expect((await readPrepaidBalance(slow.db.db, acc.accountId)).balanceMicro).toBe(3n * USD);
    } finally {
      await slow.close();
    }
  });
});

describe('POST /v1/balance/topups with fuzzed bodies', () => {
  it('answers every malformed body with a 400 error body and changes nothing', async () => {
    const acc = await createAccountWithSession(t.db.db);
    const payer = await newPayer(devnet, 5n * USD);
    const valid = await signAuthorization(setup, payer, { to: setup.treasury, value: USD });
    const nonceBefore = await relayerNonce();
    const field = fc.constantFrom('from', 'to', 'value', 'validAfter', 'validBefore', 'nonce');
    const junk = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.constant(null),
      fc.constant('-1'),
      fc.constant('1e6'),
      fc.constant('0x'),
      fc.constant(`0x${'g'.repeat(40)}`),
      fc.constant('9'.repeat(90)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.record({ kind: fc.constant('field' as const), name: field, value: junk }),
          fc.record({ kind: fc.constant('signature' as const), value: junk }),
          fc.record({ kind: fc.constant('body' as const), value: fc.jsonValue() }),
        ),
        async (mutation) => {
          let body: unknown;
          if (mutation.kind === 'field') {
            body = { ...valid, authorization: { ...valid.authorization, [mutation.name]: mutation.value } };
          } else if (mutation.kind === 'signature') {
            body = { ...valid, signature: mutation.value };
          } else {
            body = mutation.value;
          }
          // A mutation that happens to reproduce the valid body is not a malformed one.
          if (JSON.stringify(body) === JSON.stringify(valid)) return;
          const res = await t.app.fastify.inject({
            method: 'POST',
            url: '/v1/balance/topups',
            headers: { ...bearer(acc.sessionToken), 'content-type': 'application/json' },
            payload: JSON.stringify(body),
          });
          expect(res.statusCode, res.body).toBe(400);
          const err = expectErrorBody(res, 400, res.json().code);
          expect(['INVALID_REQUEST', 'PAYMENT_INVALID']).toContain(err.code);
        },
      ),
      { numRuns: 60 },
    );
    expect(await relayerNonce()).toBe(nonceBefore);
    expect((await readPrepaidBalance(t.db.db, acc.accountId)).balanceMicro).toBe(0n);
    expect(await usdcOf(payer.address)).toBe(5n * USD);
  });
});

describe('GET /v1/fees', () => {
  it('publishes the fee schedule and the metering switch', async () => {
    const res = await t.app.fastify.inject({ method: 'GET', url: '/v1/fees' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      metering_enforced: true,
      currency: 'USD',
      fees: {
        conversion_intent: { per_intent_usd: '0.05' },
        pm_order: { base_usd: '0.02', bps: 10 },
        feedback: { per_request_usd: '1' },
      },
    });
  });
});
