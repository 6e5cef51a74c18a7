// The executor across processes, on PostgreSQL (worker processes share the database): a worker
// killed with SIGKILL between a slice's broadcast and its receipt, then a fresh worker: the intent
// completes and no slice executes twice; and two worker processes sharing twenty intents: each
// executed once. What the chain holds is read back with viem and matches the ledger.

import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { encodeFunctionData, erc20Abi, getAddress, parseEther, parseUnits, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { delegatedAgent } from '../../../test/support/agent.ts';
import type { TestApp } from '../../../test/support/app.ts';
import { devnetKernelApp } from '../../../test/support/devnet-deps.ts';
import { marketTrader, testMarket, type TestMarket, type TestToken } from '../../../test/support/markets.ts';
import { devnetChain } from '../../devnet/devnet.ts';
import { NARROWED_SELECTORS } from '../delegations/rules.ts';
import type { Intent } from '../intents/index.ts';
import { balanceOf, erc20Asset, walletAccount } from '../ledger/index.ts';
import type { RunReport } from './index.ts';
import { intentSlices } from './store.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);
if (!onPostgres) {
  console.log('Skipping the executor crash tests: worker processes need a shared PostgreSQL.');
}

const devnet = inject('devnet');
const CHAIN = 8453;
const chainInfo = devnetChain(devnet, CHAIN);
const USD = 1_000_000n;
const CHILD = fileURLToPath(new URL('../../../test/support/executor-worker-child.ts', import.meta.url));
let market: TestMarket;
let t: TestApp;
let usdc: TestToken;
let eurc: TestToken;
const children: ChildProcess[] = [];

beforeAll(async () => {
  if (!onPostgres) return;
  // Deep enough that twenty small sales stay within the budget of the reference.
  market = await testMarket(devnet, { TKU: 6, TKE: 6 }, [
    { venue: 'devnet-amm', pair: ['TKE', 'TKU'], fee: null, depth: ['100000', '108000'] },
  ]);
  usdc = market.tokens.TKU!;
  eurc = market.tokens.TKE!;
  t = await devnetKernelApp(devnet, { prices: true, relocate: { USDC: usdc.address, EURC: eurc.address } });
});
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await t?.close();
});

/** A worker process; resolves once it printed `ready`, or the first line matching `until`. */
function worker(id: string, options: { killAfterSend?: boolean } = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, t.database.url!, id], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      EXECUTOR_CHILD: JSON.stringify({
        devnet,
        relocate: { USDC: usdc.address, EURC: eurc.address },
        killAfterSend: options.killAfterSend ?? false,
        config: { planner: { ...t.deps.config.planner, sliceIntervalMs: 100 } },
      }),
    },
  });
  children.push(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))),
  );
  return { child, exited, output: () => out };
}

async function waitFor<T>(what: string, read: () => Promise<T | null>, timeoutMs = 90_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== null) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function give(token: TestToken, to: Address, amount: bigint) {
  const trader = await marketTrader(market, token, amount);
  const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] });
  expect(await trader.send([{ to: token.address, data, value: 0n }])).toEqual(['success']);
}

const held = (token: TestToken, account: Address) =>
  t.deps.chain!.publicClient(CHAIN).readContract({
    address: token.address,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [account],
  });

async function agent(usdcAmount: bigint) {
  const a = await delegatedAgent(t, {
    ethWei: parseEther('0.05'),
    policy: { execution: { max_slippage_bps: 100 }, spend: { per_tx_usd: '1000' } },
    calls: [
      { target: usdc.address, selector: NARROWED_SELECTORS.approve, value_limit: '0' },
      {
        target: chainInfo.contracts.uniswapV2Router02!,
        selector: NARROWED_SELECTORS.uniswapV2Swap,
        value_limit: '0',
      },
    ],
  });
  await give(usdc, getAddress(a.account), usdcAmount);
  return a;
}

const sale = (wallet: string, amount: bigint) => ({
  wallet,
  kind: 'conversion',
  sell_token: usdc.address,
  buy_token: eurc.address,
  sell_amount: amount.toString(),
  venues: ['devnet-amm'],
  max_slippage_bps: 100,
});

