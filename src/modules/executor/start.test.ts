// The executor's first moves on admitted intents, on the devnet: the claim (a cancelled intent is
// left alone), each abort reason the checks before the run give (the hold released, the fee
// reversed, intent.aborted emitted, the intent readable as aborted), and a ready intent with the
// owner's real delegation.

import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { TestApp } from '../../../test/support/app.ts';
import { devnetKernelApp } from '../../../test/support/devnet-deps.ts';
import { bearer, createAccountWithSession, randomAddress } from '../../../test/support/identity.ts';
import { fundPrepaid } from '../../../test/support/prepaid.ts';
import { createJsonRpcBundler } from '../../adapters/bundler/json-rpc.ts';
import { createViemChainPort } from '../../adapters/chain/viem.ts';
import type { Config } from '../../config.ts';
import { devnetBundlerUrls, devnetChain, devnetRpcUrls } from '../../devnet/devnet.ts';
import { readPrepaidBalance } from '../billing/index.ts';
import type { Delegation } from '../delegations/service.ts';
import type { Intent } from '../intents/index.ts';
import { readSpendUsage } from '../policies/index.ts';
import type { TokenRegistry } from '../registry/index.ts';
import { startIntent, type ExecutorDeps } from './index.ts';

const devnet = inject('devnet');
const USD = 1_000_000n;
let t: TestApp;
let registry: TokenRegistry;

beforeAll(async () => {
  t = await devnetKernelApp(devnet, { prices: true });
  registry = t.deps.tokenRegistry!;
});
afterAll(async () => {
  await t?.close();
});

/** The executor as a worker on the devnet would run it; `config` overrides the chain settings. */
function executor(config: Partial<Config> = {}, bundlerUrls = devnetBundlerUrls(devnet)): ExecutorDeps {
  return {
    config: { ...t.deps.config, ...config },
    clock: t.deps.clock,
    db: t.db.db,
    registry,
    chain: createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) }),
    bundler: createJsonRpcBundler({ urls: bundlerUrls }),
  };
}

