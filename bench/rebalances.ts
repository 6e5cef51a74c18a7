// Rebalances on the devnet: the treasury executor admits N rebalances of 10 USDC from Base to
// Polygon at once, runs their burns side by side (each approve + burn signed under the nonce
// manager, recorded, sent, receipts read, ledgered), then completes them side by side (attestation
// from the devnet's Iris API, receiveMessage sent and ledgered). Measures each step's latency (p50,
// p99) and rebalances per minute from admission to minted. Docs: bench/README.md, "Rebalances".
// Part of `npm run bench`; alone: `npx tsx bench/rebalances.ts` (PGlite) or with DATABASE_URL.

import { BASE_CHAIN_ID, POLYGON_CHAIN_ID, startDevnet } from '../src/devnet/devnet.ts';
import { rebalanceRunDeps, runBurn, type Rebalance } from '../src/modules/rebalances/index.ts';
import { rebalanceWorld, USDC } from '../test/support/rebalances.ts';
import { machineFacts, runMain, summary, writeResults } from './common.ts';

const N = (() => {
  const n = Number(process.env['BENCH_REBALANCES'] ?? 30);
  return Number.isInteger(n) && n > 0 ? n : 30;
})();

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
}

async function main(): Promise<number> {
  const database = process.env['DATABASE_URL'] ? 'postgres' : 'pglite';
  const devnet = await startDevnet({ chainIds: [BASE_CHAIN_ID, POLYGON_CHAIN_ID], basePort: 0 });
  const w = await rebalanceWorld(devnet.info(), {
    baseUsdc: BigInt(N) * 10n * USDC,
    poolSize: 10,
    rebalance: {
      enabled: true,
      corridors: [{ from_chain_id: BASE_CHAIN_ID, to_chain_id: POLYGON_CHAIN_ID }],
      min_transfer_usd: '1',
      max_transfer_usd: '100',
      daily_cap_usd: '1000000',
    },
  });
  try {
    const deps = rebalanceRunDeps(w.t.deps)!;
    const started = performance.now();
    const admitted = await Promise.all(
      Array.from({ length: N }, () =>
        timed(() =>
          w.t.app.fastify.inject({
            method: 'POST',
            url: '/v1/rebalances',
            headers: w.auth,
            payload: {
              from_chain_id: BASE_CHAIN_ID,
              to_chain_id: POLYGON_CHAIN_ID,
              amount: (10n * USDC).toString(),
            },
          }),
        ),
      ),
    );
    const ids = admitted.map((a) => {
      if (a.value.statusCode !== 201) throw new Error(`admission: ${a.value.statusCode} ${a.value.body}`);
      return (a.value.json() as Rebalance).id;
    });
    const burns = await Promise.all(ids.map((id) => timed(() => runBurn(deps, id))));
    const completes = await Promise.all(
      ids.map((id) =>
        timed(() =>
          w.t.app.fastify.inject({ method: 'POST', url: `/v1/rebalances/${id}/complete`, headers: w.auth }),
        ),
      ),
    );
    const elapsedMs = performance.now() - started;
    const minted = completes.filter(
      (c) => c.value.statusCode === 200 && (c.value.json() as Rebalance).phase === 'minted',
    ).length;
    const report = {
      at: new Date().toISOString(),
      database,
      rebalances: N,
      minted,
      elapsedSeconds: Math.round(elapsedMs) / 1000,
      mintedPerMinute: Math.round((minted / (elapsedMs / 60_000)) * 10) / 10,
      admissionMs: summary(admitted.map((a) => a.ms)),
      burnMs: summary(burns.map((b) => b.ms)),
      completeMs: summary(completes.map((c) => c.ms)),
      machine: machineFacts(),
    };
    const row = (name: string, s: { p50: number; p99: number; max: number }) =>
      `| ${name} | ${s.p50} | ${s.p99} | ${s.max} |`;
    const md = [
      '# Purser benchmark: rebalances on the devnet',
      '',
      `${N} rebalances of 10 USDC, Base → Polygon, all at once per step; ${database}; ` +
        `${report.machine.cpus}× ${report.machine.cpuModel}, Node ${report.machine.node}, commit ${report.machine.commit}.`,
      '',
      `Minted ${minted} of ${N} in ${report.elapsedSeconds} s: **${report.mintedPerMinute} rebalances per minute** ` +
        'from admission to minted.',
      '',
      '| Step (N at once) | p50 ms | p99 ms | max ms |',
      '|---|--:|--:|--:|',
      row('admission (POST /v1/rebalances)', report.admissionMs),
      row('burn (sign, record, send, receipts, ledger)', report.burnMs),
      row('complete (attestation, mint, receipt, ledger)', report.completeMs),
      '',
    ].join('\n');
    console.log(md);
    writeResults({
      'rebalances-latest.md': md,
      [`rebalances-${database}.json`]: `${JSON.stringify(report, null, 2)}\n`,
    });
    return minted === N ? 0 : 1;
  } finally {
    await w.close();
    await devnet.stop();
  }
}

runMain(main);
