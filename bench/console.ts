// The console's figures (docs/console.md): the size of the whole app gzipped, the first
// contentful paint of /console, and the time from signing in on the intents view to its first
// page of rows painted with 1,000 intents on the account, in Debian's Chromium (headless, fresh
// profile). The service runs on the embedded default with the devnet and without workers, so the
// intents stay planned. Part of `npm run bench`; alone: `npx tsx bench/console.ts`.
// Goals (issue 44): ≤ 250 kB gzipped; each paint ≤ 1 s on a quiet machine.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildConsole } from '../console/build.js';
import { ok, Purser, signTopUp } from '../packages/sdk/src/index.ts';
import { launchBrowser } from '../test/browser/chromium.ts';
import { REPO_ROOT, startServiceProcess, waitUntilReady } from '../test/support/service-process.ts';
import { positiveInt, runLine, runMain, writeResults } from './common.ts';

const INTENTS = positiveInt('BENCH_CONSOLE_INTENTS', 1_000);
const REPEAT = positiveInt('BENCH_REPEAT', 5);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const kb = (bytes: number) => (bytes / 1024).toFixed(1);

/**
 * An account with a wallet, a policy loose enough, a prepaid balance and INTENTS planned intents;
 * returns a read key of the account.
 */
async function seed(url: string): Promise<string> {
  const owner = privateKeyToAccount(generatePrivateKey());
  const purser = new Purser({ baseUrl: url });
  const { api } = purser;
  await purser.signIn(owner);
  const [base] = (await ok(api.GET('/v1/tokens', { params: { query: { chain_id: '8453' } } }))).chains;
  const address = (symbol: string) => base!.tokens.find((t) => t.symbol === symbol)!.address;
  await ok(
    api.POST('/v1/dev/faucet', {
      body: { chain_id: 8453, address: owner.address, tokens: [{ symbol: 'USDC', amount: '100000000' }] },
    }),
  );
  const kernel = await ok(
    api.POST('/v1/dev/kernel-accounts', {
      body: { chain_id: 8453, owner: owner.address, tokens: [{ symbol: 'USDC', amount: '1000000000' }] },
    }),
  );
  await ok(
    api.PUT('/v1/policies', {
      body: {
        version: 1,
        wallet: kernel.address,
        chain_id: 8453,
        spend: { per_tx_usd: '1000', daily_usd: '100000000', velocity_per_hour: 100_000 },
      },
    }),
  );
  const terms = await ok(api.GET('/v1/balance/topups/terms'));
  await ok(api.POST('/v1/balance/topups', { body: await signTopUp(owner, terms, { value: '90000000' }) }));
  let next = 0;
  const admit = async () => {
    while (next < INTENTS) {
      next++;
      await ok(
        api.POST('/v1/intents', {
          body: {
            wallet: kernel.address,
            kind: 'conversion',
            sell_token: address('USDC'),
            buy_token: address('WETH'),
            sell_amount: '1000000',
            venues: ['devnet-amm'],
          },
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: 8 }, admit));
  // What the owner pastes into the console: a read key.
  const key = await ok(api.POST('/v1/keys', { body: { name: 'console bench', scopes: ['read'] } }));
  if (!key.token) throw new Error('the key was created without its token');
  return key.token;
}

async function main(): Promise<number> {
  const files = await buildConsole(esbuild, REPO_ROOT);
  const raw = files.reduce((sum, f) => sum + f.contents.length, 0);
  const gzipped = files.reduce((sum, f) => sum + gzipSync(f.contents).length, 0);

  const dataDir = mkdtempSync(join(tmpdir(), 'purser-bench-console-'));
  const service = await startServiceProcess({
    env: {
      PURSER_DATA_DIR: dataDir,
      DEVNET: 'true',
      DEVNET_BASE_PORT: '0',
      RUN_WORKERS: 'false',
      // The admission's cap on a wallet's open intents (50 by default) would stop the seeding.
      INTENT_QUEUE_PER_WALLET: String(INTENTS + 50),
      LOG_LEVEL: 'warn',
    },
  });
  const browser = await launchBrowser();
  const fcp: number[] = [];
  const intentsView: number[] = [];
  try {
    await waitUntilReady(service, 180_000);
    const token = await seed(service.url);
    for (let i = 0; i < REPEAT + 1; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${service.url}/console/intents`);
      await page.getByLabel('API key or session token').waitFor();
      const paint = (await page.evaluate(
        `performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null`,
      )) as number | null;
      await page.getByLabel('API key or session token').fill(token);
      const started = performance.now();
      await page.getByRole('button', { name: 'Use this key' }).click();
      await page.locator('tr[data-intent]').nth(49).waitFor();
      const shown = performance.now() - started;
      await context.close();
      // The first run warms the service's build of the console and its caches.
      if (i === 0) continue;
      if (paint !== null) fcp.push(paint);
      intentsView.push(shown);
    }
  } finally {
    await browser.close();
    await service.stop('SIGTERM', 10_000);
    rmSync(dataDir, { recursive: true, force: true });
  }
  const md = [
    '# The console: size and first paint',
    '',
    runLine(),
    `- Chromium headless, fresh profile per run; medians of ${REPEAT} runs after one warm-up; the service on the embedded default (PGlite, devnet), workers off`,
    '',
    '| | figure | goal |',
    '|---|--:|--:|',
    `| the whole app, gzipped (${files.length} files, ${kb(raw)} kB raw) | ${kb(gzipped)} kB | ≤ 250 kB |`,
    `| first contentful paint of /console | ${median(fcp).toFixed(0)} ms | ≤ 1,000 ms |`,
    `| intents view with ${INTENTS.toLocaleString('en')} intents: sign-in submitted to its first 50 rows painted | ${median(intentsView).toFixed(0)} ms | ≤ 1,000 ms |`,
    '',
  ].join('\n');
  console.log(md);
  writeResults({ 'console-latest.md': md });
  return 0;
}

runMain(main);
