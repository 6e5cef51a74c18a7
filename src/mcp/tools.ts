// MCP tools derived from the route table: one tool per operation an agent may call, named by its
// operationId, described by its summary, its input schema the route's own path, query and body
// schemas in one object. A tool call becomes the HTTP request the route takes, so the same guard,
// scopes and idempotency apply. Operator, executor and development routes are never tools.

import { isIdempotent, type RouteDefinition, type Scope } from '../core/http/route-table.ts';
import { keyMeetsRule } from '../modules/auth/scopes.ts';

/** Routes an agent holding an API key has no use for as tools (served as resources, or sign-in). */
const NOT_TOOLS = new Set([
  'getOpenApi', // a resource: purser://openapi
  'getErrorTable', // a resource: purser://errors
  'healthz',
  'readyz',
  'createAuthChallenge', // an MCP client authenticates with an API key, never by signing in
  'verifyAuthSignature',
  'signOut',
]);

type JsonSchema = Record<string, unknown>;

export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, JsonSchema>; required: string[] } & JsonSchema;
  annotations: {
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: boolean;
  };
  route: RouteDefinition;
  /** Where each input property goes in the request. */
  placement: Record<string, 'path' | 'query' | 'body' | 'whole-body' | 'idempotency'>;
}

/** The credential a tool list is bounded by, as GET /v1/auth/session describes it. */
export interface ToolCredential {
  kind: 'session' | 'key';
  scopes: Scope[];
  wallets: string[] | null;
}

export function isAgentTool(route: RouteDefinition): boolean {
  if (route.devOnly || route.class === 'operator' || route.class === 'executor') return false;
  return !NOT_TOOLS.has(route.operationId);
}

// A vocabulary mark left in (a route table not built by an app: the stdio server's) is dropped: the
// server's own validation holds the words.
const plain = (schema: unknown): JsonSchema =>
  JSON.parse(JSON.stringify(schema ?? {}), (key, value: unknown) =>
    key === 'x-vocabulary' ? undefined : value,
  ) as JsonSchema;

export function toolOf(route: RouteDefinition): McpTool {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const placement: McpTool['placement'] = {};
  const take = (schema: unknown, where: 'path' | 'query' | 'body') => {
    const s = plain(schema);
    const props = (s['properties'] ?? {}) as Record<string, JsonSchema>;
    for (const [name, prop] of Object.entries(props)) {
      if (name in properties) throw new Error(`${route.operationId}: input ${name} appears twice`);
      properties[name] = prop;
      placement[name] = where;
    }
    for (const name of (s['required'] as string[] | undefined) ?? []) required.push(name);
  };
  if (route.schema.params) take(route.schema.params, 'path');
  if (route.schema.querystring) take(route.schema.querystring, 'query');
  const body = route.schema.body ? plain(route.schema.body) : null;
  if (body) {
    const props = body['properties'] as Record<string, unknown> | undefined;
    const flat = body['type'] === 'object' && props && !Object.keys(props).some((n) => n in properties);
    if (flat) take(body, 'body');
    else {
      properties['body'] = body;
      placement['body'] = 'whole-body';
      required.push('body');
    }
  }
  const mutation = isIdempotent(route);
  if (mutation) {
    properties['idempotency_key'] = {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description:
        'Sent as the Idempotency-Key header: repeat the call with the same key to get the first answer ' +
        'replayed instead of doing the work twice. Omitted: a new key per call.',
    };
    placement['idempotency_key'] = 'idempotency';
  }
  return {
    name: route.operationId,
    title: route.summary,
    description: [route.summary, route.description, `HTTP: ${route.method} ${route.url}.`]
      .filter(Boolean)
      .join('\n\n'),
    inputSchema: {
      type: 'object',
      properties,
      required: [...new Set(required)],
      additionalProperties: false,
    },
    annotations: {
      readOnlyHint: route.method === 'GET',
      destructiveHint: route.method === 'DELETE',
      idempotentHint: route.method !== 'POST',
      openWorldHint: false,
    },
    route,
    placement,
  };
}

/** The tools of the table. */
export function mcpTools(routes: RouteDefinition[]): McpTool[] {
  return routes.filter(isAgentTool).map(toolOf);
}

/** Whether a credential may call a tool: its scope rule, and a wallet pin reaching only wallet-bearing routes. */
export function toolAllowed(tool: McpTool, credential: ToolCredential): boolean {
  const { route } = tool;
  if (route.class === 'public') return true;
  if (credential.kind === 'session') return true;
  if (credential.wallets !== null && route.wallet === false) return false;
  return keyMeetsRule(credential.scopes, route.scope ?? 'admin');
}

export interface HttpRequest {
  method: string;
  /** Path and query string. */
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** The HTTP request a tool call makes, with the caller's credential. */
export function requestOf(tool: McpTool, args: Record<string, unknown>, authorization: string): HttpRequest {
  let path = tool.route.url;
  const query = new URLSearchParams();
  let body: unknown = undefined;
  const headers: Record<string, string> = { authorization };
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined) continue;
    switch (tool.placement[name]) {
      case 'path':
        path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
        break;
      case 'query':
        for (const v of Array.isArray(value) ? value : [value]) query.append(name, String(v));
        break;
      case 'body':
        body = { ...(body as object | undefined), [name]: value };
        break;
      case 'whole-body':
        body = value;
        break;
      case 'idempotency':
        headers['idempotency-key'] = String(value);
        break;
      default:
        throw new Error(`unknown input ${name}`);
    }
  }
  const mutation = isIdempotent(tool.route);
  if (mutation && !headers['idempotency-key']) headers['idempotency-key'] = crypto.randomUUID();
  if (tool.route.schema.body) {
    headers['content-type'] = 'application/json';
    body ??= {};
  }
  const qs = query.toString();
  return {
    method: tool.route.method,
    url: qs ? `${path}?${qs}` : path,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  };
}
