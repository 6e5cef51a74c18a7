// The console in a real browser: Debian's Chromium driven by playwright-core, a wallet injected
// as an EIP-1193 provider backed by a viem account, axe-core run in every view, a screenshot of
// each view kept as an artifact, and any Content-Security-Policy refusal or page error failing
// the test that caused it.

import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { hexToString, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { expect } from 'vitest';
import { signApproval } from '../../packages/sdk/src/index.ts';
import { REPO_ROOT } from '../support/service-process.ts';
import { launchBrowser } from './chromium.ts';

export { launchBrowser };

/** Where the screenshots go (kept by CI as artifacts; ignored by git). */
export const ARTIFACTS = join(REPO_ROOT, 'test-results', 'console');

export interface ConsolePage {
  page: Page;
  /** Content-Security-Policy refusals and uncaught errors seen so far. */
  problems: string[];
  close(): Promise<void>;
}

/**
 * A new browser context on the console, with `wallet` (when given) as `window.ethereum`: it shares
 * its address and signs personal_sign requests with the viem account, as a browser wallet would.
 */
export async function openConsole(
  browser: Browser,
  url: string,
  options: { wallet?: PrivateKeyAccount; width?: number; path?: string } = {},
): Promise<ConsolePage> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: 900 },
  });
  const wallet = options.wallet;
  if (wallet) {
    await context.exposeBinding('__testWallet', async (_source, method: string, params: unknown[]) => {
      if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [wallet.address];
      if (method === 'eth_chainId') return '0x2105';
      if (method === 'eth_signTypedData_v4') {
        const [, json] = params as [string, string];
        const { types, ...typed } = JSON.parse(json) as { types: Record<string, unknown> };
        const { EIP712Domain: _domain, ...rest } = types;
        return signApproval(wallet, { typed_data: { ...typed, types: rest } });
      }
      if (method === 'personal_sign') {
        const [data] = params as [Hex];
        return wallet.signMessage({ message: hexToString(data) });
      }
      throw new Error(`the test wallet does not do ${method}`);
    });
    // Runs in the page before its own scripts, as a wallet extension's content script would.
    await context.addInitScript({
      content: `window.ethereum = {
        isTestWallet: true,
        request: ({ method, params }) => window.__testWallet(method, params ?? []),
        on: () => undefined,
        removeListener: () => undefined,
      };`,
    });
  }
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text()))
      problems.push(msg.text());
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  await page.goto(`${url}/console${options.path ?? ''}`);
  return { page, problems, close: () => context.close() };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: unknown[];
}

/**
 * axe-core over the page as it is now: no serious or critical violation. The script goes in
 * through the DevTools protocol (the console's policy would refuse an injected script tag).
 */
export async function expectAccessible(page: Page, view: string): Promise<void> {
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(
    `axe.run(document).then((r) => r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target),
    })))`,
  )) as AxeViolation[];
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious, `${view}: ${JSON.stringify(serious, null, 2)}`).toEqual([]);
}

/** A full-page screenshot of the view, kept as an artifact. */
export async function snapshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Checks a view: accessible, no policy refusal or page error so far; then its screenshot. */
export async function checkView(cp: ConsolePage, name: string): Promise<void> {
  await expectAccessible(cp.page, name);
  expect(cp.problems, name).toEqual([]);
  await snapshot(cp.page, name);
}

/**
 * For an afterEach: when the test failed, the page as it was (a screenshot, and its text in the
 * report), so a failure says what the user would have seen.
 */
export async function showPageOnFailure(
  task: { name: string; result?: { state?: string } },
  cp: ConsolePage | undefined,
) {
  if (task.result?.state !== 'fail' || !cp) return;
  await snapshot(cp.page, `failed-${task.name.slice(0, 40).replace(/\W+/g, '-')}`);
  console.error(`The page at ${cp.page.url()} showed:\n${await cp.page.locator('body').innerText()}`);
}
