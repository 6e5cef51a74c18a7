// The OpenAPI document is what agents generate clients from: it must be a valid OpenAPI 3.1
// document and list every route of the table under its operationId.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Type } from 'typebox';
import { API_VERSION } from '../src/app.ts';
import { defineRoute, type RouteDefinition } from '../src/core/http/route-table.ts';
import { everyRoute } from './support/routes.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { PROBE_DOCS, writeProbe } from './support/probes.ts';

// The table has few mutations yet: probes with a body, path and query parameters keep the
// document's request side exercised.
const probes: RouteDefinition[] = [
  writeProbe({ url: '/v1/probe/items', operationId: 'probeItemsCreate' }),
  writeProbe({ url: '/v1/probe/boxes/{box}/items', operationId: 'probeBoxItemsCreate' }),
  defineRoute({
    method: 'GET',
    url: '/v1/probe/boxes/{box}',
    operationId: 'probeBoxGet',
    summary: 'probe: path and query parameters',
    tags: ['probe'],
    class: 'bearer',
    scope: 'read',
    wallet: false,
    docs: PROBE_DOCS,
    schema: {
      params: Type.Object({ box: Type.String({ pattern: '^box_[a-z0-9]+$' }) }),
      querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })) }),
      response: { 200: Type.Object({ box: Type.String() }) },
    },
    handler: async ({ params }) => ({ status: 200, body: { box: params.box } }),
  }),
];

interface Operation {
  operationId?: string;
  parameters?: { in: string; name: string }[];
  requestBody?: { content?: Record<string, unknown> };
  security?: unknown[];
}
type OpenApiDoc = {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, Operation>>;
};

let t: TestApp;
let doc: OpenApiDoc;

beforeAll(async () => {
  t = await createTestApp({ extraRoutes: probes });
  const res = await t.app.fastify.inject({ method: 'GET', url: '/v1/openapi.json' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  doc = res.json() as OpenApiDoc;
});
afterAll(async () => {
  await t?.close();
});

describe('GET /v1/openapi.json', () => {
  it('passes a standard OpenAPI validator as a 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(doc) as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    // The validator is live: a document without its info object fails it.
    const { info: _info, ...broken } = structuredClone(doc);
    expect((await new Validator().validate(broken as Record<string, unknown>)).valid).toBe(false);
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.version).toBe(API_VERSION);
  });

  it('lists every route of the route table under its operationId', () => {
    const missing: string[] = [];
    for (const route of [...everyRoute, ...probes]) {
      const op = doc.paths[route.url]?.[route.method.toLowerCase()];
      if (op?.operationId !== route.operationId)
        missing.push(`${route.method} ${route.url} (${route.operationId})`);
    }
    expect(missing).toEqual([]);

    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('declares each path parameter, the JSON request body and the bearer requirement', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      for (const [method, op] of Object.entries(ops)) {
        const declared = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
        expect(declared.sort(), `${method.toUpperCase()} ${path}`).toEqual(names.sort());
      }
    }
    const create = doc.paths['/v1/probe/items']?.['post'];
    expect(Object.keys(create?.requestBody?.content ?? {})).toEqual(['application/json']);
    const get = doc.paths['/v1/probe/boxes/{box}']?.['get'];
    expect(get?.parameters?.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['path:box', 'query:limit']);
    expect(get?.security).toEqual([{ bearer: [] }]);
    expect(create?.security).toBeUndefined();
  });
});

describe('GET /docs', () => {
  it('serves the API reference as an HTML page', async () => {
    const res = await t.app.fastify.inject({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/<html/i);
  });
});
