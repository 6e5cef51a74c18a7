// The typed client: openapi-fetch over the generated paths, plus what no generator writes:
// sign-in with a viem account (SIWE) kept fresh, an Idempotency-Key on every mutation with safe
// retries under it, and every error answer thrown as a PurserError.

import createClient, { type Client } from 'openapi-fetch';
import type { LocalAccount } from 'viem';
import { PurserError } from './errors.ts';
import type { paths } from './schema.ts';

export interface Exchange {
  method: string;
  url: string;
  requestBody: string | null;
  status: number;
  responseBody: string;
  ms: number;
}

export interface PurserOptions {
  /** The service's URL, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  /** A session token or API key; `signIn` sets one. */
  token?: string;
  /** Retries of a request that may succeed later (network failure, 409 in flight, 429, 502, 503, 504). Default 3. */
  retries?: number;
  /** Called with every exchange (the demo prints them). */
  onExchange?: (exchange: Exchange) => void;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

/** Codes worth retrying under the same Idempotency-Key: the first attempt's outcome is kept or replayed. */
const RETRY_STATUSES = new Set([409, 429, 502, 503, 504]);
const SIGN_IN_PATHS = ['/v1/auth/challenge', '/v1/auth/verify'];
/** Re-sign-in this long before a session expires. */
const REFRESH_MARGIN_MS = 5 * 60_000;

interface Session {
  account: LocalAccount;
  chainId: number | undefined;
  expiresAt: number;
}

export class Purser {
  /** The typed client: `purser.api.GET('/v1/intents/{id}', { params: { path: { id } } })`. */
  readonly api: Client<paths>;
  private token: string | null;
  private session: Session | null = null;
  private signingIn: Promise<void> | null = null;
  private readonly options: PurserOptions;

