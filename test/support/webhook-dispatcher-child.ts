// A webhook dispatcher in its own process, for crash tests:
// `node --import tsx webhook-dispatcher-child.ts <database url> <worker id>`. The test's receiver
// holds the request open, so the test can kill -9 this process in the middle of a delivery.

import { testConfig } from '../../src/config.ts';
import { keyringOf } from '../../src/core/sealing.ts';
import { systemClock } from '../../src/core/clock.ts';
import { openPostgres } from '../../src/core/db/database.ts';
import { createWebhookDispatcher } from '../../src/modules/webhooks/index.ts';

const [url, workerId] = process.argv.slice(2);
if (!url || !workerId) throw new Error('usage: webhook-dispatcher-child.ts <database url> <worker id>');

const handle = openPostgres(url, 2);
const quiet = { info() {}, warn() {}, error() {} };
const dispatcher = createWebhookDispatcher({
  db: handle.db,
  clock: systemClock,
  log: quiet,
  workerId,
  keyring: keyringOf(testConfig().sealingKeys),
  production: false,
  pollIntervalMs: 50,
  leaseMs: 20_000,
  timeoutMs: 60_000,
});
await dispatcher.start();
process.stdout.write('ready\n');
