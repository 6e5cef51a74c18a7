// Every way the service answers 4xx/5xx carries the error body `{code, message, remediation,
// docs_url, request_id, next?}` (spec sections 2 and 7): unknown paths (under /docs too), 405,
// 413, 415, 429, the operator surface, the static files of the API reference, and requests that
// Node's HTTP parser refuses before any route sees them.

import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { checkErrorShape, expectErrorBody } from './support/error-body.ts';

const OPERATOR_TOKEN = 'operator-token-for-error-bodies-0123456789';
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ config: { publicRateLimitPerMinute: 3, operatorToken: OPERATOR_TOKEN } });
});
afterAll(async () => {
  await t?.close();
});

const inject = (method: string, url: string, headers: Record<string, string> = {}, payload?: string) =>
  t.app.fastify.inject({
    method: method as 'GET',
    url,
    headers,
    ...(payload === undefined ? {} : { payload }),
  });

describe('framework and plugin answers', () => {
  it.each([
    ['GET', '/no/such/path', 404, 'NOT_FOUND'],
    ['GET', '/docs/no-such-page', 404, 'NOT_FOUND'],
    ['GET', '/docs/static/no-such-file.js', 404, 'NOT_FOUND'],
    ['POST', '/docs/errors', 405, 'METHOD_NOT_ALLOWED'],
    ['GET', '/v1/ops/billing', 401, 'UNAUTHORIZED'],
    ['GET', '/v1/statements/exports/sha256:00', 401, 'UNAUTHORIZED'],
  ] as const)('%s %s is %i %s with the error body', async (method, url, status, code) => {
    expectErrorBody(await inject(method, url), status, code);
  });

  it('answers 413 and 415 with the error body', async () => {
    const big = JSON.stringify({ title: 'x'.repeat(t.deps.config.bodyLimitBytes + 10) });
    expectErrorBody(
      await inject('POST', '/v1/feedback', { 'content-type': 'application/json' }, big),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    expectErrorBody(
      await inject('POST', '/v1/feedback', { 'content-type': 'text/plain' }, 'hello'),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('gives the static files of the API reference the error body, with a remediation that fits', async () => {
    const range = await inject('GET', '/docs/static/swagger-ui.css', { range: 'bytes=999999999-' });
    const rangeBody = expectErrorBody(range, 416, 'INVALID_REQUEST');
    expect(rangeBody.remediation).toMatch(/Range/);
    const precondition = await inject('GET', '/docs/static/swagger-ui.css', { 'if-match': '"not-this"' });
    expect(expectErrorBody(precondition, 412, 'INVALID_REQUEST').remediation).toMatch(/If-Match/);
    // A path the static server refuses is not a scope problem: no whoami, no field to fix.
    const forbidden = expectErrorBody(await inject('GET', '/docs/static/%00'), 403, 'FORBIDDEN');
    expect(forbidden.next).toBeUndefined();
    expect(forbidden.remediation).not.toMatch(/scope|fields/);
  });

  it('answers 429 from the rate limiter with the error body and Retry-After', async () => {
    let last = await inject('GET', '/v1/feedback');
    for (let i = 0; i < 5 && last.statusCode !== 429; i++) last = await inject('GET', '/v1/feedback');
    expectErrorBody(last, 429, 'RATE_LIMITED');
    expect(Number(last.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('requests the HTTP parser refuses', () => {
  let port = 0;
  beforeAll(async () => {
    await t.app.fastify.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.fastify.server.address() as AddressInfo).port;
  });

  /** Sends raw bytes and reads the whole answer until the server closes the connection. */
  const raw = (text: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(text));
      let out = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (out += d));
      socket.on('close', () => resolve(out));
      socket.on('error', reject);
    });

  const parse = (answer: string) => {
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    const [statusLine = '', ...lines] = head.split('\r\n');
    const headers = Object.fromEntries(
      lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    );
    return {
      status: Number(statusLine.split(' ')[1]),
      headers,
      body: JSON.parse(body) as Record<string, unknown>,
    };
  };

  it('answers headers over the limit with 431 and the error body', async () => {
    const res = parse(
      await raw(`GET /v1/feedback HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    expect(res.status).toBe(431);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    checkErrorShape(res.body, res.headers['x-request-id'], 'INVALID_REQUEST');
  });

  it('answers malformed HTTP with 400 and the error body', async () => {
    const res = parse(await raw('NOT HTTP AT ALL\r\n\r\n'));
    expect(res.status).toBe(400);
    checkErrorShape(res.body, res.headers['x-request-id'], 'INVALID_REQUEST');
  });
});
