// Garbage in, clean refusal out: random JSON values, random bytes under random content types and
// random extra field names sent to a route with a strict body. Every answer must be a 400, 413 or
// 415 with the spec's error body, and nothing may reach the database. Then every route of the
// table gets text the database cannot store (NUL, unpaired surrogates) in each of its string
// inputs: always a 400 naming the field, never a 5xx. Last, every route at the edge: bodies nested
// past the depth limit (400 naming it, however deep), bodies with a Content-Encoding (415), and
// paging values past what the database takes (400 naming the parameter).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Ajv } from 'ajv';
import { sql } from 'kysely';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../src/core/http/json-body.ts';
import { MAX_OFFSET } from '../src/core/http/paging.ts';
import type { RouteDefinition } from '../src/core/http/route-table.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { checkErrorShape, expectErrorBody } from './support/error-body.ts';
import { bearer, createAccountWithSession, type AccountWithSession } from './support/identity.ts';
import {
  countIdempotencyKeys,
  countProbeWrites,
  createProbeTable,
  StrictBody,
  writeProbe,
} from './support/probes.ts';
import { slotsOf, valueOf, withAt, type Slot } from './support/schema-values.ts';

const BODY_LIMIT = 2048;
const RUNS = 200;
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);

// An independent check of the probe's schema: a generated body that happens to be valid is
// discarded rather than counted as a failure.
const isValidBody = new Ajv({ strict: false }).compile(StrictBody);
const KNOWN_FIELDS = new Set(['name', 'amount', 'note']);

interface Attempt {
  kind: string;
  payload: Buffer;
  contentType: string | undefined;
  /** Unknown field names the message should name (objects with extra fields only). */
  unknownFields: string[];
  idempotencyKey: string | undefined;
}

const contentTypes = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'application/octet-stream',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=xyz',
    'application/vnd.api+json',
  ),
  fc.constant(undefined),
  fc.stringMatching(/^[a-z]{1,10}\/[a-z0-9+.-]{1,12}$/),
);
const idempotencyKeys = fc.option(fc.stringMatching(/^[!-~]{1,40}$/), { nil: undefined });

const randomJson = fc
  .record({
    value: fc.jsonValue({ maxDepth: 3 }),
    idempotencyKey: idempotencyKeys,
  })
  .map(({ value, idempotencyKey }): Attempt => ({
    kind: 'json value',
    payload: Buffer.from(JSON.stringify(value)),
    contentType: 'application/json',
    unknownFields: [],
    idempotencyKey,
  }));

const randomBytes = fc
  .record({
    bytes: fc.uint8Array({ maxLength: 3000 }),
    contentType: contentTypes,
    idempotencyKey: idempotencyKeys,
  })
  .map(({ bytes, contentType, idempotencyKey }): Attempt => ({
    kind: 'bytes',
    payload: Buffer.from(bytes),
    contentType,
    unknownFields: [],
    idempotencyKey,
  }));

const extraFields = fc
  .record({
    extra: fc.dictionary(
      fc.string({ minLength: 1, maxLength: 20 }).filter((k) => !KNOWN_FIELDS.has(k)),
      fc.jsonValue({ maxDepth: 2 }),
      { minKeys: 1, maxKeys: 4 },
    ),
    idempotencyKey: idempotencyKeys,
  })
  .map(({ extra, idempotencyKey }): Attempt => {
    const body: Record<string, unknown> = { name: 'fuzz', amount: '1' };
    for (const [k, v] of Object.entries(extra)) body[k] = v;
    return {
      kind: 'extra fields',
      payload: Buffer.from(JSON.stringify(body)),
      contentType: 'application/json',
      unknownFields: Object.keys(extra),
      idempotencyKey,
    };
  });

