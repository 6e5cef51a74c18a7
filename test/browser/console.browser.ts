// The console in Chromium against a started Purser on the devnet: an owner signs in with a browser
// wallet, reads a wallet's books against the chain, publishes a policy and sees the diff, and
// watches a conversion go from admitted to filled with its slices. Every view is checked with
// axe-core and photographed (test-results/console/).

import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPublicClient, erc20Abi, formatUnits, http, type Address } from 'viem';
import type { Browser, Page } from 'playwright-core';
import { ok } from '../../packages/sdk/src/index.ts';
import type { ListeningService } from '../support/listening-service.ts';
import { startConsoleService } from './service.ts';
import { testConfig } from '../../src/config.ts';
import { setUpAgent, type Agent } from './agent.ts';
import { checkView, launchBrowser, openConsole, showPageOnFailure, type ConsolePage } from './browser.ts';

const devnet = inject('devnet');
const OPERATOR_TOKEN = 'op_browser_'.padEnd(40, 'x');
/** The explorer this run configures for Base: slice hashes link to it. */
const EXPLORER = 'https://basescan.example';
let service: ListeningService;
let browser: Browser;
let agent: Agent;
let owner: ConsolePage;

beforeAll(async () => {
  const base = testConfig();
  // Slices three seconds apart, so a run lasts long enough to be watched (and stopped).
  service = await startConsoleService(devnet, {
    operatorToken: OPERATOR_TOKEN,
    explorerUrls: { 8453: EXPLORER },
    planner: { ...base.planner, sliceIntervalMs: 3_000 },
  });
  [browser, agent] = await Promise.all([launchBrowser(), setUpAgent(service.url)]);
});
// A failed test leaves the owner's page as it was: its screenshot, and its text in the report.
afterEach(({ task }) => showPageOnFailure(task, owner));
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

const chain = createPublicClient({ transport: http(devnet.chains[8453]!.rpcUrl) });
const onChain = async (token: string, holder: string) =>
  chain.readContract({
    address: token as Address,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [holder as Address],
  });

/** The text of a cell of the holdings table, commas dropped. */
const cell = async (page: Page, symbol: string, field: 'ledger' | 'chain') =>
  (
    await page
      .locator(`[data-chain="8453"] tr[data-symbol="${symbol}"] td[data-field="${field}"]`)
      .innerText()
  ).replaceAll(',', '');

/** A link of the console's navigation bar. */
const nav = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name, exact: true });

