// The README's examples, run as written, top to bottom, against a listening server on the suite's
// devnet: as a new user does it, in one terminal session. Shell blocks run with bash (what one block
// exports, the next sees), JavaScript blocks are saved under the file name their first line gives
// and run by the shell block that calls them. A block that must not run says so in an HTML comment
// just before it: `<!-- not run: reason -->`. README_TEST_VERBOSE=1 prints every block and its
// output.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { getAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testConfig } from '../src/config.ts';
import { devnetToken } from '../src/devnet/devnet.ts';
import { devnetKernelAccount } from '../src/devnet/kernel-accounts.ts';
import { createJsonRpcBundler } from '../src/adapters/bundler/json-rpc.ts';
import { createWorker, type JobWorker } from '../src/core/jobs/index.ts';
import { devnetBundlerUrls } from '../src/devnet/devnet.ts';
import { CHAIN_WATCH_JOB, jobHandlers, schedulesFor } from '../src/jobs.ts';
import { EXECUTE_JOB } from '../src/modules/intents/index.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { walkKeeper, withKeeperSteps } from './support/keeper.ts';
import { watchConfig } from './support/chain-watch.ts';
import { devnetKernelConfig } from './support/devnet-deps.ts';
import { capturedLog } from './support/log-lines.ts';
import { PAYMENTS_CHAIN, paymentsSetup } from './support/payments.ts';
import { REPO_ROOT } from './support/service-process.ts';

interface ReadmeBlock {
  /** The fence's info string: sh, js, text… */
  lang: string;
  code: string;
  /** 1-based line of the opening fence in README.md. */
  line: number;
  /** The reason given by a `<!-- not run: reason -->` comment just before the block. */
  notRun?: string;
}

/** Every fenced code block of a Markdown document, in order. */
function readmeBlocks(markdown: string): ReadmeBlock[] {
  const lines = markdown.split('\n');
  const blocks: ReadmeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i] ?? '');
    if (!open) continue;
    let before = i - 1;
    while (before >= 0 && (lines[before] ?? '').trim() === '') before--;
    const marker = /^<!--\s*not run:\s*(.+?)\s*-->$/.exec((lines[before] ?? '').trim());
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end] ?? '')) end++;
    if (end >= lines.length) throw new Error(`README.md:${i + 1}: the code block is never closed`);
    blocks.push({
      lang: open[1] ?? '',
      code: `${lines.slice(i + 1, end).join('\n')}\n`,
      line: i + 1,
      ...(marker?.[1] ? { notRun: marker[1] } : {}),
    });
    i = end;
  }
  return blocks;
}

const SHELL = ['sh', 'bash', 'shell'];
const SCRIPT = ['js', 'mjs', 'javascript'];
/** Blocks that show output or documents, never run. */
const SHOWN = ['text', 'json'];

interface Run {
  block: ReadmeBlock;
  code: number | null;
  stdout: string;
  stderr: string;
  /** HTTP statuses of every curl call of the block, in order. */
  statuses: number[];
  /** The shell's exported variables after the block. */
  vars: Record<string, string>;
}

interface Expectation {
  /** Text that names the block (unique among the blocks that run). */
  match: string;
  /** Statuses allowed besides 2xx. */
  allow?: number[];
  check: (run: Run) => void | Promise<void>;
}

const devnet = inject('devnet');
const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
let t: TestApp;
let worker: JobWorker | undefined;
let port = 0;
let work = '';
const stateFile = () => join(work, 'shell-state.sh');
/** The API key the sign-in script made, which the rotation example replaces. */
let rotatedFrom = { id: '', token: '' };

/** Every line the service logged during the walk, parsed. */
const { log: serviceLog, lines: logLines } = capturedLog();

