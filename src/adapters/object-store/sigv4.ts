// AWS Signature Version 4 for S3-compatible requests (header-based, `AWS4-HMAC-SHA256`):
// canonical request → string to sign → HMAC chain of date, region, service → hex signature.
// Only node:crypto; the secret key enters the HMAC chain and nothing else.

import { createHash, createHmac } from 'node:crypto';

export const EMPTY_PAYLOAD_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

export interface SignRequestV4Parameters {
  method: string;
  /** The request path exactly as sent: each segment already encoded with `uriEncode`. */
  path: string;
  /** Query parameters (unencoded); empty for object reads and writes. */
  query?: [string, string][];
  /**
   * Headers to sign, names in any case; must include `host`. `x-amz-date` and
   * `x-amz-content-sha256` are added by the signer.
   */
  headers: Record<string, string>;
  /** SHA-256 (hex) of the body; `EMPTY_PAYLOAD_SHA256` for none. */
  payloadSha256Hex: string;
  region: string;
  service: string;
  accessKeyId: string;
  secretAccessKey: string;
  date: Date;
}

export interface SignRequestV4ReturnType {
  /** Every header that was signed (lowercase names), plus `authorization`. */
  headers: Record<string, string>;
  /** Intermediate values, for tests and diagnostics (never the secret or the signing key). */
  canonicalRequest: string;
  stringToSign: string;
}

/** RFC 3986 encoding as SigV4 wants it: everything but `A-Z a-z 0-9 - _ . ~` is %XX (uppercase). */
export function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** `20130524T000000Z`. */
export function amzDate(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

const sha256Hex = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/** Signs one request; returns the headers to send with it (`authorization` included). */
export function signRequestV4(params: SignRequestV4Parameters): SignRequestV4ReturnType {
  const stamp = amzDate(params.date);
  const day = stamp.slice(0, 8);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(params.headers)) headers[name.toLowerCase()] = value;
  headers['x-amz-date'] = stamp;
  headers['x-amz-content-sha256'] = params.payloadSha256Hex;
  if (!headers['host']) throw new Error('signRequestV4: the host header is required');

  const names = Object.keys(headers).sort();
  const canonicalHeaders = names
    .map((n) => `${n}:${(headers[n] ?? '').trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const signedHeaders = names.join(';');
  const canonicalQuery = (params.query ?? [])
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([ka, va], [kb, vb]) => (ka < kb ? -1 : ka > kb ? 1 : va < vb ? -1 : va > vb ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalRequest = [
    params.method.toUpperCase(),
    params.path || '/',
    canonicalQuery,
    canonicalHeaders,
    signedHeaders,
    params.payloadSha256Hex,
  ].join('\n');

  const scope = `${day}/${params.region}/${params.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', stamp, scope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = hmac(
    hmac(hmac(hmac(`AWS4${params.secretAccessKey}`, day), params.region), params.service),
    'aws4_request',
  );
  const signature = createHmac('sha256', signingKey).update(stringToSign, 'utf8').digest('hex');
  headers['authorization'] =
    `AWS4-HMAC-SHA256 Credential=${params.accessKeyId}/${scope}, ` +
    `SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return { headers, canonicalRequest, stringToSign };
}