/** `1234.5` → `1,234.5`, as the console writes amounts. */
const grouped = (amount: string) => {
  const [whole = '', fraction] = amount.split('.');
  return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${fraction ? `.${fraction}` : ''}`;
};

describe('the console in a browser', () => {
  it('signs the owner in with the browser wallet, by keyboard alone, and shows their wallet', async () => {
    owner = await openConsole(browser, service.url, { wallet: agent.owner });
    const { page } = owner;
    await page.getByRole('heading', { name: 'Sign in to the Purser console' }).waitFor();
    await checkView(owner, '01-sign-in');
    // The first stop of the Tab key is the wallet's button, with a visible focus ring.
    await page.keyboard.press('Tab');
    const focused = (await page.evaluate(
      '({ text: document.activeElement.textContent, outline: getComputedStyle(document.activeElement).outlineStyle })',
    )) as { text: string; outline: string };
    expect(focused.text).toBe('Sign in with wallet');
    expect(focused.outline).not.toBe('none');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Wallets' }).waitFor();
    expect(page.url()).toBe(`${service.url}/console/wallets`);
    await page.locator('.cards .card', { hasText: agent.wallet.slice(0, 8).toLowerCase() }).waitFor();
    // Nothing of the session is left in storage: the token lives in the page's memory.
    const stored = await page.evaluate(
      '({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie })',
    );
    expect(stored).toEqual({ local: 0, session: 0, cookie: '' });
    await checkView(owner, '02-wallets');
  });

  it("shows a wallet's ledger equal to its balance on chain, as of a block", async () => {
    const { page } = owner;
    await page.locator('.cards .card a').first().click();
    await page.getByRole('heading', { name: /^Wallet 0x/ }).waitFor();
    await page.locator('[data-chain="8453"] tr[data-symbol="USDC"]').waitFor();
    const usdc = formatUnits(await onChain(agent.usdc, agent.wallet), 6);
    expect(await cell(page, 'USDC', 'chain')).toBe(usdc);
    expect(await cell(page, 'USDC', 'ledger')).toBe(usdc);
    await expect
      .poll(() => page.locator('caption', { hasText: /as of block \d+/ }).count())
      .toBeGreaterThan(0);
    await page.locator('figure.chart').waitFor();
    await checkView(owner, '03-wallet');
  });

  it('refuses a policy the schema refuses before sending it, publishes a valid one and shows the diff', async () => {
    const { page } = owner;
    await nav(page, 'Policies').click();
    await page.getByRole('heading', { name: 'Policies' }).waitFor();
    await page.locator(`a[href="/console/policies/${agent.wallet.toLowerCase()}"]`).click();
    await page.getByRole('heading', { name: /^Policy of/ }).waitFor();
    const editor = page.getByLabel('Policy document');
    const document = JSON.parse(await editor.inputValue()) as { spend: Record<string, unknown> };
    expect(document.spend['daily_usd']).toBe('2000');

    document.spend['daily_usd'] = 'lots';
    await editor.fill(JSON.stringify(document, null, 2));
    await page.locator('#policy-problems li', { hasText: 'spend.daily_usd' }).waitFor();
    expect(await page.getByRole('button', { name: 'Publish' }).isDisabled()).toBe(true);

    document.spend['daily_usd'] = '2500';
    await editor.fill(JSON.stringify(document, null, 2));
    await page.getByText('The document fits the schema.').waitFor();
    await page.locator('tr[data-path="spend.daily_usd"]').first().waitFor();
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('status').filter({ hasText: 'Published version 2.' }).waitFor();

    // The versions compare: version 1 against version 2, field by field.
    const row = page.locator('.diff-box tr[data-path="spend.daily_usd"]');
    await row.waitFor();
    expect(await row.innerText()).toMatch(/"2000"\s+"2500"/);
    const published = await ok(
      agent.purser.api.GET('/v1/policies', { params: { query: { wallet: agent.wallet, limit: 1 } } }),
    );
    expect(published.policies[0]).toMatchObject({ version: 2, document: { spend: { daily_usd: '2500' } } });
    await checkView(owner, '04-policy');
  });

  it('watches a conversion go from admitted to filled, slice by slice', async () => {
    const { page } = owner;
    await nav(page, 'Intents').click();
    await page.getByRole('heading', { name: 'Intents' }).waitFor();
    await page.getByText('No intents yet').waitFor();
    await checkView(owner, '05-intents-empty');

    const id = await agent.convert('800000000');
    const link = page.locator(`tr[data-intent="${id}"] a`);
    await link.waitFor({ timeout: 10_000 });
    await link.click();
    await page.getByRole('heading', { name: /^Intent 800 USDC → EURC/ }).waitFor();

    // Every status the page shows, until it shows filled.
    const seen: string[] = [];
    const badge = page.locator('.facts dd .badge').first();
    for (let i = 0; i < 600; i++) {
      const status = await badge.innerText();
      if (seen.at(-1) !== status) seen.push(status);
      if (status === 'filled' || status === 'aborted') break;
      await page.waitForTimeout(100);
    }
    expect(seen.at(-1)).toBe('filled');
    expect(seen.length).toBeGreaterThan(1);
    expect(['planned', 'executing']).toContain(seen[0]);

    const intent = await ok(agent.purser.api.GET('/v1/intents/{id}', { params: { path: { id } } }));
    const slices = (intent.report as { slices: { state: string; bought: string }[] }).slices;
    await expect.poll(() => page.locator('tr[data-slice]').count()).toBe(slices.length);
    expect(slices.length).toBeGreaterThan(1);
    // Each hash links to its transaction on the configured explorer.
    const hashes = (intent.report as { slices: { tx_hash: string }[] }).slices.map((s) => s.tx_hash);
    const links = await page
      .locator('tr[data-slice] a[href^="https://basescan.example/tx/"]')
      .evaluateAll((anchors) => anchors.map((a) => a.getAttribute('href')));
    expect(links).toEqual(hashes.map((h) => `${EXPLORER}/tx/${h}`));
    const bought = slices.reduce((sum, s) => sum + BigInt(s.bought ?? 0), 0n);
    await page.getByText(`for ${grouped(formatUnits(bought, 6))} EURC`).waitFor();
    await page.locator('figure.chart', { hasText: 'achieved against the reference' }).waitFor();
    await checkView(owner, '06-intent-filled');
  });

  it('after the fill, the books still equal the chain for both tokens', async () => {
    const { page } = owner;
    await page.goto(`${service.url}/console/wallets/${agent.wallet.toLowerCase()}`);
    // A reload signs out: the credential was in memory only.
    await page.getByRole('heading', { name: 'Sign in to the Purser console' }).waitFor();
    await page.getByRole('button', { name: 'Sign in with wallet' }).click();
    await page.getByRole('heading', { name: /^Wallet 0x/ }).waitFor();
    await page.locator('[data-chain="8453"] tr[data-symbol="EURC"]').waitFor();
    for (const [symbol, token] of [
      ['USDC', agent.usdc],
      ['EURC', agent.eurc],
    ] as const) {
      const want = formatUnits(await onChain(token, agent.wallet), 6);
      await expect.poll(() => cell(page, symbol, 'ledger'), { timeout: 15_000 }).toBe(want);
      expect(await cell(page, symbol, 'chain')).toBe(want);
    }
  });

  it('lets the operator switch a wallet off, and the owner sees its admitted conversion stop', async () => {
    const operator = await openConsole(browser, service.url);
    try {
      const op = operator.page;
      await op.getByLabel('Operator token').fill(OPERATOR_TOKEN);
      await op.getByRole('button', { name: 'Sign in as operator' }).click();
      await op.getByRole('heading', { name: 'Switches' }).waitFor();
      await op.getByText('Every switch is on').waitFor();
      await op.getByLabel('Wallet address').fill(agent.wallet);
      const reason = 'Browser test: this wallet is paused for review.';
      await op.getByLabel(/^Reason/).fill(reason);

      // Enough USDC for a second conversion, which the owner watches run.
      await ok(
        agent.purser.api.POST('/v1/dev/faucet', {
          body: { chain_id: 8453, address: agent.wallet, tokens: [{ symbol: 'USDC', amount: '1000000000' }] },
        }),
      );
      const { page } = owner;
      await nav(page, 'Intents').click();
      const id = await agent.convert('800000000');
      await page.locator(`tr[data-intent="${id}"] a`).click();
      await page.getByRole('heading', { name: /^Intent 800 USDC → EURC/ }).waitFor();
      // Once its first slice landed, the operator switches the wallet off, between two slices.
      await expect
        .poll(
          async () => {
            const intent = await ok(agent.purser.api.GET('/v1/intents/{id}', { params: { path: { id } } }));
            return ((intent.report as { slices?: unknown[] }).slices ?? []).length;
          },
          { timeout: 20_000, interval: 50 },
        )
        .toBeGreaterThan(0);
      await op.getByRole('button', { name: 'Apply' }).click();
      await op.getByRole('status').filter({ hasText: 'Execution switched off for the wallet' }).waitFor();

      const stopped = page.locator('[data-abort="EXECUTION_INTERRUPTED"]');
      await stopped.waitFor({ timeout: 20_000 });
      expect(await stopped.innerText()).toContain(reason);
      expect(await page.locator('.facts dd .badge').first().innerText()).toBe('aborted');
      expect(await page.locator('tr[data-slice]').count()).toBeGreaterThan(0);
      await checkView(owner, '09-intent-stopped');

      // The operator's list says what is off, why, and who set it.
      const row = op.locator(`tr[data-switch="wallet:${agent.wallet.toLowerCase()}"]`);
      await row.waitFor();
      expect(await row.innerText()).toContain(reason);
      await checkView(operator, '10-ops-switches');

      // Back on: the same form, execution checked.
      await op.getByLabel('Wallet address').fill(agent.wallet);
      await op.getByLabel('Execution on').check();
      await op.getByRole('button', { name: 'Apply' }).click();
      await op.getByText('Every switch is on').waitFor();

      for (const [link, heading, name] of [
        ['Queues', 'Job queues', '11-ops-queues'],
        ['Accounts', 'Accounts', '12-ops-accounts'],
        ['Alerts', 'Alerts', '13-ops-alerts'],
      ] as const) {
        await nav(op, link).click();
        await op.getByRole('heading', { name: heading }).waitFor();
        await op.locator('table, .empty, .cards').first().waitFor();
        await checkView(operator, name);
      }
      // The owner's account is among the accounts, with its prepaid balance.
      await nav(op, 'Accounts').click();
      const account = op.locator(`tr[data-address="${agent.owner.address.toLowerCase()}"]`);
      await account.waitFor();
      const balance = await ok(agent.purser.api.GET('/v1/balance'));
      const [whole, fraction = ''] = balance.balance_usd.split('.');
      expect(await account.innerText()).toContain(`$${whole}.${fraction.replace(/0+$/, '').padEnd(2, '0')}`);
    } finally {
      await operator.close();
    }
  });

  it('lists an intent waiting for approval, and the owner approves it with the browser wallet; it then fills', async () => {
    const { page } = owner;
    // The owner makes its own wallet the approver of anything above 50 USD.
    await ok(
      agent.purser.api.PUT('/v1/policies', {
        body: {
          version: 1,
          wallet: agent.wallet,
          chain_id: 8453,
          execution: { max_slippage_bps: 100 },
          spend: {
            per_tx_usd: '1000',
            daily_usd: '2500',
            approvals: { above_usd: '50', approvers: [agent.owner.address], quorum: 1, ttl_minutes: 30 },
          },
        },
      }),
    );
    const id = await agent.convert('100000000');
    await nav(page, 'Approvals').click();
    await page.getByRole('heading', { name: 'Approvals' }).waitFor();
    const panel = page.locator(`[data-approval="${id}"]`);
    await panel.waitFor();
    expect(await panel.getAttribute('data-state')).toBe('waiting');
    expect(await panel.innerText()).toContain('0 of 1 approvals');
    await checkView(owner, '16-approvals');
    await panel.getByRole('button', { name: 'Sign approval with wallet' }).click();

    const read = () => ok(agent.purser.api.GET('/v1/intents/{id}', { params: { path: { id } } }));
    await expect.poll(async () => (await read()).status, { timeout: 30_000 }).toBe('filled');
    const approval = (await read()).report['approval'] as {
      state: string;
      signatures: { approver: string }[];
    };
    expect(approval.state).toBe('approved');
    expect(approval.signatures.map((s) => s.approver)).toEqual([agent.owner.address.toLowerCase()]);
    await page.getByText('Nothing waits for approval').waitFor();
  });

  it('revokes a delegation and shows the calls that remove it from the smart account', async () => {
    const { page } = owner;
    await nav(page, 'Delegations').click();
    await page.getByRole('heading', { name: 'Delegations' }).waitFor();
    const card = page.locator(`[data-delegation="${agent.delegationId}"]`);
    await card.waitFor();
    expect(await card.getAttribute('data-status')).toBe('active');
    await checkView(owner, '14-delegations');
    page.once('dialog', (dialog) => void dialog.accept());
    await card.getByRole('button', { name: 'Revoke' }).click();
    const unwind = page.locator(`[data-revoked="${agent.delegationId}"]`);
    await unwind.waitFor();
    expect(await unwind.innerText()).toContain('Uninstall the permission');
    await expect.poll(() => card.getAttribute('data-status')).toBe('revoked');
    const delegation = await ok(
      agent.purser.api.GET('/v1/delegations/{id}', { params: { path: { id: agent.delegationId } } }),
    );
    expect(delegation.status).toBe('revoked');
    await checkView(owner, '15-delegation-revoked');
  });

  it("shows an API's error as it gave it: message, what to do", async () => {
    const cp = await openConsole(browser, service.url);
    try {
      await cp.page.getByLabel('API key or session token').fill('pk_not_a_real_key');
      await cp.page.getByRole('button', { name: 'Use this key' }).click();
      const alert = cp.page.getByRole('alert');
      await alert.waitFor();
      const text = await alert.innerText();
      expect(text).toContain('UNAUTHORIZED');
      // The remediation line is the API's own, not the console's.
      const body = await fetch(`${service.url}/v1/auth/session`, {
        headers: { authorization: 'Bearer pk_not_a_real_key' },
      }).then((r) => r.json() as Promise<{ message: string; remediation: string }>);
      expect(text).toContain(body.message);
      expect(text).toContain(body.remediation);
      await checkView(cp, '07-sign-in-error');
    } finally {
      await cp.close();
    }
  });

  it('is readable 360 pixels wide: nothing wider than the screen but the tables that scroll', async () => {
    const cp = await openConsole(browser, service.url, { wallet: agent.owner, width: 360, path: '/intents' });
    try {
      await cp.page.getByRole('button', { name: 'Sign in with wallet' }).click();
      await cp.page.getByRole('heading', { name: 'Intents' }).waitFor();
      await cp.page.locator('tr[data-intent]').first().waitFor();
      const width = (await cp.page.evaluate('document.documentElement.scrollWidth')) as number;
      expect(width).toBeLessThanOrEqual(360);
      await checkView(cp, '08-intents-360px');
    } finally {
      await cp.close();
    }
  });
});
