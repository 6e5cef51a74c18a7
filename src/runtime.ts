// Starting and stopping the whole service: database, migrations, devnet, API and workers.

import type { Logger } from 'pino';
import { createViemChainPort } from './adapters/chain/viem.ts';
import { createObjectStore } from './adapters/object-store/index.ts';
import { buildApp, type App } from './app.ts';
import type { Config } from './config.ts';
import { systemClock, type Clock } from './core/clock.ts';
import { isDatabaseUnavailable, openDatabase, type DatabaseHandle } from './core/db/database.ts';
import { migrate } from './core/db/migrate.ts';
import { createWorker } from './core/jobs/index.ts';
import type { AppDeps } from './deps.ts';
import { devnetRpcUrls, devnetTokenAddresses, startDevnet, type DevnetInfo } from './devnet/devnet.ts';
import { createAuthenticator } from './modules/auth/authenticator.ts';
import { startCredentialCache } from './modules/auth/credential-cache.ts';
import { buildTokenRegistry } from './modules/registry/index.ts';
import { jobHandlers, jobSchedules } from './jobs.ts';
import { createWebhookDispatcher } from './modules/webhooks/index.ts';

export interface ServiceOptions {
  api: boolean;
  workers: boolean;
  clock?: Clock;
}

export interface RunningService {
  deps: AppDeps;
  app: App | null;
  /** The address the API listens on, when it does. */
  url: string | null;
  stop(): Promise<void>;
}

/** Opens the database, applying migrations; waits for a database that is not up yet. */
export async function openAndMigrate(
  config: Config,
  log: Logger,
  signal?: AbortSignal,
): Promise<DatabaseHandle> {
  const handle = await openDatabase(config, {
    onPoolError: (err) =>
      log.warn({ err: { message: err.message } }, 'database connection lost; reconnecting on demand'),
  });
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await migrate(handle.db);
      if (result.applied.length > 0) log.info({ applied: result.applied }, 'migrations applied');
      return handle;
    } catch (err) {
      if (!isDatabaseUnavailable(err) || signal?.aborted || attempt >= 60) {
        await handle.close().catch(() => undefined);
        throw err;
      }
      log.warn(`database not reachable yet (attempt ${attempt}); retrying in 1 s`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

export async function startService(
  config: Config,
  log: Logger,
  options: ServiceOptions,
): Promise<RunningService> {
  const clock = options.clock ?? systemClock;
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) {
      await stop().catch((err: unknown) => log.error({ err }, 'error while stopping'));
    }
  };
  try {
    let devnet: DevnetInfo | undefined;
    let rpcUrls = config.rpcUrls;
    if (config.devnet.enabled) {
      const running = await startDevnet({
        chainIds: config.devnet.chainIds,
        basePort: config.devnet.basePort,
        log: { info: (m: string) => log.info(m) },
      });
      stops.push(() => running.stop());
      devnet = running.info();
      // Chains the operator pointed elsewhere keep their RPC URL; the rest use the devnet.
      rpcUrls = { ...devnetRpcUrls(devnet), ...config.rpcUrls };
    }

    const handle = await openAndMigrate(config, log);
    stops.push(() => handle.close());

    const credentials = await startCredentialCache(handle);
    stops.push(credentials.stop);

    const deps: AppDeps = {
      config,
      db: handle.db,
      dbKind: handle.kind,
      clock,
      log,
      authenticator: createAuthenticator({ db: handle.db, clock, config, log, cache: credentials.cache }),
      credentialCache: credentials.cache,
      chain: createViemChainPort({
        rpcUrls,
        // The relayer signs the settlement transactions of payments (EIP-3009) and pays their gas.
        ...(config.payments.relayerPrivateKey
          ? { executorPrivateKey: config.payments.relayerPrivateKey }
          : {}),
      }),
      tokenRegistry: buildTokenRegistry(
        config.env,
        devnet ? devnetTokenAddresses(devnet) : (config.devnet.tokenAddresses ?? undefined),
      ),
      // Signing time for a bucket is real time (S3 refuses skewed signatures), not the service clock.
      objectStore: createObjectStore(config.statements),
      ...(devnet ? { devnet } : {}),
    };

    if (options.workers) {
      const worker = createWorker({
        db: handle.db,
        clock,
        log,
        handlers: jobHandlers(deps),
        schedules: jobSchedules,
        concurrency: config.jobs.concurrency,
        pollIntervalMs: config.jobs.pollIntervalMs,
      });
      await worker.start();
      // Stopped after the API has drained (stops run in reverse), releasing what it still holds.
      stops.push(() => worker.stop({ graceMs: 10_000 }));
      // Webhook deliveries: woken by NOTIFY on the commit of each event (docs/events.md).
      const webhooks = createWebhookDispatcher({
        db: handle.db,
        clock,
        log,
        sealingKey: config.sealingKey,
        production: config.env === 'production',
        listen: (channel, onPayload, onState) => handle.listen(channel, onPayload, onState),
      });
      await webhooks.start();
      stops.push(() => webhooks.stop());
    }

    let app: App | null = null;
    let url: string | null = null;
    if (options.api) {
      app = await buildApp(deps);
      const running = app;
      stops.push(() => running.fastify.close());
      await running.fastify.listen({ host: config.host, port: config.port });
      const address = running.fastify.server.address();
      const port = typeof address === 'object' && address ? address.port : config.port;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      url = `http://${host}:${port}`;
      // With PORT=0 the port is known only now; links in error bodies must carry the real one.
      if (!config.publicUrlExplicit) config.publicUrl = url;
    }
    return { deps, app, url, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
