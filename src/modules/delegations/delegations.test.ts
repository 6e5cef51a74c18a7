// Delegations over HTTP against the devnet: prepare (encoding, policy fit), read, list, confirm
// against a real Kernel v3.1 account's ECDSA owner and live nonce (or, undeployed, its
// counterfactual derivation), revoke, renew, expiry, the wallet pin on /{id} routes, and a fuzz of
// bad prepare bodies (400 naming the field, nothing stored).

import fc from 'fast-check';
import {
  createPublicClient,
  createTestClient,
  encodeFunctionData,
  getAddress,
  hashTypedData,
  pad,
  http,
  parseEther,
  type Address,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { devnetDeps, devnetKernelConfig } from '../../../test/support/devnet-deps.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import {
  bearer,
  createAccountWithSession,
  createKey,
  randomAddress,
  type AccountWithSession,
} from '../../../test/support/identity.ts';
import { chainDefinition, createViemChainPort } from '../../adapters/chain/viem.ts';
import { venueContracts, type VenueAdapter } from '../../adapters/venues/index.ts';
import { testConfig } from '../../config.ts';
import { ManualClock } from '../../core/clock.ts';
import { devnetChain, devnetRpcUrls } from '../../devnet/devnet.ts';
import { deployDevnetKernelAccount, devnetKernelAccount } from '../../devnet/kernel-accounts.ts';
import { kernelAbi } from './kernel.ts';
import type { Delegation, Revocation } from './service.ts';
import { expireDelegations } from './service.ts';

const devnet = inject('devnet');
// Base: the devnet runs its venues there, which the grants name as spenders.
const CHAIN = 8453;
const clock = new ManualClock('2026-03-01T12:00:00.000Z');
const NOW = Math.floor(clock.now().getTime() / 1000);
const DAY = 24 * 3600;
const rpcUrl = devnetChain(devnet, CHAIN).rpcUrl;
const publicClient = createPublicClient({ chain: chainDefinition(CHAIN, rpcUrl), transport: http(rpcUrl) });

let t: TestApp;
let user: AccountWithSession;
let usdc: Address;
let ownerKey: PrivateKeyAccount;
let account: Address;
let venues: VenueAdapter[];

/** A deployed Kernel v3.1 account of `owner` on the devnet (root validator: the devnet's ECDSA validator). */
async function deployAccount(owner: Address): Promise<Address> {
  const kernel = await devnetKernelAccount(devnet, CHAIN, owner);
  await deployDevnetKernelAccount(devnet, kernel);
  return kernel.address;
}

