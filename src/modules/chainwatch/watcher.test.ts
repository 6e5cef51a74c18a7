// The chain watcher on an anvil of its own (a reorganization must not touch the shared devnet):
// openings, deposits and withdrawals booked against `external:<chain>`, a reorganization that
// drops a deposit rolled back with new entries, transactions Purser explains matched, and two
// watchers booking each transfer once.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { getAddress, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../core/clock.ts';
import { balanceOf, erc20Asset, postGroup, transfer, venueAccount, walletAccount } from '../ledger/index.ts';
import {
  deploySpray,
  privateAnvil,
  privateWatchDeps,
  type PrivateAnvil,
  type SprayToken,
} from '../../../test/support/chain-watch.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { claimChainTransaction } from './claims.ts';
import { watchChain, type WatchDeps } from './watcher.ts';

const CHAIN = 8453;

let anvil: PrivateAnvil;
let token: SprayToken;
let database: TestDatabase;

beforeAll(async () => {
  anvil = await privateAnvil(CHAIN);
  token = await deploySpray(anvil);
  database = await createTestDatabase();
}, 120_000);

afterAll(async () => {
  await database?.drop();
  await anvil?.stop();
});

const randomAddress = (): Address => getAddress(`0x${randomBytes(20).toString('hex')}`);

/** A fresh account with a watched wallet. */
async function watchedWallet(): Promise<{ accountId: string; wallet: Address }> {
  const accountId = `acc_${randomBytes(8).toString('hex')}`;
  const wallet = randomAddress();
  const now = new Date();
  await database.handle.db
    .insertInto('accounts')
    .values({ id: accountId, address: randomAddress().toLowerCase(), created_at: now } as never)
    .execute();
  await database.handle.db
    .insertInto('chain_watch_wallets')
    .values({
      chain_id: CHAIN,
      address: wallet.toLowerCase(),
      account_id: accountId,
      role: 'policy',
      created_at: now,
    })
    .execute();
  return { accountId, wallet };
}

function deps(clock: Clock = systemClock): WatchDeps {
  return privateWatchDeps(anvil, token.address, database.handle.db, clock);
}

const usdc = () => erc20Asset(CHAIN, token.address);
const booked = (wallet: Address) => balanceOf(database.handle.db, walletAccount(CHAIN, wallet), usdc());
const onChain = (wallet: Address) =>
  deps()
    .chain.publicClient(CHAIN)
    .readContract({
      address: token.address,
      abi: token.abi,
      functionName: 'balanceOf',
      args: [wallet],
    }) as Promise<bigint>;

async function groupsOf(wallet: Address) {
  return database.handle.db
    .selectFrom('ledger_groups as g')
    .innerJoin('ledger_entries as e', 'e.group_id', 'g.id')
    .select(['g.kind', 'g.settlement_id', 'e.amount', 'g.reverses'])
    .where('e.ledger_account', '=', walletAccount(CHAIN, wallet))
    .where('e.asset', '=', usdc())
    .orderBy('e.seq')
    .execute();
}

/**
 * Purser's own booking of a transaction (a fill of `amount` USDC into the wallet, as the executor
 * books one), claiming the transaction for the wallet in the same database transaction.
 */
function explainedBooking(accountId: string, wallet: Address, hash: string, amount: bigint) {
  return database.handle.db.transaction().execute(async (tx) => {
    const res = await postGroup(tx, systemClock, {
      settlementId: `test:fill:${hash}`,
      accountId,
      kind: 'fill.conversion',
      entries: transfer(walletAccount(CHAIN, wallet), venueAccount('devnet-amm', CHAIN), usdc(), amount),
    });
    if (!res.ok) throw new Error(res.reason);
    await claimChainTransaction(tx, systemClock, {
      chainId: CHAIN,
      txHash: hash,
      wallet,
      groupId: res.groupId,
      blockNumber: null,
    });
  });
}

