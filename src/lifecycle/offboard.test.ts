// POST /v1/account/offboard against the devnet: an account with keys, two sessions, delegations,
// a webhook endpoint with its secret, a dead letter and a pending delivery, auto-top-up arrows,
// a statement export, ledger entries and a policy is retired in one transaction. Checked: the
// result body, that every credential then gets 401 and sign-in 403, what stays and what goes,
// the cancellation material cancelling an arrow on-chain, the export free of secrets, a wrong
// confirmation changing nothing, another account untouched, and the Idempotency-Key replay.

import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import {
  createWalletClient,
  decodeFunctionData,
  getAddress,
  http,
  parseAbi,
  type Address,
  type Hex,
  type TypedDataDomain,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/support/app.ts';
import { expectErrorBody } from '../../test/support/error-body.ts';
import {
  bearer,
  createAccount,
  createKey,
  createSession,
  randomAddress,
} from '../../test/support/identity.ts';
import {
  newPayer,
  PAYMENTS_CHAIN,
  paymentsSetup,
  signAuthorization,
  type Payer,
  type PaymentsSetup,
} from '../../test/support/payments.ts';
import { chainDefinition } from '../adapters/chain/viem.ts';
import { testConfig } from '../config.ts';
import { ManualClock } from '../core/clock.ts';
import { withTransaction } from '../core/db/database.ts';
import { newId } from '../core/ids.ts';
import type { Job } from '../core/jobs/index.ts';
import { devnetChain } from '../devnet/devnet.ts';
import { jobHandlers } from '../jobs.ts';
import { hashToken } from '../modules/auth/tokens.ts';
import { insertArrows } from '../modules/billing/auto-topup-store.ts';
import { CANCEL_AUTHORIZATION_TYPES } from '../modules/billing/auto-topup.ts';
import { creditPrepaid } from '../modules/billing/prepaid.ts';
import { kernelAbi } from '../modules/delegations/kernel.ts';
import { emitEvent } from '../modules/events/index.ts';
import { buildAccountExport } from './export.ts';
import { accountParts } from './parts.ts';
import type { OffboardResult } from './offboard.ts';

const devnet = inject('devnet');
const SIWE = { domain: 'purser.test', uri: 'https://purser.test', chainId: 8453 };
const clock = new ManualClock(new Date());
const usdcAbi = parseAbi([
  'function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
]);

let t: TestApp;
let setup: PaymentsSetup;

beforeAll(async () => {
  setup = await paymentsSetup(devnet, testConfig());
  t = await createTestApp({
    clock,
    poolSize: 8,
    config: { ...setup.config, siwe: SIWE, publicRateLimitPerMinute: 1_000_000 },
    deps: setup.deps,
  });
});
afterAll(async () => {
  await t?.close();
});

const db = () => t.db.db;

function call(
  method: 'GET' | 'POST' | 'PUT',
  url: string,
  token: string,
  payload?: object,
  headers: Record<string, string> = {},
) {
  return t.app.fastify.inject({
    method,
    url,
    headers: { ...bearer(token), ...headers },
    ...(payload ? { payload } : {}),
  });
}

interface Seeded {
  eoa: PrivateKeyAccount;
  accountId: string;
  wallet: string;
  sessions: { id: string; token: string }[];
  adminKey: { id: string; token: string };
  readKey: { id: string; token: string };
  delegationIds: string[];
  payer: Payer;
  arrowNonces: Hex[];
  statementKey: string;
  secrets: Record<string, string>;
}

async function insertDelegation(accountId: string, wallet: string, status: 'active' | 'prepared') {
  const id = randomUUID();
  const enableSig = status === 'active' ? `0x${randomBytes(65).toString('hex')}` : null;
  await db()
    .insertInto('delegations')
    .values({
      id,
      account_id: accountId,
      wallet,
      chain_id: 8453,
      status,
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
      enable_sig: enableSig,
      owner: status === 'active' ? randomAddress() : null,
      created_at: clock.now(),
      confirmed_at: status === 'active' ? clock.now() : null,
      revoked_at: null,
      expired_at: null,
    })
    .execute();
  return { id, enableSig };
}

/** Everything the issue names, on a fresh account whose wallet key we hold (to try signing in). */
async function seed(): Promise<Seeded> {
  const eoa = privateKeyToAccount(generatePrivateKey());
  const { accountId } = await createAccount(db(), { address: eoa.address, now: clock.now() });
  await db()
    .updateTable('accounts')
    .set({ contact: 'ops@agent.example' })
    .where('id', '=', accountId)
    .execute();
  const sessions = [
    await createSession(db(), accountId, { now: clock.now() }),
    await createSession(db(), accountId, { now: clock.now() }),
  ];
  const session = sessions[0]!.token;

  const created = await call('POST', '/v1/keys', session, { name: 'ops', scopes: ['admin'] });
  expect(created.statusCode, created.body).toBe(201);
  const adminKey = created.json<{ id: string; token: string }>();
  const readKey = await createKey(db(), accountId, { scopes: ['read'], now: clock.now() });

  const wallet = randomAddress();
  const policy = await call('PUT', '/v1/policies', session, { version: 1, wallet, chain_id: 8453 });
  expect(policy.statusCode, policy.body).toBe(201);

  const active = await insertDelegation(accountId, wallet, 'active');
  const prepared = await insertDelegation(accountId, wallet, 'prepared');

  // Webhooks: a destination (nothing listens there), its secret, a dead letter, an envelope.
  const endpoint = await call('PUT', '/v1/webhooks/endpoint', session, { url: 'http://127.0.0.1:9/hooks' });
  expect(endpoint.statusCode, endpoint.body).toBe(200);
  const secret = (await call('GET', '/v1/webhooks/secret', session)).json<{ secret: string }>().secret;
  const sealed = await db()
    .selectFrom('webhook_endpoints')
    .select('secret_sealed')
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  const deadEvent = await withTransaction(db(), (tx) =>
    emitEvent(tx, clock, { accountId, kind: 'test.dead', payload: { n: 1 } }),
  );
  const deadBody = `{"id":"${deadEvent}","kind":"test.dead","data":{"n":1}}`;
  await db()
    .insertInto('webhook_dead_letters')
    .values({
      account_id: accountId,
      event_id: deadEvent,
      kind: 'test.dead',
      body: deadBody,
      attempts: 9,
      last_status: 503,
      last_error: 'HTTP 503',
      first_attempt_at: clock.now(),
      dead_at: clock.now(),
    })
    .execute();
  const envelopeSignature = `t=1,v1=${randomBytes(32).toString('hex')}`;
  await db()
    .insertInto('webhook_envelopes')
    .values({
      event_id: deadEvent,
      account_id: accountId,
      body: deadBody,
      signature: envelopeSignature,
      attempts: 9,
      first_signed_at: clock.now(),
      last_signed_at: clock.now(),
    })
    .execute();

  // Ledger: a prepaid credit (entries, balance, balance.credited event).
  await withTransaction(db(), (tx) =>
    creditPrepaid(tx, clock, {
      accountId,
      amountMicroUsd: 7_000_000n,
      settlementId: `test:${randomBytes(8).toString('hex')}`,
    }),
  );

  // Two ready arrows, signed by a real payer (so a cancellation can be tried on-chain).
  const payer = await newPayer(devnet, 0n);
  const nowSecs = BigInt(Math.floor(Date.now() / 1000));
  const signed = [
    await signAuthorization(setup, payer, {
      to: setup.treasury,
      value: 5_000_000n,
      validBefore: nowSecs + 86_400n,
    }),
    await signAuthorization(setup, payer, {
      to: setup.treasury,
      value: 6_000_000n,
      validBefore: nowSecs + 7_200n,
    }),
  ];
  await insertArrows(
    db(),
    signed.map((s) => ({
      id: newId('arw'),
      account_id: accountId,
      chain_id: PAYMENTS_CHAIN,
      token: setup.usdc.toLowerCase(),
      payer: payer.address.toLowerCase(),
      payee: setup.treasury.toLowerCase(),
      value: BigInt(s.authorization['value']!),
      valid_after: BigInt(s.authorization['validAfter']!),
      valid_before: BigInt(s.authorization['validBefore']!),
      nonce: s.authorization['nonce']!.toLowerCase(),
      signature: s.signature.toLowerCase(),
    })),
    clock.now(),
  );

  // A statement export (an object in the store and its row).
  const month = clock.now().toISOString().slice(0, 7);
  const statement = await t.app.fastify.inject({
    method: 'GET',
    url: '/v1/statements',
    query: { wallet, period: month },
    headers: bearer(session),
  });
  expect(statement.statusCode, statement.body).toBe(200);
  const statementKey = statement.json<{ export: { key: string } }>().export.key;
  expect(await t.deps.objectStore!.head(statementKey)).not.toBeNull();

  // Every credential has been used once, so the credential cache holds it.
  for (const token of [...sessions.map((s) => s.token), adminKey.token, readKey.token]) {
    expect((await call('GET', '/v1/balance', token)).statusCode).toBe(200);
  }

  return {
    eoa,
    accountId,
    wallet,
    sessions,
    adminKey,
    readKey,
    delegationIds: [active.id, prepared.id],
    payer,
    arrowNonces: signed.map((s) => s.authorization['nonce'] as Hex),
    statementKey,
    secrets: {
      session0: sessions[0]!.token,
      session1: sessions[1]!.token,
      session0Hash: hashToken(sessions[0]!.token),
      adminKey: adminKey.token,
      adminKeyHash: hashToken(adminKey.token),
      readKey: readKey.token,
      webhookSecret: secret,
      sealedSecret: sealed.secret_sealed ?? '',
      enableSig: active.enableSig ?? '',
      arrow0: signed[0]!.signature,
      arrow1: signed[1]!.signature,
      envelopeSignature,
    },
  };
}

/** Rows that must not change when a request fails, or for another account at all. */
async function footprint(accountId: string) {
  const count = async (table: string, where = sql`true`) => {
    const r = await sql<{ n: string }>`
      SELECT count(*) AS n FROM ${sql.table(table)} WHERE account_id = ${accountId} AND ${where}`.execute(
      db(),
    );
    return Number(r.rows[0]?.n ?? 0);
  };
  const account = await db()
    .selectFrom('accounts')
    .select(['contact', 'offboarded_at'])
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  return {
    account,
    liveKeys: await count('api_keys', sql`revoked_at IS NULL`),
    liveSessions: await count('sessions', sql`revoked_at IS NULL`),
    openDelegations: await count('delegations', sql`status IN ('active', 'prepared')`),
    signedArrows: await count('auto_topup_arrows', sql`signature IS NOT NULL`),
    endpoints: await count('webhook_endpoints', sql`secret_sealed IS NOT NULL AND url IS NOT NULL`),
    deadLetters: await count('webhook_dead_letters'),
    pendingDeliveries: await count('webhook_deliveries', sql`state = 'pending'`),
    envelopes: await count('webhook_envelopes', sql`body IS NOT NULL`),
    statementExports: await count('statement_exports'),
    ledgerGroups: await count('ledger_groups'),
    policies: await count('policies'),
    events: await count('events'),
    audit: await count('audit_log'),
  };
}

/** The account's rows in each table a module's part declares (src/lifecycle/parts.ts). */
async function tableRows(accountId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const part of accountParts())
    for (const { table, column } of part.tables) {
      const r = await sql<{ n: string }>`
        SELECT count(*) AS n FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ${accountId}`.execute(db());
      counts[table] = Number(r.rows[0]?.n ?? 0);
    }
  return counts;
}

