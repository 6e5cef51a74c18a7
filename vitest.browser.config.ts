import { defineConfig } from 'vitest/config';

/**
 * `npm run test:browser`: the console driven in Debian's Chromium (test/browser/), against a
 * Purser started on the suite's devnet. `npm test` never needs a browser.
 */
export default defineConfig({
  test: {
    include: ['test/browser/**/*.browser.ts'],
    globalSetup: ['./test/devnet-global-setup.ts', './test/database-global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
