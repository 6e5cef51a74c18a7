// Kalshi's trade API (v2): checking an API key with a signed `GET /portfolio/balance`.
//
// Request signing, as Kalshi documents it (docs.kalshi.com, "API Keys" and "Quick Start:
// Authenticated Requests"; Kalshi's starter code github.com/Kalshi/kalshi-starter-code-python
// clients.py and its TypeScript SDK kalshi-typescript auth.ts do the same):
// - headers KALSHI-ACCESS-KEY (the key id), KALSHI-ACCESS-TIMESTAMP (milliseconds since the
//   epoch) and KALSHI-ACCESS-SIGNATURE;
// - message = timestamp + HTTP method + path, the path without the query string and including the
//   `/trade-api/v2` prefix (`1703123456789GET/trade-api/v2/portfolio/balance`);
// - RSA-PSS, SHA-256, MGF1-SHA-256, salt length = digest length, base64.
// Key ids look like `a952bcbe-ec3b-4b5b-b8f9-11dae589608c` (the docs' example): a UUID. The
// private key is the RSA key Kalshi hands out once when the key is made (PEM).
// Not documented, and so not relied on: how far the timestamp may drift from Kalshi's clock, the
// text of a 401's `details`, and whether a 429 carries Retry-After (read when present).
//
// Nothing here puts key material (the private key or the signature) in an error or a reason.

