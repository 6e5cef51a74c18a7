// One HTTP exchange with an aggregator API, turned into the venue port's failure kinds: its own
// timeout joined to the caller's signal (`timeout`), HTTP 429 with Retry-After (`rate_limited`),
// 5xx and unreachable hosts (`unavailable`), and a 2xx body that is not JSON (`bad_response`).
// Anything else (2xx JSON, 4xx with or without JSON) goes back to the adapter, which knows its
// vendor's error shape. Request headers (API keys) never appear in a message or a cause.

import type { Clock } from '../../core/clock.ts';
import { VenueError, type ConversionVenue } from './port.ts';

export interface AggregatorRequest {
  venue: ConversionVenue;
  /** What the call is, for messages: "price", "route build"… */
  what: string;
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** JSON body of a POST. */
  body?: unknown;
  /** This venue's own limit for one call. */
  timeoutMs: number;
  /** The caller's: aborted when its time for this venue is up. */
  signal: AbortSignal;
  /** Turns an HTTP-date Retry-After into a delay. */
  clock: Clock;
}

export interface AggregatorAnswer {
  status: number;
  /** The parsed JSON body, or undefined when a non-2xx answer carried none (or not JSON). */
  json: unknown;
}

/** Bodies larger than this are not a quote: refused as bad_response without parsing. */
const MAX_BODY_BYTES = 2_000_000;

/**
 * Sends the request and returns the answer, or throws VenueError:
 * `timeout` (this call's limit or the caller's signal), `rate_limited` (429, retryAfterMs from
 * Retry-After when it has one), `unavailable` (network failure, 5xx), `bad_response` (a 2xx
 * answer that is not JSON).
 */
export async function requestAggregator(req: AggregatorRequest): Promise<AggregatorAnswer> {
  const { venue, what } = req;
  if (req.signal.aborted) {
    throw new VenueError(venue, 'timeout', `${venue} ${what}: the caller's time ran out before the request`);
  }
  const ownTimeout = AbortSignal.timeout(req.timeoutMs);
  const signal = AbortSignal.any([req.signal, ownTimeout]);
  const timedOut = (): VenueError =>
    new VenueError(
      venue,
      'timeout',
      ownTimeout.aborted
        ? `${venue} ${what}: no answer within ${req.timeoutMs} ms`
        : `${venue} ${what}: the caller's time ran out`,
    );

  let response: Response;
  try {
    const init: RequestInit = {
      method: req.method,
      headers: {
        accept: 'application/json',
        ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...req.headers,
      },
      signal,
      redirect: 'error',
    };
    if (req.body !== undefined) init.body = JSON.stringify(req.body);
    response = await fetch(req.url, init);
  } catch (err) {
    if (signal.aborted) throw timedOut();
    throw new VenueError(venue, 'unavailable', `${venue} ${what}: could not reach ${req.url.origin}`, {
      cause: describeNetworkError(err),
    });
  }

  let text: string;
  try {
    text = await readCapped(response, MAX_BODY_BYTES);
  } catch (err) {
    if (signal.aborted) throw timedOut();
    if (err instanceof BodyTooLargeError) {
      throw new VenueError(
        venue,
        'bad_response',
        `${venue} ${what}: answer larger than ${MAX_BODY_BYTES} bytes`,
      );
    }
    throw new VenueError(venue, 'unavailable', `${venue} ${what}: the answer broke off`, {
      cause: describeNetworkError(err),
    });
  }

  if (response.status === 429) {
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), req.clock.now());
    throw new VenueError(
      venue,
      'rate_limited',
      `${venue} ${what}: rate limited (HTTP 429${retryAfterMs === undefined ? '' : `, retry after ${retryAfterMs} ms`})`,
      retryAfterMs === undefined ? {} : { retryAfterMs },
    );
  }
  if (response.status >= 500) {
    throw new VenueError(venue, 'unavailable', `${venue} ${what}: HTTP ${response.status}`);
  }

  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (response.status >= 200 && response.status < 300 && json === undefined) {
    throw new VenueError(
      venue,
      'bad_response',
      `${venue} ${what}: HTTP ${response.status} with a body that is not JSON`,
    );
  }
  return { status: response.status, json };
}

/**
 * Retry-After as milliseconds from `now`: delay-seconds or an HTTP-date (RFC 9110 §10.2.3).
 * Undefined when absent or unreadable; a date in the past is 0.
 */
export function parseRetryAfter(value: string | null, now: Date): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now.getTime());
}

class BodyTooLargeError extends Error {}

async function readCapped(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLargeError();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A network error's kind and code only: never the request it belonged to. */
function describeNetworkError(err: unknown): Error {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  const message = err instanceof Error ? err.message : String(err);
  return new Error(code ? `${message} (${code})` : message);
}
