// The jurisdiction gate decides a tool call over MCP exactly as it decides the same request over
// REST, behind a trusted proxy (TRUST_PROXY on): every geo-gated route that is an MCP tool, called
// both ways from the same socket peer with the same headers, from five origins. A client in a
// restricted country that writes an allowed address into X-Forwarded-For is refused both ways; a
// client behind the trusted edge in an allowed country is served both ways.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import { createJurisdictionGate } from '../../adapters/geo/index.ts';
import { testConfig } from '../../config.ts';
import type { RouteDefinition } from '../../core/http/route-table.ts';
import { mcpTools, type McpTool } from '../../mcp/tools.ts';

const TRUSTED_PROXY = '10.9.0.1';
/** What the GeoIP database says in this test. */
const US_ADDRESS = '198.51.100.7';
const DE_ADDRESS = '203.0.113.5';

let t: TestApp;
let headers: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp({
    config: { ...testConfig(), trustProxy: true },
    deps: {
      jurisdiction: createJurisdictionGate({
        restrictedCountries: ['US', 'FR'],
        trustedProxies: ['10.9.0.0/16'],
        countryHeader: 'cf-ipcountry',
        maxmindDbPath: null,
        allowLoopback: true,
        countryLookup: {
          country: (address) => (address === US_ADDRESS ? 'US' : address === DE_ADDRESS ? 'DE' : null),
        },
      }),
    },
  });
  headers = bearer((await createAccountWithSession(t.db.db)).sessionToken);
});
afterAll(async () => {
  await t?.close();
});

interface Origin {
  name: string;
  remoteAddress: string;
  headers: Record<string, string>;
  /** Whether prediction-market routes serve it. */
  served: boolean;
}

const ORIGINS: Origin[] = [
  {
    name: 'behind the edge, its country header restricted',
    remoteAddress: TRUSTED_PROXY,
    headers: { 'cf-ipcountry': 'US', 'x-forwarded-for': DE_ADDRESS },
    served: false,
  },
  {
    name: 'behind the edge in an allowed country',
    remoteAddress: TRUSTED_PROXY,
    headers: { 'cf-ipcountry': 'DE', 'x-forwarded-for': DE_ADDRESS },
    served: true,
  },
  {
    name: 'behind the edge, no country header, a restricted forwarded address',
    remoteAddress: TRUSTED_PROXY,
    headers: { 'x-forwarded-for': US_ADDRESS },
    served: false,
  },
  {
    name: 'from a restricted address, forging an allowed forwarded address',
    remoteAddress: US_ADDRESS,
    headers: { 'x-forwarded-for': DE_ADDRESS, 'cf-ipcountry': 'DE' },
    served: false,
  },
  {
    name: 'from an allowed address, forging a restricted country',
    remoteAddress: DE_ADDRESS,
    headers: { 'x-forwarded-for': US_ADDRESS, 'cf-ipcountry': 'US' },
    served: true,
  },
];

/** The tool's arguments from the route's documented example. */
function argumentsOf(tool: McpTool): Record<string, unknown> {
  const example = tool.route.docs.example;
  const args: Record<string, unknown> = {};
  for (const [name, where] of Object.entries(tool.placement)) {
    const from =
      where === 'path'
        ? example.params
        : where === 'query'
          ? example.query
          : where === 'body'
            ? (example.body as Record<string, unknown> | undefined)
            : undefined;
    if (where === 'whole-body') args[name] = example.body;
    else if (from && name in from) args[name] = from[name];
  }
  return args;
}

function restUrl(route: RouteDefinition): string {
  const example = route.docs.example;
  const path = route.url.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(String(example.params?.[name] ?? 'x')),
  );
  const query = new URLSearchParams(
    Object.entries(example.query ?? {}).map(([k, v]) => [k, String(v)] as [string, string]),
  ).toString();
  return query ? `${path}?${query}` : path;
}

async function overRest(route: RouteDefinition, origin: Origin): Promise<number> {
  const body = route.docs.example.body;
  const res = await t.app.fastify.inject({
    method: route.method,
    url: restUrl(route),
    remoteAddress: origin.remoteAddress,
    headers: {
      ...headers,
      ...origin.headers,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  return res.statusCode;
}

async function overMcp(tool: McpTool, origin: Origin): Promise<number> {
  const res = await t.app.fastify.inject({
    method: 'POST',
    url: '/v1/mcp',
    remoteAddress: origin.remoteAddress,
    headers: {
      ...headers,
      ...origin.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    payload: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: tool.name, arguments: argumentsOf(tool) },
    }),
  });
  expect(res.statusCode, res.body).toBe(200);
  const result = res.json<{
    result: { structuredContent?: { http_status: number }; content: { text: string }[] };
  }>().result;
  expect(result.structuredContent, `${tool.name}: ${result.content[0]?.text}`).toBeDefined();
  return result.structuredContent!.http_status;
}

describe('the jurisdiction gate over MCP behind a trusted proxy', () => {
  it('decides every geo-gated tool exactly as the same request over REST, from every origin', async () => {
    const gated = mcpTools(t.app.routes.routes).filter((tool) => tool.route.gate !== undefined);
    expect(gated.map((g) => g.name)).toEqual(
      expect.arrayContaining(['listVenueCredentials', 'placePmOrder', 'cancelPmOrder']),
    );
    for (const origin of ORIGINS) {
      for (const tool of gated) {
        const rest = await overRest(tool.route, origin);
        const mcp = await overMcp(tool, origin);
        const what = `${tool.name} ${origin.name}: REST ${rest}, MCP ${mcp}`;
        expect(rest === 451, what).toBe(!origin.served);
        expect(mcp === 451, what).toBe(!origin.served);
      }
    }
  });
});
