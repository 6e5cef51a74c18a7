// A loopback fake of Kalshi's trade API (v2), as much of it as checking an API key needs: the
// authenticated read `GET /trade-api/v2/portfolio/balance`, with Kalshi's request signing.
// Development and tests only.
//
// The signing, as Kalshi documents it (docs.kalshi.com, "API Keys" and "Quick Start: Authenticated
// Requests"; the same in Kalshi's starter code, github.com/Kalshi/kalshi-starter-code-python
// clients.py, and its TypeScript SDK, kalshi-typescript auth.ts):
// - three headers: KALSHI-ACCESS-KEY (the key id), KALSHI-ACCESS-TIMESTAMP (the request time in
//   milliseconds since the epoch), KALSHI-ACCESS-SIGNATURE;
// - the signed message is timestamp + HTTP method + path, the path without the query string and
//   with the `/trade-api/v2` prefix (the docs' example: `1703123456789GET/trade-api/v2/portfolio/balance`);
// - RSA-PSS with SHA-256, MGF1 with SHA-256, salt length = the digest length (32 bytes), the
//   signature in standard base64.
// The balance answer is Kalshi's GetBalanceResponse (openapi.yaml: `balance` and `portfolio_value`
// in cents, `balance_dollars` a fixed-point dollar string, `updated_ts` unix seconds).
//
// Not documented by Kalshi, so chosen here:
// - the error body. Kalshi's openapi.yaml describes ErrorResponse as {code, message, details,
//   service}, while the 401 reported from the live API wraps it: {"error": {"code":
//   "authentication_error", "message": "authentication_error", "details": "rpc error: code =
//   Unauthenticated desc = INCORRECT_API_KEY_SIGNATURE"}}. The fake answers the wrapped form;
//   only the bad-signature `details` is as reported, the other `details` strings are the fake's;
// - how far the timestamp may be from the server's clock (`maxTimestampSkewMs`, default 30 s);
// - the 429 body; Kalshi's 429 reportedly carries no Retry-After (knob `rateLimited`), while
//   `rateLimitRetryAfter` answers one for clients that read it;
// - the 404 and 5xx bodies.

