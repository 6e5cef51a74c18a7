// `npm run demo`: the whole flow on the devnet as an agent walks it, every request and answer
// printed. It uses the Purser that answers at PURSER_URL (default http://127.0.0.1:8080); when
// none does, it starts one on the embedded default (as `npm start` would) for the length of the
// demo. The agent is examples/agent.ts, run as written; the exit status is non-zero when a step fails.

import { spawn } from 'node:child_process';
import { loadConfig, type Config } from '../config.ts';
import { createLogger } from '../core/log.ts';
import { startService, type RunningService } from '../runtime.ts';
import { PROJECT_ROOT } from '../core/paths.ts';

const REPO_ROOT = PROJECT_ROOT;

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
    return res.ok;
  } catch {
    return false;
  }
}

interface Summary {
  quote_best?: { venue?: string; buy_amount?: string };
  event: string;
  intent: string;
  totals?: { sold?: string; bought?: string };
  statement: string;
}

/** Runs the example agent against `url`, printing its exchanges; resolves with its exit code and summary. */
function runAgent(
  url: string,
  write: (text: string) => void,
): Promise<{ code: number; summary: Summary | null }> {
  return new Promise((resolve) => {
    // The SDK as its workspace's sources (its package exports them under this condition).
    const child = spawn(
      process.execPath,
      ['--conditions=purser-source', '--import', 'tsx', 'examples/agent.ts'],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, PURSER_URL: url, PURSER_VERBOSE: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let last = '';
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (line.startsWith('{"quote_best"')) last = line;
        else write(`${line}\n`);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => write(chunk.toString()));
    child.on('exit', (code) => {
      if (buffered.startsWith('{"quote_best"')) last = buffered;
      else if (buffered) write(`${buffered}\n`);
      let summary: Summary | null = null;
      try {
        summary = last ? (JSON.parse(last) as Summary) : null;
      } catch {
        summary = null;
      }
      resolve({ code: code ?? 1, summary });
    });
  });
}

export async function runDemo(
  env: NodeJS.ProcessEnv,
  write = (t: string) => void process.stdout.write(t),
): Promise<number> {
  // Where `npm start` listens (PORT=0 means a free port: then nothing can be running there yet).
  const port = env['PORT'] ?? '8080';
  let url = (env['PURSER_URL'] ?? `http://127.0.0.1:${port}`).replace(/\/$/, '');
  let started: RunningService | null = null;
  if (port !== '0' || env['PURSER_URL'] ? await answers(url) : false) {
    write(`Using the Purser that answers at ${url}.\n`);
  } else if (env['PURSER_URL']) {
    write(
      `Nothing answers at PURSER_URL=${url}; start Purser there, or unset PURSER_URL to let the demo start one.\n`,
    );
    return 69; // EX_UNAVAILABLE
  } else {
    write(`No Purser answers at ${url}: starting one on the embedded default (PGlite, devnet)…\n`);
    let config: Config;
    try {
      config = loadConfig({ ...env, LOG_LEVEL: env['LOG_LEVEL'] ?? 'warn' });
    } catch (err) {
      write(`${(err as Error).message}\n`);
      return 78;
    }
    started = await startService(config, createLogger(config.logLevel), { api: true, workers: true });
    url = started.url!;
    write(`Purser is listening on ${url}.\n`);
  }
  try {
    write(
      '\nThe agent: sign in, webhook receiver, Kernel account from the faucet, policy, delegation, top-up, quote, conversion.\n',
    );
    const { code, summary } = await runAgent(url, write);
    if (code !== 0 || !summary) {
      write(`\nThe demo failed (exit ${code}): the last request above says why.\n`);
      return code || 1;
    }
    write('\nDone:\n');
    write(`  webhook received: ${summary.event} (signature verified)\n`);
    write(
      `  intent:           ${summary.intent}, sold ${summary.totals?.sold ?? '?'} USDC base units for ${summary.totals?.bought ?? '?'} EURC base units\n`,
    );
    write(`  statement:        ${summary.statement} (GET /v1/statements above)\n`);
    return 0;
  } finally {
    await started?.stop();
  }
}
