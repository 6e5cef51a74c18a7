// `npm run demo`, as a new user runs it: against a Purser that already runs, and with none, when it
// starts one on the embedded default (its own database and devnet) and walks the whole flow to a
// filled conversion. Every request and answer is printed, no credential or secret in full.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SESSION_TOKEN_PREFIX } from '../src/modules/auth/index.ts';
import { startListeningService, type ListeningService } from './support/listening-service.ts';
import { REPO_ROOT, serviceEnv } from './support/service-process.ts';

const devnet = inject('devnet');
let service: ListeningService;

beforeAll(async () => {
  service = await startListeningService(devnet);
});
afterAll(async () => {
  await service?.close();
});

function npmRunDemo(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', 'demo'], { cwd: REPO_ROOT, env: serviceEnv(env) });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

/** The flow's steps, in order, as the printed requests show them. */
const STEPS = [
  '→ POST /v1/auth/challenge',
  '→ POST /v1/auth/verify',
  '→ PUT /v1/webhooks/endpoint',
  '→ POST /v1/dev/kernel-accounts',
  '→ PUT /v1/policies',
  '→ POST /v1/delegations/prepare',
  '→ POST /v1/balance/topups',
  '→ POST /v1/quotes',
  '→ POST /v1/intents',
  '→ GET /v1/statements',
];

function expectWholeFlow(out: string) {
  const at = STEPS.map((step) => out.indexOf(step));
  expect(
    at.every((i) => i >= 0),
    out.slice(-2000),
  ).toBe(true);
  expect([...at].sort((a, b) => a - b)).toEqual(at);
  expect(out).toContain('webhook received: intent.filled (signature verified)');
  expect(out).toMatch(/intent: +filled, sold 800000000 USDC base units for [1-9]\d* EURC base units/);
  // The session token and the webhook secret are printed cut short, never whole.
  expect(out).toContain('(hidden)');
  expect(out).not.toMatch(new RegExp(`${SESSION_TOKEN_PREFIX}[A-Za-z0-9_-]{20,}`));
}

describe('npm run demo', () => {
  it('uses the Purser that runs and walks the flow to a filled conversion', async () => {
    const { code, out } = await npmRunDemo({ PURSER_URL: service.url });
    expect(code, out.slice(-2000)).toBe(0);
    expect(out).toContain(`Using the Purser that answers at ${service.url}`);
    expectWholeFlow(out);
  }, 180_000);

  it('starts Purser on the embedded default when none runs, and stops it after', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'purser-demo-'));
    try {
      const { code, out } = await npmRunDemo({
        PORT: '0',
        DEVNET: 'true',
        DEVNET_BASE_PORT: '0',
        PURSER_DATA_DIR: dataDir,
      });
      expect(code, out.slice(-2000)).toBe(0);
      expect(out).toMatch(
        /starting one on the embedded default[\s\S]*Purser is listening on http:\/\/127\.0\.0\.1:\d+/,
      );
      expectWholeFlow(out);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);

  it('exits non-zero, saying why, when PURSER_URL names a Purser that does not answer', async () => {
    const { code, out } = await npmRunDemo({ PURSER_URL: 'http://127.0.0.1:9' });
    expect(code).toBe(69);
    expect(out).toContain('Nothing answers at PURSER_URL=http://127.0.0.1:9');
  });
});
