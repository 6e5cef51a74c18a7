// The HTTP core as a client meets it: every error path answers with exactly the spec's error
// body, the request id travels in the x-request-id header, and docs_url leads to a real anchor.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { Type } from 'typebox';
import { buildApp } from '../src/app.ts';
import { openPostgres } from '../src/core/db/database.ts';
import { ERROR_CODES } from '../src/core/errors/codes.ts';
import { defineRoute, type RouteDefinition } from '../src/core/http/route-table.ts';
import { everyRoute } from './support/routes.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { expectErrorBody } from './support/error-body.ts';
import { busyWait, countProbeWrites, createProbeTable, sleep, writeProbe } from './support/probes.ts';
import { PROBE_DOCS } from './support/probes.ts';

const PUBLIC_URL = 'https://purser.example.test';
const RATE_LIMIT = 3;
const BODY_LIMIT = 2048;

const probes: RouteDefinition[] = [
  writeProbe({ url: '/v1/probe/items', operationId: 'probeItemsCreate' }),
  writeProbe({ url: '/v1/probe/boxes/{box}/items', operationId: 'probeBoxItemsCreate' }),
  defineRoute({
    method: 'GET',
    url: '/v1/probe/list',
    operationId: 'probeList',
    summary: 'probe: query validation',
    tags: ['probe'],
    class: 'public',
    wallet: false,
    rateLimited: false,
    docs: PROBE_DOCS,
    schema: {
      querystring: Type.Object(
        {
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
          cursor: Type.Optional(Type.String({ pattern: '^c_[a-z0-9]+$' })),
        },
        { additionalProperties: false },
      ),
      response: { 200: Type.Object({ limit: Type.Integer() }) },
    },
    handler: async ({ query }) => ({ status: 200, body: { limit: query.limit ?? 50 } }),
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/probe/limited',
    operationId: 'probeLimited',
    summary: 'probe: public and rate limited',
    tags: ['probe'],
    class: 'public',
    wallet: false,
    docs: PROBE_DOCS,
    schema: { response: { 200: Type.Object({ ok: Type.Boolean() }) } },
    handler: async () => ({ status: 200, body: { ok: true } }),
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/probe/stuck',
    operationId: 'probeStuck',
    summary: 'probe: waits on a third party longer than its budget',
    tags: ['probe'],
    class: 'public',
    wallet: false,
    rateLimited: false,
    budgetMs: 200,
    docs: PROBE_DOCS,
    schema: { response: { 200: Type.Object({ ok: Type.Boolean() }) } },
    handler: async () => {
      await sleep(1500);
      return { status: 200, body: { ok: true } };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/probe/broadcast',
    operationId: 'probeBroadcast',
    summary: 'probe: spends its budget, then checks it before broadcasting',
    tags: ['probe'],
    class: 'public',
    wallet: false,
    rateLimited: false,
    budgetMs: 50,
    docs: PROBE_DOCS,
    schema: { response: { 200: Type.Object({ ok: Type.Boolean() }) } },
    handler: async ({ deadline }) => {
      busyWait(80);
      deadline.check('broadcast');
      return { status: 200, body: { ok: true } };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/probe/swap',
    operationId: 'probeSwap',
    summary: 'probe: sends an approval, spends its budget, then checks before the swap',
    tags: ['probe'],
    class: 'public',
    wallet: false,
    rateLimited: false,
    budgetMs: 50,
    docs: PROBE_DOCS,
    schema: { response: { 200: Type.Object({ ok: Type.Boolean() }) } },
    handler: async ({ deadline }) => {
      deadline.check('approval broadcast');
      deadline.markTransmitted('approval transaction 0xabc1');
      busyWait(80);
      deadline.check('swap broadcast');
      return { status: 200, body: { ok: true } };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/probe/db-refused',
    operationId: 'probeDbRefused',
    summary: 'probe: the database refuses the connection',
    tags: ['probe'],
    class: 'public',
    wallet: false,
    rateLimited: false,
    docs: PROBE_DOCS,
    schema: { response: { 200: Type.Object({}) } },
    handler: async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/probe/boom',
    operationId: 'probeBoom',
    summary: 'probe: an unexpected error',
    tags: ['probe'],
    class: 'public',
    wallet: false,
    rateLimited: false,
    docs: PROBE_DOCS,
    schema: { response: { 200: Type.Object({}) } },
    handler: async () => {
      throw new Error('pool password is hunter2');
    },
  }),
];

let t: TestApp;
const inject = (options: InjectOptions) => t.app.fastify.inject(options);
const postJson = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  inject({
    method: 'POST',
    url,
    payload: JSON.stringify(payload),
    headers: { 'content-type': 'application/json', ...headers },
  });

beforeAll(async () => {
  t = await createTestApp({
    config: { publicUrl: PUBLIC_URL, publicRateLimitPerMinute: RATE_LIMIT, bodyLimitBytes: BODY_LIMIT },
    extraRoutes: probes,
  });
  await createProbeTable(t.deps.db);
});
afterAll(async () => {
  await t?.close();
});

describe('routing errors', () => {
  it('an unknown route is 404 NOT_FOUND pointing at the OpenAPI document', async () => {
    const res = await inject({ method: 'GET', url: '/v1/nowhere?x=1' });
    const body = expectErrorBody(res, 404, 'NOT_FOUND');
    expect(body.message).toContain('/v1/nowhere');
    expect(body.message).not.toContain('x=1');
    expect(body.next).toEqual([expect.objectContaining({ method: 'GET', path: '/v1/openapi.json' })]);
    const again = await inject({ method: 'GET', url: '/v1/nowhere' });
    expect(again.headers['x-request-id']).not.toBe(res.headers['x-request-id']);
  });

  it('a wrong method is 405 METHOD_NOT_ALLOWED with an Allow header', async () => {
    const res = await inject({ method: 'POST', url: '/healthz' });
    const body = expectErrorBody(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers['allow']).toBe('GET');
    expect(body.message).toContain('GET');

    // A parametrised path is matched too.
    const del = await inject({ method: 'DELETE', url: '/v1/probe/boxes/b1/items' });
    expectErrorBody(del, 405, 'METHOD_NOT_ALLOWED');
    expect(del.headers['allow']).toBe('POST');
  });

  it('a path that is not a valid URL is 400 with the error body', async () => {
    const res = await inject({ method: 'GET', url: '/v1/probe/%zz' });
    expectErrorBody(res, 400, 'INVALID_REQUEST');
    // A path parameter beyond the router's length limit is refused before routing, same body.
    const long = await inject({
      method: 'POST',
      url: `/v1/probe/boxes/${'b'.repeat(150)}/items`,
      payload: {},
    });
    expectErrorBody(long, 414, 'INVALID_REQUEST');
  });
});

describe('body errors', () => {
  it('malformed JSON is 400 INVALID_REQUEST and writes nothing', async () => {
    const res = await inject({
      method: 'POST',
      url: '/v1/probe/items',
      payload: '{"name": "a", "amount": ',
      headers: { 'content-type': 'application/json' },
    });
    const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
    expect(body.message).toMatch(/not valid JSON/);
    expect(await countProbeWrites(t.deps.db, '/v1/probe/items')).toBe(0);
  });

  it('a body over the limit is 413 PAYLOAD_TOO_LARGE naming the limit', async () => {
    const res = await postJson('/v1/probe/items', { name: 'a', amount: '1', note: 'x'.repeat(BODY_LIMIT) });
    const body = expectErrorBody(res, 413, 'PAYLOAD_TOO_LARGE');
    expect(body.message).toContain(String(BODY_LIMIT));
    expect(await countProbeWrites(t.deps.db, '/v1/probe/items')).toBe(0);
  });

  it('a body that is not JSON is 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    for (const contentType of ['application/x-www-form-urlencoded', 'text/plain', 'application/xml']) {
      const res = await inject({
        method: 'POST',
        url: '/v1/probe/items',
        payload: contentType === 'text/plain' ? '{"name":"a","amount":"1"}' : 'name=a&amount=1',
        headers: { 'content-type': contentType },
      });
      const body = expectErrorBody(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(body.message).toContain('application/json');
    }
    expect(await countProbeWrites(t.deps.db, '/v1/probe/items')).toBe(0);
  });

  it('a validation failure names every bad field, not just the first', async () => {
    const res = await postJson('/v1/probe/items', { name: 7, amount: 'ten' });
    const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
    expect(body.message).toMatch(/\bname\b/);
    expect(body.message).toMatch(/\bamount\b/);

    const missing = expectErrorBody(await postJson('/v1/probe/items', {}), 400, 'INVALID_REQUEST');
    expect(missing.message).toContain('name is required');
    expect(missing.message).toContain('amount is required');
    expect(await countProbeWrites(t.deps.db, '/v1/probe/items')).toBe(0);
  });

  it('an unknown body field is rejected by name, never silently dropped', async () => {
    const res = await postJson('/v1/probe/items', { name: 'a', amount: '5', max_slipage_bps: 30 });
    const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
    expect(body.message).toContain('max_slipage_bps');
    expect(await countProbeWrites(t.deps.db, '/v1/probe/items')).toBe(0);

    const mixed = expectErrorBody(
      await postJson('/v1/probe/items', { name: '', colour: 'red' }),
      400,
      'INVALID_REQUEST',
    );
    expect(mixed.message).toContain('colour');
    expect(mixed.message).toMatch(/\bname\b/);
    expect(mixed.message).toContain('amount is required');
  });

  it('query parameters are validated the same way, every bad one named', async () => {
    const ok = await inject({ method: 'GET', url: '/v1/probe/list?limit=20' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ limit: 20 });

    const res = await inject({ method: 'GET', url: '/v1/probe/list?limit=abc&cursor=nope&sort=asc' });
    const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
    expect(body.message).toContain('limit');
    expect(body.message).toContain('cursor');
    expect(body.message).toContain('sort');
  });

  it('a valid body goes through and the write commits (the probe is live)', async () => {
    const res = await postJson('/v1/probe/items', { name: 'ok', amount: '12' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ name: 'ok', amount: '12' });
    expect(await countProbeWrites(t.deps.db, '/v1/probe/items')).toBe(1);
  });

  it('every body schema in the route table refuses unknown fields', () => {
    const open: string[] = [];
    const walk = (schema: unknown, where: string) => {
      if (!schema || typeof schema !== 'object') return;
      const node = schema as Record<string, unknown>;
      if ((node['type'] === 'object' || node['properties']) && node['additionalProperties'] === undefined) {
        open.push(where);
      }
      for (const [k, v] of Object.entries(node)) {
        if (Array.isArray(v)) v.forEach((item, i) => walk(item, `${where}.${k}[${i}]`));
        else if (v && typeof v === 'object') walk(v, `${where}.${k}`);
      }
    };
    for (const route of [...everyRoute, ...probes]) {
      walk(route.schema.body, `${route.method} ${route.url} body`);
    }
    expect(open).toEqual([]);
  });
});

describe('docs_url', () => {
  it('points at the served error table, which has an anchor for every code', async () => {
    const res = await inject({ method: 'GET', url: '/v1/nowhere' });
    const body = expectErrorBody(res, 404, 'NOT_FOUND');
    expect(body.docs_url).toBe(`${PUBLIC_URL}/docs/errors#NOT_FOUND`);

    const page = await inject({ method: 'GET', url: new URL(body.docs_url).pathname });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const ids = new Set([...page.body.matchAll(/\bid="([A-Z_]+)"/g)].map((m) => m[1]));
    const codes = Object.keys(ERROR_CODES);
    expect(codes.length).toBeGreaterThan(20);
    expect(codes.filter((code) => !ids.has(code))).toEqual([]);
    // Codes the spec's section 7 names must all be in the table.
    for (const code of [
      'INVALID_REQUEST',
      'IDEMPOTENCY_CONFLICT',
      'RATE_LIMITED',
      'DEADLINE_EXCEEDED',
      'UNAVAILABLE',
    ]) {
      expect(ids.has(code)).toBe(true);
    }
  });
});

describe('rate limiting', () => {
  it(`a public route answers 429 RATE_LIMITED with Retry-After beyond ${RATE_LIMIT} per minute`, async () => {
    for (let i = 0; i < RATE_LIMIT; i++) {
      const ok = await inject({ method: 'GET', url: '/v1/probe/limited' });
      expect(ok.statusCode).toBe(200);
    }
    const res = await inject({ method: 'GET', url: '/v1/probe/limited' });
    const body = expectErrorBody(res, 429, 'RATE_LIMITED');
    const retryAfter = Number(res.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(body.message).toContain(String(RATE_LIMIT));
  });

  it('health checks are never rate limited', async () => {
    for (let i = 0; i < RATE_LIMIT * 3; i++) {
      expect((await inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    }
  });
});

describe('time budget', () => {
  it('a handler stuck past its budget gets 504 DEADLINE_EXCEEDED without waiting for it', async () => {
    const started = performance.now();
    const res = await inject({ method: 'GET', url: '/v1/probe/stuck' });
    const elapsed = performance.now() - started;
    const body = expectErrorBody(res, 504, 'DEADLINE_EXCEEDED');
    expect(body.message).toContain('200 ms');
    expect(elapsed).toBeLessThan(1200);
  });

  it('a budget spent before a broadcast says that nothing was transmitted', async () => {
    const res = await inject({ method: 'POST', url: '/v1/probe/broadcast' });
    const body = expectErrorBody(res, 504, 'DEADLINE_EXCEEDED');
    expect(body.message).toContain('before broadcast');
    expect(body.message).toContain('Nothing was transmitted.');
  });

  it('a budget spent between two broadcasts names what already left', async () => {
    const res = await inject({ method: 'POST', url: '/v1/probe/swap' });
    const body = expectErrorBody(res, 504, 'DEADLINE_EXCEEDED');
    expect(body.message).toContain('before swap broadcast');
    expect(body.message).toContain('Already transmitted: approval transaction 0xabc1');
    expect(body.message).not.toContain('Nothing was transmitted');
  });
});

describe('backend failures', () => {
  it('a refused database connection is 503 UNAVAILABLE with Retry-After', async () => {
    const res = await inject({ method: 'GET', url: '/v1/probe/db-refused' });
    const body = expectErrorBody(res, 503, 'UNAVAILABLE');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(body.message).not.toContain('127.0.0.1');
  });

  it('a database that is down answers 503 on reads and writes, not 500', async () => {
    // A real pool pointed at a port nothing listens on: the driver's own connection error.
    const dead = openPostgres('postgres://postgres@127.0.0.1:1/purser_none', 1);
    const down = await buildApp({ ...t.deps, db: dead.db }, { extraRoutes: probes });
    try {
      const ready = await down.fastify.inject({ method: 'GET', url: '/readyz' });
      expectErrorBody(ready, 503, 'UNAVAILABLE');
      const write = await down.fastify.inject({
        method: 'POST',
        url: '/v1/probe/items',
        payload: { name: 'a', amount: '1' },
        headers: { 'idempotency-key': 'k-down-1' },
      });
      const body = expectErrorBody(write, 503, 'UNAVAILABLE');
      expect(body.remediation).toMatch(/same Idempotency-Key/);
    } finally {
      await down.fastify.close();
      await dead.close();
    }
  });

  it('an unexpected error is 500 INTERNAL and leaks nothing of its cause', async () => {
    const res = await inject({ method: 'GET', url: '/v1/probe/boom' });
    const body = expectErrorBody(res, 500, 'INTERNAL');
    expect(res.body).not.toContain('hunter2');
    expect(body.message).toBe('An unexpected error occurred.');
  });
});
