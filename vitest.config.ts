import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // One devnet (an anvil per chain, test contracts deployed) for the whole run: inject('devnet').
    globalSetup: ['./test/devnet-global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // PGlite instances cost ~0.4 GB each and the machine has 2 cores: a few files at a time.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