beforeAll(async () => {
  const setup = await paymentsSetup(devnet, testConfig());
  t = await createTestApp({
    config: {
      ...setup.config,
      kernel: devnetKernelConfig(devnet, testConfig()),
      // The chain watcher as the devnet runs it: no confirmations, a short grace period.
      chainWatch: watchConfig({ graceMs: 3_000, everySeconds: 1 }),
    },
    deps: {
      ...setup.deps,
      bundler: createJsonRpcBundler({ urls: devnetBundlerUrls(devnet) }),
      log: serviceLog,
    },
  });
  // The executor's worker, as `npm start` runs it: admitted intents are taken up at once.
  worker = createWorker({
    db: t.db.db,
    clock: t.deps.clock,
    log: t.deps.log,
    // As under npm start, the market recovers between slices (the devnet's arbitrage keeper).
    handlers: withKeeperSteps(
      {
        [EXECUTE_JOB]: jobHandlers(t.deps)[EXECUTE_JOB]!,
        [CHAIN_WATCH_JOB]: jobHandlers(t.deps)[CHAIN_WATCH_JOB]!,
      },
      walkKeeper(devnet),
    ),
    schedules: schedulesFor(t.deps.config).filter((s) => s.jobName === CHAIN_WATCH_JOB),
    pollIntervalMs: 100,
  });
  await worker.start();
  await t.app.fastify.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.fastify.server.address() as AddressInfo).port;
  // The user's working directory: scripts there resolve viem from the clone's node_modules.
  work = mkdtempSync(join(tmpdir(), 'purser-readme-'));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(work, 'node_modules'), 'dir');
  writeFileSync(stateFile(), '');
});
afterAll(async () => {
  await worker?.stop();
  await t?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A clean environment: what a new terminal has, plus PORT as the README tells users to set it. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: work,
    LANG: 'C.UTF-8',
    PORT: String(port),
    ...extra,
  };
}

