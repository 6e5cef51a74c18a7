// Starting and stopping the whole service: database, migrations, devnet, API and workers.

import { keyringOf } from './core/sealing.ts';
import type { Logger } from 'pino';
import { createIrisAdapter } from './adapters/attestation/iris.ts';
import { openJurisdictionGate } from './adapters/geo/index.ts';
import { createPmVenuePorts } from './adapters/pm-venue/index.ts';
import { createSafeTxServiceAdapter } from './adapters/safe/tx-service.ts';
import { createJsonRpcBundler } from './adapters/bundler/json-rpc.ts';
import { createViemChainPort } from './adapters/chain/viem.ts';
import { createVenueAdapters, settlingVenues } from './adapters/venues/index.ts';
import { createObjectStore } from './adapters/object-store/index.ts';
import { buildApp, logDomainEvents, type App } from './app.ts';
import type { Config } from './config.ts';
import { systemClock, type Clock } from './core/clock.ts';
import { isDatabaseUnavailable, openDatabase, type DatabaseHandle } from './core/db/database.ts';
import { migrate } from './core/db/migrate.ts';
import { ApiPortInUseError, busyPorts } from './core/ports.ts';
import { createWorker } from './core/jobs/index.ts';
import type { AppDeps } from './deps.ts';
import type { RouteDefinition } from './core/http/route-table.ts';
import { prepareDevOperatorToken, publishDevOperatorAccess } from './cli/dev-operator.ts';
import { createAuthenticator } from './modules/auth/authenticator.ts';
import { startCredentialCache } from './modules/auth/credential-cache.ts';
import { buildPriceReferences } from './modules/prices/index.ts';
import { buildTokenRegistry } from './modules/registry/index.ts';
import { rebalanceRunDeps, recoverSubmittedMints } from './modules/rebalances/index.ts';
import { jobHandlers, schedulesFor } from './jobs.ts';
import { createMetrics, serveMetrics } from './core/metrics.ts';
import { domainObservers, registerBatchMetrics, registerScrapedGauges } from './metrics.ts';
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
  /**
   * Stops within `budgetMs` (default SHUTDOWN_TIMEOUT_MS): stops accepting, drains requests for
   * SHUTDOWN_DRAIN_MS and then closes what is still open, lets running job steps finish or gives
   * them back, saves the devnet, closes the database. A step that overruns is left behind (logged);
   * the steps after it still run.
   */
  stop(budgetMs?: number): Promise<void>;
}

/** One step of a stop: gets the milliseconds left of the stop's budget. */
type StopStep = (remainingMs: number) => Promise<void>;

/** The least a step after an overrunning one still gets (saving the devnet, closing the database). */
const STEP_FLOOR_MS = 2_000;
/** What the worker leaves of the budget for the steps after it. */
const AFTER_WORKER_MS = 3_000;

