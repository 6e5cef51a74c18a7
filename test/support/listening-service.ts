// The service as a user's `npm start` runs it, in this test process, on the suite's devnet: the
// API listening on a loopback port, the workers taking jobs (executor steps among them) and the
// webhook dispatcher delivering events. Clients under test (the SDK, the MCP server, the example
// agent, the demo) talk to it over HTTP as they would to a real deployment.

import { keyringOf } from '../../src/core/sealing.ts';
import type { AddressInfo } from 'node:net';
import type { DevnetInfo } from '../../src/devnet/devnet.ts';
import { devnetBundlerUrls } from '../../src/devnet/devnet.ts';
import { createJsonRpcBundler } from '../../src/adapters/bundler/json-rpc.ts';
import { testConfig, type Config } from '../../src/config.ts';
import { createWorker } from '../../src/core/jobs/index.ts';
import { jobHandlers, schedulesFor } from '../../src/jobs.ts';
import { createWebhookDispatcher } from '../../src/modules/webhooks/index.ts';
import { createTestApp, type TestApp } from './app.ts';
import { devnetKernelConfig } from './devnet-deps.ts';
import { walkKeeper, withKeeperSteps } from './keeper.ts';
import { paymentsSetup } from './payments.ts';

export interface ListeningService {
  t: TestApp;
  /** http://127.0.0.1:<port> */
  url: string;
  close(): Promise<void>;
}

export interface ListeningOptions {
  /** Changes to the configuration (an operator token, slower slices). */
  config?: Partial<Config>;
  /** Whether the worker also runs the periodic jobs (the chain watcher among them), as npm start does. */
  schedules?: boolean;
}

export async function startListeningService(
  devnet: DevnetInfo,
  options: ListeningOptions = {},
): Promise<ListeningService> {
  const setup = await paymentsSetup(devnet, testConfig());
  const base = testConfig();
  const t = await createTestApp({
    config: {
      ...setup.config,
      kernel: devnetKernelConfig(devnet, base),
      planner: { ...base.planner, sliceIntervalMs: 100 },
      executor: { ...base.executor, receiptPollMs: 50 },
      ...options.config,
    },
    deps: { ...setup.deps, bundler: createJsonRpcBundler({ urls: devnetBundlerUrls(devnet) }) },
  });
  const worker = createWorker({
    db: t.db.db,
    clock: t.deps.clock,
    log: t.deps.log,
    // As under npm start, the market recovers between slices (the devnet's arbitrage keeper).
    handlers: withKeeperSteps(jobHandlers(t.deps), walkKeeper(devnet)),
    pollIntervalMs: 50,
    ...(options.schedules ? { schedules: schedulesFor(t.deps.config) } : {}),
  });
  await worker.start();
  const webhooks = createWebhookDispatcher({
    db: t.db.db,
    clock: t.deps.clock,
    log: t.deps.log,
    keyring: keyringOf(t.deps.config.sealingKeys),
    production: false,
    pollIntervalMs: 200,
  });
  await webhooks.start();
  await t.app.fastify.listen({ host: '127.0.0.1', port: 0 });
  const { port } = t.app.fastify.server.address() as AddressInfo;
  return {
    t,
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await webhooks.stop();
      await worker.stop();
      await t.close();
    },
  };
}
