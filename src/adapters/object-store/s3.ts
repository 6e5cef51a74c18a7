// Any S3-compatible bucket (AWS S3, MinIO, Ceph, R2, …): path-style requests
// (`<endpoint>/<bucket>/<key>`) signed with AWS Signature V4 (sigv4.ts).
//
// Uploads: an object is staged in a local file while it is generated (its length and SHA-256 are
// unknown until the end), then sent in one PUT with `content-length` and a signed payload hash:
// `x-amz-content-sha256` is the SHA-256 of the staged bytes, which the staging file computed
// anyway (it is the statement's content hash), so the bucket verifies the body it received.
// A HEAD before the PUT makes writing an existing key a no-op.
//
// The secret key lives only in this closure: it is not a property of the store, and no error
// message, log line or response carries it.

import { createReadStream } from 'node:fs';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import type { Readable } from 'node:stream';
import { systemClock, type Clock } from '../../core/clock.ts';
import { assertObjectKey, ObjectStoreError, type ObjectStore, type StagedObject } from './port.ts';
import { EMPTY_PAYLOAD_SHA256, signRequestV4, uriEncode } from './sigv4.ts';
import { openStagingFile } from './staging.ts';

export interface S3ObjectStoreParameters {
  /** `http(s)://host[:port][/prefix]` of the S3 API. */
  endpoint: string;
  bucket: string;
  /** Signing region (`us-east-1` for most S3-compatible servers). */
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Where objects are staged before their upload (default: the OS temp directory). */
  stagingDir?: string;
  /** Signing time (default: the system clock; S3 refuses signatures more than 15 minutes off). */
  clock?: Clock;
  /** Per request, until the response headers arrive; default 30 s. */
  timeoutMs?: number;
}

interface SendParameters {
  method: 'GET' | 'HEAD' | 'PUT' | 'DELETE';
  key: string;
  headers?: Record<string, string>;
  payloadSha256Hex?: string;
  body?: () => Readable;
}

const MAX_ERROR_BODY = 4096;

export function createS3ObjectStore(params: S3ObjectStoreParameters): ObjectStore {
  const base = new URL(params.endpoint);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new RangeError('the S3 endpoint must be an http(s) URL');
  }
  const transport = base.protocol === 'https:' ? https : http;
  const agent = new transport.Agent({ keepAlive: true, maxSockets: 16 });
  const prefix = base.pathname.replace(/\/+$/, '');
  const clock = params.clock ?? systemClock;
  const timeoutMs = params.timeoutMs ?? 30_000;
  const stagingDir = params.stagingDir ?? tmpdir();
  const { secretAccessKey } = params;

  const pathOf = (key: string) => {
    assertObjectKey(key);
    return `${prefix}/${uriEncode(params.bucket)}/${key.split('/').map(uriEncode).join('/')}`;
  };

  const send = (p: SendParameters): Promise<IncomingMessage> => {
    const path = pathOf(p.key);
    const signed = signRequestV4({
      method: p.method,
      path,
      headers: { host: base.host, ...p.headers },
      payloadSha256Hex: p.payloadSha256Hex ?? EMPTY_PAYLOAD_SHA256,
      region: params.region,
      service: 's3',
      accessKeyId: params.accessKeyId,
      secretAccessKey,
      date: clock.now(),
    });
    return new Promise((resolve, reject) => {
      const req = transport.request(
        {
          method: p.method,
          protocol: base.protocol,
          hostname: base.hostname.replace(/^\[(.*)\]$/, '$1'),
          port: base.port || undefined,
          path,
          headers: signed.headers,
          agent,
        },
        resolve,
      );
      req.setTimeout(timeoutMs, () =>
        req.destroy(new ObjectStoreError(`statement bucket: ${p.method} timed out after ${timeoutMs} ms`)),
      );
      req.on('error', (err) =>
        reject(
          err instanceof ObjectStoreError
            ? err
            : new ObjectStoreError(
                `statement bucket: ${p.method} failed (${codeOf(err)})`,
                {},
                { cause: err },
              ),
        ),
      );
      if (p.body) {
        const body = p.body();
        body.on('error', (err) => req.destroy(err));
        body.pipe(req);
      } else {
        req.end();
      }
    });
  };

  const head = async (key: string): Promise<{ bytes: number } | null> => {
    const res = await send({ method: 'HEAD', key });
    res.resume();
    if (res.statusCode === 404) return null;
    if (res.statusCode !== 200) throw await failure('HEAD', res);
    return { bytes: Number(res.headers['content-length'] ?? 0) };
  };

  const stage = async (): Promise<StagedObject> => {
    const file = await openStagingFile(stagingDir).catch((err: unknown) => {
      throw stagingError('opening', err);
    });
    let sealed: { bytes: number; sha256Hex: string } | null = null;
    return {
      write: (chunk) =>
        file.write(chunk).catch((err: unknown) => {
          throw stagingError('writing', err);
        }),
      seal: async () => {
        sealed = await file.seal().catch((err: unknown) => {
          throw stagingError('flushing', err);
        });
        return sealed;
      },
      commit: async (key, contentType) => {
        if (!sealed) throw new Error('commit before seal');
        const { bytes, sha256Hex } = sealed;
        try {
          if (await head(key)) return { created: false };
          const res = await send({
            method: 'PUT',
            key,
            headers: { 'content-type': contentType, 'content-length': String(bytes) },
            payloadSha256Hex: sha256Hex,
            body: () => createReadStream(file.path),
          });
          if (res.statusCode !== 200) throw await failure('PUT', res);
          res.resume();
          return { created: true };
        } finally {
          await file.remove();
        }
      },
      discard: () => file.remove(),
    };
  };

  return {
    kind: 's3',
    stage,
    head,
    get: async (key) => {
      const res = await send({ method: 'GET', key });
      if (res.statusCode === 404) {
        res.resume();
        return null;
      }
      if (res.statusCode !== 200) throw await failure('GET', res);
      return { body: res, bytes: Number(res.headers['content-length'] ?? 0) };
    },
    delete: async (key) => {
      const res = await send({ method: 'DELETE', key });
      if (res.statusCode === 204 || res.statusCode === 200 || res.statusCode === 404) {
        res.resume();
        return;
      }
      throw await failure('DELETE', res);
    },
  };
}

function stagingError(what: string, err: unknown): ObjectStoreError {
  return new ObjectStoreError(
    `statement bucket: ${what} the local staging file failed (${codeOf(err)})`,
    {},
    {
      cause: err,
    },
  );
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'error';
}

/** An error naming the status and the S3 error code of the body (`<Code>…</Code>`), nothing else. */
async function failure(method: string, res: IncomingMessage): Promise<ObjectStoreError> {
  const status = res.statusCode ?? 0;
  let text = '';
  if (method !== 'HEAD') {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      if (text.length < MAX_ERROR_BODY) text += chunk.toString('utf8');
    }
  } else {
    res.resume();
  }
  const code = /<Code>([A-Za-z0-9.]{1,64})<\/Code>/.exec(text)?.[1];
  return new ObjectStoreError(
    `statement bucket: ${method} answered ${status}${code ? ` ${code}` : ''}`,
    code ? { status, code } : { status },
  );
}
