// `npm start`'s production path: the service bundled into dist/ by bin/build.js and started by
// bin/purser.js, as a user's `npm start` runs it, reading its migrations, docs and fixtures from
// the project (not from beside the bundle), with the devnet, so the bundled chain code, the
// packages left outside the bundle (PGlite, anvil, the Swagger UI's files) and the metrics port
// are all exercised from dist/.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildIsStale } from '../bin/build.js';
import { http, REPO_ROOT, serviceEnv } from './support/service-process.ts';

describe('the compiled service', () => {
  it('builds when stale, then `purser serve` runs from dist/ with the devnet and answers', async () => {
    // Built in a child the worker waits for without blocking: a build of a minute on a loaded
    // machine would otherwise stall the worker's calls to the test runner past their timeout.
    const built = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const build = spawn(process.execPath, ['bin/build.js', '--if-stale'], { cwd: REPO_ROOT });
      let output = '';
      build.stdout.on('data', (c: Buffer) => (output += c.toString()));
      build.stderr.on('data', (c: Buffer) => (output += c.toString()));
      build.on('close', (code) => resolve({ code, output }));
    });
    expect(built.code, built.output).toBe(0);
    expect(buildIsStale()).toBe(false);

    const dataDir = mkdtempSync(join(tmpdir(), 'purser-compiled-'));
    const child = spawn(process.execPath, ['bin/purser.js', 'serve'], {
      cwd: REPO_ROOT,
      env: serviceEnv({
        PURSER_DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        DEVNET: 'true',
        DEVNET_BASE_PORT: '0',
        METRICS_PORT: '0',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line:\n${output}`)), 60_000);
        child.stdout.on('data', () => {
          const m = /Purser is listening on (http:\/\/\S+)/.exec(output);
          // The announcement's last line names how it runs.
          if (m && /Running: .*\n/.test(output)) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}:\n${output}`)));
      });
      expect(output).toContain('Running:       compiled JavaScript in dist/');
      // Each phase of the start says so as it begins or ends, in order.
      const phases = [
        'opening the database: embedded PGlite in',
        'migrations applied',
        'devnet chain 8453 at',
        'Purser is listening on',
      ];
      const at = phases.map((p) => output.indexOf(p));
      expect(
        at.every((i) => i >= 0),
        output,
      ).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
      // Migrations ran from the project's directory: the database answers.
      expect((await http(`${url}/readyz`)).status).toBe(200);
      // The bundled sanctions sample (src/modules/screening/fixtures) was loaded: a listed
      // address is sanctioned.
      const screened = await http(`${url}/v1/screenings`, {
        method: 'POST',
        body: { address: '0xcbB2f6E7E0aD70BdaB8Fd391a8419D2AE866d342' },
      });
      expect(screened.status, screened.text).toBe(200);
      expect(JSON.parse(screened.text)).toMatchObject({ sanctioned: true });
      // A quote asks the devnet's venues on chain (the bundled viem and venue adapters).
      const quoted = await http(`${url}/v1/quotes`, {
        method: 'POST',
        body: { chain_id: 8453, sell_token: 'USDC', buy_token: 'WETH', sell_amount: '1000000' },
      });
      expect(quoted.status, quoted.text).toBe(200);
      const venues = (JSON.parse(quoted.text) as { full_size: { quotes: { venue: string }[] } }).full_size
        .quotes;
      expect(venues.map((q) => q.venue)).toContain('uniswap-v3');
      // The API reference's page and its script, served from the Swagger UI package's own files.
      const page = await http(`${url}/docs`);
      expect(page.status).toBe(200);
      const script = await http(`${url}/docs/static/swagger-ui-bundle.js`);
      expect(script.status).toBe(200);
      expect(script.text.length).toBeGreaterThan(100_000);
      // The console's page and script, built into dist/console/ with the rest.
      const consolePage = await http(`${url}/console`);
      expect(consolePage.status).toBe(200);
      const consoleScript = /src="(\/console\/assets\/main-[A-Z0-9]+\.js)"/.exec(consolePage.text)?.[1];
      expect(consoleScript, consolePage.text).toBeDefined();
      expect((await http(`${url}${consoleScript}`)).status).toBe(200);
      // The metrics port, announced in the log, serves the Prometheus text.
      const metricsUrl = /metrics \(Prometheus\) on (http:\/\/[^\s"]+)/.exec(output)?.[1];
      expect(metricsUrl, output).toBeDefined();
      const metrics = await http(metricsUrl!);
      expect(metrics.text).toContain('purser_http_requests_total');
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