describe('the chain watcher', () => {
  it('opens a wallet at what it held, then books a deposit and a withdrawal against the outside', async () => {
    const { wallet } = await watchedWallet();
    await token.spray([wallet], 100_000_000n);
    // The first run starts the chain at its head: what the wallet held then is its opening.
    const first = await watchChain(deps(), CHAIN);
    expect(first.opened).toBeGreaterThanOrEqual(1);
    expect(await booked(wallet)).toBe(100_000_000n);

    await token.spray([wallet], 50_000_000n);
    const second = await watchChain(deps(), CHAIN);
    expect(second.booked).toBe(1);
    expect(await booked(wallet)).toBe(150_000_000n);
    expect(await booked(wallet)).toBe(await onChain(wallet));

    // A replay books nothing more.
    const again = await watchChain(deps(), CHAIN);
    expect(again.booked).toBe(0);
    expect(await booked(wallet)).toBe(150_000_000n);

    const kinds = (await groupsOf(wallet)).map((g) => [g.kind, String(g.amount)]);
    expect(kinds).toEqual([
      ['chain.opening', '100000000'],
      ['chain.deposit', '50000000'],
    ]);
    const external = await balanceOf(database.handle.db, `external:${CHAIN}`, usdc());
    expect(external).toBeLessThanOrEqual(-150_000_000n);
  });

  it('rolls back a deposit a reorganization dropped, with new entries, and books what replaced it', async () => {
    const { wallet } = await watchedWallet();
    await watchChain(deps(), CHAIN);
    await token.spray([wallet], 30_000_000n);
    await watchChain(deps(), CHAIN);
    expect(await booked(wallet)).toBe(30_000_000n);

    // The block of the deposit is replaced by an empty one.
    await anvil.rpc('anvil_reorg', [1, []]);
    expect(await onChain(wallet)).toBe(0n);
    const rolled = await watchChain(deps(), CHAIN);
    expect(rolled.reorgFrom).not.toBeNull();
    expect(await booked(wallet)).toBe(0n);
    const groups = await groupsOf(wallet);
    expect(groups.map((g) => g.kind)).toEqual(['chain.deposit', 'reversal']);
    expect(groups[1]!.reverses).not.toBeNull();

    // A new deposit in the new chain is booked; the ledger still equals the chain.
    await token.spray([wallet], 7_000_000n);
    await watchChain(deps(), CHAIN);
    expect(await booked(wallet)).toBe(7_000_000n);
    expect(await booked(wallet)).toBe(await onChain(wallet));
  });

  it("matches a transfer Purser's own booking explains, whichever comes first", async () => {
    const { accountId, wallet } = await watchedWallet();
    await watchChain(deps(), CHAIN);
    const explain = (hash: string) => explainedBooking(accountId, wallet, hash, 5_000_000n);
    // Purser's booking first: the watcher matches the transfer.
    const [first] = await token.spray([wallet], 5_000_000n);
    await explain(first!);
    const run = await watchChain(deps(), CHAIN);
    expect(run.matched).toBe(1);
    expect(run.booked).toBe(0);
    expect(await booked(wallet)).toBe(5_000_000n);

    // The watcher first (its grace period over): Purser's later booking reverses the watcher's.
    const [second] = await token.spray([wallet], 5_000_000n);
    await watchChain(deps(), CHAIN);
    expect(await booked(wallet)).toBe(10_000_000n);
    await explain(second!);
    expect(await booked(wallet)).toBe(10_000_000n);
    expect(await booked(wallet)).toBe(await onChain(wallet));
    expect((await groupsOf(wallet)).map((g) => g.kind)).toEqual([
      'fill.conversion',
      'chain.deposit',
      'fill.conversion',
      'reversal',
    ]);
  });

  it('holds an unexplained transfer for the grace period, and drops it when Purser explains it meanwhile', async () => {
    const { accountId, wallet } = await watchedWallet();
    const held = (clock: Clock) =>
      privateWatchDeps(anvil, token.address, database.handle.db, clock, { graceMs: 60_000 });
    await watchChain(held(systemClock), CHAIN);
    const [deposit] = await token.spray([wallet], 2_000_000n);
    const run = await watchChain(held(systemClock), CHAIN);
    expect(run.held).toBe(1);
    expect(await booked(wallet)).toBe(0n);
    // Another transfer, explained while held.
    const [explained] = await token.spray([wallet], 3_000_000n);
    await watchChain(held(systemClock), CHAIN);
    await explainedBooking(accountId, wallet, explained!, 3_000_000n);
    // A minute later the grace is over: the deposit is booked, the explained one is not.
    const later: Clock = { now: () => new Date(Date.now() + 61_000) };
    const due = await watchChain(held(later), CHAIN);
    expect(due.booked).toBe(1);
    expect(await booked(wallet)).toBe(5_000_000n);
    expect(await booked(wallet)).toBe(await onChain(wallet));
    const settlements = (await groupsOf(wallet)).map((g) => g.settlement_id);
    expect(settlements.some((s) => s.includes(deposit!.toLowerCase()))).toBe(true);
  });

  it('two watchers at once book each transfer once', async () => {
    const wallets = await Promise.all(Array.from({ length: 20 }, () => watchedWallet()));
    await watchChain(deps(), CHAIN);
    const holders = wallets.map((w) => w.wallet);
    for (let round = 0; round < 3; round += 1) {
      await token.spray(holders, 1_000_000n);
      const [a, b] = await Promise.all([
        watchChain(deps(), CHAIN, { owner: 'watcher-a' }),
        watchChain(deps(), CHAIN, { owner: 'watcher-b' }),
      ]);
      // One of them held the chain's lease (or they took turns): 20 transfers booked in all.
      expect(a.booked + b.booked).toBe(20);
    }
    for (const w of wallets) {
      expect(await booked(w.wallet)).toBe(3_000_000n);
      expect(await booked(w.wallet)).toBe(await onChain(w.wallet));
    }
  });

  it.skipIf(!process.env.DATABASE_URL)(
    'a watcher killed (kill -9) between two chunks of a range: the next run books the rest, nothing twice',
    async () => {
      const wallets = await Promise.all(Array.from({ length: 400 }, () => watchedWallet()));
      await watchChain(deps(), CHAIN);
      const holders = wallets.map((w) => w.wallet);
      // 1,200 transfers in one range: more than one chunk.
      for (let round = 0; round < 3; round += 1) await token.spray(holders, 1_000_000n);

      const script = fileURLToPath(new URL('../../../test/support/chain-watch-child.ts', import.meta.url));
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', script, database.url ?? '', anvil.rpcUrl, token.address],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const signal = await new Promise((resolve) => child.once('exit', (_code, sig) => resolve(sig)));
      expect(signal).toBe('SIGKILL');
      expect(out).not.toContain('finished');

      const deposits = () =>
        database.handle.db
          .selectFrom('ledger_groups as g')
          .innerJoin('ledger_entries as e', 'e.group_id', 'g.id')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('g.kind', '=', 'chain.deposit')
          .where(
            'e.ledger_account',
            'in',
            holders.map((h) => walletAccount(CHAIN, h)),
          )
          .executeTakeFirstOrThrow();
      const partly = Number((await deposits()).n);
      expect(partly).toBeGreaterThan(0);
      expect(partly).toBeLessThan(1_200);

      // The dead watcher's lease runs out; the next run reads the range again and books the rest.
      const later: Clock = { now: () => new Date(Date.now() + 120_000) };
      const rest = await watchChain(deps(later), CHAIN);
      expect(rest.booked).toBe(1_200 - partly);
      expect(Number((await deposits()).n)).toBe(1_200);
      for (const w of wallets.slice(0, 20)) expect(await booked(w.wallet)).toBe(await onChain(w.wallet));
    },
    120_000,
  );

  it('asks for one eth_getLogs per range for all wallets, and halves the range a provider refuses', async () => {
    const wallets = await Promise.all(Array.from({ length: 10 }, () => watchedWallet()));
    await watchChain(deps(), CHAIN);
    // 12 blocks with a transfer to each of the 10 wallets.
    for (let i = 0; i < 12; i += 1)
      await token.spray(
        wallets.map((w) => w.wallet),
        1_000_000n,
      );

    // A provider in front of the anvil that refuses log ranges of more than 4 blocks.
    const ranges: number[] = [];
    const proxy: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const call = JSON.parse(body) as {
          id: number;
          method: string;
          params: { fromBlock: string; toBlock: string }[];
        };
        if (call.method === 'eth_getLogs') {
          const span = Number(BigInt(call.params[0]!.toBlock) - BigInt(call.params[0]!.fromBlock)) + 1;
          if (span > 4) {
            res.setHeader('content-type', 'application/json');
            res.end(
              JSON.stringify({
                jsonrpc: '2.0',
                id: call.id,
                error: { code: -32005, message: 'query exceeds max block range 4' },
              }),
            );
            return;
          }
          ranges.push(span);
        }
        void fetch(anvil.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
          .then((r) => r.text())
          .then((text) => {
            res.setHeader('content-type', 'application/json');
            res.end(text);
          });
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const behind = { ...anvil, rpcUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` };
      const run = await watchChain(
        privateWatchDeps(behind, token.address, database.handle.db, systemClock),
        CHAIN,
      );
      expect(run.booked).toBe(120);
      expect(run.caughtUp).toBe(true);
      // Every range it was allowed, at most 4 blocks, covering the 12 blocks: a call per range, not per wallet.
      expect(Math.max(...ranges)).toBeLessThanOrEqual(4);
      expect(ranges.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(12);
      expect(ranges.length).toBeLessThanOrEqual(6);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
    for (const w of wallets) expect(await booked(w.wallet)).toBe(await onChain(w.wallet));
  });
});
