// The on-chain side of a venue account, on the devnet's real Safes: onboarding calldata executed
// from a Safe turns trade_ready true, the funder lookup through the devnet's Safe Transaction
// Service, the swapOwner calldata executed changes the owner, and the relayed wrap moves USDC.e
// into pUSD with the ledger matching the chain.

import fc from 'fast-check';
import { sql } from 'kysely';
import { createPublicClient, erc20Abi, getAddress, http, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import { createViemChainPort } from '../../adapters/chain/viem.ts';
import { createPmVenuePorts } from '../../adapters/pm-venue/index.ts';
import { createSafeTxServiceAdapter } from '../../adapters/safe/tx-service.ts';
import { testConfig } from '../../config.ts';
import { systemClock } from '../../core/clock.ts';
import { Deadline } from '../../core/http/deadline.ts';
import { SealingKeyring } from '../../core/sealing.ts';
import { withDevnetPmVenues } from '../../devnet/config-overrides.ts';
import { devnetRpcUrls } from '../../devnet/devnet.ts';
import { fundAddress } from '../../devnet/faucet.ts';
import { createDevnetSafe, execSafeBatch, execSafeTransaction } from '../../devnet/safes.ts';
import { credentialDeps } from './routes.ts';
import { wrapCollateral } from './wrap.ts';

const devnet = inject('devnet');
const polygon = devnet.chains[137]!;
const client = createPublicClient({ transport: http(polygon.rpcUrl) });
const pm = withDevnetPmVenues(testConfig().pm, devnet);
const contracts = pm.contracts;
let t: TestApp;
let headers: { authorization: string };
let accountId: string;

beforeAll(async () => {
  // A relayer of this file's own: other files relay on the same chain with theirs.
  const relayerKey = generatePrivateKey();
  await fundAddress(devnet, { chainId: 137, address: privateKeyToAddress(relayerKey), eth: 10n ** 19n });
  t = await createTestApp({
    config: { pm },
    deps: {
      chain: createViemChainPort({ rpcUrls: devnetRpcUrls(devnet), relayerPrivateKey: relayerKey }),
      pmVenues: createPmVenuePorts({
        polymarketClobUrl: pm.polymarketClobUrl,
        kalshiApiUrl: pm.kalshiApiUrl,
        timeoutMs: 5_000,
        clock: systemClock,
      }),
      safeIndex: createSafeTxServiceAdapter({ urls: { 137: pm.safeTxServiceUrl } }),
    },
  });
  const a = await createAccountWithSession(t.db.db);
  accountId = a.accountId;
  headers = bearer(a.sessionToken);
});
afterAll(async () => {
  await t?.close();
});

async function newSafe(ownerKeys: Hex[], threshold = 1): Promise<Address> {
  const safe = await createDevnetSafe(polygon, {
    owners: ownerKeys.map((k) => privateKeyToAddress(k)),
    threshold,
  });
  return safe.address;
}

const get = (url: string) => t.app.fastify.inject({ method: 'GET', url, headers });

async function onboarding(address: Address) {
  const res = await get(`/v1/pm/onboarding/${address}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as {
    trade_ready: boolean;
    approvals: Array<{ id: string; approved: boolean; call: { to: Address; data: Hex } | null }>;
    collateral: {
      pusd: string;
      usdce_unwrapped: string;
      wrap_calls: Array<{ to: Address; data: Hex }> | null;
    };
  };
}

async function storeSafeCredential(
  signerKey: Hex,
  funder: Address,
  flow: 'hosted' | 'client_signed' = 'hosted',
) {
  const body =
    flow === 'hosted'
      ? { venue: 'polymarket', signature_type: 2, funder, signer_key: signerKey }
      : await (async () => {
          const creds = await t.deps.pmVenues!.polymarket.deriveApiCredentials(signerKey);
          return {
            venue: 'polymarket',
            signature_type: 2,
            funder,
            signer_address: privateKeyToAddress(signerKey),
            api_key: creds.apiKey,
            api_secret: creds.secret,
            api_passphrase: creds.passphrase,
          };
        })();
  const res = await t.app.fastify.inject({
    method: 'POST',
    url: '/v1/pm/credentials',
    headers,
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

const balanceOf = (token: Address, owner: Address) =>
  client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

describe('GET /v1/pm/onboarding/{address}', () => {
  it('lists the six missing grants with their calls; executed from the Safe, the wallet is trade-ready', async () => {
    const owner = generatePrivateKey();
    const safe = await newSafe([owner]);
    const before = await onboarding(safe);
    expect(before.trade_ready).toBe(false);
    expect(before.approvals.map((a) => a.id)).toEqual([
      'pusd_allowance_ctf_exchange',
      'pusd_allowance_neg_risk_ctf_exchange',
      'pusd_allowance_neg_risk_adapter',
      'ctf_operator_ctf_exchange',
      'ctf_operator_neg_risk_ctf_exchange',
      'ctf_operator_neg_risk_adapter',
    ]);
    expect(before.approvals.every((a) => !a.approved && a.call !== null)).toBe(true);
    expect(before.collateral).toMatchObject({ pusd: '0', usdce_unwrapped: '0', wrap_calls: null });

    // Two grants first: the answer lists the rest.
    for (const grant of before.approvals.slice(0, 2)) {
      await execSafeTransaction(polygon, {
        safe,
        to: grant.call!.to,
        data: grant.call!.data,
        ownerPrivateKeys: [owner],
      });
    }
    const partial = await onboarding(safe);
    expect(partial.approvals.filter((a) => a.approved).map((a) => a.id)).toEqual([
      'pusd_allowance_ctf_exchange',
      'pusd_allowance_neg_risk_ctf_exchange',
    ]);
    expect(partial.trade_ready).toBe(false);
    await execSafeBatch(polygon, {
      safe,
      ownerPrivateKeys: [owner],
      calls: partial.approvals.filter((a) => a.call).map((a) => ({ to: a.call!.to, data: a.call!.data })),
    });
    const ready = await onboarding(safe);
    expect(ready.trade_ready).toBe(true);
    expect(ready.approvals.every((a) => a.approved && a.call === null)).toBe(true);

    // USDC.e in the Safe: the wrap calls, executed, turn it into pUSD.
    await fundAddress(devnet, {
      chainId: 137,
      address: safe,
      tokens: [{ symbol: 'USDC.e', amount: 25_000_000n }],
    });
    const funded = await onboarding(safe);
    expect(funded.collateral.usdce_unwrapped).toBe('25000000');
    expect(funded.collateral.wrap_calls).toHaveLength(2);
    for (const call of funded.collateral.wrap_calls!) {
      await execSafeTransaction(polygon, { safe, to: call.to, data: call.data, ownerPrivateKeys: [owner] });
    }
    const wrapped = await onboarding(safe);
    expect(wrapped.collateral).toMatchObject({ pusd: '25000000', usdce_unwrapped: '0', wrap_calls: null });
    expect(await balanceOf(contracts.collateral, safe)).toBe(25_000_000n);
  });

  it('answers 503 when the chain does not answer, and 451 from a restricted origin', async () => {
    const offline = await createTestApp({
      config: { pm },
      deps: { chain: createViemChainPort({ rpcUrls: { 137: 'http://127.0.0.1:9' } }) },
    });
    try {
      const { sessionToken } = await createAccountWithSession(offline.db.db);
      const res = await offline.app.fastify.inject({
        method: 'GET',
        url: `/v1/pm/onboarding/${getAddress(`0x${'11'.repeat(20)}`)}`,
        headers: bearer(sessionToken),
      });
      expectErrorBody(res, 503, 'UNAVAILABLE');
    } finally {
      await offline.close();
    }
    const blocked = await t.app.fastify.inject({
      method: 'GET',
      url: `/v1/pm/onboarding/${getAddress(`0x${'11'.repeat(20)}`)}`,
      headers,
      remoteAddress: '198.51.100.9',
    });
    expectErrorBody(blocked, 451, 'JURISDICTION_BLOCKED');
  });
});

describe('GET /v1/pm/funder/{owner}', () => {
  it("names the owner's Safe with the most grants, then the most pUSD; none for a stranger", async () => {
    const owner = generatePrivateKey();
    const bare = await newSafe([owner]);
    const ready = await newSafe([owner]);
    const status = await onboarding(ready);
    await execSafeBatch(polygon, {
      safe: ready,
      ownerPrivateKeys: [owner],
      calls: status.approvals.map((a) => ({ to: a.call!.to, data: a.call!.data })),
    });
    const res = await get(`/v1/pm/funder/${privateKeyToAddress(owner)}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      owner: privateKeyToAddress(owner),
      funder: ready,
      candidates: [
        { address: ready, grants_set: 6, trade_ready: true },
        { address: bare, grants_set: 0, trade_ready: false },
      ],
    });
    const stranger = await get(`/v1/pm/funder/${privateKeyToAddress(generatePrivateKey())}`);
    expect(stranger.json()).toMatchObject({ funder: null, candidates: [] });
  });

  it('answers 503 when the Safe Transaction Service does not answer', async () => {
    const down = await createTestApp({
      config: { pm },
      deps: {
        chain: t.deps.chain!,
        safeIndex: createSafeTxServiceAdapter({ urls: { 137: 'http://127.0.0.1:9' }, timeoutMs: 1_000 }),
      },
    });
    try {
      const { sessionToken } = await createAccountWithSession(down.db.db);
      const res = await down.app.fastify.inject({
        method: 'GET',
        url: `/v1/pm/funder/${privateKeyToAddress(generatePrivateKey())}`,
        headers: bearer(sessionToken),
      });
      expectErrorBody(res, 503, 'UNAVAILABLE');
    } finally {
      await down.close();
    }
  });
});

