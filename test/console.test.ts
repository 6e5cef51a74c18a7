// The console as the service serves it (the browser tests in test/browser/ drive it in Chromium):
// its page and hashed files under a strict Content-Security-Policy, every view's path answering
// with the page, and the browser's policy check agreeing with the API's own on what it refuses.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSchema, diffDocuments, type Json, type JsonSchema } from '../console/src/json.ts';
import { createAjv } from '../src/core/http/validation.ts';
import { CONSOLE_CSP } from '../src/modules/console/index.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { expectErrorBody } from './support/error-body.ts';
import { bearer, createAccountWithSession } from './support/identity.ts';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

const get = (url: string) => t.app.fastify.inject({ method: 'GET', url });

describe('GET /console', () => {
  it('serves the page under a policy that allows nothing inline and nothing from elsewhere', async () => {
    const res = await get('/console');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-cache');
    // Every script and stylesheet is a file of this origin; no inline script, no style attribute.
    expect(res.body).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(res.body).not.toMatch(/\sstyle=/);
    const script = /src="(\/console\/assets\/main-[A-Z0-9]+\.js)"/.exec(res.body)?.[1];
    const style = /href="(\/console\/assets\/styles-[A-Z0-9]+\.css)"/.exec(res.body)?.[1];
    expect(script).toBeDefined();
    expect(style).toBeDefined();

    const js = await get(script!);
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toContain('immutable');
    expect(js.body).not.toMatch(
      /https?:\/\/(?!127\.0\.0\.1|localhost)[a-z0-9.-]+\.(com|io|org|net)\/[^"'\s]*\.(js|css)/,
    );
    const css = await get(style!);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it("answers every view's path with the page, so a link or a reload opens the view", async () => {
    const page = (await get('/console')).body;
    for (const path of [
      '/console/',
      '/console/intents',
      '/console/policies/0x9bf338818ba7cf5c658d5182349c51c4d4528579',
    ]) {
      const res = await get(path);
      expect(res.statusCode, path).toBe(200);
      expect(res.body, path).toBe(page);
    }
  });

  it('answers a file it does not have with the error body', async () => {
    expectErrorBody(await get('/console/assets/main-NOPE.js'), 404, 'NOT_FOUND');
  });
});

describe("the console's policy check", () => {
  it("refuses exactly what the API's own schema validator refuses, and PUT /v1/policies refuses it too", async () => {
    const doc = (await get('/v1/openapi.json')).json<{
      paths: Record<string, { put: { requestBody: { content: Record<string, { schema: JsonSchema }> } } }>;
    }>();
    const schema = doc.paths['/v1/policies']!.put.requestBody.content['application/json']!.schema;
    // The validator the API runs on request bodies, over the same served schema.
    const validate = createAjv().compile(schema);
    const acc = await createAccountWithSession(t.db.db);
    const base = {
      version: 1,
      wallet: '0x9bf338818ba7cf5c658d5182349c51c4d4528579',
      chain_id: 8453,
      execution: { max_slippage_bps: 50 },
      spend: { per_tx_usd: '250', daily_usd: '2000', token_allowlist: ['USDC', 'WETH'] },
    };
    const fields = [
      ['version'],
      ['chain_id'],
      ['wallet'],
      ['execution', 'max_slippage_bps'],
      ['execution', 'venues'],
      ['spend', 'per_tx_usd'],
      ['spend', 'token_allowlist'],
      ['gas', 'enabled'],
      ['float', 'min_usd'],
      ['spend', 'velocity_per_hour'],
      ['surprise'],
    ];
    const values = fc.oneof(
      fc.constantFrom<Json>(1, 2, 0, -1, 10_001, 84532, 1.5, '12.5', '1e3', 'USDC', '', null, true, [], {}),
      fc.constantFrom<Json>(
        ['USDC'],
        ['USDC', 'USDC'],
        ['devnet-amm'],
        ['nope'],
        '0x9bf338818ba7cf5c658d5182349c51c4d45285',
      ),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...fields), values, async (path, value) => {
        const document = structuredClone(base) as Record<string, Json>;
        let at = document;
        for (const key of path.slice(0, -1)) {
          at[key] ??= {};
          at = at[key] as Record<string, Json>;
        }
        at[path.at(-1)!] = value;
        const problems = checkSchema(schema, document as Json);
        const res = await t.app.fastify.inject({
          method: 'PUT',
          url: '/v1/policies',
          headers: { ...bearer(acc.sessionToken), 'idempotency-key': crypto.randomUUID() },
          payload: document,
        });
        const what = `${path.join('.')} = ${JSON.stringify(value)}: ${res.body}`;
        // The same verdict as the API's schema validator. What the schema cannot say (min_usd at
        // most target_usd, registry symbols) the API refuses after it; the console leaves it to it.
        expect(problems.length === 0, what).toBe(validate(document));
        if (problems.length > 0) expect(res.statusCode, what).toBe(400);
        else expect([201, 200, 400], what).toContain(res.statusCode);
      }),
      { numRuns: 60, seed: Number(process.env['FC_SEED'] ?? Date.now() % 2 ** 31) },
    );
  });

  it('lists what changed between two versions, path by path', () => {
    const before: Json = { spend: { daily_usd: '2000', token_allowlist: ['USDC'] }, gas: { enabled: true } };
    const after: Json = {
      spend: { daily_usd: '2500', token_allowlist: ['USDC', 'WETH'] },
      float: { min_usd: '5' },
    };
    expect(diffDocuments(before, after)).toEqual([
      { path: 'float.min_usd', kind: 'added', before: undefined, after: '5' },
      { path: 'gas.enabled', kind: 'removed', before: true, after: undefined },
      { path: 'spend.daily_usd', kind: 'changed', before: '2000', after: '2500' },
      { path: 'spend.token_allowlist', kind: 'changed', before: ['USDC'], after: ['USDC', 'WETH'] },
    ]);
    expect(diffDocuments(after, after)).toEqual([]);
  });
});
