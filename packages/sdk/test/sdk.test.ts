// The SDK against a started service on the suite's devnet, as an agent uses it: sign in with a
// viem account and stay signed in, mutations that are retried without being repeated, errors as
// typed exceptions, a top-up and an x402 payment signed from what the API answered, webhook
// deliveries verified. The example agent (examples/agent.ts) runs here too, to a filled conversion.

import { spawn } from 'node:child_process';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newFundedAccount } from '../../../src/devnet/faucet.ts';
import { signatureHeader } from '../../../src/modules/webhooks/send.ts';
import { startListeningService, type ListeningService } from '../../../test/support/listening-service.ts';
import { PAYMENTS_CHAIN } from '../../../test/support/payments.ts';
import { REPO_ROOT } from '../../../test/support/service-process.ts';
import {
  ok,
  printExchange,
  Purser,
  PurserError,
  signTopUp,
  signX402Payment,
  signX402PaymentV2,
  verifyWebhook,
  WebhookVerificationError,
  type Exchange,
} from '../src/index.ts';

const devnet = inject('devnet');
let service: ListeningService;

beforeAll(async () => {
  service = await startListeningService(devnet);
});
afterAll(async () => {
  await service?.close();
});

const newAgent = (options: Partial<ConstructorParameters<typeof Purser>[0]> = {}) =>
  new Purser({ baseUrl: service.url, ...options });

describe('sign-in', () => {
  it('signs in with a viem account and signs in again when the session is gone', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const purser = newAgent();
    const session = await purser.signIn(owner);
    expect(session.address.toLowerCase()).toBe(owner.address.toLowerCase());
    const me = await ok(purser.api.GET('/v1/auth/session'));
    expect(me.address.toLowerCase()).toBe(owner.address.toLowerCase());

    // The session ends (signed out here; expiry is the same 401): the next call signs in again.
    await ok(purser.api.DELETE('/v1/auth/session'));
    const again = await ok(purser.api.GET('/v1/auth/session'));
    expect(again.address.toLowerCase()).toBe(owner.address.toLowerCase());
    expect(again.credential.id).not.toBe(me.credential.id);
  });

  it('refuses a bad credential with a typed error carrying code, remediation, next and the request id', async () => {
    const purser = newAgent({ token: 'pk_live_not_a_real_key' });
    const err = await purser.api.GET('/v1/keys').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PurserError);
    const e = err as PurserError;
    expect(e.status).toBe(401);
    expect(e.code).toBe('UNAUTHORIZED');
    expect(e.remediation).not.toBe('');
    expect(e.next.map((n) => n.path)).toContain('/v1/auth/challenge');
    expect(e.requestId).toMatch(/^req_/);
  });
});

describe('mutations', () => {
  it('sends an Idempotency-Key on every mutation; a retry after a lost answer is replayed, not repeated', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const exchanges: Exchange[] = [];
    let dropped = 0;
    // The network loses the answer of the first key creation after the service committed it.
    const lossy: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const request = input as Request;
      if (request.method === 'POST' && new URL(request.url).pathname === '/v1/keys' && dropped++ === 0) {
        await res.text();
        throw new TypeError('fetch failed: socket hang up');
      }
      return res;
    };
    const seenKeys: string[] = [];
    const purser = newAgent({
      fetch: async (input, init) => {
        const request = input as Request;
        if (new URL(request.url).pathname === '/v1/keys' && request.method === 'POST')
          seenKeys.push(request.headers.get('idempotency-key') ?? '');
        return lossy(input, init);
      },
      onExchange: (e) => exchanges.push(e),
    });
    await purser.signIn(owner);
    const created = await ok(purser.api.POST('/v1/keys', { body: { name: 'retried', scopes: ['read'] } }));
    expect(created.name).toBe('retried');
    // Two attempts, one key: the same Idempotency-Key, the second answered from the first.
    expect(seenKeys).toHaveLength(2);
    expect(seenKeys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(seenKeys[1]).toBe(seenKeys[0]);
    const { keys } = await ok(purser.api.GET('/v1/keys'));
    expect(keys.filter((k) => k.name === 'retried')).toHaveLength(1);
    // The replay never shows the token again, and says so.
    expect(created.token).toBeNull();
  });

  it('prints exchanges with tokens and secrets cut short', async () => {
    const printed: string[] = [];
    const purser = newAgent({ onExchange: (e) => printExchange(e, (t) => printed.push(t)) });
    const owner = privateKeyToAccount(generatePrivateKey());
    await purser.signIn(owner);
    const { secret } = await ok(purser.api.GET('/v1/webhooks/secret'));
    const text = printed.join('');
    expect(text).toContain('→ POST /v1/auth/verify');
    expect(text).toMatch(/← 200 \(\d+ ms\)/);
    expect(text).not.toContain(secret);
    expect(text).toContain('(hidden)');
  });
});

