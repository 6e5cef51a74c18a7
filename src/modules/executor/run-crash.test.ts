// The executor across processes, on PostgreSQL (worker processes share the database): a worker
// killed with SIGKILL between a slice's broadcast and its receipt, then a fresh worker: the intent
// completes and no slice executes twice; two worker processes sharing twenty intents: each
// executed once; and two worker processes running twelve intents of one wallet with no ETH, one
// of them killed mid-run: every intent fills on the wallet's nonce lanes. What the chain holds is
// read back with viem and matches the ledger, the native coin and its EntryPoint deposit too.

import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { getAddress, parseUnits, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { TestApp } from '../../../test/support/app.ts';
import {
  chainHeld,
  chainHoldings,
  conversionAgent,
  eurcMarket,
  sellUsdc,
  type EurcMarket,
} from '../../../test/support/executor.ts';
import type { Intent } from '../intents/index.ts';
import { balanceOf, erc20Asset, nativeAsset, walletAccount } from '../ledger/index.ts';
import type { RunReport } from './index.ts';
import { intentSlices } from './store.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);
if (!onPostgres) {
  console.log('Skipping the executor crash tests: worker processes need a shared PostgreSQL.');
}

const devnet = inject('devnet');
const CHAIN = 8453;
const USD = 1_000_000n;
const CHILD = fileURLToPath(new URL('../../../test/support/executor-worker-child.ts', import.meta.url));
let m: EurcMarket;
let t: TestApp;
const children: ChildProcess[] = [];

beforeAll(async () => {
  if (!onPostgres) return;
  // Deep enough that twenty small sales stay within the budget of the reference.
  m = await eurcMarket(devnet, [{ venue: 'devnet-amm', usdcDepth: 108_000 }]);
  t = m.t;
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
        relocate: { USDC: m.usdc.address, EURC: m.eurc.address },
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

/** Waits until none of the intents is planned or executing. */
async function allEnded(ids: string[], timeoutMs = 120_000) {
  await waitFor(
    `${ids.length} intents to end`,
    async () => {
      const open = await t.db.db
        .selectFrom('intents')
        .select('id')
        .where('id', 'in', ids)
        .where('status', 'in', ['planned', 'executing'])
        .execute();
      return open.length === 0 ? true : null;
    },
    timeoutMs,
  );
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

const held = (token: 'usdc' | 'eurc', account: Address) => chainHeld(t, m[token], account);
const agent = (usdc: bigint) =>
  conversionAgent(devnet, m, usdc, { policy: { spend: { per_tx_usd: '1000' } } });
const sale = (wallet: string, amount: bigint) => sellUsdc(m, wallet, amount);

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
  expect((await held('usdc', account)) - before).toBe(-sold);
  expect(await balanceOf(t.db.db, wallet, erc20Asset(CHAIN, m.usdc.address))).toBe(-sold);
  expect(await balanceOf(t.db.db, wallet, erc20Asset(CHAIN, m.eurc.address))).toBe(
    await held('eurc', account),
  );
  expect(BigInt(report.totals.bought)).toBe(await held('eurc', account));
  return report;
}

describe.runIf(onPostgres)('the executor across worker processes', () => {
  it('completes an intent after its worker is killed between a broadcast and its receipt, executing nothing twice', async () => {
    const a = await agent(parseUnits('100', 6));
    const before = await held('usdc', getAddress(a.account));
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
    await allEnded(intents.map((i) => i.intent.id));
    // The last step of an intent ends it before its job records that it completed: let it.
    await waitFor(
      'the last steps to record their completion',
      async () => {
        const open = await t.db.db
          .selectFrom('jobs')
          .select('id')
          .where('name', '=', 'intents.execute')
          .where('state', 'in', ['available', 'running'])
          .execute();
        return open.length === 0 ? true : null;
      },
      30_000,
    );
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

  it('runs twelve intents of one wallet with no ETH on two worker processes, one killed mid-run: each fills once, the books equal the chain', async () => {
    const a = await conversionAgent(devnet, m, 12n * USD, {
      ethWei: 0n,
      deploy: true,
      policy: { spend: { per_tx_usd: '1000', velocity_per_hour: 100 } },
    });
    const account = getAddress(a.account);
    const intents = await Promise.all(
      Array.from({ length: 12 }, () => a.api<Intent>('POST', '/v1/intents', sale(a.wallet, USD))),
    );
    const ids = intents.map((i) => i.id);
    // One worker dies the moment its first operation is sent; two others share the rest.
    const doomed = worker('lanes-doomed', { killAfterSend: true });
    expect(await doomed.exited).toBe(-1);
    const workers = [worker('lanes-one'), worker('lanes-two')];
    await allEnded(ids);
    for (const w of workers) w.child.kill('SIGKILL');

    const rows = await t.db.db
      .selectFrom('intents')
      .select(['id', 'status', 'params'])
      .where('id', 'in', ids)
      .execute();
    const notFilled = rows.filter((r) => r.status !== 'filled');
    expect(notFilled, JSON.stringify(notFilled)).toEqual([]);
    const wallet = walletAccount(CHAIN, a.wallet);
    expect(await held('usdc', account)).toBe(0n);
    expect(await balanceOf(t.db.db, wallet, erc20Asset(CHAIN, m.usdc.address))).toBe(-12n * USD);
    expect(await balanceOf(t.db.db, wallet, erc20Asset(CHAIN, m.eurc.address))).toBe(
      await held('eurc', account),
    );
    const { native } = await chainHoldings(m, account);
    expect(await balanceOf(t.db.db, wallet, nativeAsset(CHAIN, 60))).toBe(native);
    // No operation was signed twice, and every relayer deposit is settled.
    const slices = (await Promise.all(ids.map((id) => intentSlices(t.db.db, id)))).flat();
    expect(new Set(slices.map((s) => s.hash)).size).toBe(slices.length);
    expect(slices.filter((s) => s.state === 'signed')).toEqual([]);
    const open = await t.db.db
      .selectFrom('prefund_deposits')
      .select('tx_hash')
      .where('wallet', '=', a.wallet)
      .where('state', '=', 'signed')
      .execute();
    expect(open).toEqual([]);
  }, 240_000);
});