describe('GET /v1/pm/credentials/{id}/rotation', () => {
  it('gives swapOwner with the sentinel for a 1-of-1 Safe; executed, the owner changes', async () => {
    const signer = generatePrivateKey();
    const safe = await newSafe([signer]);
    const id = await storeSafeCredential(signer, safe);
    const next = privateKeyToAddress(generatePrivateKey());
    const res = await get(`/v1/pm/credentials/${id}/rotation?new_owner=${next}`);
    expect(res.statusCode, res.body).toBe(200);
    const rotation = res.json();
    expect(rotation).toMatchObject({
      credential_id: id,
      venue: 'polymarket',
      funder: safe,
      old_owner: privateKeyToAddress(signer),
      new_owner: next,
      prev_owner: '0x0000000000000000000000000000000000000001',
      call: { to: safe, value: '0' },
    });
    expect(rotation.sequence.length).toBeGreaterThanOrEqual(3);
    await execSafeTransaction(polygon, {
      safe,
      to: rotation.call.to,
      data: rotation.call.data,
      ownerPrivateKeys: [signer],
    });
    const owners = await client.readContract({
      address: safe,
      abi: [
        {
          type: 'function',
          name: 'getOwners',
          inputs: [],
          outputs: [{ type: 'address[]' }],
          stateMutability: 'view',
        },
      ],
      functionName: 'getOwners',
    });
    expect(owners).toEqual([next]);
    // The signer is no longer an owner: not rotatable any more.
    const again = await get(
      `/v1/pm/credentials/${id}/rotation?new_owner=${privateKeyToAddress(generatePrivateKey())}`,
    );
    expectErrorBody(again, 422, 'NOT_APPLICABLE');
  });

  it('derives prev_owner from the live list of a 2-of-3 Safe, and refuses what cannot rotate', async () => {
    const keys = [generatePrivateKey(), generatePrivateKey(), generatePrivateKey()];
    const safe = await newSafe(keys, 2);
    const owners = (await client.readContract({
      address: safe,
      abi: [
        {
          type: 'function',
          name: 'getOwners',
          inputs: [],
          outputs: [{ type: 'address[]' }],
          stateMutability: 'view',
        },
      ],
      functionName: 'getOwners',
    })) as Address[];
    const second = keys.find((k) => privateKeyToAddress(k) === owners[1])!;
    const id = await storeSafeCredential(second, safe, 'client_signed');
    const next = privateKeyToAddress(generatePrivateKey());
    const res = await get(`/v1/pm/credentials/${id}/rotation?new_owner=${next}`);
    expect(res.json()).toMatchObject({ prev_owner: owners[0], old_owner: owners[1] });
    await execSafeTransaction(polygon, {
      safe,
      to: safe,
      data: res.json().call.data,
      ownerPrivateKeys: keys.slice(0, 2),
    });
    expect(
      await client.readContract({
        address: safe,
        abi: [
          {
            type: 'function',
            name: 'getOwners',
            inputs: [],
            outputs: [{ type: 'address[]' }],
            stateMutability: 'view',
          },
        ],
        functionName: 'getOwners',
      }),
    ).toEqual([owners[0], next, owners[2]]);

    expectErrorBody(
      await get(`/v1/pm/credentials/${id}/rotation?new_owner=${owners[0]}`),
      422,
      'NOT_APPLICABLE',
    );
    expectErrorBody(await get(`/v1/pm/credentials/${id}/rotation?new_owner=${safe}`), 400, 'INVALID_REQUEST');
    expectErrorBody(await get(`/v1/pm/credentials/${id}/rotation?new_owner=0x12`), 400, 'INVALID_REQUEST');
    expectErrorBody(await get(`/v1/pm/credentials/${id}/rotation`), 400, 'INVALID_REQUEST');
    expectErrorBody(
      await get(`/v1/pm/credentials/${crypto.randomUUID()}/rotation?new_owner=${next}`),
      404,
      'NOT_FOUND',
    );
    const eoaKey = generatePrivateKey();
    const eoa = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/pm/credentials',
      headers,
      payload: { venue: 'polymarket', signature_type: 0, signer_key: eoaKey },
    });
    expectErrorBody(
      await get(`/v1/pm/credentials/${eoa.json().id}/rotation?new_owner=${next}`),
      422,
      'NOT_APPLICABLE',
    );
  });
});

