// The owner's views of money and risk in Chromium against a started Purser on the devnet: spend
// against the policy's caps, the prepaid balance and a statement downloaded as the API gave it,
// the webhook endpoint and a test delivery, and the prediction-market view. Every view is checked
// with axe-core and photographed (test-results/console/).

import { createServer, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { ok } from '../../packages/sdk/src/index.ts';
import type { ListeningService } from '../support/listening-service.ts';
import { startConsoleService } from './service.ts';
import { setUpAgent, type Agent } from './agent.ts';
import { checkView, launchBrowser, openConsole, showPageOnFailure, type ConsolePage } from './browser.ts';

const devnet = inject('devnet');
let service: ListeningService;
let browser: Browser;
let agent: Agent;
let owner: ConsolePage;

beforeAll(async () => {
  service = await startConsoleService(devnet);
  [browser, agent] = await Promise.all([launchBrowser(), setUpAgent(service.url)]);
  owner = await openConsole(browser, service.url, { wallet: agent.owner, path: '/spend' });
  await owner.page.getByRole('button', { name: 'Sign in with wallet' }).click();
  await owner.page.getByRole('heading', { name: 'Spend' }).waitFor();
});
afterEach(({ task }) => showPageOnFailure(task, owner));
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

/** Opens a view from the navigation and waits for its heading. */
async function open(name: string) {
  await owner.page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name }).click();
  await owner.page.getByRole('heading', { name, level: 1 }).waitFor();
}

describe("the owner's views", () => {
  it("shows a wallet's spend against its policy's caps, and a conversion's spend once it runs", async () => {
    const { page } = owner;
    expect(page.url()).toBe(`${service.url}/console/spend`);
    const card = page.locator(`[data-wallet="${agent.wallet.toLowerCase()}"]`);
    const daily = card.locator('[data-gauge="daily"]');
    await daily.waitFor();
    expect(await daily.getAttribute('data-cap')).toBe('2000');
    expect(await daily.getAttribute('data-used')).toBe('0');
    expect(await card.locator('[data-gauge="hourly"]').getAttribute('data-used')).toBe('0');
    await checkView(owner, '20-spend-empty');

    const id = await agent.convert('100000000');
    await expect
      .poll(
        async () => (await ok(agent.purser.api.GET('/v1/intents/{id}', { params: { path: { id } } }))).status,
        { timeout: 90_000, interval: 500 },
      )
      .toBe('filled');
    await expect
      .poll(async () => Number(await daily.getAttribute('data-used')), { timeout: 15_000 })
      .toBeGreaterThan(0);
    expect(
      Number(await card.locator('[data-gauge="hourly"]').getAttribute('data-used')),
    ).toBeGreaterThanOrEqual(1);
    await checkView(owner, '21-spend');
  });

  it('shows the prepaid balance as the API reads it, and downloads a CSV statement byte for byte', async () => {
    const { page } = owner;
    await open('Money');
    const shown = page.locator('[data-field="balance"]');
    await shown.waitFor();
    await expect
      .poll(async () => {
        const { balance_usd } = await ok(agent.purser.api.GET('/v1/balance'));
        return (await shown.getAttribute('data-usd')) === balance_usd;
      })
      .toBe(true);
    await page.locator('[data-table="topups"] tr[data-event]').first().waitFor();
    await checkView(owner, '22-money');

    expect(await page.getByLabel('Wallet').inputValue()).toBe(agent.wallet.toLowerCase());
    const period = await page.getByLabel('Month (UTC)').inputValue();
    expect(period).toMatch(/^\d{4}-\d{2}$/);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`statement-${agent.wallet.toLowerCase()}-${period}.csv`);
    const bytes = await readFile((await download.path())!);
    const expected = await ok(
      agent.purser.api.GET('/v1/statements', {
        params: { query: { wallet: agent.wallet, period, format: 'csv' } },
        parseAs: 'arrayBuffer',
      }),
    );
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes.equals(Buffer.from(expected))).toBe(true);
    await page.getByRole('status').filter({ hasText: 'Downloaded statement-' }).waitFor();

    // JSON: the stored export of the same statement, fetched by its hash.
    const [json] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download JSON' }).click(),
    ]);
    expect(json.suggestedFilename()).toBe(`statement-${agent.wallet.toLowerCase()}-${period}.json`);
    const exported = JSON.parse(await readFile((await json.path())!, 'utf8')) as { wallet?: string };
    expect(JSON.stringify(exported)).toContain(agent.wallet.toLowerCase());
    expect(owner.problems).toEqual([]);
  });

  it('shows no webhook endpoint, then the registered one, and sends it a test event', async () => {
    const { page } = owner;
    await open('Webhooks');
    await page.getByText('No webhook endpoint registered').waitFor();
    await checkView(owner, '23-webhooks-empty');

    const deliveries: Array<{ headers: Record<string, unknown>; body: string }> = [];
    const receiver: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        deliveries.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/purser`;
      await ok(agent.purser.api.PUT('/v1/webhooks/endpoint', { body: { url } }));
      await open('Money');
      await open('Webhooks');
      await page.locator('[data-field="endpoint"]', { hasText: url }).waitFor();
      await page.getByRole('button', { name: 'Send a test event' }).click();
      await page.locator('[data-test-delivery="delivered"]').waitFor();
      expect(deliveries).toHaveLength(1);
      expect(JSON.parse(deliveries[0]!.body)).toMatchObject({ kind: 'test' });
      await checkView(owner, '24-webhooks');
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('shows the prediction-market view empty, saying how to add a venue credential', async () => {
    const { page } = owner;
    await open('Markets');
    await page.getByText('No venue credential').waitFor();
    await page.locator('[data-section="pm-events"]').waitFor();
    await checkView(owner, '25-markets');
  });
});
