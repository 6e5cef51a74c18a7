// The executor across processes, on PostgreSQL (worker processes share the database): a worker
// killed with SIGKILL between a slice's broadcast and its receipt, then a fresh worker: the intent
// completes and no slice executes twice; and two worker processes sharing twenty intents: each
// executed once. What the chain holds is read back with viem and matches the ledger.

import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { getAddress, parseUnits, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { TestApp } from '../../../test/support/app.ts';
import {
  chainHeld,
  conversionAgent,
  eurcMarket,
  sellUsdc,
  type EurcMarket,
} from '../../../test/support/executor.ts';
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