const runJob = (name: string) =>
  jobHandlers(t.deps)[name]!({} as Job, {
    attempt: 1,
    workerId: 'test',
    signal: new AbortController().signal,
  });

let mine: Seeded;
let theirs: Seeded;
let theirsBefore: Awaited<ReturnType<typeof footprint>>;
let before: Awaited<ReturnType<typeof footprint>>;
let rowsBefore: Record<string, number>;
let result: OffboardResult;
let resultText: string;
const IDEMPOTENCY_KEY = 'offboard-1';

describe('POST /v1/account/offboard', () => {
  beforeAll(async () => {
    mine = await seed();
    theirs = await seed();
    // A pending delivery: an event emitted while the destination is registered.
    await withTransaction(db(), (tx) =>
      emitEvent(tx, clock, { accountId: mine.accountId, kind: 'test.pending', payload: {} }),
    );
    before = await footprint(mine.accountId);
    rowsBefore = await tableRows(mine.accountId);
    theirsBefore = await footprint(theirs.accountId);
  });

  it('refuses a confirmation that is not the account’s address with 400, changing nothing', async () => {
    for (const confirm of [theirs.eoa.address, randomAddress()]) {
      const res = await call(
        'POST',
        '/v1/account/offboard',
        mine.adminKey.token,
        { confirm_wallet_address: confirm },
        { 'idempotency-key': 'wrong-address' },
      );
      const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
      expect(body.message).toMatch(/confirm_wallet_address/);
    }
    expect(await footprint(mine.accountId)).toEqual(before);
    expect((await call('GET', '/v1/balance', mine.readKey.token)).statusCode).toBe(200);
  });

  it('refuses unknown fields, a missing confirmation, an over-long reason and a read key', async () => {
    const post = (payload: object, token = mine.adminKey.token) =>
      call('POST', '/v1/account/offboard', token, payload);
    const unknown = expectErrorBody(
      await post({ confirm_wallet_address: mine.eoa.address, reasn: 'typo' }),
      400,
      'INVALID_REQUEST',
    );
    expect(unknown.message).toMatch(/unknown field reasn/);
    expectErrorBody(await post({}), 400, 'INVALID_REQUEST');
    expectErrorBody(await post({ confirm_wallet_address: 'not-an-address' }), 400, 'INVALID_REQUEST');
    expectErrorBody(
      await post({ confirm_wallet_address: mine.eoa.address, reason: 'x'.repeat(301) }),
      400,
      'INVALID_REQUEST',
    );
    expectErrorBody(
      await post({ confirm_wallet_address: mine.eoa.address }, mine.readKey.token),
      403,
      'FORBIDDEN',
    );
    expect(await footprint(mine.accountId)).toEqual(before);
  });

  it('retires the account and returns every field of the spec’s result', async () => {
    clock.advance(1000);
    const res = await call(
      'POST',
      '/v1/account/offboard',
      mine.adminKey.token,
      // Lowercase: the confirmation is case-insensitive.
      { confirm_wallet_address: mine.eoa.address.toLowerCase(), reason: 'closing the agent' },
      { 'idempotency-key': IDEMPOTENCY_KEY },
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    result = res.json<OffboardResult>();
    resultText = res.body;
    expect(result).toMatchObject({
      offboarded: true,
      address: mine.eoa.address,
      offboarded_at: clock.now().toISOString(),
      deleted: {
        api_keys_revoked: 2,
        sessions_revoked: 2,
        credentials_zeroed: 0,
        auto_topup_arrows_removed: 2,
        webhook_secret_removed: true,
        webhook_failures_removed: 1,
        contact_scrubbed: true,
      },
      scheduled: ['statement_exports'],
    });
    expect(result.retained).toEqual(expect.arrayContaining(['ledger', 'events', 'policies', 'audit_log']));
    expect(result.note).toMatch(/does not revoke the authorization on-chain/);

    // Delegations: both open grants, with the owner's unwind calldata against the wallet.
    expect(result.delegations_revoked.map((d) => d.id).sort()).toEqual([...mine.delegationIds].sort());
    for (const d of result.delegations_revoked) {
      expect(d.account).toBe(getAddress(mine.wallet));
      expect(d.uninstall_call.to).toBe(getAddress(mine.wallet));
      expect(d.invalidate_nonce_call.to).toBe(getAddress(mine.wallet));
      const uninstall = decodeFunctionData({ abi: kernelAbi, data: d.uninstall_call.data as Hex });
      expect(uninstall.functionName).toBe('uninstallValidation');
      const invalidate = decodeFunctionData({ abi: kernelAbi, data: d.invalidate_nonce_call.data as Hex });
      expect(invalidate.functionName).toBe('invalidateNonce');
      // The stored nonce is 3; the undeployed account reads 0 on-chain: the next one is 4.
      expect(invalidate.args).toEqual([4]);
    }

    // Cancellation material for each removed arrow, under the token's real domain.
    const auths = result.cancellation.authorizations as Array<{
      nonce: string;
      payer: string;
      token: { chain_id: number; address: string };
      typed_data: { domain: TypedDataDomain; primaryType: string; message: Record<string, string> };
      call: { to: string; function: string };
    }>;
    expect(auths.map((a) => a.nonce).sort()).toEqual(mine.arrowNonces.map((n) => n.toLowerCase()).sort());
    for (const a of auths) {
      expect(a.payer).toBe(mine.payer.address);
      expect(a.token).toEqual({ chain_id: PAYMENTS_CHAIN, address: setup.usdc });
      expect(a.typed_data.domain).toEqual(setup.domain);
      expect(a.typed_data.primaryType).toBe('CancelAuthorization');
      expect(a.typed_data.message).toEqual({ authorizer: mine.payer.address, nonce: a.nonce });
      expect(a.call.to).toBe(setup.usdc);
      expect(a.call.function).toMatch(/^cancelAuthorization\(/);
    }
  });

  it('gives the payer what cancels a removed arrow on-chain', async () => {
    const auth = result.cancellation.authorizations[0] as {
      nonce: Hex;
      typed_data: { domain: TypedDataDomain; message: { authorizer: Address; nonce: Hex } };
    };
    const payer = privateKeyToAccount(mine.payer.privateKey);
    const signature = await payer.signTypedData({
      domain: auth.typed_data.domain,
      types: CANCEL_AUTHORIZATION_TYPES,
      primaryType: 'CancelAuthorization',
      message: auth.typed_data.message,
    });
    const rpcUrl = devnetChain(devnet, PAYMENTS_CHAIN).rpcUrl;
    const wallet = createWalletClient({
      account: payer,
      chain: chainDefinition(PAYMENTS_CHAIN, rpcUrl),
      transport: http(rpcUrl),
    });
    const used = () =>
      t.deps.chain!.publicClient(PAYMENTS_CHAIN).readContract({
        address: setup.usdc,
        abi: usdcAbi,
        functionName: 'authorizationState',
        args: [mine.payer.address, auth.nonce],
      });
    expect(await used()).toBe(false);
    const hash = await wallet.writeContract({
      address: setup.usdc,
      abi: usdcAbi,
      functionName: 'cancelAuthorization',
      args: [mine.payer.address, auth.nonce, signature],
    });
    const receipt = await t.deps.chain!.publicClient(PAYMENTS_CHAIN).waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    expect(await used()).toBe(true);
  });

  it('leaves no credential of the account working (401), cached ones included', async () => {
    for (const token of [...mine.sessions.map((s) => s.token), mine.adminKey.token, mine.readKey.token]) {
      expectErrorBody(await call('GET', '/v1/balance', token), 401, 'UNAUTHORIZED');
      expectErrorBody(await call('GET', '/v1/account/export', token), 401, 'UNAUTHORIZED');
    }
  });

  it('answers sign-in for the address with 403', async () => {
    const challenge = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/auth/challenge',
      payload: { address: mine.eoa.address },
    });
    expect(challenge.statusCode, challenge.body).toBe(200);
    const message = challenge.json<{ message: string }>().message;
    const res = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/auth/verify',
      payload: { message, signature: await mine.eoa.signMessage({ message }) },
    });
    expectErrorBody(res, 403, 'FORBIDDEN');
  });

  it('keeps the ledger, events, policies and audit facts, and removes the rest', async () => {
    const after = await footprint(mine.accountId);
    expect(after).toMatchObject({
      account: { contact: null, offboarded_at: clock.now() },
      liveKeys: 0,
      liveSessions: 0,
      openDelegations: 0,
      signedArrows: 0,
      endpoints: 0,
      deadLetters: 0,
      pendingDeliveries: 0,
      envelopes: 0,
      ledgerGroups: before.ledgerGroups,
      policies: before.policies,
      statementExports: before.statementExports,
    });
    expect(after.events).toBeGreaterThan(before.events);
    expect(after.audit).toBeGreaterThan(before.audit);
    expect(
      await db()
        .selectFrom('auto_topup_arrows')
        .select('id')
        .where('account_id', '=', mine.accountId)
        .execute(),
    ).toEqual([]);
    expect(
      await db()
        .selectFrom('delegations')
        .select('status')
        .where('account_id', '=', mine.accountId)
        .execute()
        .then((rows) => rows.map((r) => r.status)),
    ).toEqual(['revoked', 'revoked']);
    const envelope = await db()
      .selectFrom('webhook_envelopes')
      .selectAll()
      .where('account_id', '=', mine.accountId)
      .executeTakeFirstOrThrow();
    expect(envelope).toMatchObject({ body: null, signature: null });
    expect(envelope.hash).toMatch(/^sha256:[0-9a-f]{64}$/);

    const events = await db()
      .selectFrom('events')
      .select(['kind', 'subject', 'payload'])
      .where('account_id', '=', mine.accountId)
      .where('created_at', '=', clock.now())
      .execute();
    const kinds = events.map((e) => e.kind).sort();
    expect(kinds).toEqual([
      'account.offboarded',
      'auto_topup.arrow_removed',
      'auto_topup.arrow_removed',
      'delegation.revoked',
      'delegation.revoked',
      'key.revoked',
      'key.revoked',
    ]);
    const offboarded = events.find((e) => e.kind === 'account.offboarded');
    expect(offboarded?.payload).toMatchObject({ reason: 'closing the agent', api_keys_revoked: 2 });
    const facts = await db()
      .selectFrom('audit_log')
      .select('action')
      .where('account_id', '=', mine.accountId)
      .where('action', 'in', ['account.offboarded', 'auto_topup.arrows_removed', 'delegation.revoked'])
      .execute();
    expect(facts.map((f) => f.action).sort()).toEqual([
      'account.offboarded',
      'auto_topup.arrows_removed',
      'delegation.revoked',
      'delegation.revoked',
    ]);
  });

  it("does to each module's rows what its part declares", async () => {
    const after = await tableRows(mine.accountId);
    const fates = accountParts().flatMap((part) => part.tables);
    for (const { table, offboard } of fates) {
      if (offboard === 'removed') expect(after[table], table).toBe(0);
      if (offboard === 'kept') expect(after[table], table).toBeGreaterThanOrEqual(rowsBefore[table]!);
      if (offboard === 'scheduled') expect(after[table], table).toBe(rowsBefore[table]);
    }
    // The seed has rows where it matters: the declarations were put to the test.
    for (const table of [
      'webhook_dead_letters',
      'webhook_endpoints',
      'statement_exports',
      'ledger_groups',
      'events',
    ])
      expect(rowsBefore[table], table).toBeGreaterThan(0);
  });

  it('leaves an export without any secret, and the sweep deletes the statement exports', async () => {
    const exported = await buildAccountExport(db(), clock, mine.accountId);
    expect(exported.account).toMatchObject({ contact: null, offboarded_at: clock.now().toISOString() });
    expect(exported.webhooks).toEqual({ secret_configured: false, failures: [] });
    const raw = JSON.stringify(exported).toLowerCase();
    for (const [name, secret] of Object.entries(mine.secrets)) {
      expect(secret.length, name).toBeGreaterThan(16);
      expect(raw.includes(secret.toLowerCase()), name).toBe(false);
      const tail = secret.split(':').at(-1) ?? secret;
      if (tail.length >= 16) expect(raw.includes(tail.toLowerCase()), `${name} (tail)`).toBe(false);
    }
    expect(exported.statements_manifest.keys).toEqual([mine.statementKey]);

    await runJob('housekeeping.statement_exports');
    expect((await buildAccountExport(db(), clock, mine.accountId)).statements_manifest.keys).toEqual([]);
    expect(await t.deps.objectStore!.head(mine.statementKey)).toBeNull();
    // The other account's export is not the sweep's business.
    expect(await t.deps.objectStore!.head(theirs.statementKey)).not.toBeNull();
  });

  it('leaves another account untouched', async () => {
    expect(await footprint(theirs.accountId)).toEqual(theirsBefore);
    for (const token of [
      ...theirs.sessions.map((s) => s.token),
      theirs.adminKey.token,
      theirs.readKey.token,
    ]) {
      expect((await call('GET', '/v1/balance', token)).statusCode).toBe(200);
    }
    const state = await call('GET', '/v1/balance/auto-topup', theirs.adminKey.token);
    expect(state.json<{ quiver: { ready: number } }>().quiver.ready).toBe(2);
  });

  it('replays the result for the same Idempotency-Key, from any credential it revoked', async () => {
    clock.advance(60_000);
    const payload = { confirm_wallet_address: mine.eoa.address.toLowerCase(), reason: 'closing the agent' };
    for (const token of [mine.adminKey.token, mine.sessions[1]!.token]) {
      const again = await call('POST', '/v1/account/offboard', token, payload, {
        'idempotency-key': IDEMPOTENCY_KEY,
      });
      expect(again.statusCode, again.body).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(resultText);
    }
    // The same key with another payload: a conflict, as for any key.
    expectErrorBody(
      await call(
        'POST',
        '/v1/account/offboard',
        mine.adminKey.token,
        { confirm_wallet_address: mine.eoa.address },
        { 'idempotency-key': IDEMPOTENCY_KEY },
      ),
      422,
      'IDEMPOTENCY_CONFLICT',
    );
    // No key, another key, or a credential that could not have offboarded: the guard's 401.
    expectErrorBody(
      await call('POST', '/v1/account/offboard', mine.adminKey.token, payload),
      401,
      'UNAUTHORIZED',
    );
    expectErrorBody(
      await call('POST', '/v1/account/offboard', mine.adminKey.token, payload, {
        'idempotency-key': 'other',
      }),
      401,
      'UNAUTHORIZED',
    );
    expectErrorBody(
      await call('POST', '/v1/account/offboard', mine.readKey.token, payload, {
        'idempotency-key': IDEMPOTENCY_KEY,
      }),
      401,
      'UNAUTHORIZED',
    );
    // Nothing happened again.
    const offboardEvents = await db()
      .selectFrom('events')
      .select('id')
      .where('account_id', '=', mine.accountId)
      .where('kind', '=', 'account.offboarded')
      .execute();
    expect(offboardEvents).toHaveLength(1);
  });
});
