// Polymarket CLOB V2's HTTP transport: one call to the venue (the caller's stop and time budget,
// the JSON body, the query) and the reading of its statuses and `{"error": "…"}` bodies into
// VenueUnavailable (429 with its Retry-After, 5xx, not JSON, unreachable) and ClobVenueRejected
// (4xx, with the venue's text). The calls themselves are polymarket.ts's.
//
// Secrets (the credential's secret, passphrase and key) never reach an error message: the venue's
// text is quoted with any credential value scrubbed from it.
import { getAddress } from 'viem';
import { type Clock } from '../../core/clock.ts';
import { parseRetryAfter } from '../venues/aggregator-http.ts';
import { buildClobL2Headers } from './polymarket-auth.ts';
import { ClobVenueRejected, VenueUnavailable, type ClobCallOptions, type ClobL2Auth } from './port.ts';

export type ClobMethod = 'GET' | 'POST' | 'DELETE';

export interface ClobAnswer {
  status: number;
  headers: Headers;
  /** The parsed body; undefined when it was empty or not JSON. */
  json: unknown;
  /** The body was there and was not JSON. */
  notJson: boolean;
}

export interface ClobRequest {
  headers?: Record<string, string>;
  /** The exact body text (already JSON). */
  body?: string;
  query?: Record<string, string | undefined>;
  call?: ClobCallOptions;
  /** For a POST /order: a failure leaves it unknown whether the order was taken. */
  placing?: boolean;
}

/** `text` with every credential value taken out, whitespace folded, at most `max` characters. */
export function scrub(text: string, secrets: readonly string[], max: number): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  out = out.replace(/\s+/g, ' ').trim();
  return out.length > max ? `${out.slice(0, max)}…` : out;
}

/** The venue's `error` text, with any credential value taken out, short. */
export function venueText(json: unknown, secrets: readonly string[]): string {
  const raw = (json as { error?: unknown } | null)?.error;
  return scrub(typeof raw === 'string' ? raw : '', secrets, 200);
}

export const secretsOf = (auth: ClobL2Auth) => [auth.creds.secret, auth.creds.passphrase, auth.creds.apiKey];

export interface ClobHttp {
  /** Now in unix seconds, as the auth headers carry it. */
  seconds(): number;
  /** One HTTP call: only a failure to ask or to read the answer throws (VenueUnavailable). */
  call(method: ClobMethod, path: string, what: string, req?: ClobRequest): Promise<ClobAnswer>;
  /** A 429, a 5xx, an answer that is not JSON: the venue could not be asked. */
  unavailable(answer: ClobAnswer, what: string): VenueUnavailable | null;
  /**
   * A trading or market-data call: 429, 5xx and other non-2xx statuses the venue does not answer
   * with are VenueUnavailable; a 4xx is a ClobVenueRejected with the venue's text.
   */
  ask(
    method: ClobMethod,
    path: string,
    what: string,
    auth: ClobL2Auth | null,
    req?: Omit<ClobRequest, 'headers'> & { json?: boolean },
  ): Promise<ClobAnswer>;
}

