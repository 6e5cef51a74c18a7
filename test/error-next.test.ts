// `next` wherever a next step exists (spec sections 2 and 7). The error table either gives each code
// a default next step, every one of them a route this service serves, or says why there is none;
// and the cases a caller meets most point where they should: a missing scope at whoami, a fee the
// prepaid balance does not cover at the top-up (and, in development, at the faucet of the chain
// top-ups pay on), a delegation conflict at that delegation, and a retired account nowhere near a
// new sign-in.

import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testConfig } from '../src/config.ts';
import { ERROR_CODES, type ErrorCode } from '../src/core/errors/codes.ts';
import { errorBody } from '../src/core/http/error-renderer.ts';
import { paymentRequired } from '../src/modules/billing/prepaid.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { expectErrorBody } from './support/error-body.ts';
import { bearer, createAccountWithSession, createKey, randomAddress } from './support/identity.ts';
import { paymentsSetup, type PaymentsSetup } from './support/payments.ts';

const devnet = inject('devnet');
let setup: PaymentsSetup;
let dev: TestApp;
let prod: TestApp;

beforeAll(async () => {
  setup = await paymentsSetup(devnet, testConfig());
  dev = await createTestApp({ config: setup.config, deps: setup.deps });
  prod = await createTestApp({ config: { ...setup.config, env: 'production' }, deps: setup.deps });
});
afterAll(async () => {
  await dev?.close();
  await prod?.close();
});

const codes = Object.keys(ERROR_CODES) as ErrorCode[];

describe('the error table', () => {
  it.each(codes)('%s has a default next step or says why it has none', (code) => {
    const info = ERROR_CODES[code] as { next?: unknown[]; noDefaultNext?: string };
    if ('next' in info) {
      expect(info.next?.length, code).toBeGreaterThan(0);
    } else {
      expect(typeof info.noDefaultNext, `${code} needs a next step or a reason for none`).toBe('string');
      expect(info.noDefaultNext?.length).toBeGreaterThan(20);
    }
  });

  it('points every default next step at a route this service serves', () => {
    for (const code of codes) {
      const info = ERROR_CODES[code];
      if (!('next' in info)) continue;
      for (const step of info.next) {
        expect(dev.app.routes.allowedMethods(step.path), `${code}: ${step.method} ${step.path}`).toContain(
          step.method,
        );
      }
    }
  });
});

describe('the served error table', () => {
  it("shows each code's default next step or why there is none", async () => {
    const page = (await dev.app.fastify.inject({ method: 'GET', url: '/docs/errors' })).body;
    const row = (code: string) =>
      page.slice(page.indexOf(`<tr id="${code}">`), page.indexOf('</tr>', page.indexOf(`<tr id="${code}">`)));
    expect(row('FORBIDDEN')).toContain('GET /v1/auth/session');
    expect(row('PAYMENT_REQUIRED')).toContain('POST /v1/dev/faucet');
    expect(row('INTERNAL')).toContain(ERROR_CODES.INTERNAL.noDefaultNext);
  });
});

describe('a 403 for a missing scope', () => {
  it('points at whoami, which shows the scopes of the credential', async () => {
    const acc = await createAccountWithSession(dev.db.db);
    const key = await createKey(dev.db.db, acc.accountId, { scopes: ['read'] });
    const res = await dev.app.fastify.inject({
      method: 'POST',
      url: '/v1/feedback',
      headers: bearer(key.token),
      payload: { title: 'A title', body: 'A body long enough.' },
    });
    const body = expectErrorBody(res, 403, 'FORBIDDEN');
    expect(body.next).toEqual([expect.objectContaining({ method: 'GET', path: '/v1/auth/session' })]);
    // And whoami answers that key with its scopes.
    const whoami = await dev.app.fastify.inject({
      method: 'GET',
      url: '/v1/auth/session',
      headers: bearer(key.token),
    });
    expect(whoami.json().credential.scopes).toEqual(['read']);
  });
});

describe('a fee the prepaid balance does not cover (402 PAYMENT_REQUIRED)', () => {
  const feedback = (t: TestApp, token: string) =>
    t.app.fastify.inject({
      method: 'POST',
      url: '/v1/feedback',
      headers: bearer(token),
      payload: { title: 'Unfunded request', body: 'The balance is zero.' },
    });

  it('points at the top-up terms, the top-up and, in development, the faucet of the payments chain', async () => {
    const acc = await createAccountWithSession(dev.db.db);
    const res = await feedback(dev, acc.sessionToken);
    expect(res.statusCode, res.body).toBe(402);
    const body = res.json() as Record<string, unknown> & {
      next: { method: string; path: string; why: string }[];
    };
    expect(body['code']).toBe('PAYMENT_REQUIRED');
    expect(body['x402Version']).toBe(1);
    expect(body.next.map((s) => `${s.method} ${s.path}`)).toEqual([
      'POST /v1/balance/topups',
      'GET /v1/balance/topups/terms',
      'POST /v1/dev/faucet',
    ]);
    const faucet = body.next.find((s) => s.path === '/v1/dev/faucet');
    expect(faucet?.why).toContain(`chain ${setup.config.payments?.chainId} (Base)`);
  });

  it('offers no faucet in production', async () => {
    const acc = await createAccountWithSession(prod.db.db);
    const res = await feedback(prod, acc.sessionToken);
    expect(res.statusCode, res.body).toBe(402);
    const body = res.json() as { next: { path: string }[] };
    expect(body.next.map((s) => s.path)).toEqual(['/v1/balance/topups', '/v1/balance/topups/terms']);
  });

  it('renders the billing refusal with the same next steps wherever it is raised', () => {
    const err = paymentRequired({ feeMicroUsd: 1_000_000n, availableMicro: 0n });
    const inDev = errorBody(err, 'req_00000000000000000000', dev.deps.config);
    expect(inDev.next?.map((s) => s.path)).toEqual([
      '/v1/balance/topups',
      '/v1/balance/topups/terms',
      '/v1/dev/faucet',
    ]);
    const inProd = errorBody(err, 'req_00000000000000000000', prod.deps.config);
    expect(inProd.next?.map((s) => s.path)).not.toContain('/v1/dev/faucet');
  });
});

