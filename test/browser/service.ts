// The Purser the browser tests drive: the suite's devnet, the workers and periodic jobs as under
// npm start, and the chain watcher every second with no confirmations (the wallets' books).

import type { Config } from '../../src/config.ts';
import { testConfig } from '../../src/config.ts';
import type { DevnetInfo } from '../../src/devnet/devnet.ts';
import { startListeningService, type ListeningService } from '../support/listening-service.ts';

export function startConsoleService(
  devnet: DevnetInfo,
  config: Partial<Config> = {},
): Promise<ListeningService> {
  const base = testConfig();
  return startListeningService(devnet, {
    config: {
      chainWatch: {
        ...base.chainWatch,
        enabled: true,
        confirmations: { 8453: 0, 84532: 0, 137: 0 },
        graceMs: 0,
        everySeconds: 1,
        reconcileEverySeconds: 2,
      },
      ...config,
    },
    schedules: true,
  });
}