import { constants, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { systemClock, type Clock } from '../../core/clock.ts';
import {
  defaultKnobs,
  MALFORMED_BODY,
  serveFake,
  type FakeAnswer,
  type FakeKnobs,
  type FakeRequest,
  type RunningFake,
} from './loopback.ts';

export const KALSHI_API_PREFIX = '/trade-api/v2';

export interface KalshiFakeKey {
  keyId: string;
  /** The key's public half (SPKI or PKCS#1 PEM; a private key PEM also works). */
  publicKeyPem: string;
  /** What the balance answers, in cents (default 10 000, $100). */
  balanceCents?: number;
}

export interface KalshiFakeOptions {
  keys?: KalshiFakeKey[];
  /** How far KALSHI-ACCESS-TIMESTAMP may be from the fake's clock, either way (default 30 000 ms). */
  maxTimestampSkewMs?: number;
  /** The fake's clock (default the system clock); `knobs.clockOffsetMs` moves it further. */
  clock?: Clock;
  host?: string;
  /** Default 0: a free port. */
  port?: number;
}

export interface KalshiFakeKnobs extends FakeKnobs {
  /** Answer 429 without a Retry-After header (as Kalshi reportedly does). */
  rateLimited: boolean;
  /** Added to the fake's clock, in ms: 60 000 makes a timestamp taken now a minute old. */
  clockOffsetMs: number;
}

export interface KalshiFake extends RunningFake<KalshiFakeKnobs> {
  /** `url` + `/trade-api/v2`: what the Kalshi adapter takes as `baseUrl`. */
  baseUrl: string;
  registerKey(keyId: string, publicKeyPem: string, options?: { balanceCents?: number }): void;
  /** The key is unknown from now on (as after deleting it in Kalshi's settings). */
  revokeKey(keyId: string): void;
}

export type KalshiErrorBody = { error: { code: string; message: string; details?: string } };

const errorBody = (code: string, message: string, details?: string): KalshiErrorBody => ({
  error: { code, message, ...(details === undefined ? {} : { details }) },
});

/** Kalshi's body for a request whose key, timestamp or signature it does not accept (401). */
export function kalshiAuthError(details: string): KalshiErrorBody {
  return errorBody('authentication_error', 'authentication_error', details);
}

/** The `details` the live API was reported to send for a signature that does not verify. */
export const KALSHI_BAD_SIGNATURE_DETAILS =
  'rpc error: code = Unauthenticated desc = INCORRECT_API_KEY_SIGNATURE';
export const KALSHI_RATE_LIMITED_BODY = errorBody('too_many_requests', 'too many requests');

interface Registered {
  publicKey: KeyObject;
  balanceCents: number;
}

const DIGITS = /^\d{1,16}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function header(req: FakeRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? undefined : value;
}

export async function startKalshiFake(options: KalshiFakeOptions = {}): Promise<KalshiFake> {
  const clock = options.clock ?? systemClock;
  const maxSkewMs = options.maxTimestampSkewMs ?? 30_000;
  const keys = new Map<string, Registered>();

  const registerKey = (keyId: string, publicKeyPem: string, extra: { balanceCents?: number } = {}) => {
    const balanceCents = extra.balanceCents ?? 10_000;
    if (!Number.isSafeInteger(balanceCents) || balanceCents < 0) {
      throw new Error('startKalshiFake: balanceCents must be a whole number of cents ≥ 0');
    }
    const publicKey = createPublicKey(publicKeyPem);
    if (publicKey.asymmetricKeyType !== 'rsa') throw new Error('startKalshiFake: Kalshi keys are RSA keys');
    keys.set(keyId, { publicKey, balanceCents });
  };
  for (const key of options.keys ?? []) {
    registerKey(
      key.keyId,
      key.publicKeyPem,
      key.balanceCents === undefined ? {} : { balanceCents: key.balanceCents },
    );
  }

  /** The key the request is signed with, or Kalshi's 401. */
  function authenticate(req: FakeRequest, knobs: KalshiFakeKnobs): Registered | FakeAnswer {
    const keyId = header(req, 'kalshi-access-key');
    const timestamp = header(req, 'kalshi-access-timestamp');
    const signature = header(req, 'kalshi-access-signature');
    if (!keyId || !timestamp || !signature) {
      return {
        status: 401,
        body: kalshiAuthError(
          'KALSHI-ACCESS-KEY, KALSHI-ACCESS-TIMESTAMP and KALSHI-ACCESS-SIGNATURE are required',
        ),
      };
    }
    if (!DIGITS.test(timestamp)) {
      return {
        status: 401,
        body: kalshiAuthError('KALSHI-ACCESS-TIMESTAMP must be milliseconds since the epoch'),
      };
    }
    const now = clock.now().getTime() + knobs.clockOffsetMs;
    if (Math.abs(now - Number(timestamp)) > maxSkewMs) {
      return { status: 401, body: kalshiAuthError('KALSHI-ACCESS-TIMESTAMP is outside the accepted window') };
    }
    const registered = keys.get(keyId);
    if (!registered) return { status: 401, body: kalshiAuthError('API key not found') };
    // Node puts the path, without the query string, in `req.path`: what Kalshi signs.
    const message = Buffer.from(`${timestamp}${req.method}${req.path}`, 'utf8');
    let valid = false;
    try {
      valid =
        BASE64.test(signature) &&
        verify(
          'sha256',
          message,
          {
            key: registered.publicKey,
            padding: constants.RSA_PKCS1_PSS_PADDING,
            saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
          },
          Buffer.from(signature, 'base64'),
        );
    } catch {
      valid = false; // a signature of the wrong length, say
    }
    if (!valid) return { status: 401, body: kalshiAuthError(KALSHI_BAD_SIGNATURE_DETAILS) };
    return registered;
  }

  async function handle(req: FakeRequest, knobs: KalshiFakeKnobs): Promise<FakeAnswer> {
    if (knobs.rateLimitRetryAfter !== null) {
      return {
        status: 429,
        body: KALSHI_RATE_LIMITED_BODY,
        headers: { 'retry-after': knobs.rateLimitRetryAfter },
      };
    }
    if (knobs.rateLimited) return { status: 429, body: KALSHI_RATE_LIMITED_BODY };
    if (knobs.serverError !== null) {
      return { status: knobs.serverError, body: errorBody('internal_server_error', 'internal server error') };
    }
    if (req.method === 'GET' && req.path === `${KALSHI_API_PREFIX}/portfolio/balance`) {
      const auth = authenticate(req, knobs);
      if ('status' in auth) return auth;
      if (knobs.malformedJson) return { status: 200, body: MALFORMED_BODY };
      const cents = auth.balanceCents;
      return {
        status: 200,
        body: {
          balance: cents,
          balance_dollars: `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}00`,
          portfolio_value: 0,
          updated_ts: Math.floor(clock.now().getTime() / 1000),
        },
      };
    }
    return { status: 404, body: errorBody('not_found', 'not found') };
  }

  const fake = await serveFake<KalshiFakeKnobs>({
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.port === undefined ? {} : { port: options.port }),
    knobs: () => ({ ...defaultKnobs(), rateLimited: false, clockOffsetMs: 0 }),
    handle,
    internalError: () => errorBody('internal_server_error', 'internal server error'),
  });

  return {
    ...fake,
    baseUrl: `${fake.url}${KALSHI_API_PREFIX}`,
    registerKey,
    revokeKey: (keyId) => {
      keys.delete(keyId);
    },
  };
}