import { constants, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { systemClock, type Clock } from '../../core/clock.ts';
import { parseRetryAfter } from '../venues/aggregator-http.ts';
import { VenueUnavailable, type CredentialCheck, type KalshiApiKey, type KalshiPort } from './port.ts';

/** Kalshi's production and demo trade API (Kalshi's starter code). */
export const KALSHI_PRODUCTION_BASE_URL = 'https://api.elections.kalshi.com/trade-api/v2';
export const KALSHI_DEMO_BASE_URL = 'https://demo-api.kalshi.co/trade-api/v2';

export interface KalshiAdapterOptions {
  /** The trade API root including `/trade-api/v2`, e.g. KALSHI_PRODUCTION_BASE_URL or a fake's `baseUrl`. */
  baseUrl: string;
  timeoutMs: number;
  fetch?: typeof fetch;
  /** What the timestamp is taken from (default the system clock). */
  clock?: Clock;
}

export type KalshiKeyFormatCheck = { ok: true } | { ok: false; reason: string };
export type KalshiPrivateKeyCheck =
  { ok: true; format: 'pkcs1' | 'pkcs8'; modulusBits: number } | { ok: false; reason: string };

export const KALSHI_KEY_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const KALSHI_MIN_MODULUS_BITS = 2048;

/** Whether `keyId` has the form of a Kalshi API key id (a UUID). */
export function validateKalshiKeyId(keyId: unknown): KalshiKeyFormatCheck {
  if (typeof keyId !== 'string' || !KALSHI_KEY_ID_PATTERN.test(keyId)) {
    return { ok: false, reason: 'a Kalshi API key id is a UUID (8-4-4-4-12 hexadecimal digits)' };
  }
  return { ok: true };
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;

function loadPrivateKey(
  pem: unknown,
): { ok: true; key: KeyObject; format: 'pkcs1' | 'pkcs8' } | { ok: false; reason: string } {
  if (typeof pem !== 'string') return { ok: false, reason: 'the private key must be PEM text' };
  const text = pem.trim();
  const blocks = [...text.matchAll(PEM_BLOCK)];
  if (blocks.length === 0) {
    return {
      ok: false,
      reason: 'the private key is not PEM (-----BEGIN RSA PRIVATE KEY----- or -----BEGIN PRIVATE KEY-----)',
    };
  }
  if (blocks.length > 1 || blocks[0]?.[0] !== text) {
    return { ok: false, reason: 'the private key must be exactly one PEM block, with nothing around it' };
  }
  const [, label = '', body = ''] = blocks[0];
  let format: 'pkcs1' | 'pkcs8';
  switch (label) {
    case 'RSA PRIVATE KEY':
      if (/^Proc-Type:\s*4,ENCRYPTED/m.test(body)) {
        return {
          ok: false,
          reason: 'the private key is encrypted; give the key without a passphrase, as Kalshi issues it',
        };
      }
      format = 'pkcs1';
      break;
    case 'PRIVATE KEY':
      format = 'pkcs8';
      break;
    case 'ENCRYPTED PRIVATE KEY':
      return {
        ok: false,
        reason: 'the private key is encrypted; give the key without a passphrase, as Kalshi issues it',
      };
    case 'PUBLIC KEY':
    case 'RSA PUBLIC KEY':
      return { ok: false, reason: 'this is a public key; requests are signed with the private key' };
    default:
      return { ok: false, reason: `a PEM "${label}" block is not an RSA private key (PKCS#1 or PKCS#8)` };
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch {
    return { ok: false, reason: 'the PEM block does not hold a readable private key' };
  }
  if (key.asymmetricKeyType !== 'rsa') {
    return {
      ok: false,
      reason: `the private key is an ${String(key.asymmetricKeyType)} key; Kalshi keys are RSA`,
    };
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < KALSHI_MIN_MODULUS_BITS) {
    return {
      ok: false,
      reason: `the private key is a ${bits}-bit RSA key; at least ${KALSHI_MIN_MODULUS_BITS} bits are needed`,
    };
  }
  return { ok: true, key, format };
}

/**
 * Whether `pem` is a usable Kalshi private key: one unencrypted RSA private key in PKCS#1
 * (`RSA PRIVATE KEY`) or PKCS#8 (`PRIVATE KEY`) PEM, of at least 2048 bits. The reason never
 * quotes the key.
 */
export function validateKalshiPrivateKey(pem: unknown): KalshiPrivateKeyCheck {
  const loaded = loadPrivateKey(pem);
  if (!loaded.ok) return loaded;
  return {
    ok: true,
    format: loaded.format,
    modulusBits: loaded.key.asymmetricKeyDetails?.modulusLength ?? 0,
  };
}

/** The three authentication headers for `method path` (path without the query string). */
export function kalshiAuthHeaders(
  keyId: string,
  privateKey: KeyObject,
  method: string,
  path: string,
  timestampMs: number,
): Record<string, string> {
  const timestamp = String(Math.trunc(timestampMs));
  const message = Buffer.from(`${timestamp}${method.toUpperCase()}${path.split('?')[0]}`, 'utf8');
  const signature = sign('sha256', message, {
    key: privateKey,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
  });
  return {
    'KALSHI-ACCESS-KEY': keyId,
    'KALSHI-ACCESS-TIMESTAMP': timestamp,
    'KALSHI-ACCESS-SIGNATURE': signature.toString('base64'),
  };
}

/** Kalshi's error envelope, read for a reason: `code` and `details` only, printable and short. */
function refusalDetail(body: unknown): string {
  const inner = (body as { error?: unknown } | null)?.error ?? body;
  if (typeof inner !== 'object' || inner === null) return '';
  const { code, details, message } = inner as { code?: unknown; details?: unknown; message?: unknown };
  const parts = [code, typeof details === 'string' && details !== '' ? details : message]
    .filter((p): p is string => typeof p === 'string' && p !== '')
    .map((p) => p.replace(/[^\x20-\x7e]/g, ' ').slice(0, 200));
  return [...new Set(parts)].join(': ');
}

export function createKalshiAdapter(options: KalshiAdapterOptions): KalshiPort {
  const doFetch = options.fetch ?? fetch;
  const clock = options.clock ?? systemClock;
  const root = new URL(options.baseUrl);
  const basePath = root.pathname.replace(/\/+$/, '');
  const balancePath = `${basePath}/portfolio/balance`;
  const balanceUrl = new URL(balancePath, root).toString();

  return {
    async checkApiKey(key: KalshiApiKey): Promise<CredentialCheck> {
      const id = validateKalshiKeyId(key.keyId);
      if (!id.ok) return id;
      const loaded = loadPrivateKey(key.privateKeyPem);
      if (!loaded.ok) return { ok: false, reason: loaded.reason };

      const headers = kalshiAuthHeaders(key.keyId, loaded.key, 'GET', balancePath, clock.now().getTime());
      let res: Response;
      try {
        res = await doFetch(balanceUrl, {
          method: 'GET',
          headers: { accept: 'application/json', ...headers },
          signal: AbortSignal.timeout(options.timeoutMs),
        });
      } catch (err) {
        const name = (err as Error).name;
        if (name === 'TimeoutError' || name === 'AbortError') {
          throw new VenueUnavailable(`Kalshi did not answer within ${options.timeoutMs} ms`);
        }
        const cause = (err as { cause?: { code?: unknown } }).cause?.code;
        throw new VenueUnavailable(
          `Kalshi could not be reached${typeof cause === 'string' ? ` (${cause})` : ''}`,
        );
      }

      if (res.status === 401 || res.status === 403) {
        const body: unknown = await res.json().catch(() => null);
        const detail = refusalDetail(body);
        return {
          ok: false,
          reason: `Kalshi refused the API key (HTTP ${res.status}${detail ? `, ${detail}` : ''})`,
        };
      }
      if (res.status === 429) {
        await res.body?.cancel();
        const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), clock.now()) ?? null;
        throw new VenueUnavailable('Kalshi is limiting the rate of requests (HTTP 429)', retryAfterMs);
      }
      if (res.status !== 200) {
        await res.body?.cancel();
        throw new VenueUnavailable(`Kalshi answered HTTP ${res.status}`);
      }
      let body: unknown;
      try {
        body = await res.json();
      } catch {
        throw new VenueUnavailable('Kalshi answered 200 with a body that is not JSON');
      }
      if (!Number.isSafeInteger((body as { balance?: unknown } | null)?.balance)) {
        throw new VenueUnavailable("Kalshi's balance answer is not in its format (no whole-cent `balance`)");
      }
      return { ok: true };
    },
  };
}
