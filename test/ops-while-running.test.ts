// `purser ops …` while `purser serve` runs on the embedded database, as a new user meets it: the
// server holds the database (its lock file), so the command goes to the running server instead.

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { devnetToken } from '../src/devnet/devnet.ts';
import {
  http,
  REPO_ROOT,
  serviceEnv,
  startServiceProcess,
  waitUntilReady,
  type ServiceProcess,
} from './support/service-process.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'purser-ops-'));
// The suite's devnet stands in for Base (sign-in checks signatures there; top-up terms name its USDC).
const devnet = inject('devnet');
const env = {
  PURSER_DATA_DIR: dataDir,
  RUN_WORKERS: 'false',
  RPC_URL_8453: devnet.chains[8453]?.rpcUrl ?? '',
  DEVNET_TOKEN_ADDRESSES: JSON.stringify({ 8453: { USDC: devnetToken(devnet, 8453, 'USDC').address } }),
};
let service: ServiceProcess;

/** `purser ops <args>` as a separate process on the same configuration. */
function ops(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', 'ops', ...args],
      { cwd: REPO_ROOT, env: serviceEnv(env), timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

beforeAll(async () => {
  service = await startServiceProcess({ env, startTimeoutMs: 90_000 });
  await waitUntilReady(service);
}, 120_000);

afterAll(async () => {
  await service?.stop('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
});

describe('purser ops while the development server runs on the embedded database', () => {
  it('raises an account’s prepaid cap: the account sees it in its top-up terms', async () => {
    // A new user signs in with a wallet.
    const wallet = privateKeyToAccount(generatePrivateKey());
    const challenge = JSON.parse(
      (await http(`${service.url}/v1/auth/challenge`, { method: 'POST', body: { address: wallet.address } }))
        .text,
    ) as { message: string };
    const verified = await http(`${service.url}/v1/auth/verify`, {
      method: 'POST',
      body: {
        message: challenge.message,
        signature: await wallet.signMessage({ message: challenge.message }),
      },
    });
    expect(verified.status, verified.text).toBe(200);
    const { token } = JSON.parse(verified.text) as { token: string };
    const terms = async () => {
      const res = await http(`${service.url}/v1/balance/topups/terms`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status, res.text).toBe(200);
      return JSON.parse(res.text) as { account_cap_usd: string };
    };
    expect((await terms()).account_cap_usd).toBe('1000');

    const raised = await ops('account-cap', wallet.address, '2500');
    expect(raised.stderr).toBe('');
    expect(raised.code, raised.stderr).toBe(0);
    expect(raised.stdout).toContain('"cap_usd": "2500"');
    expect((await terms()).account_cap_usd).toBe('2500');
  });

  it('switches metering off, seen on GET /v1/ops/billing with the run’s operator token', async () => {
    const off = await ops('metering', 'off');
    expect(off.code, off.stderr).toBe(0);
    expect(JSON.parse(off.stdout)).toMatchObject({ metering_enforced: false });

    const file = join(dataDir, 'operator.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const { token, url } = JSON.parse(readFileSync(file, 'utf8')) as { token: string; url: string };
    expect(url).toBe(service.url);
    const billing = await http(`${service.url}/v1/ops/billing`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(billing.status, billing.text).toBe(200);
    expect(JSON.parse(billing.text)).toMatchObject({ metering_enforced: false });
    // The token is never in the server's output.
    expect(service.output.join('\n')).not.toContain(token);
  });

  it('a usage error sends nothing and exits 64; an unknown account is refused by the server', async () => {
    const bad = await ops('float-cap', 'lots');
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('expected a USD amount');
    const unknown = await ops('account-cap', `0x${'ab'.repeat(20)}`, '10');
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toContain('NOT_FOUND');
  });

  it('after the server stops, the command opens the database itself again', async () => {
    expect((await service.stop('SIGTERM')).code).toBe(0);
    expect(() => statSync(join(dataDir, 'operator.json'))).toThrow();
    const direct = await ops('billing');
    expect(direct.code, direct.stderr).toBe(0);
    expect(JSON.parse(direct.stdout)).toMatchObject({ metering_enforced: false });
  });
});