const req = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown, token = user.sessionToken) =>
  t.app.fastify.inject({
    method,
    url,
    headers: bearer(token),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

const prepareBody = (overrides: Record<string, unknown> = {}) => ({
  account,
  chain_id: CHAIN,
  calls: [{ target: usdc, selector: '0x095ea7b3', value_limit: '0' }],
  valid_until: NOW + 7 * DAY,
  rate_limit: { count: 10, interval_secs: 60 },
  ...overrides,
});

async function prepare(overrides: Record<string, unknown> = {}): Promise<Delegation> {
  const res = await req('POST', '/v1/delegations/prepare', prepareBody(overrides));
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Delegation>();
}

const sign = (d: Delegation, key = ownerKey) =>
  key.signTypedData(d.typed_data as Parameters<PrivateKeyAccount['signTypedData']>[0]);

const countRows = async () =>
  Number(
    (
      await t.db.db
        .selectFrom('delegations')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

beforeAll(async () => {
  // The devnet's venues as `npm start` runs them: the policy's venues name their contracts.
  const market = await devnetDeps(
    devnet,
    testConfig(),
    createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) }),
    {
      prices: false,
    },
  );
  venues = market.venues ?? [];
  t = await createTestApp({
    clock,
    config: { kernel: devnetKernelConfig(devnet, testConfig()) },
    deps: { ...market, devnet },
  });
  user = await createAccountWithSession(t.db.db, { now: clock.now() });
  usdc = devnetChain(devnet, CHAIN).contracts.usdc;
  ownerKey = privateKeyToAccount(generatePrivateKey());
  account = await deployAccount(ownerKey.address);
  const put = await t.app.fastify.inject({
    method: 'PUT',
    url: '/v1/policies',
    headers: bearer(user.sessionToken),
    payload: { version: 1, wallet: account.toLowerCase(), chain_id: CHAIN },
  });
  expect(put.statusCode, put.body).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

describe('POST /v1/delegations/prepare', () => {
  it('builds the permission for the deployed account, with the digest of its typed data', async () => {
    const d = await prepare();
    expect(d.status).toBe('prepared');
    expect(d.account).toBe(account.toLowerCase());
    expect(d.account_deployed).toBe(true);
    expect(d.kernel_nonce).toBe(1); // a fresh Kernel's currentNonce()
    expect(d.permission_id).toMatch(/^0x[0-9a-f]{8}$/);
    expect(d.validation_id).toBe(`0x02${d.permission_id.slice(2)}${'0'.repeat(32)}`);
    expect(d.session_key).toBe('0x70997970c51812dc3a010c7d01b50e0d17dc79c8');
    expect(d.digest).toBe(hashTypedData(d.typed_data as Parameters<typeof hashTypedData>[0]));
    expect(d.typed_data.domain).toEqual({
      name: 'Kernel',
      version: '0.3.1',
      chainId: CHAIN,
      verifyingContract: account,
    });
    expect(d.typed_data.message.validatorData).toBe(d.enable_data);
    expect(d.valid_until).toBe(new Date((NOW + 7 * DAY) * 1000).toISOString());
    expect(d.scope.rate_limit).toEqual({ count: 10, interval_secs: 60 });
    // The approval may name only the contracts of the policy's venues on the chain (the default
    // policy allows every venue that settles there).
    const spenders = [...new Set(venueContracts(venues, CHAIN).map((v) => v.address.toLowerCase()))].sort();
    expect(spenders.length).toBeGreaterThan(0);
    expect(d.scope.calls[0]!.rules).toEqual([
      { condition: 'one_of', offset: 0, params: spenders.map((a) => pad(a as Address, { size: 32 })) },
    ]);
    expect(d.modules.rate_limit_policy).toBe(
      devnetChain(devnet, CHAIN).contracts.kernelRateLimitPolicy!.toLowerCase(),
    );
    expect(d.owner).toBeNull();
    const events = await t.db.db.selectFrom('events').selectAll().where('subject', '=', d.id).execute();
    expect(events.map((e) => e.kind)).toEqual(['delegation.prepared']);
    const audit = await t.db.db.selectFrom('audit_log').selectAll().where('subject', '=', d.id).execute();
    expect(audit.map((a) => a.action)).toEqual(['delegation.prepared']);
  });

  it('narrows the grant: an approval names only venue contracts, a swap pays the account; the rules are in the enable data', async () => {
    const router = devnetChain(devnet, CHAIN).contracts.uniswapV2Router02!;
    const d = await prepare({
      calls: [
        { target: usdc, selector: '0x095ea7b3', value_limit: '0' },
        { target: router, selector: '0x38ed1739', value_limit: '0' },
        { target: usdc, selector: '0xa9059cbb', value_limit: '0' },
      ],
    });
    const [approve, swap, transfer] = d.scope.calls;
    expect(approve!.rules![0]!.params).toContain(pad(router.toLowerCase() as Address, { size: 32 }));
    // swapExactTokensForTokens(amountIn, amountOutMin, path, to, deadline): `to` is the fourth word.
    expect(swap!.rules).toEqual([
      { condition: 'equal', offset: 96, params: [pad(account.toLowerCase() as Address, { size: 32 })] },
    ]);
    // A transfer has no rule: the policy decides whether it is granted at all.
    expect(transfer!.rules).toEqual([]);
    expect(d.enable_data).toContain(account.slice(2).toLowerCase());
    const read = await req('GET', `/v1/delegations/${d.id}`);
    expect(read.json<Delegation>().scope).toEqual(d.scope);

    // A wallet whose policy allows no venue: an approval could never pass, so it is refused.
    const owner = privateKeyToAccount(generatePrivateKey());
    const other = await deployAccount(owner.address);
    const put = await t.app.fastify.inject({
      method: 'PUT',
      url: '/v1/policies',
      headers: bearer(user.sessionToken),
      payload: { version: 1, wallet: other.toLowerCase(), chain_id: CHAIN, execution: { venues: [] } },
    });
    expect(put.statusCode, put.body).toBe(201);
    const refused = await req('POST', '/v1/delegations/prepare', prepareBody({ account: other }));
    expect(expectErrorBody(refused, 422, 'POLICY_VIOLATION').message).toMatch(/approval/);
  });

  it('never reuses a permissionId', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add((await prepare()).permission_id);
    expect(ids.size).toBe(5);
  });

  it('refuses a scope wider than the policy (422 naming the rule) and a wallet without a policy (404)', async () => {
    const venue = await req(
      'POST',
      '/v1/delegations/prepare',
      prepareBody({ calls: [{ target: randomAddress(), selector: '0x12345678', value_limit: '0' }] }),
    );
    expect(expectErrorBody(venue, 422, 'POLICY_VIOLATION').message).toMatch(/execution\.venues/);
    const value = await req(
      'POST',
      '/v1/delegations/prepare',
      prepareBody({ calls: [{ target: usdc, selector: '0xa9059cbb', value_limit: '20000000000000000' }] }),
    );
    expect(expectErrorBody(value, 422, 'POLICY_VIOLATION').message).toMatch(/spend\.per_tx_usd/);
    const other = await req(
      'POST',
      '/v1/delegations/prepare',
      prepareBody({ account: getAddress(randomAddress()) }),
    );
    expectErrorBody(other, 404, 'NOT_FOUND');
  });

  it('answers 400 naming the field for bad input, and stores nothing (fuzz)', async () => {
    const before = await countRows();
    const bad: fc.Arbitrary<[Record<string, unknown>, RegExp]> = fc.oneof(
      fc.constantFrom<[Record<string, unknown>, RegExp]>(
        [{ account: '0x1234' }, /account/],
        [{ chain_id: 137 }, /chain_id/],
        [{ chain_id: 1 }, /chain_id/],
        [{ calls: [] }, /calls/],
        [
          {
            calls: Array.from({ length: 33 }, () => ({
              target: randomAddress(),
              selector: '0x12345678',
              value_limit: '0',
            })),
          },
          /calls/,
        ],
        [{ valid_until: 0 }, /valid_until/],
        [{ valid_until: NOW - 1 }, /valid_until/],
        [{ valid_after: -1 }, /valid_after/],
        [{ valid_after: NOW + 8 * DAY }, /valid_until/],
        [{ rate_limit: { count: 0 } }, /rate_limit\.count/],
        [{ rate_limit: { count: 1, interval_secs: -1 } }, /rate_limit\.interval_secs/],
        [{ extra: true }, /extra/],
      ),
      fc
        .string({ maxLength: 12 })
        .filter((s) => !/^0x[0-9a-fA-F]{8}$/.test(s))
        .map((s): [Record<string, unknown>, RegExp] => [
          { calls: [{ target: randomAddress(), selector: s, value_limit: '0' }] },
          /calls\[0\]\.selector/,
        ]),
      fc
        .string({ maxLength: 12 })
        .filter((s) => !/^[0-9]{1,78}$/.test(s))
        .map((s): [Record<string, unknown>, RegExp] => [
          { calls: [{ target: usdc, selector: '0x12345678', value_limit: s }] },
          /calls\[0\]\.value_limit/,
        ]),
      fc
        .string({ maxLength: 44 })
        .filter((s) => !/^0x[0-9a-fA-F]{40}$/.test(s))
        .map((s): [Record<string, unknown>, RegExp] => [
          { calls: [{ target: s, selector: '0x12345678', value_limit: '0' }] },
          /calls\[0\]\.target/,
        ]),
      fc.constant<[Record<string, unknown>, RegExp]>([
        { calls: [{ target: account, selector: '0x12345678', value_limit: '0' }] },
        /calls\[0\]\.target must not be the account/,
      ]),
      fc.constant<[Record<string, unknown>, RegExp]>([
        { calls: [{ target: usdc, selector: '0x12345678', value_limit: (2n ** 256n).toString() }] },
        /calls\[0\]\.value_limit/,
      ]),
    );
    await fc.assert(
      fc.asyncProperty(bad, async ([overrides, field]) => {
        const res = await req('POST', '/v1/delegations/prepare', prepareBody(overrides));
        expect(expectErrorBody(res, 400, 'INVALID_REQUEST').message).toMatch(field);
      }),
      { numRuns: 60 },
    );
    expect(await countRows()).toBe(before);
  });
});

describe('confirm, read, list, revoke, renew', () => {
  it('confirms with the owner signature, then refuses a second confirm', async () => {
    const d = await prepare();
    const wrong = await req('POST', `/v1/delegations/${d.id}/confirm`, {
      enable_sig: await sign(d, privateKeyToAccount(generatePrivateKey())),
    });
    expect(expectErrorBody(wrong, 400, 'INVALID_REQUEST').message).toMatch(/enable_sig/);
    const ok = await req('POST', `/v1/delegations/${d.id}/confirm`, { enable_sig: await sign(d) });
    expect(ok.statusCode, ok.body).toBe(200);
    const active = ok.json<Delegation>();
    expect(active.status).toBe('active');
    expect(active.confirmed_at).toBe(clock.now().toISOString());
    expectErrorBody(
      await req('POST', `/v1/delegations/${d.id}/confirm`, { enable_sig: await sign(d) }),
      409,
      'CONFLICT',
    );
    const got = await req('GET', `/v1/delegations/${d.id}`);
    expect(got.json<Delegation>()).toEqual(active);
    const list = await req('GET', `/v1/delegations?account=${account}&limit=200`);
    expect(
      list
        .json<{ delegations: Delegation[] }>()
        .delegations.some((x) => x.id === d.id && x.status === 'active'),
    ).toBe(true);
    expectErrorBody(
      await req('GET', '/v1/delegations/00000000-0000-4000-8000-000000000000'),
      404,
      'NOT_FOUND',
    );
    expectErrorBody(await req('GET', '/v1/delegations/not-a-uuid'), 404, 'NOT_FOUND');
  });

  it('answers 409 when the account nonce moved since prepare', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const other = await deployAccount(owner.address);
    await t.app.fastify.inject({
      method: 'PUT',
      url: '/v1/policies',
      headers: bearer(user.sessionToken),
      payload: { version: 1, wallet: other.toLowerCase(), chain_id: CHAIN },
    });
    const d = await prepare({ account: other });
    // The account invalidates its nonce (a self-call, as the owner's own operation would make it).
    const testClient = createTestClient({ mode: 'anvil', transport: http(rpcUrl) });
    await testClient.setBalance({ address: other, value: parseEther('1') });
    await testClient.impersonateAccount({ address: other });
    try {
      const hash = await publicClient.request({
        method: 'eth_sendTransaction',
        params: [
          {
            from: other,
            to: other,
            data: encodeFunctionData({ abi: kernelAbi, functionName: 'invalidateNonce', args: [2] }),
            gas: '0x493e0',
          },
        ],
      } as never);
      await publicClient.waitForTransactionReceipt({ hash: hash as `0x${string}` });
    } finally {
      await testClient.stopImpersonatingAccount({ address: other });
    }
    expect(
      await publicClient.readContract({ address: other, abi: kernelAbi, functionName: 'currentNonce' }),
    ).toBe(2);
    const res = await req('POST', `/v1/delegations/${d.id}/confirm`, { enable_sig: await sign(d, owner) });
    expect(expectErrorBody(res, 409, 'CONFLICT').message).toMatch(/nonce moved/);
  });

  it('supports an undeployed account: nonce 1, owner and index must derive it, kept for the first operation', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const kernel = await devnetKernelAccount(devnet, CHAIN, owner.address, 5n);
    expect(kernel.deployed).toBe(false);
    const future = kernel.address;
    await t.app.fastify.inject({
      method: 'PUT',
      url: '/v1/policies',
      headers: bearer(user.sessionToken),
      payload: { version: 1, wallet: future.toLowerCase(), chain_id: CHAIN },
    });
    const d = await prepare({ account: future });
    expect(d.account_deployed).toBe(false);
    expect(d.kernel_nonce).toBe(1);
    const sig = await sign(d, owner);
    const confirm = (body: Record<string, unknown>) =>
      req('POST', `/v1/delegations/${d.id}/confirm`, { enable_sig: sig, ...body });
    expect(expectErrorBody(await confirm({}), 400, 'INVALID_REQUEST').message).toMatch(/owner/);
    // The owner alone derives index 0, another account.
    const indexZero = expectErrorBody(await confirm({ owner: owner.address }), 400, 'INVALID_REQUEST');
    expect(indexZero.message).toMatch(/do not derive this account/);
    expect(indexZero.message).toContain(
      `at index 0 is ${(await devnetKernelAccount(devnet, CHAIN, owner.address)).address}`,
    );
    // A stranger claiming to own it, with a signature of their own, derives another address too.
    const stranger = privateKeyToAccount(generatePrivateKey());
    const claimed = await req('POST', `/v1/delegations/${d.id}/confirm`, {
      enable_sig: await sign(d, stranger),
      owner: stranger.address,
      index: '5',
    });
    expect(expectErrorBody(claimed, 400, 'INVALID_REQUEST').message).toMatch(/do not derive/);
    expectErrorBody(await confirm({ owner: owner.address, index: '05' }), 400, 'INVALID_REQUEST');
    expectErrorBody(
      await confirm({ owner: owner.address, index: (2n ** 256n).toString() }),
      400,
      'INVALID_REQUEST',
    );
    expect((await req('GET', `/v1/delegations/${d.id}`)).json<Delegation>().status).toBe('prepared');

    const ok = await confirm({ owner: owner.address, index: '5' });
    expect(ok.statusCode, ok.body).toBe(200);
    const active = ok.json<Delegation>();
    expect(active).toMatchObject({
      status: 'active',
      owner: owner.address.toLowerCase(),
      account_index: '5',
    });
    const row = await t.db.db
      .selectFrom('delegations')
      .select(['factory', 'factory_data'])
      .where('id', '=', d.id)
      .executeTakeFirstOrThrow();
    expect(row.factory).toBe(kernel.factory.toLowerCase());
    expect(row.factory_data).toBe(kernel.factoryData.toLowerCase());
  });

  it('revokes with the owner calldata; a revoked grant cannot be confirmed or revoked again', async () => {
    const d = await prepare();
    await req('POST', `/v1/delegations/${d.id}/confirm`, { enable_sig: await sign(d) });
    const res = await req('DELETE', `/v1/delegations/${d.id}`);
    expect(res.statusCode, res.body).toBe(200);
    const r = res.json<Revocation>();
    expect(r.status).toBe('revoked');
    expect(r.revocation.uninstall_call.to).toBe(account);
    expect(r.revocation.uninstall_call.data.slice(0, 10)).toBe('0xe6f3d50a');
    expect(r.revocation.invalidate_nonce_call.data).toBe(`0x1f1b92e3${(2).toString(16).padStart(64, '0')}`);
    expect((await req('GET', `/v1/delegations/${d.id}`)).json<Delegation>().status).toBe('revoked');
    expectErrorBody(
      await req('POST', `/v1/delegations/${d.id}/confirm`, { enable_sig: await sign(d) }),
      409,
      'CONFLICT',
    );
    expectErrorBody(await req('DELETE', `/v1/delegations/${d.id}`), 409, 'CONFLICT');
    const kinds = (
      await t.db.db.selectFrom('events').select('kind').where('subject', '=', d.id).execute()
    ).map((e) => e.kind);
    expect(kinds.sort()).toEqual(['delegation.confirmed', 'delegation.prepared', 'delegation.revoked']);
  });

  it('renews an active grant: same calls and rate limit, original duration capped at 90 days', async () => {
    const d = await prepare({ valid_until: NOW + 200 * DAY });
    expectErrorBody(await req('POST', `/v1/delegations/${d.id}/renew`, {}), 409, 'CONFLICT');
    await req('POST', `/v1/delegations/${d.id}/confirm`, { enable_sig: await sign(d) });
    const res = await req('POST', `/v1/delegations/${d.id}/renew`, {});
    expect(res.statusCode, res.body).toBe(201);
    const renewed = res.json<Delegation>();
    expect(renewed.status).toBe('prepared');
    expect(renewed.renewed_from).toBe(d.id);
    expect(renewed.permission_id).not.toBe(d.permission_id);
    expect(renewed.scope.calls).toEqual(d.scope.calls);
    expect(renewed.scope.rate_limit).toEqual(d.scope.rate_limit);
    expect(renewed.scope.valid_until).toBe(NOW + 90 * DAY);
    expect((await req('GET', `/v1/delegations/${d.id}`)).json<Delegation>().status).toBe('active');
    const tooLong = await req('POST', `/v1/delegations/${d.id}/renew`, { valid_until: NOW + 91 * DAY });
    expect(expectErrorBody(tooLong, 400, 'INVALID_REQUEST').message).toMatch(/valid_until/);
    const short = await req('POST', `/v1/delegations/${d.id}/renew`, { valid_until: NOW + DAY });
    expect(short.json<Delegation>().scope.valid_until).toBe(NOW + DAY);
  });

  it('lets a key pinned to the wallet reach /{id} routes, and denies a key pinned elsewhere', async () => {
    const d = await prepare();
    const mine = await createKey(t.db.db, user.accountId, {
      scopes: ['read'],
      wallets: [account.toLowerCase()],
    });
    const elsewhere = await createKey(t.db.db, user.accountId, {
      scopes: ['read'],
      wallets: [randomAddress()],
    });
    expect((await req('GET', `/v1/delegations/${d.id}`, undefined, mine.token)).statusCode).toBe(200);
    expectErrorBody(
      await req('GET', `/v1/delegations/${d.id}`, undefined, elsewhere.token),
      403,
      'FORBIDDEN',
    );
  });

  it('the expiry job marks grants past valid_until expired, with events', async () => {
    const d = await prepare({ valid_until: NOW + 3600 });
    await req('POST', `/v1/delegations/${d.id}/confirm`, { enable_sig: await sign(d) });
    clock.advance(3600 * 1000);
    try {
      expect((await req('GET', `/v1/delegations/${d.id}`)).json<Delegation>().status).toBe('expired');
      expect(await expireDelegations(t.db.db, clock)).toBeGreaterThan(0);
      const row = await t.db.db
        .selectFrom('delegations')
        .select('status')
        .where('id', '=', d.id)
        .executeTakeFirstOrThrow();
      expect(row.status).toBe('expired');
      const kinds = (
        await t.db.db.selectFrom('events').select('kind').where('subject', '=', d.id).execute()
      ).map((e) => e.kind);
      expect(kinds).toContain('delegation.expired');
      expectErrorBody(await req('POST', `/v1/delegations/${d.id}/renew`, {}), 409, 'CONFLICT');
    } finally {
      clock.advance(-3600 * 1000);
    }
  });
});