const oversized = fc
  .record({
    padding: fc.integer({ min: BODY_LIMIT, max: BODY_LIMIT * 4 }),
    idempotencyKey: idempotencyKeys,
  })
  .map(({ padding, idempotencyKey }): Attempt => ({
    kind: 'oversized',
    payload: Buffer.from(JSON.stringify({ name: 'fuzz', amount: '1', note: 'n'.repeat(padding) })),
    contentType: 'application/json',
    unknownFields: [],
    idempotencyKey,
  }));

function wouldBeAccepted(attempt: Attempt): boolean {
  if (
    attempt.payload.length > BODY_LIMIT ||
    !attempt.contentType?.toLowerCase().startsWith('application/json')
  ) {
    return false;
  }
  try {
    return isValidBody(JSON.parse(attempt.payload.toString('utf8'))) === true;
  } catch {
    return false;
  }
}

describe('fuzzing a strict POST route', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      config: { bodyLimitBytes: BODY_LIMIT },
      extraRoutes: [writeProbe({ url: '/v1/probe/items', operationId: 'probeItemsCreate' })],
    });
    await createProbeTable(t.deps.db);
  });
  afterAll(async () => {
    await t?.close();
  });

  it(`refuses ${RUNS} random bodies cleanly and writes nothing`, async () => {
    console.log(`fuzz seed ${seed} (rerun with FUZZ_SEED=${seed})`);
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fc.oneof(randomJson, randomBytes, extraFields, oversized), async (attempt) => {
        fc.pre(!wouldBeAccepted(attempt));
        const headers: Record<string, string> = {};
        if (attempt.contentType !== undefined) headers['content-type'] = attempt.contentType;
        if (attempt.idempotencyKey !== undefined) headers['idempotency-key'] = attempt.idempotencyKey;
        const res = await t.app.fastify.inject({
          method: 'POST',
          url: '/v1/probe/items',
          payload: attempt.payload,
          headers,
        });
        seen.set(res.statusCode, (seen.get(res.statusCode) ?? 0) + 1);
        expect([400, 413, 415], `${attempt.kind}: ${res.statusCode} ${res.body}`).toContain(res.statusCode);
        const body = JSON.parse(res.body) as Record<string, unknown>;
        const code = { 400: 'INVALID_REQUEST', 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE' }[
          res.statusCode as 400 | 413 | 415
        ];
        checkErrorShape(body, res.headers['x-request-id'], code);
        if (attempt.unknownFields.length > 0 && !/not valid JSON/.test(String(body['message']))) {
          const named = attempt.unknownFields.filter((f) => String(body['message']).includes(f));
          expect(
            named.length,
            `${body['message']} names none of ${attempt.unknownFields.join(', ')}`,
          ).toBeGreaterThan(0);
        }
      }),
      { numRuns: RUNS, seed },
    );
    console.log(`fuzz statuses: ${JSON.stringify(Object.fromEntries(seen))}`);
    expect(await countProbeWrites(t.deps.db)).toBe(0);
    expect(await countIdempotencyKeys(t.deps.db)).toBe(0);
  });

  it('the probe does write when the body is valid (so "nothing written" above means something)', async () => {
    const res = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/probe/items',
      payload: { name: 'fuzz', amount: '1' },
    });
    expect(res.statusCode).toBe(201);
    expect(await countProbeWrites(t.deps.db)).toBe(1);
  });
});

const OPERATOR_TOKEN = 'fuzz-operator-token-0123456789abcdef';
/** One app over the whole route table for the route-by-route tests below, and an account of it. */
let table: Promise<{ t: TestApp; acct: AccountWithSession }> | null = null;
function tableApp() {
  table ??= (async () => {
    const t = await createTestApp({
      config: { operatorToken: OPERATOR_TOKEN, publicRateLimitPerMinute: 1_000_000 },
    });
    return { t, acct: await createAccountWithSession(t.db.db) };
  })();
  return table;
}
afterAll(async () => {
  await (await table)?.t.close();
});

