// The real service as a child process (`node --import tsx src/main.ts serve`), for kill, outage
// and load tests and for the benchmark. It listens on a free port (PORT=0) and reports its URL on
// stdout; every output line is kept so a test can wait for a log line or show it on failure.

import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  child: ChildProcess;
  pid: number;
  /** Base URL, e.g. http://127.0.0.1:40123. */
  url: string;
  /** Every line the child wrote to stdout and stderr so far, in order of arrival. */
  output: string[];
  /** Settles when the child exits. */
  exited: Promise<ExitStatus>;
  /** The exit status, or null while the child runs. */
  exitStatus(): ExitStatus | null;
  /** Calls `listener` with every line from now on; returns the function that stops it. */
  onLine(listener: (line: string) => void): () => void;
  /** Resolves with the first line (already seen or to come) matching `match`. */
  waitForLine(match: (line: string) => boolean, timeoutMs: number): Promise<string>;
  /** Sends `signal` and waits for the exit; SIGKILL after `timeoutMs` if the child is still there. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<ExitStatus>;
  /** The last lines of output, for failure messages. */
  tail(lines?: number): string;
}

export interface StartServiceOptions {
  /** Environment on top of a clean base (see `serviceEnv`). */
  env: Record<string, string>;
  command?: 'serve' | 'worker';
  /** How long to wait for the listening line; PGlite alone takes 3–5 s to open. */
  startTimeoutMs?: number;
  /** Extra options for node itself (a CPU profile, say), before the script. */
  nodeArgs?: string[];
}

/**
 * The child's environment: the parent's, minus every setting Purser reads (so a developer's
 * DATABASE_URL or PORT never leaks into a test), plus a development default logging at info (every
 * line is searched for secrets when it stops) and `overrides`.
 */
export function serviceEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (
      /^(PURSER_|DATABASE_|RPC_URL_|DEVNET|JOBS_|RATE_LIMIT_|REQUEST_BUDGET|BODY_LIMIT|SDN_|PAYMENTS_|PREPAID_|METERING_|FEE_|STATEMENTS_)/.test(
        name,
      )
    )
      continue;
    if (['HOST', 'PORT', 'LOG_LEVEL', 'RUN_WORKERS', 'NODE_OPTIONS'].includes(name)) continue;
    env[name] = value;
  }
  return {
    ...env,
    PURSER_ENV: 'development',
    HOST: '127.0.0.1',
    PORT: '0',
    DEVNET: 'false',
    LOG_LEVEL: 'info',
    ...overrides,
  };
}

/** Starts the service and resolves once it listens (not necessarily ready: see `waitUntilReady`). */
/** The secrets a service started with `env` holds: none may appear in a line it writes. */
function secretsOf(env: Record<string, string | undefined>): { name: string; value: string }[] {
  const found: { name: string; value: string }[] = [];
  const add = (name: string, value: string | undefined) => {
    if (value && value.length >= 12) found.push({ name, value });
  };
  for (const entry of (env['PURSER_SEALING_KEYS'] ?? '').split(','))
    add('PURSER_SEALING_KEYS', entry.split(':')[1]?.trim());
  for (const name of [
    'PURSER_SEALING_KEY',
    'PURSER_OPERATOR_TOKEN',
    'PURSER_EXECUTOR_PRIVATE_KEY',
    'PURSER_RELAYER_PRIVATE_KEY',
    'ZEROX_API_KEY',
    'SAFE_TX_SERVICE_API_KEY',
  ]) {
    add(name, env[name]?.replace(/^0x/, ''));
  }
  const password = /^postgres(?:ql)?:\/\/[^:/@]+:([^@]+)@/.exec(env['DATABASE_URL'] ?? '')?.[1];
  add('DATABASE_URL password', password);
  return found;
}