const req = (method: 'GET' | 'POST' | 'PUT', url: string, token: string, payload?: unknown) =>
  t.app.fastify.inject({
    method,
    url,
    headers: bearer(token),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

/** A funded account, its policy on `chainId` for `wallet`, and one admitted intent. */
async function admitted(
  chainId = 8453,
  wallet = randomAddress().toLowerCase(),
  kind = 'conversion',
  account?: Awaited<ReturnType<typeof createAccountWithSession>>,
) {
  const acc = account ?? (await createAccountWithSession(t.db.db));
  await fundPrepaid(t.db.db, t.deps.clock, acc.accountId, 10n * USD);
  const put = await req('PUT', '/v1/policies', acc.sessionToken, { version: 1, wallet, chain_id: chainId });
  expect(put.statusCode, put.body).toBe(201);
  const body =
    kind === 'conversion'
      ? {
          wallet,
          kind,
          sell_token: registry.findToken(chainId, 'USDC')!.address,
          buy_token: registry.findToken(chainId, 'WETH')!.address,
          sell_amount: String(10n * USD),
        }
      : {
          wallet,
          kind,
          sell_token: registry.chain(chainId)!.wrappedNative,
          buy_token: '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE',
          sell_amount: '1000000000000000',
        };
  const res = await req('POST', '/v1/intents', acc.sessionToken, body);
  expect(res.statusCode, res.body).toBe(201);
  return { ...acc, wallet, intent: res.json<Intent>() };
}

/** The abort as a user sees it: the intent, its events, the fee back, nothing held. */
async function expectAborted(a: Awaited<ReturnType<typeof admitted>>, reason: string) {
  const read = (await req('GET', `/v1/intents/${a.intent.id}`, a.sessionToken)).json<Intent>();
  expect(read.status).toBe('aborted');
  expect(read.params.abort?.reason).toBe(reason);
  const events = await t.db.db
    .selectFrom('events')
    .select(['kind', 'payload'])
    .where('subject', '=', a.intent.id)
    .orderBy('created_at')
    .execute();
  expect(events.map((e) => e.kind)).toEqual(['intent.planned', 'intent.executing', 'intent.aborted']);
  expect(events[2]?.payload).toMatchObject({ reason, fee_reversed: true });
  expect((await readPrepaidBalance(t.db.db, a.accountId)).balanceMicro).toBe(10n * USD);
  expect(await readSpendUsage(t.db.db, t.deps.clock, a.accountId, a.wallet)).toEqual({
    dayMicroUsd: 0n,
    hourCount: 0,
  });
  return read;
}

describe('startIntent', () => {
  it('leaves a cancelled intent alone, and claims a planned one once', async () => {
    const a = await admitted();
    expect((await req('POST', `/v1/intents/${a.intent.id}/cancel`, a.sessionToken)).statusCode).toBe(200);
    expect(await startIntent(executor(), a.intent.id)).toEqual({ state: 'not_planned' });
    const b = await admitted();
    const first = await startIntent(executor(), b.intent.id);
    expect(first.state).toBe('aborted'); // no delegation: still, it was claimed once
    expect(await startIntent(executor(), b.intent.id)).toEqual({ state: 'not_planned' });
  });

  it('aborts UNSUPPORTED_KIND: a conversion on the testbed chain', async () => {
    const a = await admitted(84532);
    const out = await startIntent(executor(), a.intent.id);
    expect(out).toMatchObject({ state: 'aborted', abort: { reason: 'UNSUPPORTED_KIND' } });
    await expectAborted(a, 'UNSUPPORTED_KIND');
  });

  it('aborts UNSUPPORTED_CHAIN when the chain has no bundler configured', async () => {
    const a = await admitted();
    const out = await startIntent(executor({}, {}), a.intent.id);
    expect(out).toMatchObject({
      state: 'aborted',
      abort: { reason: 'UNSUPPORTED_CHAIN', detail: { unconfigured: ['BUNDLER_URL_8453'] } },
    });
    await expectAborted(a, 'UNSUPPORTED_CHAIN');
  });

  it('aborts EXECUTOR_UNCONFIGURED without the executor key', async () => {
    const a = await admitted();
    const out = await startIntent(executor({ executorPrivateKey: null }), a.intent.id);
    expect(out).toMatchObject({ state: 'aborted', abort: { reason: 'EXECUTOR_UNCONFIGURED' } });
    await expectAborted(a, 'EXECUTOR_UNCONFIGURED');
  });

  it('aborts EXECUTION_INTERRUPTED naming the switch when the account panicked after admission', async () => {
    const a = await admitted();
    expect((await req('POST', '/v1/account/panic', a.sessionToken, {})).statusCode).toBe(200);
    const out = await startIntent(executor(), a.intent.id);
    expect(out).toMatchObject({
      state: 'aborted',
      abort: { reason: 'EXECUTION_INTERRUPTED', detail: { switch: { scope: 'account' } } },
    });
    await expectAborted(a, 'EXECUTION_INTERRUPTED');
  });

  it('aborts NO_DELEGATION when the wallet has no active session-key delegation', async () => {
    const a = await admitted();
    const out = await startIntent(executor(), a.intent.id);
    expect(out).toMatchObject({ state: 'aborted', abort: { reason: 'NO_DELEGATION' } });
    await expectAborted(a, 'NO_DELEGATION');
  });

  /** A faucet-funded Kernel account holding `usdc`, its owner's confirmed delegation, and an intent selling 10 USDC. */
  async function delegated(usdc: bigint) {
    const owner = privateKeyToAccount(generatePrivateKey());
    const acc = await createAccountWithSession(t.db.db);
    const faucet = await req('POST', '/v1/dev/kernel-accounts', acc.sessionToken, {
      chain_id: 8453,
      owner: owner.address,
      index: '0',
      eth_wei: '0',
      tokens: [{ symbol: 'USDC', amount: usdc.toString() }],
    });
    expect(faucet.statusCode, faucet.body).toBe(200);
    const account = faucet.json<{ address: string }>().address;
    const a = await admitted(8453, account.toLowerCase(), 'conversion', acc);
    const now = Math.floor(Date.now() / 1000);
    const prepared = await req('POST', '/v1/delegations/prepare', a.sessionToken, {
      account,
      chain_id: 8453,
      calls: [{ target: devnetChain(devnet, 8453).contracts.usdc, selector: '0x095ea7b3', value_limit: '0' }],
      valid_until: now + 7 * 24 * 3600,
      rate_limit: { count: 10, interval_secs: 60 },
    });
    expect(prepared.statusCode, prepared.body).toBe(201);
    const d = prepared.json<Delegation>();
    const signature = await owner.signTypedData(d.typed_data as Parameters<typeof owner.signTypedData>[0]);
    const confirmed = await req('POST', `/v1/delegations/${d.id}/confirm`, a.sessionToken, {
      enable_sig: signature,
      owner: owner.address,
      index: '0',
    });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    return { ...a, delegationId: d.id };
  }

  it('aborts INSUFFICIENT_BALANCE naming the token, what the account holds and what it sells', async () => {
    const a = await delegated(3n * USD);
    const out = await startIntent(executor(), a.intent.id);
    expect(out).toMatchObject({
      state: 'aborted',
      abort: {
        reason: 'INSUFFICIENT_BALANCE',
        detail: { token: 'USDC', held: String(3n * USD), required: String(10n * USD) },
      },
    });
    await expectAborted(a, 'INSUFFICIENT_BALANCE');
  });

  it("is ready with the owner's active delegation and the tokens, holding the reservation and the fee", async () => {
    const a = await delegated(25n * USD);
    const out = await startIntent(executor(), a.intent.id);
    expect(out).toMatchObject({ state: 'ready', delegationId: a.delegationId });
    const read = (await req('GET', `/v1/intents/${a.intent.id}`, a.sessionToken)).json<Intent>();
    expect(read.status).toBe('executing');
    const fee = t.deps.config.fees.conversionIntentMicro;
    expect((await readPrepaidBalance(t.db.db, a.accountId)).balanceMicro).toBe(10n * USD - fee);
    expect((await readSpendUsage(t.db.db, t.deps.clock, a.accountId, a.wallet)).dayMicroUsd).toBe(10n * USD);
    // A running intent is no longer cancellable.
    expect((await req('POST', `/v1/intents/${a.intent.id}/cancel`, a.sessionToken)).statusCode).toBe(404);
  });
});