const statusOf = async (id: string) =>
  (await t.db.db.selectFrom('intents').select('status').where('id', '=', id).executeTakeFirstOrThrow())
    .status;

/** The intent ended; its report, and the chain's movement of both tokens equal to the ledger's. */
async function expectFilledAsLedgered(
  a: Awaited<ReturnType<typeof agent>>,
  id: string,
  before: bigint,
  sold: bigint,
) {
  const row = await t.db.db
    .selectFrom('intents')
    .select(['status', 'report', 'params'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  expect(row.params, JSON.stringify(row.params)).not.toHaveProperty('abort');
  expect(row.status).toBe('filled');
  const report = row.report as RunReport;
  const account = getAddress(a.account);
  const wallet = walletAccount(CHAIN, a.wallet);
  // Sold exactly once: a slice executed twice would have sold more than the intent.
  expect((await held(usdc, account)) - before).toBe(-sold);
  expect(await balanceOf(t.db.db, wallet, erc20Asset(CHAIN, usdc.address))).toBe(-sold);
  expect(await balanceOf(t.db.db, wallet, erc20Asset(CHAIN, eurc.address))).toBe(await held(eurc, account));
  expect(BigInt(report.totals.bought)).toBe(await held(eurc, account));
  return report;
}

describe.runIf(onPostgres)('the executor across worker processes', () => {
  it('completes an intent after its worker is killed between a broadcast and its receipt, executing nothing twice', async () => {
    const a = await agent(parseUnits('100', 6));
    const before = await held(usdc, getAddress(a.account));
    const intent = await a.api<Intent>('POST', '/v1/intents', sale(a.wallet, 60n * USD));

    const doomed = worker('doomed', { killAfterSend: true });
    expect(await doomed.exited).toBe(-1);
    const sent = /sent (0x[0-9a-f]{64})/.exec(doomed.output())?.[1];
    expect(sent).toBeDefined();
    // The slice is recorded and in flight: the dead worker never saw its receipt.
    const [first] = await intentSlices(t.db.db, intent.id);
    expect(first).toMatchObject({ seq: 1, state: 'signed', hash: sent });
    expect(await statusOf(intent.id)).toBe('executing');

    const survivor = worker('survivor');
    await waitFor('the intent to end', async () =>
      ['filled', 'aborted'].includes(await statusOf(intent.id)) ? true : null,
    );
    survivor.child.kill('SIGKILL');
    const report = await expectFilledAsLedgered(a, intent.id, before, 60n * USD);
    // The operation sent before the crash is the first slice, landed once and never re-signed.
    expect(report.slices[0]).toMatchObject({ seq: 1, state: 'landed', user_op_hash: sent });
    expect(report.slices.every((s) => s.state === 'landed')).toBe(true);
    expect(new Set(report.slices.map((s) => s.user_op_hash)).size).toBe(report.slices.length);
  }, 150_000);

  it('shares twenty intents between two worker processes: each executed once', async () => {
    const agents = [];
    for (let i = 0; i < 20; i++) agents.push(await agent(parseUnits('10', 6)));
    const intents = await Promise.all(
      agents.map(async (a) => ({
        a,
        intent: await a.api<Intent>('POST', '/v1/intents', sale(a.wallet, 5n * USD)),
      })),
    );
    const workers = [worker('one'), worker('two')];
    await waitFor('twenty intents to end', async () => {
      const open = await t.db.db
        .selectFrom('intents')
        .select('id')
        .where(
          'id',
          'in',
          intents.map((i) => i.intent.id),
        )
        .where('status', 'in', ['planned', 'executing'])
        .execute();
      return open.length === 0 ? true : null;
    });
    for (const w of workers) w.child.kill('SIGKILL');
    for (const { a, intent } of intents) {
      const report = await expectFilledAsLedgered(a, intent.id, parseUnits('10', 6), 5n * USD);
      expect(report.slices.filter((s) => s.state === 'landed')).toHaveLength(report.plan!.slice_count);
    }
    // Each intent's job steps ran to completion exactly once each: no step is left or repeated.
    const steps = await t.db.db
      .selectFrom('jobs')
      .select(['state'])
      .where('name', '=', 'intents.execute')
      .execute();
    expect(steps.every((s) => s.state === 'completed')).toBe(true);
  }, 240_000);
});
