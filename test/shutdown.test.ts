// A stop in bounded time, whatever is in flight: the real service (its own devnet, on the embedded
// database, or on PostgreSQL when DATABASE_URL is set) gets SIGTERM right after a burst of twelve
// intents of one wallet was admitted, while a step waits for its slice's receipt, with an idle
// keep-alive connection and an MCP request that never finishes sending. It exits 0 within
// SHUTDOWN_TIMEOUT_MS (plus the process's own start of exit), having saved the devnet; the next
// start on the same data continues every intent: each fills once, and the chain lost exactly
// what the intents sold. A second signal exits at once.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createPublicClient, erc20Abi, getAddress, http as viemHttp, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok, Purser, signDelegation, signTopUp } from '../packages/sdk/src/index.ts';
import {
  describeExit,
  startServiceProcess,
  waitUntilReady,
  type ServiceProcess,
} from './support/service-process.ts';

const INTENTS = 12;
const BUDGET_MS = 10_000;
const started: ServiceProcess[] = [];
let dataDir = '';
let databaseUrl: string | null = null;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'purser-shutdown-'));
  const server = process.env.DATABASE_URL;
  if (server) {
    const name = `purser_stop_${randomBytes(5).toString('hex')}`;
    const client = new pg.Client({ connectionString: server });
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`);
    await client.end();
    const url = new URL(server);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
  }
});
afterAll(async () => {
  for (const s of started) await s.stop('SIGKILL');
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

function start(): Promise<ServiceProcess> {
  return startServiceProcess({
    env: {
      PURSER_DATA_DIR: dataDir,
      DEVNET: 'true',
      DEVNET_BASE_PORT: '0',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PUBLIC_PER_MINUTE: '1000000',
      SHUTDOWN_TIMEOUT_MS: String(BUDGET_MS),
      // A step that sent its slice waits a while before it asks for the receipt.
      EXECUTOR_RECEIPT_POLL_MS: '1500',
      PLANNER_SLICE_INTERVAL_MS: '200',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    },
    startTimeoutMs: 120_000,
  }).then((s) => {
    started.push(s);
    return s;
  });
}

/** The RPC URL of chain 8453 the service printed at its start. */
function rpcOf(service: ServiceProcess): string {
  const line = service.output.find((l) => l.includes('Devnet chains:'));
  const url = /8453 (http:\/\/[^\s,]+)/.exec(line ?? '')?.[1];
  if (!url) throw new Error(`no devnet RPC URL in the output:\n${service.tail()}`);
  return url;
}

/** An agent of the service: signed in, a funded Kernel account, a policy, a delegation, prepaid money. */
async function agent(url: string) {
  const owner = privateKeyToAccount(generatePrivateKey());
  const purser = new Purser({ baseUrl: url });
  const { api } = purser;
  await purser.signIn(owner);
  const [base] = (await ok(api.GET('/v1/tokens', { params: { query: { chain_id: '8453' } } }))).chains;
  const token = (symbol: string) => getAddress(base!.tokens.find((t) => t.symbol === symbol)!.address);
  const router = base!.venues.find((v) => v.name === 'devnet-amm')!.contracts[0]!;
  await ok(
    api.POST('/v1/dev/faucet', {
      body: { chain_id: 8453, address: owner.address, tokens: [{ symbol: 'USDC', amount: '10000000' }] },
    }),
  );
  const kernel = await ok(
    api.POST('/v1/dev/kernel-accounts', {
      body: {
        chain_id: 8453,
        owner: owner.address,
        deploy: true,
        eth_wei: '0',
        tokens: [{ symbol: 'USDC', amount: String(100_000_000) }],
      },
    }),
  );
  const wallet = kernel.address;
  await ok(
    api.PUT('/v1/policies', {
      body: {
        version: 1,
        wallet,
        chain_id: 8453,
        execution: { max_slippage_bps: 300 },
        spend: { velocity_per_hour: 100 },
      },
    }),
  );
  const calls = [
    { target: token('USDC'), selector: '0x095ea7b3', value_limit: '0' },
    { target: router, selector: '0x38ed1739', value_limit: '0' },
  ];
  const prepared = await ok(
    api.POST('/v1/delegations/prepare', {
      body: { account: wallet, chain_id: 8453, calls, valid_until: Math.floor(Date.now() / 1000) + 86_400 },
    }),
  );
  await ok(
    api.POST('/v1/delegations/{id}/confirm', {
      params: { path: { id: prepared.id } },
      body: { enable_sig: await signDelegation(owner, prepared), owner: owner.address },
    }),
  );
  const terms = await ok(api.GET('/v1/balance/topups/terms'));
  await ok(api.POST('/v1/balance/topups', { body: await signTopUp(owner, terms, { value: '5000000' }) }));
  // An API key for what follows (it outlives this process: the next start takes it too).
  const key = await ok(api.POST('/v1/keys', { body: { name: 'shutdown test', scopes: ['read', 'write'] } }));
  return { purser, key: key.token!, wallet: getAddress(wallet), usdc: token('USDC'), eurc: token('EURC') };
}

/** A POST to /v1/mcp whose body never finishes arriving: an MCP request held open. */
function openMcpRequest(url: string, token: string) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
  return new Promise<string>((resolve) => {
    const req = httpRequest(`${url}/v1/mcp`, {
      method: 'POST',
      agent: false,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'content-length': String(body.length),
      },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(`answered ${res.statusCode}`));
      res.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.write(body.slice(0, 10));
  });
}

/** An idle keep-alive connection to the service: one request answered, the socket kept open. */
async function idleKeepAlive(url: string): Promise<Agent> {
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
  await new Promise<void>((resolve, reject) => {
    httpRequest(`${url}/healthz`, { agent: keepAlive }, (res) => {
      res.resume();
      res.on('end', () => resolve());
    })
      .on('error', reject)
      .end();
  });
  return keepAlive;
}

describe('stopping with work in flight', () => {
  it(`exits within ${BUDGET_MS} ms after a burst of intents; the next start fills every intent once`, async () => {
    const first = await start();
    await waitUntilReady(first, 60_000);
    const a = await agent(first.url);
    const chain = createPublicClient({ transport: viemHttp(rpcOf(first)) });
    const usdcOf = () =>
      chain.readContract({ address: a.usdc, abi: erc20Abi, functionName: 'balanceOf', args: [a.wallet] });
    const before = await usdcOf();

    // The burst: twelve 1-USDC intents of one wallet, admitted at once.
    const sale = { sell_token: a.usdc, buy_token: a.eurc, sell_amount: '1000000' };
    const intents = await Promise.all(
      Array.from({ length: INTENTS }, () =>
        ok(
          a.purser.api.POST('/v1/intents', {
            body: {
              ...sale,
              wallet: a.wallet,
              kind: 'conversion',
              venues: ['devnet-amm'],
              max_slippage_bps: 300,
            },
          }),
        ),
      ),
    );
    const ids = intents.map((i) => i.id);
    const token = a.key;
    const keepAlive = await idleKeepAlive(first.url);
    const mcp = openMcpRequest(first.url, token);
    // A step is executing (its slice sent, waiting for the receipt): signal now.
    await expect
      .poll(
        async () => {
          const read = await ok(a.purser.api.GET('/v1/intents', { params: { query: { wallet: a.wallet } } }));
          return read.intents.some((i) => i.status === 'executing');
        },
        { timeout: 30_000, interval: 100 },
      )
      .toBe(true);
    const signalledAt = Date.now();
    first.child.kill('SIGTERM');
    const exit = await first.exited;
    const tookMs = Date.now() - signalledAt;
    console.info(`shutdown: SIGTERM to exit in ${tookMs} ms with work in flight`);
    expect(exit, `${describeExit(exit)}\n${first.tail(60)}`).toEqual({ code: 0, signal: null });
    expect(tookMs, first.tail(60)).toBeLessThan(BUDGET_MS + 2_000);
    // The connections still open were closed, not waited for.
    expect(await mcp).not.toBe('answered 200');
    keepAlive.destroy();

    // The next start continues every intent: each fills, once.
    const second = await start();
    await waitUntilReady(second, 60_000);
    const again = new Purser({ baseUrl: second.url, token }).api;
    await expect
      .poll(
        async () => {
          const read = await ok(again.GET('/v1/intents', { params: { query: { wallet: a.wallet } } }));
          return read.intents.filter((i) => ids.includes(i.id) && ['planned', 'executing'].includes(i.status))
            .length;
        },
        { timeout: 120_000, interval: 250 },
      )
      .toBe(0);
    const read = await ok(again.GET('/v1/intents', { params: { query: { wallet: a.wallet, limit: 50 } } }));
    const ours = read.intents.filter((i) => ids.includes(i.id));
    expect(ours.map((i) => [i.status, i.params.abort ?? null])).toEqual(ids.map(() => ['filled', null]));
    const sold = ours.reduce(
      (sum, i) => sum + BigInt((i.report as { totals: { sold: string } }).totals.sold),
      0n,
    );
    expect(sold).toBe(BigInt(INTENTS) * 1_000_000n);
    // The chain (the devnet saved at the stop and brought back) lost exactly what was sold.
    const chainAfter = createPublicClient({ transport: viemHttp(rpcOf(second)) });
    const after = await chainAfter.readContract({
      address: a.usdc,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [a.wallet as Address],
    });
    expect(before - after).toBe(sold);

    // A second signal does not wait for the first stop.
    const t0 = Date.now();
    second.child.kill('SIGTERM');
    second.child.kill('SIGTERM');
    const exit2 = await second.exited;
    expect(Date.now() - t0).toBeLessThan(BUDGET_MS);
    expect(exit2.code === 1 || exit2.code === 0, describeExit(exit2)).toBe(true);
  }, 300_000);
});
