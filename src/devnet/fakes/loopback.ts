// What the aggregator fakes share: a node:http server on loopback, the failure knobs tests turn
// (no liquidity, 429, latency, a hang, price skew, malformed JSON, 5xx), and a log of requests.
// Development and tests only.

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeKnobs {
  /** false: the venue answers that it has no liquidity (0x) or no route (Kyber) for any pair. */
  liquidity: boolean;
  /** Answer HTTP 429 with this Retry-After value (delay-seconds or an HTTP-date); null: off. */
  rateLimitRetryAfter: string | null;
  /** Wait this long before answering (milliseconds). */
  latencyMs: number;
  /** Never answer: the request stays open until the client gives up or the fake stops. */
  hang: boolean;
  /** Quote this many basis points more (positive) or less (negative) than the pool gives. */
  priceSkewBps: number;
  /** Answer HTTP 200 with a body that is not JSON. */
  malformedJson: boolean;
  /** Answer this 5xx status; null: off. */
  serverError: number | null;
}

export function defaultKnobs(): FakeKnobs {
  return {
    liquidity: true,
    rateLimitRetryAfter: null,
    latencyMs: 0,
    hang: false,
    priceSkewBps: 0,
    malformedJson: false,
    serverError: null,
  };
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeRequest extends RecordedRequest {
  url: URL;
}

export interface FakeAnswer {
  status: number;
  /** An object is sent as JSON; a string is sent as it is (with a JSON content type). */
  body: unknown;
  headers?: Record<string, string>;
}

export interface RunningFake<K extends FakeKnobs = FakeKnobs> {
  /** Base URL, e.g. http://127.0.0.1:43123 (no trailing slash). */
  url: string;
  /** Change these at any time; reset() puts the defaults back. */
  knobs: K;
  reset(): void;
  /** Every request received, oldest first. */
  requests: RecordedRequest[];
  /** Closes the server and every open connection (hung requests included). */
  stop(): Promise<void>;
}

export interface ServeFakeOptions<K extends FakeKnobs> {
  host?: string;
  port?: number;
  knobs: () => K;
  handle: (request: FakeRequest, knobs: K) => Promise<FakeAnswer>;
  /** The body sent when the handler itself throws (the vendor's 500 shape). */
  internalError: () => unknown;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Starts a fake on loopback (port 0 by default: a free port). */
export async function serveFake<K extends FakeKnobs>(options: ServeFakeOptions<K>): Promise<RunningFake<K>> {
  const knobs = options.knobs();
  const requests: RecordedRequest[] = [];
  let stopping = false;

  const server = createServer((req, res) => {
    void respond(req, res).catch(() => {
      if (!res.headersSent) send(res, { status: 500, body: options.internalError() });
      else res.destroy();
    });
  });

  async function respond(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body,
    };
    requests.push(recorded);
    if (knobs.hang) return; // the socket stays open until the client aborts or stop() closes it
    if (knobs.latencyMs > 0) await sleep(knobs.latencyMs);
    if (stopping) return;
    send(res, await options.handle({ ...recorded, url }, knobs));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let stopped: Promise<void> | null = null;

  return {
    url: `http://${host}:${address.port}`,
    knobs,
    reset: () => Object.assign(knobs, options.knobs()),
    requests,
    stop: () => {
      stopped ??= new Promise<void>((resolve) => {
        stopping = true;
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}

function send(res: ServerResponse, answer: FakeAnswer): void {
  const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...answer.headers,
  });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The 429 answer both vendors' gateways give, with the knob's Retry-After. */
export function rateLimited(retryAfter: string, body: unknown): FakeAnswer {
  return { status: 429, body, headers: { 'retry-after': retryAfter } };
}

/** A body that starts like the vendor's JSON and breaks off. */
export const MALFORMED_BODY = '{"liquidityAvailable": true, "buyAmount": "12';

/** A random hex id (0x's `zid`, Kyber's `requestId`). */
export function randomId(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

/** amount × (10 000 + skew) / 10 000, never below 0. */
export function skewed(amount: bigint, skewBps: number): bigint {
  const factor = 10_000n + BigInt(Math.trunc(skewBps));
  return factor <= 0n ? 0n : (amount * factor) / 10_000n;
}