function exec(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Exported variables from `export -p` output (`declare -x NAME="value"`). */
function parseExports(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const m of text.matchAll(/^declare -x ([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"$/gm)) {
    vars[m[1] as string] = (m[2] as string).replace(/\\(.)/g, '$1');
  }
  return vars;
}

/** One shell block in the session so far: the variables exported before it, curl's statuses noted. */
async function runShell(block: ReadmeBlock): Promise<Run> {
  const script = join(work, `block-${block.line}.sh`);
  writeFileSync(
    script,
    [
      `source ${stateFile()}`,
      // Each curl call also writes its HTTP status to stderr, where the README's output is untouched.
      `curl() { command curl -w '%{stderr}HTTP %{http_code}\\n' "$@"; }`,
      'set -euo pipefail',
      block.code,
      `export -p > ${stateFile()}`,
      '',
    ].join('\n'),
  );
  const { code, stdout, stderr } = await exec('bash', [script], userEnv());
  const statuses = [...stderr.matchAll(/^HTTP (\d{3})$/gm)].map((m) => Number(m[1]));
  return { block, code, stdout, stderr, statuses, vars: parseExports(readFileSync(stateFile(), 'utf8')) };
}

const tokenOnChain = async (symbol: 'USDC' | 'EURC', address: string) => {
  const chain = t.deps.chain;
  if (!chain) throw new Error('no chain port');
  return chain.erc20Balance(
    PAYMENTS_CHAIN,
    devnetToken(devnet, PAYMENTS_CHAIN, symbol).address,
    getAddress(address),
  );
};
const usdcOnChain = (address: string) => tokenOnChain('USDC', address);

/** What the walk must show, block by block; every entry must match exactly one block that runs. */
const expectations: Expectation[] = [
  {
    match: 'export BASE=',
    check: ({ vars }) => expect(vars.BASE).toBe(`http://127.0.0.1:${port}`),
  },
  {
    match: 'Compare the venues',
    check: ({ stdout, statuses }) => {
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      expect(stdout).toContain('"USDC"');
      expect(stdout).toContain('"chain_id": 8453');
      // The quote: the devnet's deep Uniswap v3 pool is best for 5,000 USDC, in one slice.
      expect(stdout).toContain('"best": "uniswap-v3"');
      expect(stdout).toContain('"slices": 1');
      expect(stdout).toContain('"abort": null');
    },
  },
  {
    match: 'Idempotency-Key',
    check: ({ stdout, statuses }) => {
      expect(statuses).toHaveLength(1);
      expect(stdout).toMatch(/^HTTP\/1\.1 20[01]/);
    },
  },
  {
    match: '"adress"',
    allow: [400],
    check: ({ stdout, statuses }) => {
      expect(statuses).toEqual([400]);
      expect(JSON.parse(stdout)).toMatchObject({ code: 'INVALID_REQUEST' });
    },
  },
  {
    match: 'node sign-in.mjs',
    check: ({ vars, stdout, stderr }) => {
      expect(vars.AGENT_KEY, stderr).toMatch(/^0x[0-9a-f]{64}$/);
      const wallet = privateKeyToAccount(vars.AGENT_KEY as `0x${string}`).address;
      expect(vars.WALLET).toBe(wallet);
      expect(stdout.trim()).toBe(wallet);
      expect(vars.TOKEN).toMatch(/^pss_/);
      expect(vars.API_KEY).toMatch(/^psk_/);
      expect(vars.API_KEY_ID).toMatch(/^key_/);
      rotatedFrom = { id: vars.API_KEY_ID ?? '', token: vars.API_KEY ?? '' };
      // A new wallet: the script says so and prints the key to keep.
      expect(stderr).toContain(`export AGENT_KEY=${vars.AGENT_KEY}`);
      expect(stderr).toContain(`Signed in as ${wallet}`);
    },
  },
  {
    match: '/v1/keys/rotate',
    check: ({ stdout, statuses, vars }) => {
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      // Who am I: the session has every scope, the API key read only.
      expect(stdout).toMatch(/"kind": "key",\s*"scopes": \[\s*"read"\s*\]/);
      // The rotated key took the place of the old one in the shell.
      expect(vars.API_KEY).toMatch(/^psk_/);
      expect(vars.API_KEY_ID).toMatch(/^key_/);
      expect(vars.API_KEY_ID).not.toBe(rotatedFrom.id);
      expect(vars.API_KEY).not.toBe(rotatedFrom.token);
      expect(stdout).toContain(`{"id":"${vars.API_KEY_ID}","status":"active"`);
      expect(stdout).toContain(`{"id":"${rotatedFrom.id}","status":"active"`);
    },
  },
  {
    match: '/v1/policies/defaults',
    check: ({ stdout, statuses, vars }) => {
      expect(statuses).toEqual([200, 201, 200, 200]);
      // The platform's spend defaults, then the published policy of the caller's own wallet.
      expect(stdout).toMatch(/^\{\s*"per_tx_usd": "\d/);
      expect(stdout).toContain(`"wallet": "${vars.WALLET?.toLowerCase()}"`);
      expect(stdout).toContain('"allowed": false');
      expect(stdout).toContain('"code": "BUDGET_EXCEEDED"');
    },
  },
  {
    match: '/v1/fees',
    check: ({ stdout }) => expect(stdout).toContain('{"balance_usd":"0.000000","currency":"USD"}'),
  },
  {
    match: '/v1/dev/faucet',
    check: async ({ stdout, vars }) => {
      expect(stdout).toContain(`"chain_id": ${PAYMENTS_CHAIN}`);
      expect(stdout).toContain('"primary_type": "TransferWithAuthorization"');
      expect(await usdcOnChain(vars.WALLET ?? '')).toBe(100_000_000n);
    },
  },
  {
    match: 'node topup.mjs',
    check: async ({ stdout, vars }) => {
      expect(stdout).toMatch(/^201 /);
      expect(stdout).toContain('"status": "settled"');
      expect(stdout).toContain('{"balance_usd":"5.000000","currency":"USD"}');
      expect(await usdcOnChain(vars.WALLET ?? '')).toBe(95_000_000n);
    },
  },
  {
    match: '/v1/dev/kernel-accounts',
    check: async ({ stdout, statuses, vars }) => {
      expect(statuses).toEqual([200, 201]);
      const owner = getAddress(vars.WALLET ?? '');
      const kernel = await devnetKernelAccount(devnet, PAYMENTS_CHAIN, owner);
      expect(vars.SMART_ACCOUNT).toBe(kernel.address);
      expect(kernel.deployed).toBe(false);
      expect(JSON.parse(stdout)).toEqual({ wallet: kernel.address.toLowerCase(), version: 1 });
    },
  },
  {
    match: 'node delegate.mjs',
    check: ({ stdout, statuses }) => {
      expect(statuses).toEqual([200]);
      const [confirmed, listed] = stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(confirmed).toMatchObject({ status: 'active', account_deployed: false });
      expect(listed).toMatchObject({ status: 'active', session_key: testConfig().executorAddress });
    },
  },
  {
    match: '/v1/intents',
    check: async ({ stdout, statuses, vars }) => {
      // The admission, the polls while the executor works, the last read, the balance.
      expect(statuses[0]).toBe(201);
      expect(statuses.slice(1).every((s) => s === 200)).toBe(true);
      const lines = stdout.trim().split('\n');
      // The executor (a worker, as under npm start) deployed the account, installed the
      // delegation and swapped: filled, in three slices (the keeper restoring the pool between
      // them), the fee kept.
      const ended = await t.db.db
        .selectFrom('intents')
        .select('params')
        .where('id', '=', vars.INTENT ?? '')
        .executeTakeFirst();
      expect(JSON.parse(lines[0] ?? ''), JSON.stringify(ended?.params)).toEqual({
        status: 'filled',
        sold: '800000000',
        slices: 3,
      });
      expect(lines[1]).toBe('"4.950000"');
      const row = await t.db.db
        .selectFrom('intents')
        .select(['status', 'wallet'])
        .where('id', '=', vars.INTENT ?? '')
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ status: 'filled', wallet: vars.SMART_ACCOUNT?.toLowerCase() });
      // On chain: the account exists now, and it holds 200 of its 1,000 USDC and some EURC.
      const account = getAddress(vars.SMART_ACCOUNT ?? '');
      expect(
        (await devnetKernelAccount(devnet, PAYMENTS_CHAIN, getAddress(vars.WALLET ?? ''))).deployed,
      ).toBe(true);
      expect(await usdcOnChain(account)).toBe(200_000_000n);
      expect(await tokenOnChain('EURC', account)).toBeGreaterThan(0n);
    },
  },
  {
    match: '/v1/account/export',
    check: ({ stdout }) =>
      expect(JSON.parse(stdout)).toMatchObject({
        sections: expect.arrayContaining(['api_keys', 'ledger_entries', 'policies', 'payment_credits']),
        api_keys: ['reporting', 'reporting'],
        top_ups: ['5000000'],
      }),
  },
  {
    match: 'Limit orders',
    check: ({ stdout, statuses }) => {
      expect(statuses).toEqual([201, 200]);
      expect(stdout).toContain('"charged_usd":"1"');
      expect(stdout).toContain('{"balance_usd":"3.950000","currency":"USD"}');
    },
  },
  {
    match: '/v1/account/panic',
    check: ({ statuses }) => expect(statuses).toHaveLength(2),
  },
  {
    match: '/v1/statements',
    check: async ({ stdout, vars }) => {
      const lines = stdout.trim().split('\n');
      const holding = JSON.parse(lines.pop()!) as Record<string, unknown>;
      const row = JSON.parse(lines.pop()!) as Record<string, unknown>;
      expect(JSON.parse(lines.join('\n'))).toMatchObject({
        content_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      });
      // The wallet's USDC row closes at what the chain holds, and the holdings read says the same.
      const held = (await usdcOnChain(vars.WALLET!)).toString();
      expect(row).toMatchObject({ symbol: 'USDC', decimals: 6, closing: held });
      expect(holding).toEqual({ ledger: held, chain: held, unconfirmed: '0' });
    },
  },
  {
    match: 'DELETE $BASE/v1/auth/session',
    allow: [401],
    check: ({ stdout, statuses }) => {
      expect(statuses).toEqual([200, 401, 200]);
      expect(stdout).toContain('"revoked":true');
      expect(stdout).toContain('"code": "UNAUTHORIZED"');
      // The API key still works.
      expect(stdout).toContain('{"balance_usd":"3.950000","currency":"USD"}');
    },
  },
];

describe('README.md', () => {
  const blocks = readmeBlocks(readme);

  it('marks every code block: shell and JavaScript run unless marked, output blocks say `text`', () => {
    for (const block of blocks) {
      expect([...SHELL, ...SCRIPT, ...SHOWN], `README.md:${block.line}`).toContain(block.lang);
    }
    const runnable = blocks.filter((b) => [...SHELL, ...SCRIPT].includes(b.lang) && !b.notRun);
    expect(runnable.length).toBeGreaterThanOrEqual(expectations.length + 2);
    // The sections a newcomer walks through all hold examples that run.
    expect(readme).toMatch(
      /## What is not built yet[\s\S]*quotes[\s\S]*intents[\s\S]*\*\*executed\*\* by the executor/,
    );
    expect(readme).toMatch(/## What is not built yet[\s\S]*rebalances[\s\S]*prediction-market orders/);
  });

  it('runs its examples as written, top to bottom, and each one does what the README says', async () => {
    const runs: Run[] = [];
    const saved: string[] = [];
    for (const block of blocks) {
      if (block.notRun || SHOWN.includes(block.lang)) continue;
      if (SCRIPT.includes(block.lang)) {
        // The script's first line names the file the README tells the user to save it as.
        const name = /^\/\/ ([\w.-]+\.m?js)\b/.exec(block.code)?.[1];
        expect(
          name,
          `README.md:${block.line}: a script's first line is "// <file name>.mjs — …"`,
        ).toBeDefined();
        writeFileSync(join(work, name as string), block.code);
        saved.push(name as string);
        continue;
      }
      const run = await runShell(block);
      const where = `README.md:${block.line}\n${block.code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
      expect(run.code, where).toBe(0);
      const matching = expectations.filter((e) => block.code.includes(e.match));
      expect(matching.length, `${where}\nmatches ${matching.length} expectations`).toBeLessThanOrEqual(1);
      const expectation = matching[0];
      for (const status of run.statuses) {
        if (status >= 200 && status < 300) continue;
        expect(expectation?.allow ?? [], `${where}\nHTTP ${status}`).toContain(status);
      }
      runs.push(run);
      if (process.env.README_TEST_VERBOSE) console.log(where);
      if (expectation) await expectation.check(run);
    }
    // Every listed example ran exactly once, and every saved script was run by a later block.
    for (const e of expectations) {
      expect(runs.filter((r) => r.block.code.includes(e.match)).length, e.match).toBe(1);
    }
    expect(saved).toEqual(['sign-in.mjs', 'topup.mjs', 'delegate.mjs']);
    for (const name of saved) {
      expect(
        runs.some((r) => r.block.code.includes(`node ${name}`)),
        name,
      ).toBe(true);
    }
  });

  it("logs the walk's intent once per step, with its ids, and no secret anywhere", async () => {
    // The event lines of the last commits are written a turn of the event loop later.
    await new Promise((r) => setImmediate(r));
    const vars = parseExports(readFileSync(stateFile(), 'utf8'));
    const events = (kind: string, subject: string) =>
      logLines.filter((l) => l['event'] === kind && l['subject'] === subject);
    const intents = await t.db.db
      .selectFrom('intents')
      .select(['id', 'account_id', 'wallet', 'status', 'report'])
      .execute();
    const filled = intents.filter((i) => i.status === 'filled');
    expect(filled.length).toBeGreaterThan(0);
    for (const intent of filled) {
      const [planned, ...morePlanned] = events('intent.planned', intent.id);
      expect(morePlanned).toEqual([]);
      expect(planned).toMatchObject({ level: 30, msg: 'intent.planned', account_id: intent.account_id });
      expect(planned?.['event_id']).toMatch(/^evt_/);
      expect(events('intent.executing', intent.id)).toHaveLength(1);
      const slices = (intent.report as { slices: { seq: number }[] }).slices;
      const settled = events('intent.slice_settled', intent.id);
      expect(settled.map((l) => (l['data'] as { seq: number }).seq).sort()).toEqual(
        slices.map((s) => s.seq).sort(),
      );
      const [done, ...moreDone] = events('intent.filled', intent.id);
      expect(moreDone).toEqual([]);
      expect(done?.['data']).toMatchObject({ id: intent.id, wallet: intent.wallet, slices: slices.length });
    }
    // The admission's event line is its request's line: a 201 to POST /v1/intents writes no other.
    const admissions = logLines.filter(
      (l) =>
        (l['req'] as { method?: string; url?: string } | undefined)?.method === 'POST' &&
        (l['req'] as { url: string }).url.startsWith('/v1/intents') &&
        (l['res'] as { statusCode: number }).statusCode === 201,
    );
    expect(admissions).toEqual([]);
    // Other requests keep their line; the money moved is in the events' lines.
    expect(logLines.some((l) => l['msg'] === 'request completed')).toBe(true);
    expect(logLines.some((l) => l['event'] === 'balance.credited')).toBe(true);

    // No secret of the walk in any line: keys and tokens the user holds, the server's own.
    const config = t.deps.config;
    const secrets = [
      vars.AGENT_KEY,
      vars.AGENT_KEY?.slice(2),
      vars.TOKEN,
      vars.API_KEY,
      rotatedFrom.token,
      config.operatorToken,
      config.payments.relayerPrivateKey?.slice(2),
      ...config.sealingKeys.map((k) => k.key),
    ].filter((x): x is string => typeof x === 'string' && x.length >= 16);
    expect(secrets.length).toBeGreaterThanOrEqual(6);
    const text = logLines.map((l) => JSON.stringify(l)).join('\n');
    expect(logLines.length).toBeGreaterThan(50);
    for (const secret of secrets)
      expect(text.includes(secret), `a secret (${secret.slice(0, 6)}…) was logged`).toBe(false);
  });

  it('sign-in.mjs keeps the wallet of AGENT_KEY and does not print it again', async () => {
    const vars = parseExports(readFileSync(stateFile(), 'utf8'));
    expect(vars.AGENT_KEY).toBeDefined();
    const again = await exec('node', ['sign-in.mjs'], userEnv({ AGENT_KEY: vars.AGENT_KEY ?? '' }));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`export WALLET=${vars.WALLET}`);
    expect(again.stdout).toMatch(/^export TOKEN=pss_/m);
    expect(again.stderr).not.toContain('New wallet');
  });

  it('sign-in.mjs exits 1 and exports nothing when sign-in is refused or the server is down', async () => {
    // A server that refuses every sign-in the way Purser does.
    const refusing: Server = createServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'AUTH_SIGNATURE_INVALID', message: 'The signature does not match.' }));
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const refusingPort = (refusing.address() as AddressInfo).port;
    try {
      const refused = await exec('node', ['sign-in.mjs'], userEnv({ PORT: String(refusingPort) }));
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain('/v1/auth/challenge answered 401 AUTH_SIGNATURE_INVALID');
    } finally {
      await new Promise((resolve) => refusing.close(resolve));
    }
    // Nothing listens there any more.
    const down = await exec('node', ['sign-in.mjs'], userEnv({ PORT: String(refusingPort) }));
    expect(down.code).toBe(1);
    expect(down.stdout).toBe('');
    expect(down.stderr).toContain(`Cannot reach http://127.0.0.1:${refusingPort}`);
  });
});