/** Whether `work` settled within `ms` (it goes on regardless; only the wait ends). */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([work.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Where the database is, for the start's log: never the URL's credentials. */
function describeDatabase(config: Config): string {
  if (!config.databaseUrl) return `embedded PGlite in ${config.dataDir}`;
  try {
    const url = new URL(config.databaseUrl);
    return `PostgreSQL at ${url.host}${url.pathname}`;
  } catch {
    return 'PostgreSQL (DATABASE_URL)';
  }
}

/** Opens the database, applying migrations; waits for a database that is not up yet. */
export async function openAndMigrate(
  config: Config,
  log: Logger,
  signal?: AbortSignal,
): Promise<DatabaseHandle> {
  log.info(`opening the database: ${describeDatabase(config)}`);
  const handle = await openDatabase(config, {
    onPoolError: (err) =>
      log.warn({ err: { message: err.message } }, 'database connection lost; reconnecting on demand'),
  });
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await migrate(handle.db);
      if (result.applied.length > 0) log.info({ applied: result.applied }, 'migrations applied');
      else log.info('migrations: up to date');
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
  givenConfig: Config,
  log: Logger,
  options: ServiceOptions,
): Promise<RunningService> {
  const clock = options.clock ?? systemClock;
  let config = givenConfig;
  const stops: StopStep[] = [];
  let stopping: Promise<void> | null = null;
  const stopAll = (budgetMs = config.shutdownTimeoutMs): Promise<void> =>
    (stopping ??= (async () => {
      const deadline = performance.now() + budgetMs;
      for (const stop of stops.reverse()) {
        const remaining = Math.max(0, deadline - performance.now());
        const step = stop(remaining).catch((err: unknown) => log.error({ err }, 'error while stopping'));
        if (!(await within(step, Math.max(remaining, STEP_FLOOR_MS))))
          log.warn({ budget_ms: budgetMs }, 'a shutdown step overran the stop budget; going on without it');
      }
    })());
  try {
    // A held PORT is said now, not after the migrations and the devnet have started.
    if (options.api && config.port > 0 && (await busyPorts([config.port], config.host)).length > 0) {
      throw new ApiPortInUseError(config.port, config.host);
    }
    const handle = await openAndMigrate(config, log);
    stops.push(() => handle.close());

    // The devnet comes in through its one door, in development only: loaded only then, it starts
    // the chains and fakes and hands back the configuration they imply, and its routes.
    let devnet: { deps: Pick<AppDeps, 'devnet'>; routes: RouteDefinition[] } = { deps: {}, routes: [] };
    if (config.devnet.enabled) {
      const { openDevnet } = await import('./devnet/door.ts');
      const opened = await openDevnet({ config, log, handle, stops });
      config = opened.config;
      devnet = { deps: { devnet: opened.devnet }, routes: opened.routes };
    }

    const credentials = await startCredentialCache(handle);
    stops.push(credentials.stop);

    if (options.api) prepareDevOperatorToken(config, handle.kind);
    const chain = createViemChainPort({
      rpcUrls: config.rpcUrls,
      // The relayer signs the settlement transactions of payments (EIP-3009) and pays their gas.
      ...(config.payments.relayerPrivateKey ? { relayerPrivateKey: config.payments.relayerPrivateKey } : {}),
    });
    const bundler = createJsonRpcBundler({ urls: config.bundlerUrls, timeoutMs: config.bundlerTimeoutMs });
    const venues = createVenueAdapters({ config, chain });
    const tokenRegistry = buildTokenRegistry(
      config.env,
      config.devnet.tokenAddresses ?? undefined,
      settlingVenues(venues),
    );
    const prices = buildPriceReferences({
      config,
      chain,
      clock,
      registry: tokenRegistry,
      log,
    });
    // The first requests find readings; then they are refreshed off the request path.
    await prices.refresh();
    stops.push(prices.start());
    // The prediction-market routes' gate: a configured GeoIP database that cannot be opened stops
    // the start here, not on the first request.
    const jurisdiction = await openJurisdictionGate({ ...config.pm.geo });
    stops.push(() => jurisdiction.close());
    const metrics = createMetrics();
    registerScrapedGauges(metrics, {
      db: handle.db,
      clock,
      chain,
      rateLanes: config.pm.rateLanes,
      ...(handle.kind === 'postgres' ? { pool: handle.pool } : {}),
    });
    registerBatchMetrics(metrics, handle.db);
    const deps: AppDeps = {
      config,
      metrics,
      db: handle.db,
      dbKind: handle.kind,
      clock,
      log,
      authenticator: createAuthenticator({ db: handle.db, clock, config, log, cache: credentials.cache }),
      credentialCache: credentials.cache,
      chain,
      bundler,
      tokenRegistry,
      prices,
      venues,
      attestation: createIrisAdapter({
        baseUrl: config.cctp.attestationUrl,
        clock,
        timeoutMs: config.cctp.attestationTimeoutMs,
        maxPerSecond: config.cctp.attestationMaxPerSecond,
      }),
      pmVenues: createPmVenuePorts({
        polymarketClobUrl: config.pm.polymarketClobUrl,
        kalshiApiUrl: config.pm.kalshiApiUrl,
        timeoutMs: config.pm.venueTimeoutMs,
        clock,
      }),
      jurisdiction,
      safeIndex: createSafeTxServiceAdapter({
        urls: { [config.pm.chainId]: config.pm.safeTxServiceUrl },
        ...(config.pm.safeTxServiceApiKey ? { apiKey: config.pm.safeTxServiceApiKey } : {}),
        timeoutMs: config.pm.venueTimeoutMs,
        clock,
      }),
      // Signing time for a bucket is real time (S3 refuses skewed signatures), not the service clock.
      objectStore: createObjectStore(config.statements),
      ...devnet.deps,
    };

    logDomainEvents(deps);
    if (options.workers) {
      const worker = createWorker({
        db: handle.db,
        clock,
        log,
        handlers: jobHandlers(deps),
        schedules: schedulesFor(config),
        concurrency: config.jobs.concurrency,
        pollIntervalMs: config.jobs.pollIntervalMs,
        leaseMs: config.jobs.leaseMs,
      });
      await worker.start();
      // Stopped after the API has drained (stops run in reverse), releasing what it still holds.
      // Running steps get what the budget leaves after the later steps' share, then are given back.
      stops.push((remaining) =>
        worker.stop({ graceMs: Math.max(0, Math.min(10_000, remaining - AFTER_WORKER_MS)) }),
      );
      await recoverOnStart(deps);
      // Webhook deliveries: woken by NOTIFY on the commit of each event (docs/events.md).
      const webhooks = createWebhookDispatcher({
        db: handle.db,
        clock,
        log,
        keyring: keyringOf(config.sealingKeys),
        production: config.env === 'production',
        listen: (channel, onPayload, onState) => handle.listen(channel, onPayload, onState),
        observe: domainObservers(metrics).delivery,
      });
      await webhooks.start();
      stops.push(() => webhooks.stop());
    }

    let app: App | null = null;
    let url: string | null = null;
    if (options.api) {
      app = await buildApp(deps, { extraRoutes: devnet.routes });
      const running = app;
      // Stop accepting; drain requests for SHUTDOWN_DRAIN_MS; then close what is still open
      // (keep-alive connections, an MCP stream, a request stuck on a third party).
      stops.push(async (remaining) => {
        const closed = running.fastify.close();
        const drainMs = Math.min(config.shutdownDrainMs, remaining / 2);
        if (await within(closed, drainMs)) return;
        log.warn({ drain_ms: drainMs }, 'requests still open after the drain; closing their connections');
        running.fastify.server.closeAllConnections();
        await within(closed, 1_000);
      });
      // Taken since the check above: the same message.
      await running.fastify.listen({ host: config.host, port: config.port }).catch((err: unknown) => {
        if ((err as NodeJS.ErrnoException | null)?.code === 'EADDRINUSE')
          throw new ApiPortInUseError(config.port, config.host);
        throw err;
      });
      const address = running.fastify.server.address();
      const port = typeof address === 'object' && address ? address.port : config.port;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      url = `http://${host}:${port}`;
      // With PORT=0 the port is known only now; links in error bodies must carry the real one.
      if (!config.publicUrlExplicit) config.publicUrl = url;
      const devOperator = publishDevOperatorAccess(config, url);
      if (devOperator) stops.push(devOperator);
      if (config.metrics) {
        const served = await serveMetrics(metrics, config.metrics.host, config.metrics.port);
        stops.push(() => served.close());
        log.info(`metrics (Prometheus) on ${served.url}`);
      }
    }
    return { deps, app, url, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * What a start picks up at once rather than on a schedule: mints a killed process submitted and
 * never saw settle (docs/rebalances.md). Logged, never fatal: the schedules find the same later.
 */
async function recoverOnStart(deps: AppDeps): Promise<void> {
  const rebalances = rebalanceRunDeps(deps);
  if (!rebalances) return;
  try {
    const mints = await recoverSubmittedMints(rebalances);
    if (mints > 0) deps.log.info({ mints }, 'submitted rebalance mints queued for settlement at start');
  } catch (err) {
    deps.log.warn({ err }, 'submitted rebalance mints could not be queued at start');
  }
}
