// vitest globalSetup: one devnet (anvil per chain, contracts deployed) for the whole test run.
// Tests read it with `inject('devnet')` and should use fresh keys (see src/devnet/faucet.ts
// newFundedAccount) rather than anvil's shared default accounts.

import type { TestProject } from 'vitest/node';
import { startDevnet, type DevnetInfo } from '../src/devnet/devnet.ts';

export const TEST_DEVNET_CHAIN_IDS = [84532, 8453, 137];

declare module 'vitest' {
  export interface ProvidedContext {
    devnet: DevnetInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const devnet = await startDevnet({ chainIds: TEST_DEVNET_CHAIN_IDS, basePort: 0 });
  project.provide('devnet', devnet.info());
  return async () => {
    await devnet.stop();
  };
}