describe('POST /v1/pm/wrap', () => {
  const wrap = (payload: object) =>
    t.app.fastify.inject({ method: 'POST', url: '/v1/pm/wrap', headers, payload });

  it("wraps the Safe's USDC.e into pUSD with relayed Safe transactions; the ledger matches the chain", async () => {
    const signer = generatePrivateKey();
    const safe = await newSafe([signer]);
    const id = await storeSafeCredential(signer, safe);
    await fundAddress(devnet, {
      chainId: 137,
      address: safe,
      tokens: [{ symbol: 'USDC.e', amount: 40_000_000n }],
    });

    const part = await wrap({ credential_id: id, amount_base_units: '15000000' });
    expect(part.statusCode, part.body).toBe(200);
    expect(part.json()).toMatchObject({
      wrapped_base_units: '15000000',
      collateral: { pusd: '15000000', usdce_unwrapped: '25000000' },
    });
    expect(part.json().txs).toHaveLength(2); // approve, then wrap
    // The approve covered only 15: the rest needs one again; the default is the whole balance.
    const rest = await wrap({ credential_id: id });
    expect(rest.statusCode, rest.body).toBe(200);
    expect(rest.json()).toMatchObject({
      wrapped_base_units: '25000000',
      collateral: { pusd: '40000000', usdce_unwrapped: '0' },
    });

    expect(await balanceOf(contracts.collateral, safe)).toBe(40_000_000n);
    expect(await balanceOf(contracts.usdce, safe)).toBe(0n);
    const { rows } = await sql<{ asset: string; total: string }>`
      SELECT e.asset, sum(e.amount)::text AS total FROM ledger_entries e
      JOIN ledger_groups g ON g.id = e.group_id
      WHERE g.account_id = ${accountId} AND g.kind = 'pm.wrap' AND e.ledger_account = ${`wallet:137:${safe.toLowerCase()}`}
      GROUP BY e.asset ORDER BY e.asset`.execute(t.db.db);
    expect(Object.fromEntries(rows.map((r) => [r.asset, r.total]))).toEqual({
      [`eip155:137/erc20:${contracts.collateral}`]: '40000000',
      [`eip155:137/erc20:${contracts.usdce}`]: '-40000000',
    });
    const uses = await t.db.db
      .selectFrom('audit_log')
      .select('details')
      .where('subject', '=', id)
      .where('action', '=', 'venue_credential.use')
      .execute();
    expect(uses.filter((u) => (u.details as { operation: string }).operation === 'wrap')).toHaveLength(2);

    // Nothing left: 422; more than the balance: 400.
    expectErrorBody(await wrap({ credential_id: id }), 422, 'NOT_APPLICABLE');
    await fundAddress(devnet, {
      chainId: 137,
      address: safe,
      tokens: [{ symbol: 'USDC.e', amount: 1_000_000n }],
    });
    expectErrorBody(await wrap({ credential_id: id, amount_base_units: '1000001' }), 400, 'INVALID_REQUEST');
  });

  it('refuses what cannot wrap, and an account switched off', async () => {
    const signer = generatePrivateKey();
    const safe = await newSafe([signer, generatePrivateKey()], 2);
    await fundAddress(devnet, {
      chainId: 137,
      address: safe,
      tokens: [{ symbol: 'USDC.e', amount: 5_000_000n }],
    });
    const twoOfTwo = await storeSafeCredential(signer, safe);
    expectErrorBody(await wrap({ credential_id: twoOfTwo }), 422, 'NOT_APPLICABLE');
    const clientSigned = await storeSafeCredential(generatePrivateKey(), safe, 'client_signed');
    expectErrorBody(await wrap({ credential_id: clientSigned }), 422, 'NOT_APPLICABLE');
    expectErrorBody(await wrap({ credential_id: crypto.randomUUID() }), 404, 'NOT_FOUND');
    expectErrorBody(await wrap({ credential_id: 'nope' }), 400, 'INVALID_REQUEST');

    const other = await createAccountWithSession(t.db.db);
    const lone = generatePrivateKey();
    const loneSafe = await newSafe([lone]);
    await fundAddress(devnet, {
      chainId: 137,
      address: loneSafe,
      tokens: [{ symbol: 'USDC.e', amount: 5_000_000n }],
    });
    const stored = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/pm/credentials',
      headers: bearer(other.sessionToken),
      payload: { venue: 'polymarket', signature_type: 2, funder: loneSafe, signer_key: lone },
    });
    // Another account's credential is 404.
    expectErrorBody(await wrap({ credential_id: stored.json().id }), 404, 'NOT_FOUND');
    const panic = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/account/panic',
      headers: bearer(other.sessionToken),
      payload: { reason: 'test panic' },
    });
    expect(panic.statusCode, panic.body).toBeLessThan(300);
    const refused = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/pm/wrap',
      headers: bearer(other.sessionToken),
      payload: { credential_id: stored.json().id },
    });
    expectErrorBody(refused, 403, 'EXECUTION_DISABLED');
    expect(await balanceOf(contracts.usdce, loneSafe)).toBe(5_000_000n);
  });
});

