// The devnet's arbitrage keeper where a test runs the service as `npm start` does (the README walk,
// the listening service the SDK, MCP and demo tests talk to): `npm start` steps it on a timer; here
// it steps after each executor step instead, so the pool a walk trades is back at the reference
// before the next slice, deterministically. It keeps only the seeded pool the walks trade
// (EURC/USDC on devnet-amm): other files share the devnet's pools and must not see them move.

import { generatePrivateKey } from 'viem/accounts';
import { devnetChain, type DevnetInfo } from '../../src/devnet/devnet.ts';
import { createArbitrageKeeper, type ArbitrageKeeper } from '../../src/devnet/keeper.ts';
import { EXECUTE_JOB } from '../../src/modules/intents/index.ts';
import type { JobHandler } from '../../src/core/jobs/index.ts';

/** A keeper of the devnet's seeded EURC/USDC pool on devnet-amm, on a key of its own. */
export function walkKeeper(devnet: DevnetInfo): ArbitrageKeeper {
  const base = devnetChain(devnet, 8453);
  const pools = base.pools.filter(
    (p) => p.venue === 'devnet-amm' && p.pair.includes('EURC') && p.pair.includes('USDC'),
  );
  if (pools.length !== 1) throw new Error('the devnet has no seeded EURC/USDC pool on devnet-amm');
  return createArbitrageKeeper({
    rpcUrl: base.rpcUrl,
    chainId: 8453,
    pools,
    tokens: base.tokens,
    priceFeeds: base.priceFeeds,
    wrappedNative: base.contracts.weth!,
    // Each keeper its own key: files running at once must not race on one nonce.
    key: generatePrivateKey(),
  });
}

/** The job handlers with the executor's followed by a keeper step. */
export function withKeeperSteps(
  handlers: Record<string, JobHandler>,
  keeper: ArbitrageKeeper,
): Record<string, JobHandler> {
  const execute = handlers[EXECUTE_JOB];
  if (!execute) return handlers;
  return {
    ...handlers,
    [EXECUTE_JOB]: async (job, ctx) => {
      try {
        await execute(job, ctx);
      } finally {
        await keeper.step();
      }
    },
  };
}
