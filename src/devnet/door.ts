// The devnet's one door into the service, in development only. The runtime imports this module
// dynamically when DEVNET is on, so production never loads the devnet, its fakes or its routes.
// Through it the devnet starts (on the state it had at the last clean stop, checked against the
// database), hands back the configuration it implies (src/devnet/config-overrides.ts), which the
// rest of the service reads like any other, and its development routes under /v1/dev/.

import type { Logger } from 'pino';
import { freezeAreas, type Config } from '../config.ts';
import type { DatabaseHandle } from '../core/db/database.ts';
import type { RouteDefinition } from '../core/http/route-table.ts';
import { devnetConfig } from './config-overrides.ts';
import { DevnetOutdatedStateError, reclaimLeftoverAnvils, startDevnet, type DevnetInfo } from './devnet.ts';
import { devnetKeeper, startKeeperTimer } from './keeper.ts';
import { devRoutes } from './routes/routes.ts';
import { checkDevnetState, devnetStateDir, markDevnetRunning, markDevnetStopped } from './state.ts';

declare module '../deps.ts' {
  interface AppDeps {
    /** The running devnet, in development only: the development routes (faucet, feeds) use it. */
    devnet?: DevnetInfo;
  }
}

export interface OpenedDevnet {
  /** The configuration with the devnet's chains, contracts, feeds, venues and fakes in it. */
  config: Config;
  devnet: DevnetInfo;
  /** The development routes (`/v1/dev/…`), which the runtime adds to the route table. */
  routes: RouteDefinition[];
}

export interface OpenDevnetParameters {
  config: Config;
  log: Logger;
  handle: DatabaseHandle;
  /** Where the devnet registers its stops (run in reverse order by the runtime). */
  stops: Array<(remainingMs: number) => Promise<void>>;
}

/**
 * Starts the devnet on the state it had at the last clean stop (kept in `<data dir>/devnet/`),
 * after checking that this state is the one the database expects; registers the stop that lets
 * the anvils write their state and records it in the database before the database closes; starts
 * the arbitrage keeper. Returns the configuration the devnet implies, its sections frozen.
 */
export async function openDevnet(params: OpenDevnetParameters): Promise<OpenedDevnet> {
  const { config, log, handle, stops } = params;
  if (config.env === 'production') throw new Error('The devnet is refused in production.');
  const chainIds = config.devnet.chainIds;
  const stateDir = devnetStateDir(config.dataDir);
  const devnetLog = { info: (m: string) => log.info(m) };
  const reclaimed = await reclaimLeftoverAnvils(stateDir, chainIds, devnetLog);
  const reset =
    handle.kind === 'pglite'
      ? `Reset both together: stop Purser and delete ${config.dataDir} (rm -rf ${config.dataDir}); ` +
        'the next start creates a new database and new chains.'
      : `Reset both together: recreate the database DATABASE_URL names and delete ${stateDir}.`;
  await checkDevnetState({ db: handle.db, stateDir, chainIds, reclaimed, log: (m) => log.warn(m), reset });
  let running;
  try {
    devnetLog.info(
      `devnet: starting chains ${chainIds.join(', ')} and the fakes of the third-party services ` +
        '(a first start deploys the contracts)',
    );
    running = await startDevnet({ chainIds, basePort: config.devnet.basePort, stateDir, log: devnetLog });
  } catch (err) {
    // Anvils that did start wrote their state when they were stopped: that is the state to expect.
    await markDevnetStopped(handle.db, stateDir, chainIds);
    // A devnet saved by a version with its tokens elsewhere: the ledger names those addresses too.
    if (err instanceof DevnetOutdatedStateError) throw new Error(`${err.message} ${reset}`);
    throw err;
  }
  const devnet = running;
  stops.push(async () => {
    await devnet.stop();
    await markDevnetStopped(handle.db, stateDir, chainIds);
  });
  await markDevnetRunning(handle.db, chainIds);
  const info = devnet.info();
  // As arbitrageurs do on mainnet, the keeper brings the pools back to the feeds after trades.
  const keeper = config.devnet.keeperIntervalMs > 0 ? devnetKeeper(info) : null;
  if (keeper) {
    // A step that keeps failing the same way is said once, not every interval.
    let lastFailure = '';
    stops.push(
      startKeeperTimer(keeper, config.devnet.keeperIntervalMs, (err) => {
        const message = err instanceof Error ? err.message : String(err);
        if (message !== lastFailure) log.warn({ err }, 'devnet arbitrage keeper: a step failed');
        lastFailure = message;
      }),
    );
    devnetLog.info(
      `devnet arbitrage keeper: brings the Base pools back to the feeds' prices every ` +
        `${config.devnet.keeperIntervalMs} ms (DEVNET_KEEPER_INTERVAL_MS; 0 turns it off)`,
    );
  }
  return { config: freezeAreas(devnetConfig(config, info)), devnet: info, routes: devRoutes };
}