describe('the wrap under time and concurrency', () => {
  /** A budget that runs out at one named step (Deadline's checks name what comes next). */
  class RunsOutBefore extends Deadline {
    constructor(private readonly step: string) {
      super(60_000);
    }
    override check(action: string): void {
      if (action === this.step) throw this.exceeded(`before ${action}`);
      super.check(action);
    }
  }

  async function wrapDeps() {
    return {
      ...credentialDeps(t.deps),
      db: t.deps.db,
      chain: t.deps.chain!,
      chainId: 137,
      contracts,
    };
  }

  it('a budget that runs out before the wrap is a 504 naming the approve; the retry skips the approve', async () => {
    const signer = generatePrivateKey();
    const safe = await newSafe([signer]);
    const id = await storeSafeCredential(signer, safe);
    await fundAddress(devnet, {
      chainId: 137,
      address: safe,
      tokens: [{ symbol: 'USDC.e', amount: 3_000_000n }],
    });
    const actor = {
      principal: {
        accountId,
        kind: 'session' as const,
        credentialId: 'ses_test',
        scopes: [],
        wallets: null,
        address: '',
      },
      network: { clientIp: null, userAgent: null },
    };
    const deps = await wrapDeps();
    const err = await wrapCollateral(
      deps,
      actor,
      { credential_id: id },
      new RunsOutBefore('broadcasting the wrap'),
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'DEADLINE_EXCEEDED' });
    expect((err as Error).message).toMatch(/Already transmitted: approve_usdce_onramp 0x[0-9a-f]{64}/);
    expect(await balanceOf(contracts.usdce, safe)).toBe(3_000_000n);
    expect(
      await client.readContract({
        address: contracts.usdce,
        abi: erc20Abi,
        functionName: 'allowance',
        args: [safe, contracts.onramp],
      }),
    ).toBe(3_000_000n);
    // Nothing at all when it runs out before the first broadcast.
    const early = await wrapCollateral(
      deps,
      actor,
      { credential_id: id },
      new RunsOutBefore('reading the Safe and its USDC.e'),
    ).catch((e: unknown) => e);
    expect((early as Error).message).toMatch(/Nothing was transmitted/);

    const retry = await wrapCollateral(deps, actor, { credential_id: id }, new Deadline(30_000));
    expect(retry.txs).toHaveLength(1);
    expect(retry).toMatchObject({
      wrapped_base_units: '3000000',
      collateral: { pusd: '3000000', usdce_unwrapped: '0' },
    });
  });

  it('answers 503 without a relay signer or without sealing, before opening anything', async () => {
    const signer = generatePrivateKey();
    const safe = await newSafe([signer]);
    const id = await storeSafeCredential(signer, safe);
    const actor = {
      principal: {
        accountId,
        kind: 'session' as const,
        credentialId: 'ses_test',
        scopes: [],
        wallets: null,
        address: '',
      },
      network: { clientIp: null, userAgent: null },
    };
    const noRelayer = {
      ...(await wrapDeps()),
      chain: createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) }),
    };
    await expect(
      wrapCollateral(noRelayer, actor, { credential_id: id }, new Deadline(5_000)),
    ).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/relay signer/),
    });
    const noSealing = { ...(await wrapDeps()), keyring: SealingKeyring.publicDevelopmentKeyring() };
    await expect(
      wrapCollateral(noSealing, actor, { credential_id: id }, new Deadline(5_000)),
    ).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/Sealing/),
    });
    const uses = await t.db.db
      .selectFrom('audit_log')
      .select('details')
      .where('subject', '=', id)
      .where('action', '=', 'venue_credential.use')
      .execute();
    expect(uses.map((u) => (u.details as { operation: string }).operation)).toEqual(['authenticate']);
  });

  it('two wraps of one Safe at once: one wraps, the other finds nothing left', async () => {
    const signer = generatePrivateKey();
    const safe = await newSafe([signer]);
    const id = await storeSafeCredential(signer, safe);
    await fundAddress(devnet, {
      chainId: 137,
      address: safe,
      tokens: [{ symbol: 'USDC.e', amount: 7_000_000n }],
    });
    const answers = await Promise.all(
      [1, 2].map(() =>
        t.app.fastify.inject({ method: 'POST', url: '/v1/pm/wrap', headers, payload: { credential_id: id } }),
      ),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 422]);
    expect(await balanceOf(contracts.collateral, safe)).toBe(7_000_000n);
    const { rows } = await sql<{ n: string }>`
      SELECT count(*)::text AS n FROM ledger_groups WHERE kind = 'pm.wrap' AND memo->>'funder' = ${safe.toLowerCase()}`.execute(
      t.db.db,
    );
    expect(rows[0]!.n).toBe('1');
  });

  it('malformed addresses, ids and amounts are 400 and nothing is broadcast', async () => {
    const relayer = t.deps.chain!.relayerAddress()!;
    const before = await client.getTransactionCount({ address: relayer });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ maxLength: 50 }), fc.stringMatching(/^0x[0-9a-fA-F]{1,45}$/)),
        fc.oneof(
          fc.string({ maxLength: 40 }),
          fc.integer().map(String),
          fc.constant('-1'),
          fc.constant('1.5'),
        ),
        async (junk, amount) => {
          const isAddress = /^0x[0-9a-fA-F]{40}$/.test(junk);
          for (const url of [
            `/v1/pm/onboarding/${encodeURIComponent(junk)}`,
            `/v1/pm/funder/${encodeURIComponent(junk)}`,
          ]) {
            const res = await get(url);
            if (!isAddress)
              expectErrorBody(
                res,
                res.statusCode === 404 ? 404 : 400,
                res.statusCode === 404 ? 'NOT_FOUND' : 'INVALID_REQUEST',
              );
          }
          const rotation = await get(
            `/v1/pm/credentials/${encodeURIComponent(junk)}/rotation?new_owner=${encodeURIComponent(amount)}`,
          );
          // A segment of "." or ".." is removed by URL normalization: another path (404 or 405).
          const dots = junk === '.' || junk === '..';
          expect(dots ? [400, 404, 405] : [400, 404]).toContain(rotation.statusCode);
          const wrapped = await t.app.fastify.inject({
            method: 'POST',
            url: '/v1/pm/wrap',
            headers,
            payload: { credential_id: junk, amount_base_units: amount },
          });
          expect([400, 404]).toContain(wrapped.statusCode);
        },
      ),
      { numRuns: 60, ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}) },
    );
    expect(await client.getTransactionCount({ address: relayer })).toBe(before);
  });
});
