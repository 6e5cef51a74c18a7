// A fake S3-compatible server on loopback for the S3 object store's tests: path-style PUT, GET,
// HEAD and DELETE of objects kept in memory. Every request's Authorization header is checked by
// recomputing AWS Signature V4 from the request as it arrived (written here on its own, not with
// the adapter's signer), and a PUT's body must hash to its `x-amz-content-sha256`. A request that
// fails a check gets S3's XML error (403 SignatureDoesNotMatch, 400 XAmzContentSHA256Mismatch…).

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeS3Options {
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface FakeS3Object {
  body: Buffer;
  contentType: string | undefined;
}

export interface FakeS3 {
  endpoint: string;
  objects: Map<string, FakeS3Object>;
  /** Every request as `METHOD key status`, in order. */
  log: string[];
  close(): Promise<void>;
}

const hex = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const mac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

function sendError(res: ServerResponse, status: number, code: string): void {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(
    `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`,
  );
}

/** Recomputes the signature of the request; returns an S3 error code when it does not verify. */
function verifySignature(req: IncomingMessage, options: FakeS3Options): string | null {
  const auth = req.headers['authorization'];
  if (typeof auth !== 'string') return 'AccessDenied';
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) return 'AuthorizationHeaderMalformed';
  const [, keyId, day, region, signedHeaders, signature] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (keyId !== options.accessKeyId) return 'InvalidAccessKeyId';
  if (region !== options.region) return 'AuthorizationHeaderMalformed';
  const stamp = req.headers['x-amz-date'];
  if (typeof stamp !== 'string' || stamp.slice(0, 8) !== day) return 'AccessDenied';
  const payloadHash = req.headers['x-amz-content-sha256'];
  if (typeof payloadHash !== 'string') return 'InvalidRequest';
  const names = signedHeaders.split(';');
  for (const required of ['host', 'x-amz-date', 'x-amz-content-sha256']) {
    if (!names.includes(required)) return 'AccessDenied';
  }
  const canonicalHeaders = names
    .map((name) => {
      const value = req.headers[name];
      const text = Array.isArray(value) ? value.join(',') : (value ?? '');
      return `${name}:${String(text).trim().replace(/\s+/g, ' ')}\n`;
    })
    .join('');
  const [path = '/', query = ''] = (req.url ?? '/').split('?');
  const canonicalQuery = query
    .split('&')
    .filter(Boolean)
    .map((pair) => (pair.includes('=') ? pair : `${pair}=`))
    .sort()
    .join('&');
  const canonicalRequest = [
    req.method,
    path,
    canonicalQuery,
    canonicalHeaders,
    signedHeaders,
    payloadHash,
  ].join('\n');
  const stringToSign = `AWS4-HMAC-SHA256\n${stamp}\n${day}/${region}/s3/aws4_request\n${hex(canonicalRequest)}`;
  let key = mac(`AWS4${options.secretAccessKey}`, day);
  key = mac(key, region);
  key = mac(key, 's3');
  key = mac(key, 'aws4_request');
  const expected = createHmac('sha256', key).update(stringToSign).digest();
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected)
    ? null
    : 'SignatureDoesNotMatch';
}

export async function startFakeS3(options: FakeS3Options): Promise<FakeS3> {
  const objects = new Map<string, FakeS3Object>();
  const log: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const prefix = `/${options.bucket}/`;
      const key = path.startsWith(prefix) ? decodeURIComponent(path.slice(prefix.length)) : null;
      const answer = (status: number, code?: string) => {
        log.push(`${req.method} ${key ?? path} ${status}`);
        if (code) sendError(res, status, code);
      };
      const failure = verifySignature(req, options);
      if (failure) return answer(403, failure);
      if (key === null || key === '') return answer(404, 'NoSuchBucket');
      const body = Buffer.concat(chunks);
      switch (req.method) {
        case 'PUT': {
          if (hex(body) !== req.headers['x-amz-content-sha256'])
            return answer(400, 'XAmzContentSHA256Mismatch');
          if (req.headers['content-length'] !== String(body.length)) return answer(400, 'IncompleteBody');
          objects.set(key, { body, contentType: req.headers['content-type'] });
          answer(200);
          res.writeHead(200, { etag: `"${createHash('md5').update(body).digest('hex')}"` });
          return res.end();
        }
        case 'GET':
        case 'HEAD': {
          const object = objects.get(key);
          if (!object) {
            if (req.method === 'HEAD') {
              answer(404);
              res.writeHead(404);
              return res.end();
            }
            return answer(404, 'NoSuchKey');
          }
          answer(200);
          res.writeHead(200, {
            'content-length': String(object.body.length),
            'content-type': object.contentType ?? 'application/octet-stream',
          });
          return res.end(req.method === 'GET' ? object.body : undefined);
        }
        case 'DELETE':
          objects.delete(key);
          answer(204);
          res.writeHead(204);
          return res.end();
        default:
          return answer(405, 'MethodNotAllowed');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    objects,
    log,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