export async function startServiceProcess(options: StartServiceOptions): Promise<ServiceProcess> {
  const env = serviceEnv(options.env);
  const secrets = secretsOf(env);
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), '--import', 'tsx', 'src/main.ts', options.command ?? 'serve'],
    {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  if (child.pid === undefined) throw new Error('could not spawn the service process');
  const pid = child.pid;

  const output: string[] = [];
  const watchers = new Set<(line: string) => void>();
  const onLine = (line: string) => {
    output.push(line);
    for (const watcher of [...watchers]) watcher(line);
  };
  for (const stream of [child.stdout, child.stderr]) {
    let pending = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    });
    stream.on('end', () => {
      if (pending) onLine(pending);
      pending = '';
    });
  }

  let status: ExitStatus | null = null;
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once('exit', (code, signal) => {
      status = { code, signal };
      resolve(status);
    });
  });

  const tail = (lines = 30) => output.slice(-lines).join('\n');

  const waitForLine = (match: (line: string) => boolean, timeoutMs: number): Promise<string> => {
    const seen = output.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<string>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        watchers.delete(watcher);
      };
      const watcher = (line: string) => {
        if (!match(line)) return;
        done();
        resolve(line);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no matching output line within ${timeoutMs} ms; last output:\n${tail()}`));
      }, timeoutMs);
      watchers.add(watcher);
      void exited.then((s) => {
        if (!watchers.has(watcher)) return;
        done();
        reject(
          new Error(`the service exited (${describeExit(s)}) before the expected line; output:\n${tail()}`),
        );
      });
    });
  };

  const stop = async (signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<ExitStatus> => {
    let ended: ExitStatus | null = status;
    if (!ended) {
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        ended = await exited;
      } finally {
        clearTimeout(timer);
      }
    }
    // Every end-to-end run's log is searched for the secrets the service was started with.
    const leaked = secrets.filter((x) => output.some((line) => line.includes(x.value))).map((x) => x.name);
    if (leaked.length > 0) throw new Error(`the service wrote a secret to its output: ${leaked.join(', ')}`);
    return ended;
  };

  let url: string;
  try {
    const line = await waitForLine(
      (l) => l.startsWith('Purser is listening on '),
      options.startTimeoutMs ?? 60_000,
    );
    url = line.slice('Purser is listening on '.length).trim();
  } catch (err) {
    await stop('SIGKILL');
    throw err;
  }
  const onLineFrom = (listener: (line: string) => void) => {
    watchers.add(listener);
    return () => void watchers.delete(listener);
  };
  return {
    child,
    pid,
    url,
    output,
    exited,
    exitStatus: () => status,
    onLine: onLineFrom,
    waitForLine,
    stop,
    tail,
  };
}

export function describeExit(s: ExitStatus): string {
  return s.signal ? `signal ${s.signal}` : `code ${s.code}`;
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Milliseconds from sending to the end of the response. */
  ms: number;
}

export interface HttpOptions {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** The request fails with code ETIMEDOUT when the whole exchange takes longer. */
  timeoutMs?: number;
}

/**
 * One request on its own connection (no keep-alive pool), so a refused or reset connection shows
 * up as that request's error (err.code ECONNREFUSED, ECONNRESET, ETIMEDOUT).
 */
export function http(url: string, options: HttpOptions = {}): Promise<HttpResult> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (body !== undefined) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  const started = performance.now();
  return new Promise<HttpResult>((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, ms: performance.now() - started }),
      );
      res.on('error', reject);
    });
    req.setTimeout(options.timeoutMs ?? 10_000, () => {
      req.destroy(
        Object.assign(new Error(`no response within ${options.timeoutMs ?? 10_000} ms`), {
          code: 'ETIMEDOUT',
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Polls GET /readyz until it answers 200; throws with the last answer after `timeoutMs`. */
export async function waitUntilReady(service: ServiceProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = '';
  while (performance.now() < deadline) {
    if (service.exitStatus()) break;
    try {
      const res = await http(`${service.url}/readyz`, { timeoutMs: 5_000 });
      if (res.status === 200) return;
      last = `${res.status} ${res.text}`;
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const s = service.exitStatus();
  throw new Error(
    `${service.url}/readyz did not answer 200 within ${timeoutMs} ms (last: ${last})` +
      `${s ? `; the service exited (${describeExit(s)})` : ''}; output:\n${service.tail()}`,
  );
}