/** The credential a route takes: the operator token, none, or the account's session. */
function credentialFor(route: RouteDefinition, acct: AccountWithSession): Record<string, string> {
  if (route.class === 'operator') return { authorization: `Bearer ${OPERATOR_TOKEN}` };
  if (route.class === 'public') return {};
  return bearer(acct.sessionToken);
}

describe('every route of the table, with text the database cannot store in each string input', () => {
  const ROUTE_RUNS = 4;
  let t: TestApp;
  let acct: AccountWithSession;
  beforeAll(async () => {
    ({ t, acct } = await tableApp());
  });

  // Anywhere in a JSON body any of them; in a URL only NUL travels (a surrogate has no UTF-8).
  const unstorable = (chars: string[]) =>
    fc
      .tuple(fc.string({ maxLength: 6 }), fc.constantFrom(...chars), fc.string({ maxLength: 6 }))
      .map((parts) => parts.join(''));
  const inBody = unstorable(['\u0000', '\ud800', '\udbff', '\udc00', '\udfff']);
  const inUrl = unstorable(['\u0000']);

  /** A request shaped by the route's own schemas (valid or nearly), plus a free query parameter. */
  const inputsOf = (route: RouteDefinition) =>
    fc.record({
      params: route.schema.params
        ? valueOf(route.schema.params).map((p) =>
            // A path parameter is a segment: empty, `.` or `..` would not name one (the URL
            // resolves a dot segment away, reaching another route).
            Object.fromEntries(
              Object.entries(p as object).map(([k, v]) => [
                k,
                ['', '.', '..'].includes(String(v)) ? 'x' : String(v),
              ]),
            ),
          )
        : fc.constant({}),
      query: fc
        .tuple(valueOf(route.schema.querystring ?? { type: 'object' }), fc.string())
        .map(([q, note]) => ({
          ...(q as object),
          note,
        })),
      body: route.schema.body ? valueOf(route.schema.body) : fc.constant(undefined),
    });

  const accountState = async () =>
    JSON.stringify(
      (
        await sql`
          SELECT (SELECT count(*)::int FROM api_keys WHERE account_id = ${acct.accountId}) AS keys,
                 (SELECT count(*)::int FROM events WHERE account_id = ${acct.accountId}) AS events,
                 (SELECT count(*)::int FROM audit_log WHERE account_id = ${acct.accountId}) AS audit,
                 (SELECT count(*)::int FROM feature_requests) AS requests,
                 (SELECT count(*)::int FROM idempotency_keys) AS idempotency`.execute(t.db.db)
      ).rows[0],
    );

  function urlOf(route: RouteDefinition, params: Record<string, string>, query: Record<string, unknown>) {
    const path = route.url.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      for (const item of Array.isArray(v) ? v : [v])
        if (item !== null && item !== undefined) search.append(k, String(item));
    }
    const qs = search.toString();
    return qs ? `${path}?${qs}` : path;
  }

  const credentialOf = (route: RouteDefinition) => credentialFor(route, acct);

  it('answers 400 naming the field for every route and input, never a 5xx, and changes nothing', async () => {
    console.log(`fuzz seed ${seed} (rerun with FUZZ_SEED=${seed})`);
    const before = await accountState();
    let sent = 0;
    for (const route of t.app.routes.routes) {
      await fc.assert(
        fc.asyncProperty(inputsOf(route), inBody, inUrl, async (input, bodyText, urlText) => {
          const params = input.params as Record<string, string>;
          const query = input.query as Record<string, unknown>;
          const slots: { part: 'params' | 'query' | 'body'; slot: Slot }[] = [
            ...slotsOf(params, 'params')
              .filter((s) => s.kind === 'string')
              .map((slot) => ({ part: 'params' as const, slot })),
            ...slotsOf(query, 'query')
              .filter((s) => s.path.length <= 1)
              .map((slot) => ({ part: 'query' as const, slot })),
            ...slotsOf(input.body, 'body').map((slot) => ({ part: 'body' as const, slot })),
          ];
          for (const { part, slot } of slots) {
            const text = part === 'body' ? bodyText : urlText;
            const bad = { params, query, body: input.body, [part]: withAt(input[part], slot, text) };
            const res = await t.app.fastify.inject({
              method: route.method,
              url: urlOf(route, bad.params as Record<string, string>, bad.query as Record<string, unknown>),
              headers: {
                ...credentialOf(route),
                'idempotency-key': `fuzz-${sent}`,
                ...(bad.body === undefined ? {} : { 'content-type': 'application/json' }),
              },
              ...(bad.body === undefined ? {} : { payload: JSON.stringify(bad.body) }),
            });
            sent += 1;
            const what = `${route.method} ${route.url} ${slot.name}`;
            expect(res.statusCode, `${what}: ${res.body}`).toBeLessThan(500);
            const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
            const named = slot.kind === 'string' ? slot.name : `a field name in ${slot.name}`;
            expect(body.message, what).toContain(named);
          }
        }),
        { numRuns: ROUTE_RUNS, seed },
      );
    }
    console.log(`unstorable text: ${sent} requests over ${t.app.routes.routes.length} routes`);
    expect(sent).toBeGreaterThan(t.app.routes.routes.length * ROUTE_RUNS);
    expect(await accountState()).toBe(before);
  });
});