  constructor(options: PurserOptions) {
    this.options = options;
    this.token = options.token ?? null;
    this.api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/$/, ''),
      fetch: (request) => this.send(request),
    });
  }

  /**
   * Signs in with the wallet (SIWE: POST /v1/auth/challenge, sign, POST /v1/auth/verify). The
   * session is renewed the same way before it expires, and once if the API answers 401.
   */
  async signIn(
    account: LocalAccount,
    options: { chainId?: number } = {},
  ): Promise<{ address: string; expiresAt: string }> {
    const { data: challenge } = await this.api.POST('/v1/auth/challenge', {
      body: { address: account.address, ...(options.chainId ? { chain_id: options.chainId } : {}) },
    });
    const signature = await account.signMessage({ message: challenge!.message });
    const { data: verified } = await this.api.POST('/v1/auth/verify', {
      body: { message: challenge!.message, signature },
    });
    this.token = verified!.token;
    this.session = { account, chainId: options.chainId, expiresAt: Date.parse(verified!.expires_at) };
    return { address: verified!.address, expiresAt: verified!.expires_at };
  }

  /** Uses this credential from now on (an API key, or a session token from elsewhere). */
  useToken(token: string): void {
    this.token = token;
    this.session = null;
  }

  private async renewSession(): Promise<void> {
    const session = this.session;
    if (!session) return;
    this.signingIn ??= this.signIn(session.account, session.chainId ? { chainId: session.chainId } : {})
      .then(() => undefined)
      .finally(() => {
        this.signingIn = null;
      });
    await this.signingIn;
  }

  private async send(request: Request): Promise<Response> {
    const doFetch = this.options.fetch ?? fetch;
    const path = new URL(request.url).pathname;
    const signingIn = SIGN_IN_PATHS.includes(path);
    if (!signingIn && this.session && this.session.expiresAt - Date.now() < REFRESH_MARGIN_MS)
      await this.renewSession();
    const headers = new Headers(request.headers);
    for (const [k, v] of Object.entries(this.options.headers ?? {})) headers.set(k, v);
    if (request.method !== 'GET' && !headers.has('idempotency-key'))
      headers.set('idempotency-key', crypto.randomUUID());
    const body = request.body ? await request.text() : null;
    const retries = this.options.retries ?? 3;
    let renewed = false;
    for (let attempt = 0; ; attempt++) {
      if (this.token && !signingIn && !headers.has('authorization'))
        headers.set('authorization', `Bearer ${this.token}`);
      const started = performance.now();
      let response: Response;
      try {
        response = await doFetch(new Request(request.url, { method: request.method, headers, body }));
      } catch (err) {
        if (attempt < retries) {
          await sleep(backoff(attempt, null));
          continue;
        }
        throw err;
      }
      const text = await response.text();
      this.options.onExchange?.({
        method: request.method,
        url: request.url,
        requestBody: body,
        status: response.status,
        responseBody: text,
        ms: Math.round(performance.now() - started),
      });
      const parsed = parseJson(text);
      if (response.status === 401 && this.session && !signingIn && !renewed) {
        renewed = true;
        await this.renewSession();
        headers.delete('authorization');
        continue;
      }
      if (RETRY_STATUSES.has(response.status) && attempt < retries && retryable(response.status, parsed)) {
        await sleep(backoff(attempt, response.headers.get('retry-after')));
        continue;
      }
      if (response.status >= 400)
        throw new PurserError(
          response.status,
          parsed,
          response.headers.get('x-request-id'),
          response.headers.get('payment-required'),
        );
      return new Response(text, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
  }
}

/** 409 is retried only while the first attempt is in flight; a real conflict is final. */
function retryable(status: number, body: unknown): boolean {
  if (status !== 409) return true;
  const b = body as { code?: string } | null;
  return b?.code === 'IDEMPOTENCY_CONFLICT';
}

function backoff(attempt: number, retryAfter: string | null): number {
  const seconds = retryAfter !== null ? Number(retryAfter) : NaN;
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, 30_000);
  return Math.min(250 * 2 ** attempt, 5_000);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The data of an answer, for `await ok(purser.api.POST(…))`: every error answer is already a
 * thrown PurserError, so what arrives here has data.
 */
export async function ok<T>(call: Promise<{ data?: T; response: Response }>): Promise<T> {
  const { data, response } = await call;
  if (data === undefined) throw new PurserError(response.status, null, response.headers.get('x-request-id'));
  return data;
}

/** Fields whose values never reach a printed exchange. */
const SECRET_FIELDS = /^(token|secret|signature|enable_sig|private_key|api_key)$/;

function redacted(text: string | null): string {
  if (!text) return '';
  const parsed = parseJson(text);
  if (typeof parsed !== 'object' || parsed === null)
    return text.length > 400 ? `${text.slice(0, 400)}…` : text;
  const shown = JSON.stringify(
    parsed,
    (key, value: unknown) => {
      if (SECRET_FIELDS.test(key) && typeof value === 'string') return `${value.slice(0, 6)}…(hidden)`;
      if (typeof value === 'string' && value.length > 120)
        return `${value.slice(0, 60)}…(${value.length} chars)`;
      return value;
    },
    2,
  );
  const lines = shown.split('\n');
  return lines.length > 40
    ? [...lines.slice(0, 40), `  … ${lines.length - 40} more lines`].join('\n')
    : shown;
}

/**
 * Prints an exchange for a reader: the request line and body, then the status, time and answer.
 * Tokens, secrets and signatures are cut short; long hex is abbreviated.
 */
export function printExchange(
  e: Exchange,
  write: (text: string) => void = (t) => process.stdout.write(t),
): void {
  const url = new URL(e.url);
  const indent = (text: string) => text.replace(/^/gm, '    ');
  write(`\n→ ${e.method} ${url.pathname}${url.search}\n`);
  if (e.requestBody) write(`${indent(redacted(e.requestBody))}\n`);
  write(`← ${e.status} (${e.ms} ms)\n`);
  if (e.responseBody) write(`${indent(redacted(e.responseBody))}\n`);
}
