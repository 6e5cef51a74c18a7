// Many intents of one wallet at once (the job worker runs eight steps in parallel, as `npm start`
// does; on PostgreSQL their transactions run side by side too): a deployed Kernel account holding
// no ETH sells 1 USDC twenty times at once. Every intent fills (no operation collides with another on the account's nonce, and no nonce race
// is reported as a policy violation), and every EntryPoint deposit the relayer made for the
// account's prefunds is booked: the chain's native balance plus the deposit equals the ledger's.

import { decodeFunctionData, getAddress, parseAbi, type Address, type Hex } from 'viem';
import { entryPoint07Abi, entryPoint07Address } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { TestApp } from '../../../test/support/app.ts';
import {
  chainHoldings,
  conversionAgent,
  eurcMarket,
  sellUsdc,
  type EurcMarket,
} from '../../../test/support/executor.ts';
import { testConfig } from '../../config.ts';
import { createWorker } from '../../core/jobs/index.ts';
import { jobHandlers } from '../../jobs.ts';
import { EXECUTE_JOB, type Intent } from '../intents/index.ts';
import { balanceOf, erc20Asset, nativeAsset, walletAccount } from '../ledger/index.ts';
import type { RunReport } from './index.ts';
import { intentSlices } from './store.ts';

const devnet = inject('devnet');
const CHAIN = 8453;
const USD = 1_000_000n;
const INTENTS = 20;
let m: EurcMarket;
let t: TestApp;

beforeAll(async () => {
  const config = testConfig();
  m = await eurcMarket(devnet, [{ venue: 'devnet-amm', usdcDepth: 108_000 }], {
    config: {
      planner: { ...config.planner, sliceIntervalMs: 50 },
      executor: { ...config.executor, receiptPollMs: 50 },
    },
  });
  t = m.t;
});
afterAll(async () => {
  await t?.close();
});

const client = () => t.deps.chain!.publicClient(CHAIN);

const holdings = (account: Address) => chainHoldings(m, account);

/** Wei the relayer sent to `EntryPoint.depositTo(account)`, read from the chain's own records. */
async function relayerDeposits(account: Address): Promise<bigint> {
  const relayer = privateKeyToAccount(t.deps.config.payments.relayerPrivateKey!).address;
  const logs = await client().getContractEvents({
    address: entryPoint07Address,
    abi: entryPoint07Abi,
    eventName: 'Deposited',
    args: { account },
    fromBlock: 0n,
  });
  const abi = parseAbi(['function depositTo(address account) payable']);
  let total = 0n;
  for (const hash of new Set(logs.map((l) => l.transactionHash as Hex))) {
    const tx = await client().getTransaction({ hash });
    if (getAddress(tx.from) !== relayer) continue;
    const call = decodeFunctionData({ abi, data: tx.input });
    expect(getAddress(call.args[0])).toBe(account);
    total += tx.value;
  }
  return total;
}

describe('intents of one wallet at once', () => {
  it(`fills ${INTENTS} concurrent 1-USDC intents from a deployed account with no ETH; every relayer deposit is booked`, async () => {
    const a = await conversionAgent(devnet, m, BigInt(INTENTS) * USD, {
      ethWei: 0n,
      deploy: true,
      policy: { spend: { per_tx_usd: '1000', velocity_per_hour: 100 } },
    });
    const account = getAddress(a.account);
    expect(await client().getBytecode({ address: account })).toBeTruthy();
    const before = await holdings(account);
    expect(before.native).toBe(0n);

    const intents = await Promise.all(
      Array.from({ length: INTENTS }, () => a.api<Intent>('POST', '/v1/intents', sellUsdc(m, a.wallet, USD))),
    );
    const worker = createWorker({
      db: t.db.db,
      clock: t.deps.clock,
      log: t.deps.log,
      handlers: { [EXECUTE_JOB]: jobHandlers(t.deps)[EXECUTE_JOB]! },
      concurrency: 8,
      pollIntervalMs: 20,
    });
    await worker.start();
    const ids = intents.map((i) => i.id);
    const until = Date.now() + 240_000;
    for (;;) {
      const open = await t.db.db
        .selectFrom('intents')
        .select('id')
        .where('id', 'in', ids)
        .where('status', 'in', ['planned', 'executing'])
        .execute();
      if (open.length === 0 || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await worker.stop({ graceMs: 10_000 });

    const rows = await t.db.db
      .selectFrom('intents')
      .select(['id', 'status', 'params', 'report'])
      .where('id', 'in', ids)
      .execute();
    const aborts = rows
      .filter((r) => r.status !== 'filled')
      .map((r) => ({ id: r.id, status: r.status, params: r.params }));
    expect(aborts, JSON.stringify(aborts)).toEqual([]);
    // Each intent sold its 1 USDC once; no two operations were the same.
    const hashes: string[] = [];
    const lanes = new Set<bigint>();
    for (const r of rows) {
      const report = r.report as RunReport;
      expect(report.totals.sold).toBe(String(USD));
      for (const s of await intentSlices(t.db.db, r.id)) {
        hashes.push(s.hash);
        lanes.add((s.op.nonce >> 64n) & 0xffffn);
      }
    }
    expect(new Set(hashes).size).toBe(hashes.length);
    // They ran side by side on the account's nonce lanes (Kernel's 2-byte custom nonce key), at
    // most the configured four.
    expect(lanes.size).toBeGreaterThan(1);
    expect(Math.max(...[...lanes].map(Number))).toBeLessThan(t.deps.config.executor.nonceLanes);

    // The chain moved as the ledger says, the native coin (balance plus EntryPoint deposit) too.
    const after = await holdings(account);
    const wallet = walletAccount(CHAIN, a.wallet);
    expect(await balanceOf(t.db.db, wallet, erc20Asset(CHAIN, m.usdc.address))).toBe(
      after.usdc - before.usdc,
    );
    expect(after.usdc - before.usdc).toBe(-BigInt(INTENTS) * USD);
    expect(await balanceOf(t.db.db, wallet, erc20Asset(CHAIN, m.eurc.address))).toBe(
      after.eurc - before.eurc,
    );
    const deposited = await relayerDeposits(account);
    expect(deposited).toBeGreaterThan(0n);
    const booked = await t.db.db
      .selectFrom('ledger_entries as e')
      .innerJoin('ledger_groups as g', 'g.id', 'e.group_id')
      .select((eb) => eb.fn.sum<string>('e.amount').as('total'))
      .where('e.ledger_account', '=', wallet)
      .where('e.asset', '=', nativeAsset(CHAIN, 60))
      .where('g.kind', '=', 'gas.prefund')
      .executeTakeFirst();
    expect(BigInt(booked?.total ?? '0')).toBe(deposited);
    expect(await balanceOf(t.db.db, wallet, nativeAsset(CHAIN, 60))).toBe(after.native);
  }, 300_000);
});
