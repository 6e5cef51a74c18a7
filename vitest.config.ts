import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The soaks: tests that run the real service as child processes and kill or restart them, or
 * run long. `npm test` leaves them out; `PURSER_SOAK=1 npm test` adds them, and CI (.ci/run)
 * always does. Most need PostgreSQL (two processes on one database) and skip on the embedded one.
 */
export const SOAK_FILES = [
  'test/devnet-restart.test.ts',
  'test/resilience.test.ts',
  'test/shutdown.test.ts',
  'src/modules/executor/run-crash.test.ts',
  'src/modules/pm/order-crash.test.ts',
  'src/modules/rebalances/rebalance-crash.test.ts',
  'src/modules/feedback/x402-kill.test.ts',
  'src/modules/webhooks/dispatcher-kill.test.ts',
];

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...(process.env.PURSER_SOAK === '1' ? [] : SOAK_FILES)],
    // One devnet (an anvil per chain, test contracts deployed) and one migrated database template
    // for the whole run: inject('devnet'), and test/support/db.ts copies the template.
    globalSetup: ['./test/devnet-global-setup.ts', './test/database-global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // PGlite instances cost ~0.4 GB each and the machine has 2 cores: a few files at a time. A
    // worker keeps its loaded modules from file to file (isolate off), which halves the run; test
    // files therefore leave no module state behind (docs/decisions.md, "The suite").
    pool: 'forks',
    isolate: false,
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
