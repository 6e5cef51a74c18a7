// `npm run bench:routing` (and part of `npm run bench`): what routing across venues buys, executed
// on the devnet's Base chain. For each size from 1,000 to 2,000,000 USDC sold for WETH, from the
// same chain state (an anvil snapshot, reverted after each way), three ways are executed by a
// trader account and what arrived is read back with viem:
//   1. one unsliced swap on the venue with the best full-size quote;
//   2. the best single venue: the order in BENCH_ROUTING_SLICES equal slices, all on that venue;
//   3. routed: the same slices, each sent to the best fresh quote of every venue, or cut between
//      two venues when that buys more than a second swap's gas (what the executor does per slice:
//      the venues module's quotes and `bestCut`, the quotes module's gas valuation).
// Nobody arbitrages the devnet, so the slices of way 2 fetch about what way 1 does, and way 3's
// advantage is the routing alone. Reported: WETH bought by each, routed against the other two in
// basis points, the gas each way used, and how long each slice's routing took (its quotes and cut)
// beside the slowest single venue's quote of the same slice.

import { createTestClient, http, parseUnits, type Address } from 'viem';
import { createViemChainPort } from '../src/adapters/chain/viem.ts';
import type { VenueQuote } from '../src/adapters/venues/index.ts';
import { testConfig } from '../src/config.ts';
import { openDatabase } from '../src/core/db/database.ts';
import { migrate } from '../src/core/db/migrate.ts';
import { Deadline } from '../src/core/http/deadline.ts';
import { BASE_CHAIN_ID, devnetRpcUrls, devnetToken, startDevnet } from '../src/devnet/devnet.ts';
import { splitGasCost } from '../src/modules/quotes/index.ts';
import { bestCut, buildSwap, quoteAllVenues } from '../src/modules/venues/index.ts';
import { PGlite } from '@electric-sql/pglite';
import { devnetDeps } from '../test/support/devnet-deps.ts';
import { marketTrader } from '../test/support/markets.ts';
import { machineFacts, positiveInt, runMain, summary, writeResults } from './common.ts';

const SIZES_USDC = (process.env.BENCH_ROUTING_SIZES ?? '1000,10000,100000,500000,1000000,2000000')
  .split(',')
  .map((s) => Number(s.trim()));
const SLICES = positiveInt('BENCH_ROUTING_SLICES', 10);
const SLIPPAGE_BPS = 5_000; // the bench measures what arrives: the minimums must not get in its way

type Trader = Awaited<ReturnType<typeof marketTrader>>;

interface WayResult {
  bought: bigint;
  gas: bigint;
  venues: Record<string, number>;
}