describe('payments', () => {
  it('tops up the prepaid balance with an authorization signed from the terms', async () => {
    const payer = await newFundedAccount(devnet, {
      chainId: PAYMENTS_CHAIN,
      tokens: [{ symbol: 'USDC', amount: 20_000_000n }],
    });
    const owner = privateKeyToAccount(payer.privateKey);
    const purser = newAgent();
    await purser.signIn(owner);
    const terms = await ok(purser.api.GET('/v1/balance/topups/terms'));
    const topup = await ok(
      purser.api.POST('/v1/balance/topups', { body: await signTopUp(owner, terms, { value: '7000000' }) }),
    );
    expect('balance_usd' in topup && topup.balance_usd).toBe('7.000000');
    expect((await ok(purser.api.GET('/v1/balance'))).balance_usd).toBe('7.000000');
  });

  it('pays a 402 with an x402 payment signed from its requirements', async () => {
    const payer = await newFundedAccount(devnet, {
      chainId: PAYMENTS_CHAIN,
      tokens: [{ symbol: 'USDC', amount: 5_000_000n }],
    });
    const owner = privateKeyToAccount(payer.privateKey);
    const purser = newAgent();
    await purser.signIn(owner);
    const request = { title: 'An SDK-paid request', body: 'Paid with signX402Payment from the 402 answer.' };
    const refused = await purser.api.POST('/v1/feedback', { body: request }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PurserError);
    const e = refused as PurserError;
    expect(e.status).toBe(402);
    const payment = await signX402Payment(owner, e.body as Parameters<typeof signX402Payment>[1]);
    const paid = await ok(
      purser.api.POST('/v1/feedback', { body: request, headers: { 'X-PAYMENT': payment } }),
    );
    expect(paid).toMatchObject({ charged_usd: '1' });
    expect((paid as { paid_ref: string }).paid_ref).toMatch(/^0x[0-9a-f]{64}$/);

    // The same 402 in x402 version 2: its PAYMENT-REQUIRED header, paid with PAYMENT-SIGNATURE.
    const again = {
      title: 'An SDK-paid request, v2',
      body: 'Paid with signX402PaymentV2 from the 402 header.',
    };
    const refusedV2 = (await purser.api
      .POST('/v1/feedback', { body: again })
      .catch((x: unknown) => x)) as PurserError;
    expect(refusedV2.status).toBe(402);
    expect(refusedV2.paymentRequired).toEqual(expect.any(String));
    const v2 = await signX402PaymentV2(owner, refusedV2.paymentRequired!);
    const paidV2 = await ok(
      purser.api.POST('/v1/feedback', { body: again, headers: { 'PAYMENT-SIGNATURE': v2 } }),
    );
    expect(paidV2).toMatchObject({ charged_usd: '1' });
    expect((paidV2 as { paid_ref: string }).paid_ref).not.toBe((paid as { paid_ref: string }).paid_ref);
  });
});

describe('webhooks', () => {
  const secret = 'whsec_test_secret_for_the_sdk';
  const body = JSON.stringify({ id: 'evt_1', kind: 'intent.filled', data: { id: 'int_1' } });
  const now = 1_790_000_000;
  const headers = (t: number, b = body) => ({
    'x-service-signature': signatureHeader(secret, t, 'evt_1', b),
    'x-service-event-id': 'evt_1',
  });

  it('accepts a delivery signed as the service signs it, and refuses an altered, foreign or stale one', () => {
    expect(verifyWebhook({ secret, headers: headers(now), body, now })).toMatchObject({
      kind: 'intent.filled',
    });
    expect(() =>
      verifyWebhook({ secret, headers: headers(now), body: body.replace('int_1', 'int_2'), now }),
    ).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook({ secret: 'whsec_other', headers: headers(now), body, now })).toThrow(
      /does not match/,
    );
    expect(() => verifyWebhook({ secret, headers: headers(now - 301), body, now })).toThrow(/older/);
    expect(() => verifyWebhook({ secret, headers: {}, body, now })).toThrow(/lacks/);
  });
});

describe('the example agent (examples/agent.ts)', () => {
  it('runs as written to a filled conversion, told so by a verified webhook', async () => {
    // The SDK as its workspace's sources (its package exports them under this condition).
    const child = spawn(
      process.execPath,
      ['--conditions=purser-source', '--import', 'tsx', 'examples/agent.ts'],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, PURSER_URL: service.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, `${out}\n${err}`).toBe(0);
    const summary = JSON.parse(out.trim().split('\n').at(-1)!) as {
      event: string;
      intent: string;
      totals: { sold: string; bought: string };
      statement: string;
    };
    expect(summary.event).toBe('intent.filled');
    expect(summary.intent).toBe('filled');
    expect(summary.totals.sold).toBe('800000000');
    expect(BigInt(summary.totals.bought)).toBeGreaterThan(0n);
    expect(summary.statement).toMatch(/^sha256:[0-9a-f]{64}$/);
  }, 180_000);
});