describe('every route of the table, at the edge: nesting, paging and encodings', () => {
  let t: TestApp;
  let acct: AccountWithSession;
  beforeAll(async () => {
    ({ t, acct } = await tableApp());
  });
  const credentialOf = (route: RouteDefinition) => credentialFor(route, acct);
  /** The route's path with a plausible value in each parameter. */
  const pathOf = (route: RouteDefinition) => route.url.replace(/\{(\w+)\}/g, 'x');
  const withBody = () => t.app.routes.routes.filter((r) => r.method !== 'GET' && r.method !== 'DELETE');
  const state = async () =>
    JSON.stringify(
      (
        await sql`SELECT (SELECT count(*)::int FROM events) AS events,
                         (SELECT count(*)::int FROM idempotency_keys) AS idempotency,
                         (SELECT count(*)::int FROM intents) AS intents`.execute(t.db.db)
      ).rows[0],
    );

  /** The depth of a JSON value's nesting of arrays and objects (a scalar: 0). */
  const depthOf = (v: unknown): number =>
    v !== null && typeof v === 'object'
      ? 1 + Math.max(0, ...Object.values(v as object).map((c: unknown) => depthOf(c)))
      : 0;

  it('measures nesting without parsing, brackets inside strings and escapes included', () => {
    const tricky = fc.string().map((s) => `${s}"[{\\"]}`);
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), tricky, fc.integer({ min: 0, max: 8 }), (v, s, max) => {
        const value = [v, { s }];
        expect(nestsDeeperThan(JSON.stringify(value), max)).toBe(depthOf(value) > max);
      }),
      { seed, numRuns: 300 },
    );
  });

  it(`refuses bodies nested deeper than ${MAX_JSON_DEPTH} levels on every route with a body, MCP too: 400 naming the limit`, async () => {
    const before = await state();
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    const objects = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const routes = withBody();
    for (const route of routes) {
      for (const payload of [deep(20_000), deep(MAX_JSON_DEPTH + 1), objects(5_000)]) {
        const res = await t.app.fastify.inject({
          method: route.method,
          url: pathOf(route),
          headers: { ...credentialOf(route), 'content-type': 'application/json' },
          payload,
        });
        // The body is read before any guard but the jurisdiction gate: refused for its nesting alone.
        const what = `${route.method} ${route.url}: ${res.body}`;
        expect(expectErrorBody(res, 400, 'INVALID_REQUEST').message, what).toContain(
          `${MAX_JSON_DEPTH} levels`,
        );
      }
    }
    const mcp = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/mcp',
      headers: { ...bearer(acct.sessionToken), 'content-type': 'application/json' },
      payload: deep(20_000),
    });
    expect(expectErrorBody(mcp, 400, 'INVALID_REQUEST').message).toContain(`${MAX_JSON_DEPTH} levels`);
    // Public routes read the body before anything else: each is refused for its nesting.
    const open = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/quotes',
      headers: { 'content-type': 'application/json' },
      payload: deep(20_000),
    });
    expect(expectErrorBody(open, 400, 'INVALID_REQUEST').message).toContain(`${MAX_JSON_DEPTH} levels`);
    // As deep as allowed still parses (the schema decides what it thinks of it).
    const allowed = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/quotes',
      headers: { 'content-type': 'application/json' },
      payload: `{"x":${deep(MAX_JSON_DEPTH - 1)}}`,
    });
    expect(allowed.json().message).not.toContain('levels');
    expect(await state()).toBe(before);
  });

  it('refuses an encoded body on every route with a body (415) and changes nothing', async () => {
    const before = await state();
    for (const route of withBody()) {
      for (const encoding of ['gzip', 'br', 'deflate, gzip', 'x-unknown']) {
        const res = await t.app.fastify.inject({
          method: route.method,
          url: pathOf(route),
          headers: {
            ...credentialOf(route),
            'content-type': 'application/json',
            'content-encoding': encoding,
            'idempotency-key': `enc-${route.operationId}-${encoding}`,
          },
          payload: '{}',
        });
        const body = expectErrorBody(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
        expect(body.message).toContain('Content-Encoding');
      }
    }
    // `identity` is no encoding at all.
    const plain = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/auth/challenge',
      headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
      payload: JSON.stringify({ address: '0x00000000000000000000000000000000000000a1' }),
    });
    expect(plain.statusCode).toBe(200);
    expect(await state()).toBe(before);
  });

  it('refuses paging values the database cannot take on every list route: 400 naming the parameter', async () => {
    const paged = t.app.routes.routes.flatMap((route) => {
      const props = (route.schema.querystring as { properties?: Record<string, unknown> } | undefined)
        ?.properties;
      return ['offset', 'cursor', 'limit']
        .filter((name) => props && name in props)
        .map((name) => ({ route, name }));
    });
    expect(paged.map((p) => `${p.route.url} ${p.name}`)).toEqual(
      expect.arrayContaining(['/v1/intents offset', '/v1/pm/credentials offset', '/v1/events cursor']),
    );
    for (const { route, name } of paged) {
      for (const value of ['9223372036854775807', '1e21', '0x7fffffffffffffffffff', '-1', '2147483648.5']) {
        const res = await t.app.fastify.inject({
          method: route.method,
          url: `${pathOf(route)}?${name}=${encodeURIComponent(value)}`,
          headers: credentialOf(route),
        });
        const what = `${route.url}?${name}=${value}`;
        expect(res.statusCode, `${what}: ${res.body}`).toBeLessThan(500);
        if (res.statusCode === 451) continue; // the jurisdiction gate answers before the query is read
        expect(expectErrorBody(res, 400, 'INVALID_REQUEST').message, what).toContain(name);
      }
    }
    // Declared bounds, so the OpenAPI document says them too (a cursor that is an id, a pattern).
    for (const { route, name } of paged) {
      const schema = (
        route.schema.querystring as {
          properties: Record<string, { maximum?: number; type?: string; pattern?: string }>;
        }
      ).properties[name]!;
      if (schema.type === 'string') {
        expect(schema.pattern, `${route.url} ${name}`).toMatch(/^\^.*\$$/);
        continue;
      }
      expect(schema.maximum, `${route.url} ${name}`).toBeLessThanOrEqual(
        name === 'offset' ? MAX_OFFSET : Number.MAX_SAFE_INTEGER,
      );
    }
  });
});