async function main(): Promise<number> {
  const devnet = await startDevnet({ chainIds: [BASE_CHAIN_ID] });
  const pglite = new PGlite();
  const config = testConfig();
  const handle = await openDatabase(config, { pglite });
  try {
    await migrate(handle.db);
    const info = devnet.info();
    const rpcUrl = devnetRpcUrls(devnet)[BASE_CHAIN_ID]!;
    const chain = createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) });
    const { venues, tokenRegistry, prices } = await devnetDeps(info, config, chain);
    const usdc = devnetToken(devnet, BASE_CHAIN_ID, 'USDC');
    const weth = devnetToken(devnet, BASE_CHAIN_ID, 'WETH');
    const venueDeps = { db: handle.db, venues: venues ?? [], venueTimeoutMs: config.venues.timeoutMs };
    const anvil = createTestClient({ mode: 'anvil', transport: http(rpcUrl, { retryCount: 0 }) });
    const market = { chainId: BASE_CHAIN_ID, rpcUrl, tokens: {}, pools: [] };
    const gasDeps = { registry: tokenRegistry!, prices, chain, config };

    const quoteAll = (amount: bigint, taker: Address, allow?: readonly string[]) =>
      quoteAllVenues(venueDeps, {
        chainId: BASE_CHAIN_ID,
        sellToken: usdc.address,
        buyToken: weth.address,
        sellAmount: amount,
        taker,
        ...(allow ? { allow } : {}),
        deadline: new Deadline(10_000),
      });
    const swap = async (trader: Trader, quote: VenueQuote) => {
      const plan = await buildSwap(
        venueDeps,
        {
          quote,
          taker: trader.address,
          slippageBps: SLIPPAGE_BPS,
          swapDeadline: 2n ** 40n,
          deadline: new Deadline(10_000),
        },
        new Date(),
      );
      return plan.calls;
    };
    /** Sends the calls; the WETH that arrived and the gas used. */
    const send = async (trader: Trader, calls: Awaited<ReturnType<typeof swap>>) => {
      const before = await trader.balanceOf(weth);
      const receipts = await trader.receipts(calls);
      if (receipts.some((r) => r.status !== 'success')) throw new Error('a swap reverted');
      return {
        bought: (await trader.balanceOf(weth)) - before,
        gas: receipts.reduce((s, r) => s + r.gasUsed, 0n),
      };
    };
    const slicesOf = (amount: bigint) =>
      Array.from({ length: SLICES }, (_, i) =>
        i < SLICES - 1 ? amount / BigInt(SLICES) : amount - (amount / BigInt(SLICES)) * BigInt(SLICES - 1),
      );

    const rows: {
      sizeUsdc: number;
      unsliced: WayResult & { venue: string };
      single: WayResult;
      routed: WayResult & { splits: number; sliceMs: number[]; slowestVenueMs: number[] };
    }[] = [];
    for (const size of SIZES_USDC) {
      const amount = parseUnits(String(size), 6);
      const trader = await marketTrader(market, usdc, amount * 2n);
      const start = await anvil.snapshot();
      const again = async () => {
        await anvil.revert({ id: start });
        return anvil.snapshot();
      };

      // 1. One unsliced swap on the best venue.
      const full = await quoteAll(amount, trader.address);
      const best = full.quotes[0];
      if (!best) throw new Error(`no venue quotes ${size} USDC`);
      const one = await send(trader, await swap(trader, best));
      const unsliced = { ...one, venues: { [best.venue]: 1 }, venue: best.venue };
      let snap = await again();

      // 2. The best single venue, sliced.
      const single: WayResult = { bought: 0n, gas: 0n, venues: { [best.venue]: SLICES } };
      for (const part of slicesOf(amount)) {
        const q = (await quoteAll(part, trader.address, [best.venue])).quotes[0];
        if (!q) throw new Error(`${best.venue} gave no quote for a slice of ${size} USDC`);
        const r = await send(trader, await swap(trader, q));
        single.bought += r.bought;
        single.gas += r.gas;
      }
      await anvil.revert({ id: snap });
      snap = await anvil.snapshot();

      // 3. Routed: each slice to the best fresh quote, or cut between two venues.
      const routed = {
        bought: 0n,
        gas: 0n,
        venues: {} as Record<string, number>,
        splits: 0,
        sliceMs: [] as number[],
        slowestVenueMs: [] as number[],
      };
      for (const part of slicesOf(amount)) {
        const started = performance.now();
        const fresh = await quoteAll(part, trader.address);
        const top = fresh.quotes[0];
        if (!top) throw new Error(`no venue quotes a slice of ${size} USDC`);
        const gasCost = await splitGasCost(gasDeps, BASE_CHAIN_ID, weth.address);
        const cut =
          gasCost === null
            ? null
            : await bestCut(venueDeps, {
                chainId: BASE_CHAIN_ID,
                sellToken: usdc.address,
                buyToken: weth.address,
                amount: part,
                taker: trader.address,
                best: { venue: top.venue, buyAmount: top.buyAmount },
                others: fresh.quotes.map((q) => q.venue).filter((v) => v !== top.venue),
                gasCost,
              });
        const calls = cut
          ? [...(await swap(trader, cut.a)), ...(await swap(trader, cut.b))]
          : await swap(trader, top);
        routed.sliceMs.push(performance.now() - started);
        routed.slowestVenueMs.push(
          Math.max(...fresh.quotes.map((q) => q.ms), ...fresh.failures.map((f) => f.ms)),
        );
        const r = await send(trader, calls);
        routed.bought += r.bought;
        routed.gas += r.gas;
        for (const v of cut ? [cut.a.venue, cut.b.venue] : [top.venue])
          routed.venues[v] = (routed.venues[v] ?? 0) + 1;
        if (cut) routed.splits += 1;
      }
      await anvil.revert({ id: snap });
      rows.push({ sizeUsdc: size, unsliced, single, routed });
      console.error(`routing: ${size} USDC done`);
    }

    const bps = (a: bigint, b: bigint) => Math.round((Number(a - b) / Number(b)) * 10_000 * 100) / 100;
    const weth18 = (x: bigint) => (Number(x) / 1e18).toFixed(4);
    const list = (v: Record<string, number>) =>
      Object.entries(v)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ');
    const sliceMs = summary(rows.flatMap((r) => r.routed.sliceMs));
    const slowestMs = summary(rows.flatMap((r) => r.routed.slowestVenueMs));
    const table = [
      `| USDC sold | one swap (${'venue'}) | best single venue, ${SLICES} slices | routed, ${SLICES} slices | routed vs single venue | routed vs one swap | gas: one / single / routed | routed slices by venue (splits) |`,
      '|--:|--:|--:|--:|--:|--:|--:|---|',
      ...rows.map(
        (r) =>
          `| ${r.sizeUsdc.toLocaleString('en-US')} | ${weth18(r.unsliced.bought)} (${r.unsliced.venue}) | ${weth18(r.single.bought)} | ` +
          `${weth18(r.routed.bought)} | ${bps(r.routed.bought, r.single.bought)} bps | ${bps(r.routed.bought, r.unsliced.bought)} bps | ` +
          `${r.unsliced.gas} / ${r.single.gas} / ${r.routed.gas} | ${list(r.routed.venues)} (${r.routed.splits}) |`,
      ),
    ];
    const machine = machineFacts();
    const markdown =
      `# Purser benchmark: routing across venues\n\nUSDC → WETH on the devnet's Base chain, executed from one ` +
      `chain state per size; WETH bought (whole WETH). ${machine.cpus}× ${machine.cpuModel}, Node ${machine.node}, ` +
      `commit ${machine.commit}.\n\n${table.join('\n')}\n\nRouting one slice (every venue's quote and the cut's): ` +
      `p50 ${sliceMs.p50} ms, p99 ${sliceMs.p99} ms; the slowest single venue's quote of the same slice: p50 ` +
      `${slowestMs.p50} ms, p99 ${slowestMs.p99} ms.\n`;
    console.log(`\n${markdown}`);
    const report = {
      startedAt: new Date().toISOString(),
      slices: SLICES,
      rows: rows.map((r) => ({
        ...r,
        unsliced: { ...r.unsliced, bought: r.unsliced.bought.toString(), gas: r.unsliced.gas.toString() },
        single: { ...r.single, bought: r.single.bought.toString(), gas: r.single.gas.toString() },
        routed: { ...r.routed, bought: r.routed.bought.toString(), gas: r.routed.gas.toString() },
      })),
      sliceRoutingMs: sliceMs,
      slowestVenueMs: slowestMs,
      machine,
    };
    writeResults({ 'routing.json': `${JSON.stringify(report, null, 2)}\n`, 'routing-latest.md': markdown });
    // Routing must never buy less than the single venue it could always have chosen.
    return rows.some((r) => r.routed.bought < r.single.bought) ? 1 : 0;
  } finally {
    await handle.close();
    await pglite.close();
    await devnet.stop();
  }
}

runMain(main);