export function createClobHttp(options: {
  /** Without a trailing slash. */
  baseUrl: string;
  /** Limit of one HTTP call in milliseconds (a call's own `timeoutMs` overrides it). */
  timeoutMs: number;
  fetch: typeof fetch;
  clock: Clock;
}): ClobHttp {
  const { baseUrl, clock } = options;
  const doFetch = options.fetch;
  const seconds = () => Math.floor(clock.now().getTime() / 1000);

  async function call(
    method: ClobMethod,
    path: string,
    what: string,
    req: ClobRequest = {},
  ): Promise<ClobAnswer> {
    const unknownOutcome = req.placing
      ? '; the order may have been placed: read it back by its hash before placing it again'
      : '';
    const callerSignal = req.call?.signal;
    if (callerSignal?.aborted) {
      throw new VenueUnavailable(`Polymarket CLOB ${what}: stopped by the caller before asking`);
    }
    // A caller's remaining budget is fractional milliseconds; the timer takes whole ones.
    const timeout = AbortSignal.timeout(Math.max(1, Math.ceil(req.call?.timeoutMs ?? options.timeoutMs)));
    const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) query.set(k, v);
    const qs = query.toString();
    const stopped = () =>
      callerSignal?.aborted ? 'was stopped by the caller' : timeout.aborted ? 'timed out' : null;
    let res: Response;
    try {
      res = await doFetch(`${baseUrl}${path}${qs ? `?${qs}` : ''}`, {
        method,
        headers: {
          accept: 'application/json',
          ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...req.headers,
        },
        ...(req.body === undefined ? {} : { body: req.body }),
        signal,
      });
    } catch (err) {
      const name = (err as Error).name;
      const why =
        stopped() ??
        (name === 'TimeoutError' || name === 'AbortError' ? 'timed out' : 'could not be reached');
      throw new VenueUnavailable(`Polymarket CLOB ${what}: the venue ${why}${unknownOutcome}`);
    }
    let text: string;
    try {
      text = await res.text();
    } catch {
      const why = stopped() ?? 'broke off';
      throw new VenueUnavailable(
        `Polymarket CLOB ${what}: the answer ${why} (HTTP ${res.status})${unknownOutcome}`,
      );
    }
    let json: unknown;
    let notJson = false;
    if (text.trim() !== '') {
      try {
        json = JSON.parse(text);
      } catch {
        notJson = true;
      }
    }
    return { status: res.status, headers: res.headers, json, notJson };
  }

  function rateLimited(answer: ClobAnswer, what: string): VenueUnavailable {
    const retryAfterMs = parseRetryAfter(answer.headers.get('retry-after'), clock.now()) ?? null;
    return new VenueUnavailable(
      `Polymarket CLOB ${what}: rate limited (HTTP 429${retryAfterMs === null ? '' : `, retry after ${retryAfterMs} ms`})`,
      retryAfterMs,
    );
  }

  function unavailable(answer: ClobAnswer, what: string): VenueUnavailable | null {
    if (answer.status === 429) return rateLimited(answer, what);
    if (answer.status >= 500) return new VenueUnavailable(`Polymarket CLOB ${what}: HTTP ${answer.status}`);
    if (answer.notJson)
      return new VenueUnavailable(`Polymarket CLOB ${what}: the answer was not JSON (HTTP ${answer.status})`);
    return null;
  }

  async function ask(
    method: ClobMethod,
    path: string,
    what: string,
    auth: ClobL2Auth | null,
    req: Omit<ClobRequest, 'headers'> & { json?: boolean } = {},
  ): Promise<ClobAnswer> {
    const headers = auth
      ? {
          ...buildClobL2Headers({
            address: getAddress(auth.address),
            creds: auth.creds,
            timestamp: seconds(),
            method,
            requestPath: path,
            ...(req.body === undefined ? {} : { body: req.body }),
          }),
        }
      : {};
    const answer = await call(method, path, what, { ...req, headers });
    const secrets = auth ? secretsOf(auth) : [];
    const unknownOutcome = req.placing ? '; the order may have been placed' : '';
    if (answer.status === 429) throw rateLimited(answer, what);
    if (answer.status >= 500) {
      const text = venueText(answer.json, secrets);
      throw new VenueUnavailable(
        `Polymarket CLOB ${what}: HTTP ${answer.status}${text ? `: ${text}` : ''}${unknownOutcome}`,
      );
    }
    if (answer.status >= 400) {
      const text = venueText(answer.json, secrets);
      const credential = answer.status === 401 || answer.status === 403;
      throw new ClobVenueRejected(
        credential
          ? `Polymarket CLOB ${what}: the venue refused the API credential (HTTP ${answer.status}${text ? `: ${text}` : ''})`
          : `Polymarket CLOB ${what}: refused (HTTP ${answer.status}${text ? `: ${text}` : ''})`,
        answer.status,
        text,
      );
    }
    if (answer.status < 200 || answer.status >= 300) {
      throw new VenueUnavailable(`Polymarket CLOB ${what}: HTTP ${answer.status}${unknownOutcome}`);
    }
    if (req.json !== false && answer.notJson) {
      throw new VenueUnavailable(
        `Polymarket CLOB ${what}: the answer was not JSON (HTTP ${answer.status})${unknownOutcome}`,
      );
    }
    return answer;
  }

  return { seconds, call, unavailable, ask };
}
