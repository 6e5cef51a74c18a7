// The `purser` command line: serve | worker | migrate | screening sync.

import { ConfigError, loadConfig, type Config } from './config.ts';
import { createLogger } from './core/log.ts';
import { hasDevOperatorAccess } from './cli/dev-operator.ts';
// The runtime (the whole service's module graph) is imported only by the commands that run it,
// so `help`, `ops` and `mcp` start without loading it.
import type { RunningService } from './runtime.ts';

const USAGE = `Usage: purser <command>

Commands:
  serve            run the API and the workers in one process (default)
  worker           run the workers only
  migrate          apply pending database migrations and exit
  screening sync   download the OFAC SDN list and store its digital-currency addresses
  ops …            operator controls: metering switch, prepaid caps (purser ops help)
  mcp              serve Purser's tools over MCP on stdio, calling a running Purser (PURSER_URL,
                   PURSER_API_KEY)
  demo             walk the whole agent flow on the devnet, printing every request and answer
                   (uses the Purser at PURSER_URL, or starts one on the embedded default)
  sdk-generate     write the SDK's OpenAPI document and types (packages/sdk) from the route table

Configuration comes from the environment; see README.md.`;

async function main(argv: string[]): Promise<number> {
  const [command = 'serve', sub, ...rest] = argv;
  if (command === 'help' || command === '--help' || command === '-h') {
    console.log(USAGE);
    return 0;
  }
  // Commands that are clients of a running service, or tools: they read no service config.
  if (command === 'mcp') {
    const { runMcpStdio } = await import('./cli/mcp.ts');
    return runMcpStdio(process.env);
  }
  if (command === 'demo') {
    const { runDemo } = await import('./cli/demo.ts');
    return runDemo(process.env);
  }
  if (command === 'sdk-generate') {
    const { writeSdkSchema } = await import('./cli/sdk-schema.ts');
    await writeSdkSchema();
    console.log('Wrote packages/sdk/openapi.json and packages/sdk/src/schema.ts.');
    return 0;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 78; // EX_CONFIG
    }
    throw err;
  }
  // The service logs to stdout; a command whose stdout is its answer (ops, migrate, screening)
  // logs to stderr, so its output stays machine-readable.
  const log = createLogger(config.logLevel, command === 'serve' || command === 'worker' ? 1 : 2);

  switch (command) {
    case 'migrate': {
      const { openAndMigrate } = await import('./runtime.ts');
      const handle = await openAndMigrate(config, log);
      await handle.close();
      console.log('Migrations are up to date.');
      return 0;
    }
    case 'serve':
    case 'worker': {
      const { startService } = await import('./runtime.ts');
      const service = await startService(config, log, {
        api: command === 'serve',
        workers: command === 'worker' || config.jobs.runWorkers,
      });
      announce(service, command);
      return waitForSignal(service, log);
    }
    case 'screening': {
      if (sub !== 'sync') break;
      const { runScreeningSync } = await import('./cli/screening-sync.ts');
      return runScreeningSync(config, log);
    }
    case 'ops': {
      const { runOps, OPS_USAGE } = await import('./cli/ops.ts');
      if (sub === undefined || sub === 'help') {
        console.log(OPS_USAGE);
        return sub === undefined ? 64 : 0;
      }
      return runOps(config, log, [sub, ...rest]);
    }
    default:
      break;
  }
  console.error(`Unknown command: ${argv.join(' ')}\n\n${USAGE}`);
  return 64; // EX_USAGE
}

function announce(service: RunningService, command: string): void {
  if (service.url) {
    console.log(`Purser is listening on ${service.url}`);
    console.log(`  Console:       ${service.url}/console (in the browser, for owners and the operator)`);
    console.log(`  API reference: ${service.url}/docs`);
    console.log(`  OpenAPI:       ${service.url}/v1/openapi.json`);
    console.log(`  Error codes:   ${service.url}/docs/errors`);
    console.log(
      `  MCP:           ${service.url}/v1/mcp (streamable HTTP, API key as bearer; stdio: purser mcp)`,
    );
    console.log(`  Health:        ${service.url}/healthz  ${service.url}/readyz`);
  } else {
    console.log(`Purser ${command} is running.`);
  }
  console.log(`  Environment:   ${service.deps.config.env}, database: ${service.deps.dbKind}`);
  console.log(
    COMPILED
      ? '  Running:       compiled JavaScript in dist/ (npm run build)'
      : '  Running:       the TypeScript sources through tsx (npm run build compiles them)',
  );
  const devnet = service.deps.devnet;
  if (devnet) {
    const chains = Object.values(devnet.chains).map((c) => `${c.chainId} ${c.rpcUrl}`);
    console.log(`  Devnet chains: ${chains.join(', ')} (faucet: POST /v1/dev/faucet)`);
    console.log(
      `  Devnet state:  kept in ${service.deps.config.dataDir}/devnet/ with the database across restarts`,
    );
  }
  if (hasDevOperatorAccess(service.deps.config)) {
    console.log('  Operator:      npm run purser -- ops help (works while this server runs)');
  }
}

/**
 * Runs until SIGTERM or SIGINT, then stops within SHUTDOWN_TIMEOUT_MS (runtime.ts: drains requests,
 * lets job steps finish or gives them back, saves the devnet) and exits 0. A second signal exits
 * at once (1), and so does a stop still going a few seconds past its budget.
 */
function waitForSignal(service: RunningService, log: ReturnType<typeof createLogger>): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    const budgetMs = service.deps.config.shutdownTimeoutMs;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        log.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      stopping = true;
      log.info({ signal, budget_ms: budgetMs }, 'stopping: draining requests and releasing jobs');
      const started = performance.now();
      const overdue = setTimeout(() => {
        log.error({ budget_ms: budgetMs }, 'the stop overran its budget: exiting now');
        process.exit(1);
      }, budgetMs + HARD_STOP_MARGIN_MS);
      overdue.unref();
      service.stop(budgetMs).then(
        () => {
          log.info({ ms: Math.round(performance.now() - started) }, 'stopped');
          resolve(0);
        },
        (err: unknown) => {
          log.error({ err }, 'stop failed');
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/** Whether this is the build in dist/ (bin/build.js) rather than the sources run through tsx. */
const COMPILED = import.meta.url.endsWith('.js');

/** How far past its budget a stop may run before the process exits regardless. */
const HARD_STOP_MARGIN_MS = 3_000;

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
