// The service as a real process, under the two events every deployment meets:
//  1. PostgreSQL goes away and comes back: the process stays up, answers 503 UNAVAILABLE with the
//     spec error body meanwhile (fast, never a refused connection or a hang), and is ready again
//     soon after the database returns. Runs on a throwaway cluster this file makes for itself.
//  2. SIGTERM with requests in flight: each one completes normally, the process exits 0 and the
//     embedded database's lock is released, so the next start on the same data directory works.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describeExit,
  http,
  startServiceProcess,
  waitUntilReady,
  type HttpOptions,
  type ServiceProcess,
} from './support/service-process.ts';
import {
  createThrowawayPostgres,
  findPostgresBin,
  type ThrowawayPostgres,
} from './support/throwaway-postgres.ts';

/** A request slower than this during the outage counts as a hang. */
const REQUEST_TIMEOUT_MS = 5_000;

interface Probe {
  name: string;
  path: string;
  options: HttpOptions;
}

/** Routes that need the database: each must answer 200 while it is up and 503 while it is down. */
const DB_PROBES: Probe[] = [
  { name: 'GET /readyz', path: '/readyz', options: {} },
  {
    name: 'POST /v1/screenings',
    path: '/v1/screenings',
    options: { method: 'POST', body: { address: '0x8589427373D6D84E98730D7795D8f6f8731FDA16' } },
  },
];

/** The spec's error body: `{code, message, remediation, docs_url, request_id, next?}`. */
const ERROR_BODY_FIELDS = ['code', 'message', 'remediation', 'docs_url', 'request_id', 'next'];

type Phase = 'before' | 'stopping' | 'down' | 'restarting' | 'recovered';

