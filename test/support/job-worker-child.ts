// A job worker in its own process, for crash tests: `node --import tsx job-worker-child.ts <url> <workerId>`.
// Its one handler, `slow`, prints "started <job id>" and then never finishes, so the test can
// kill -9 the process in the middle of a job.

import { systemClock } from '../../src/core/clock.ts';
import { openPostgres } from '../../src/core/db/database.ts';
import { createWorker } from '../../src/core/jobs/index.ts';

const [url, workerId] = process.argv.slice(2);
if (!url || !workerId) throw new Error('usage: job-worker-child.ts <database url> <worker id>');

const handle = openPostgres(url, 2);
const quiet = { info() {}, warn() {}, error() {} };
const worker = createWorker({
  db: handle.db,
  clock: systemClock,
  log: quiet,
  workerId,
  concurrency: 1,
  pollIntervalMs: 50,
  leaseMs: 5_000,
  handlers: {
    slow: async (job) => {
      process.stdout.write(`started ${job.id}\n`);
      await new Promise(() => {});
    },
  },
});
await worker.start();
