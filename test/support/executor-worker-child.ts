// The executor's job worker in its own process, for crash and concurrency tests:
// `node --import tsx executor-worker-child.ts <database url> <worker id>`, with EXECUTOR_CHILD set to
// JSON `{devnet, relocate, killAfterSend}`. It runs `intents.execute` as `npm start` does, on the
// devnet (registry symbols moved onto the test's tokens). With `killAfterSend` it kills itself
// with SIGKILL the moment the bundler has taken a slice's operation, before any receipt: the crash
// between broadcast and receipt. Prints "sent <userOpHash>" first.

import { createJsonRpcBundler } from '../../src/adapters/bundler/json-rpc.ts';
import type { BundlerPort } from '../../src/adapters/bundler/port.ts';
import { createViemChainPort } from '../../src/adapters/chain/viem.ts';
import { testConfig } from '../../src/config.ts';
import { systemClock } from '../../src/core/clock.ts';
import { openPostgres } from '../../src/core/db/database.ts';
import { createWorker } from '../../src/core/jobs/index.ts';
import { createLogger } from '../../src/core/log.ts';
import type { AppDeps } from '../../src/deps.ts';
import { devnetBundlerUrls, devnetRpcUrls, type DevnetInfo } from '../../src/devnet/devnet.ts';
import { jobHandlers } from '../../src/jobs.ts';
import { EXECUTE_JOB } from '../../src/modules/intents/index.ts';
import type { DevnetTokenAddresses } from '../../src/modules/registry/index.ts';
import { devnetDeps, devnetKernelConfig } from './devnet-deps.ts';

const [url, workerId] = process.argv.slice(2);
const input = JSON.parse(process.env.EXECUTOR_CHILD ?? 'null') as {
  devnet: DevnetInfo;
  relocate?: DevnetTokenAddresses[number];
  killAfterSend?: boolean;
  config?: Record<string, unknown>;
} | null;
if (!url || !workerId || !input) {
  throw new Error('usage: EXECUTOR_CHILD=<json> executor-worker-child.ts <database url> <worker id>');
}

const base = testConfig();
const config = testConfig({ kernel: devnetKernelConfig(input.devnet, base), ...input.config });
const chain = createViemChainPort({
  rpcUrls: devnetRpcUrls(input.devnet),
  relayerPrivateKey: config.payments.relayerPrivateKey!,
});
const market = await devnetDeps(
  input.devnet,
  config,
  chain,
  input.relocate ? { relocate: input.relocate } : {},
);
const real = createJsonRpcBundler({ urls: devnetBundlerUrls(input.devnet) });
const bundler: BundlerPort = input.killAfterSend
  ? {
      ...real,
      async sendUserOperation(chainId, op) {
        const hash = await real.sendUserOperation(chainId, op);
        process.stdout.write(`sent ${hash}\n`);
        process.kill(process.pid, 'SIGKILL');
        return hash;
      },
    }
  : real;

const handle = openPostgres(url, 4);
const log = createLogger('silent');
const deps = { config, db: handle.db, clock: systemClock, log, ...market, bundler } as unknown as AppDeps;
const worker = createWorker({
  db: handle.db,
  clock: systemClock,
  log,
  workerId,
  concurrency: 4,
  pollIntervalMs: 50,
  leaseMs: 3_000,
  handlers: { [EXECUTE_JOB]: jobHandlers(deps)[EXECUTE_JOB]! },
});
await worker.start();
process.stdout.write('ready\n');