interface Sample {
  probe: string;
  /** Phase when the request was sent and when its answer arrived. */
  sent: Phase;
  answered: Phase;
  status: number | null;
  code: string | null;
  body: unknown;
  retryAfter: string | undefined;
  error: string | null;
  ms: number;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function codeOf(body: unknown): string | null {
  return body && typeof body === 'object' && typeof (body as { code?: unknown }).code === 'string'
    ? (body as { code: string }).code
    : null;
}

const pgBin = findPostgresBin();
if (!pgBin) {
  console.warn(
    'resilience: skipping the PostgreSQL outage test: no initdb under /usr/lib/postgresql/*/bin (set PG_BIN to its directory)',
  );
}

describe.skipIf(!pgBin)('PostgreSQL going away and coming back', () => {
  let cluster: ThrowawayPostgres | null = null;
  let service: ServiceProcess | null = null;

  beforeAll(async () => {
    cluster = await createThrowawayPostgres(pgBin ?? '');
    const url = await cluster.createDatabase('purser');
    // The load runs past the per-IP limit of public routes (300 a minute by default): lift it.
    service = await startServiceProcess({
      env: { DATABASE_URL: url, LOG_LEVEL: 'warn', RATE_LIMIT_PUBLIC_PER_MINUTE: '10000000' },
    });
    await waitUntilReady(service);
  });

  afterAll(async () => {
    await service?.stop('SIGTERM', 10_000);
    await cluster?.destroy();
  });

  it('stays up, answers 503 UNAVAILABLE while the database is down, and is ready again once it returns', async () => {
    if (!service || !cluster) throw new Error('setup failed');
    const svc = service;
    const pgCluster = cluster;

    const probes = DB_PROBES;
    for (const probe of probes) {
      const res = await http(svc.url + probe.path, { ...probe.options, timeoutMs: REQUEST_TIMEOUT_MS });
      expect(res.status, `${probe.name} before the outage: ${res.text}`).toBe(200);
    }

    let phase: Phase = 'before';
    const samples: Sample[] = [];
    let loading = true;
    const MAX_SAMPLES = 20_000; // a bound on the load whatever happens
    const worker = async (offset: number) => {
      for (let i = offset; loading && samples.length < MAX_SAMPLES; i++) {
        const probe = probes[i % probes.length];
        if (!probe) break;
        const sent = phase;
        const started = performance.now();
        try {
          const res = await http(svc.url + probe.path, { ...probe.options, timeoutMs: REQUEST_TIMEOUT_MS });
          const body = parse(res.text);
          const retryAfter = res.headers['retry-after'];
          samples.push({
            probe: probe.name,
            sent,
            answered: phase,
            status: res.status,
            code: codeOf(body),
            body,
            retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
            error: null,
            ms: res.ms,
          });
        } catch (err) {
          const e = err as NodeJS.ErrnoException;
          samples.push({
            probe: probe.name,
            sent,
            answered: phase,
            status: null,
            code: null,
            body: null,
            retryAfter: undefined,
            error: `${e.code ?? 'ERROR'}: ${e.message}`,
            ms: performance.now() - started,
          });
        }
        await new Promise((r) => setTimeout(r, 5)); // 4 clients, at most a few hundred requests/s
      }
    };
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const workers = [0, 1, 2, 3].map((i) => worker(i));

    let recoveredAfterMs = -1;
    try {
      await sleep(1_000);
      phase = 'stopping';
      await pgCluster.stop();
      phase = 'down';
      await sleep(3_000);
      expect(svc.exitStatus(), `the service exited while the database was down:\n${svc.tail()}`).toBeNull();

      phase = 'restarting';
      await pgCluster.start();
      const restarted = performance.now();
      let last = '';
      while (performance.now() - restarted < 10_000) {
        try {
          const res = await http(`${svc.url}/readyz`, { timeoutMs: REQUEST_TIMEOUT_MS });
          if (res.status === 200) {
            recoveredAfterMs = performance.now() - restarted;
            break;
          }
          last = `${res.status} ${res.text}`;
        } catch (err) {
          last = String(err);
        }
        await sleep(100);
      }
      expect(
        recoveredAfterMs,
        `/readyz not 200 within 10 s of the restart (last: ${last})\n${svc.tail()}`,
      ).toBeGreaterThanOrEqual(0);
      phase = 'recovered';
      await sleep(1_000);
    } finally {
      loading = false;
      await Promise.all(workers);
    }

    const summary = (list: Sample[]) => {
      const counts = new Map<string, number>();
      for (const s of list) {
        const key = `${s.probe} ${s.sent}->${s.answered} ${s.error ?? `${s.status} ${s.code ?? ''}`}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      return [...counts].map(([k, n]) => `${n} x ${k}`).join('\n');
    };
    console.info(
      `resilience: ${samples.length} requests; /readyz was 200 again ${Math.round(recoveredAfterMs)} ms after the restart\n${summary(samples)}`,
    );

    // Never a refused or reset connection, never a hang.
    const failed = samples.filter((s) => s.error !== null);
    expect(failed, `requests without an HTTP answer:\n${summary(failed)}`).toEqual([]);

    // While the database was down, every answer was the spec's 503.
    const down = samples.filter((s) => s.sent === 'down' && s.answered === 'down');
    for (const probe of probes) {
      expect(
        down.filter((s) => s.probe === probe.name).length,
        `${probe.name} was not exercised during the outage`,
      ).toBeGreaterThan(0);
    }
    const notUnavailable = down.filter((s) => s.status !== 503 || s.code !== 'UNAVAILABLE');
    expect(
      notUnavailable,
      `answers other than 503 UNAVAILABLE while down:\n${summary(notUnavailable)}`,
    ).toEqual([]);
    for (const s of down) {
      expect(s.body).toMatchObject({
        code: 'UNAVAILABLE',
        message: expect.any(String),
        remediation: expect.any(String),
        docs_url: expect.stringMatching(/\/docs\/errors#UNAVAILABLE$/),
        request_id: expect.stringMatching(/^req_/),
      });
      const extra = Object.keys(s.body as object).filter((k) => !ERROR_BODY_FIELDS.includes(k));
      expect(extra, 'fields outside the spec error body').toEqual([]);
      expect(s.retryAfter).toMatch(/^\d+$/);
    }

    // Around the transitions, each request either made it (200) or got the same 503.
    const transitional = samples.filter((s) => !(s.sent === 'down' && s.answered === 'down'));
    const odd = transitional.filter(
      (s) => s.status !== 200 && !(s.status === 503 && s.code === 'UNAVAILABLE'),
    );
    expect(odd, `unexpected answers around the outage:\n${summary(odd)}`).toEqual([]);
    const before = samples.filter((s) => s.sent === 'before' && s.answered === 'before');
    expect(
      before.every((s) => s.status === 200),
      summary(before),
    ).toBe(true);

    // Back to normal once recovered.
    const after = samples.filter((s) => s.sent === 'recovered');
    expect(after.length).toBeGreaterThan(0);
    expect(
      after.filter((s) => s.status !== 200),
      summary(after),
    ).toEqual([]);
    for (const probe of probes) {
      const res = await http(svc.url + probe.path, { ...probe.options, timeoutMs: REQUEST_TIMEOUT_MS });
      expect(res.status, `${probe.name} after recovery: ${res.text}`).toBe(200);
    }
    expect(svc.exitStatus()).toBeNull();

    // And it still shuts down cleanly.
    const exit = await svc.stop('SIGTERM', 15_000);
    expect(exit, `exit after the outage: ${describeExit(exit)}\n${svc.tail()}`).toEqual({
      code: 0,
      signal: null,
    });
  });
});

/**
 * A POST whose body arrives in two parts: the server starts handling it on the first and can
 * answer only after `finish()`, so it stays in flight for as long as the test wants.
 */
function slowPost(url: string, body: unknown) {
  const text = JSON.stringify(body);
  const cut = Math.floor(text.length / 2);
  let finish: () => void = () => undefined;
  const response = new Promise<{ status: number; text: string; requestId: string | undefined }>(
    (resolve, reject) => {
      const req = httpRequest(
        url,
        {
          method: 'POST',
          agent: false,
          headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) },
        },
        (res) => {
          let received = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (received += chunk));
          res.on('end', () => {
            const id = res.headers['x-request-id'];
            resolve({
              status: res.statusCode ?? 0,
              text: received,
              requestId: typeof id === 'string' ? id : undefined,
            });
          });
        },
      );
      req.on('error', reject);
      req.write(text.slice(0, cut));
      finish = () => req.end(text.slice(cut));
    },
  );
  return { response, finish: () => finish() };
}

interface LogEntry {
  msg?: string;
  reqId?: string;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
}

function logEntry(line: string): LogEntry | null {
  if (!line.startsWith('{')) return null;
  try {
    return JSON.parse(line) as LogEntry;
  } catch {
    return null;
  }
}

describe('SIGTERM with requests in flight (embedded database)', () => {
  let dataDir = '';
  const started: ServiceProcess[] = [];

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'purser-sigterm-'));
  });

  afterAll(async () => {
    for (const s of started) await s.stop('SIGKILL');
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('completes every in-flight request, exits 0 and releases the data directory', async () => {
    // LOG_LEVEL=debug: the service logs "incoming request" (debug) once it starts handling a
    // request and "request completed" (info) when it has answered, each with the request id that
    // the client also receives in x-request-id. That names exactly the requests in flight at the
    // signal.
    const first = await startServiceProcess({
      env: { PURSER_DATA_DIR: dataDir, LOG_LEVEL: 'debug', RATE_LIMIT_PUBLIC_PER_MINUTE: '10000000' },
    });
    started.push(first);
    await waitUntilReady(first);
    const STOPPING = 'stopping: draining requests and releasing jobs';

    // 1. A screening whose body is half sent: in flight until the test sends the rest.
    const slow = slowPost(`${first.url}/v1/screenings`, {
      address: '0x8589427373D6D84E98730D7795D8f6f8731FDA16',
    });
    const slowLine = await first.waitForLine((line) => {
      const e = logEntry(line);
      return e?.msg === 'incoming request' && e.req?.method === 'POST' && e.req.url === '/v1/screenings';
    }, 30_000);
    const slowId = logEntry(slowLine)?.reqId;

    // 2. A burst of readiness checks, queued behind PGlite's single session; the signal goes out
    // as soon as the first answers come back, with the rest in the handlers or not yet accepted.
    const burstStart = first.output.length;
    const N = 200;
    const SIGNAL_AFTER = 10;
    let answered = 0;
    let signalled = false;
    const burst = Promise.all(
      Array.from({ length: N }, () =>
        http(`${first.url}/readyz`, { timeoutMs: 30_000 }).then(
          (res) => {
            answered += 1;
            if (!signalled && answered >= SIGNAL_AFTER) {
              signalled = true;
              first.child.kill('SIGTERM');
            }
            return {
              status: res.status,
              text: res.text,
              requestId: res.headers['x-request-id'],
              error: null,
            };
          },
          (err: NodeJS.ErrnoException) => ({
            status: 0,
            text: '',
            requestId: undefined,
            error: err.code ?? err.message,
          }),
        ),
      ),
    );

    // 3. Draining: the process waits for the half-sent screening instead of exiting.
    await first.waitForLine((line) => logEntry(line)?.msg === STOPPING, 30_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(first.exitStatus(), `the service exited with a request in flight:\n${first.tail()}`).toBeNull();
    slow.finish();
    const slowResult = await slow.response;
    expect(slowResult.status, slowResult.text).toBe(200);
    expect(JSON.parse(slowResult.text)).toEqual({
      address: '0x8589427373D6D84E98730D7795D8f6f8731FDA16',
      sanctioned: expect.any(Boolean),
      lists: expect.any(Array),
      provider_count: expect.any(Number),
    });
    expect(slowResult.requestId).toBe(slowId);

    const results = await burst;
    expect(signalled, `only ${answered} of ${N} requests were answered`).toBe(true);
    const exit = await first.exited;
    expect(exit, `exit after SIGTERM: ${describeExit(exit)}\n${first.tail()}`).toEqual({
      code: 0,
      signal: null,
    });

    // Server side: every request it started handling, it answered with 200; the screening after
    // the signal.
    const lines = first.output.slice(burstStart);
    const stopping = lines.findIndex((l) => logEntry(l)?.msg === STOPPING);
    const handled = new Set<string>();
    const arrivedWhileDraining = new Set<string>();
    const completed = new Map<string, number | undefined>();
    const completedWhileDraining: string[] = [];
    lines.forEach((line, index) => {
      const entry = logEntry(line);
      if (!entry?.reqId) return;
      if (entry.msg === 'incoming request') {
        handled.add(entry.reqId);
        if (index > stopping) arrivedWhileDraining.add(entry.reqId);
      }
      if (entry.msg === 'request completed') {
        completed.set(entry.reqId, entry.res?.statusCode);
        if (index > stopping) completedWhileDraining.push(entry.reqId);
      }
    });
    // A request that arrived after the signal is refused with the spec's 503 body; every other
    // one must have been answered normally.
    const unanswered = [...handled].filter(
      (id) => completed.get(id) !== 200 && !(arrivedWhileDraining.has(id) && completed.get(id) === 503),
    );
    expect(unanswered, 'requests the server started but did not answer with 200').toEqual([]);
    expect(completedWhileDraining).toContain(slowId);

    // Client side: every burst request the server handled came back as a normal readiness body.
    // Those that reached it after the signal were never in flight: they may be refused (closed
    // listener, or the spec's 503 UNAVAILABLE body while closing), and nothing else.
    const ok = results.filter((r) => r.status === 200);
    for (const r of ok) expect(JSON.parse(r.text)).toMatchObject({ status: 'ready', database: 'pglite' });
    expect(new Set(ok.map((r) => String(r.requestId)))).toEqual(
      new Set([...handled].filter((id) => id !== slowId && !arrivedWhileDraining.has(id))),
    );
    const refused = results.filter((r) => r.status !== 200);
    const odd = refused.filter(
      (r) =>
        !(r.status === 503 && JSON.parse(r.text).code === 'UNAVAILABLE') &&
        !['ECONNREFUSED', 'ECONNRESET'].includes(String(r.error)),
    );
    expect(odd, 'answers to requests that arrived after the signal').toEqual([]);
    console.info(
      `resilience: SIGTERM after ${SIGNAL_AFTER} burst answers; ${ok.length} of ${N} burst requests handled, ` +
        `${refused.length} refused (${[...new Set(refused.map((r) => r.error ?? r.status))].join(', ')}); ` +
        `${completedWhileDraining.length} request(s) completed while draining`,
    );

    // The lock file is gone and a second start on the same data directory works.
    expect(existsSync(join(dataDir, 'purser.lock'))).toBe(false);
    const second = await startServiceProcess({ env: { PURSER_DATA_DIR: dataDir } });
    started.push(second);
    await waitUntilReady(second);
    const res = await http(`${second.url}/readyz`);
    expect(JSON.parse(res.text)).toMatchObject({ status: 'ready', database: 'pglite' });
    const secondExit = await second.stop('SIGTERM');
    expect(secondExit, second.tail()).toEqual({ code: 0, signal: null });
    expect(existsSync(join(dataDir, 'purser.lock'))).toBe(false);
  });
});