describe('a delegation conflict (409)', () => {
  it('points at that delegation', async () => {
    const acc = await createAccountWithSession(dev.db.db);
    const id = randomUUID();
    const now = new Date();
    await dev.db.db
      .insertInto('delegations')
      .values({
        id,
        account_id: acc.accountId,
        wallet: randomAddress().toLowerCase(),
        chain_id: 8453,
        status: 'active',
        permission_id: `0x${randomBytes(4).toString('hex')}`,
        validation_id: `0x02${randomBytes(20).toString('hex')}`,
        kernel_version: '0.3.1',
        domain_version: '0.3.1',
        enable_data: `0x${randomBytes(32).toString('hex')}`,
        selector_data: `0x${randomBytes(32).toString('hex')}`,
        kernel_nonce: 3,
        digest: `0x${randomBytes(32).toString('hex')}`,
        session_key: randomAddress(),
        modules: JSON.stringify({}),
        scope: JSON.stringify({ calls: [], valid_after: 0, valid_until: 4_000_000_000, rate_limit: null }),
        valid_after: 0,
        valid_until: 4_000_000_000,
        account_deployed: false,
        policy_version: 1,
        renewed_from: null,
        enable_sig: `0x${randomBytes(65).toString('hex')}`,
        owner: randomAddress(),
        created_at: now,
        confirmed_at: now,
        revoked_at: null,
        expired_at: null,
      })
      .execute();
    const res = await dev.app.fastify.inject({
      method: 'POST',
      url: `/v1/delegations/${id}/confirm`,
      headers: bearer(acc.sessionToken),
      payload: { enable_sig: `0x${randomBytes(65).toString('hex')}` },
    });
    const body = expectErrorBody(res, 409, 'CONFLICT');
    expect(body.next).toEqual([expect.objectContaining({ method: 'GET', path: `/v1/delegations/${id}` })]);
  });
});

describe('a 401 for an offboarded account', () => {
  it('says the account is retired and invites no new sign-in', async () => {
    const acc = await createAccountWithSession(dev.db.db);
    const key = await createKey(dev.db.db, acc.accountId, { scopes: ['admin'] });
    // As offboarding leaves them: the account retired, its credentials revoked at the same instant.
    const at = new Date();
    await sql`UPDATE accounts SET offboarded_at = ${at} WHERE id = ${acc.accountId}`.execute(dev.db.db);
    await sql`UPDATE sessions SET revoked_at = ${at} WHERE account_id = ${acc.accountId}`.execute(dev.db.db);
    await sql`UPDATE api_keys SET revoked_at = ${at} WHERE account_id = ${acc.accountId}`.execute(dev.db.db);
    for (const token of [acc.sessionToken, key.token]) {
      const res = await dev.app.fastify.inject({
        method: 'GET',
        url: '/v1/auth/session',
        headers: bearer(token),
      });
      const body = expectErrorBody(res, 401, 'UNAUTHORIZED');
      expect(body.message).toMatch(/offboarded|retired/);
      expect(body.next).toBeUndefined();
      expect(`${body.message} ${body.remediation}`).not.toMatch(/challenge|verify|sign in again/i);
    }
  });

  it('while a revoked credential of a live account is still pointed at sign-in', async () => {
    const acc = await createAccountWithSession(dev.db.db);
    await sql`UPDATE sessions SET revoked_at = now() WHERE account_id = ${acc.accountId}`.execute(dev.db.db);
    const res = await dev.app.fastify.inject({
      method: 'GET',
      url: '/v1/auth/session',
      headers: bearer(acc.sessionToken),
    });
    const body = expectErrorBody(res, 401, 'UNAUTHORIZED');
    expect(body.next).toEqual([expect.objectContaining({ method: 'POST', path: '/v1/auth/challenge' })]);
  });
});

describe('a 405', () => {
  it('lists the methods the path accepts as next steps', async () => {
    const res = await dev.app.fastify.inject({ method: 'DELETE', url: '/v1/feedback' });
    const body = expectErrorBody(res, 405, 'METHOD_NOT_ALLOWED');
    expect(body.next?.map((s) => `${s.method} ${s.path}`)).toEqual(['GET /v1/feedback', 'POST /v1/feedback']);
  });
});
