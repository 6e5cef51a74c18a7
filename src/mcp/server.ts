// The MCP server: Purser's tools (bounded by the caller's credential) and resources (the docs,
// the error table, the policy defaults, the token registry, the OpenAPI document), each answered
// by a request to the HTTP API with the caller's credential. Stdio (`purser mcp`) and the
// streamable HTTP endpoint (/v1/mcp) build the same server over different ways to send requests.

import { readdirSync, readFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import {
  CallToolRequestSchema,
  ErrorCode as McpErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { ValidateFunction } from 'ajv';
import { API_VERSION } from '../api-info.ts';
import { AppError } from '../core/errors/app-error.ts';
import { ERROR_CODES } from '../core/errors/codes.ts';
import { errorBody } from '../core/http/error-renderer.ts';
import { createAjv } from '../core/http/validation.ts';
import { newId } from '../core/ids.ts';
import { requestOf, toolAllowed, type HttpRequest, type McpTool, type ToolCredential } from './tools.ts';
import { pathToFileURL } from 'node:url';
import { projectPath } from '../core/paths.ts';

export interface HttpAnswer {
  status: number;
  body: string;
}

/** Sends one request to the HTTP API (in-process injection, or fetch to a URL). */
export type ApiCaller = (request: HttpRequest) => Promise<HttpAnswer>;

export interface McpServerOptions {
  tools: McpTool[];
  call: ApiCaller;
  /** The caller's `Authorization` header value, passed on to every request. */
  authorization: string;
  credential: ToolCredential;
  /** The service's public URL, for the error bodies the server itself writes. */
  publicUrl: string;
}

const DOCS_DIR = pathToFileURL(projectPath('docs/'));
const README = pathToFileURL(projectPath('README.md'));

interface Resource {
  uri: string;
  name: string;
  description: string;
  mimeType: string;
  read(): Promise<string>;
}

/** The files of docs/, listed once: they change only with a deploy. */
let docFiles: string[] | null = null;

function resources(options: McpServerOptions): Resource[] {
  const viaApi = async (url: string) => {
    const answer = await options.call({
      method: 'GET',
      url,
      headers: { authorization: options.authorization },
    });
    if (answer.status !== 200)
      throw new McpError(McpErrorCode.InternalError, `${url} answered ${answer.status}: ${answer.body}`);
    return answer.body;
  };
  docFiles ??= readdirSync(DOCS_DIR)
    .filter((f) => f.endsWith('.md'))
    .sort();
  const docs = docFiles.map((file) => ({
    uri: `purser://docs/${file.replace(/\.md$/, '')}`,
    name: `docs/${file}`,
    description: `Purser documentation: ${file}`,
    mimeType: 'text/markdown',
    read: async () => readFileSync(new URL(file, DOCS_DIR), 'utf8'),
  }));
  return [
    {
      uri: 'purser://readme',
      name: 'README.md',
      description: 'What Purser is, how to run it, and a walk through its API',
      mimeType: 'text/markdown',
      read: async () => readFileSync(README, 'utf8'),
    },
    ...docs,
    {
      uri: 'purser://errors',
      name: 'Error codes',
      description: 'Every error code: its status, what it means, what to do, and the default next steps',
      mimeType: 'application/json',
      read: async () => JSON.stringify(ERROR_CODES, null, 2),
    },
    {
      uri: 'purser://policies/defaults',
      name: 'Policy defaults',
      description: 'The platform defaults that fill omitted policy sections and fields (chain 8453)',
      mimeType: 'application/json',
      read: () => viaApi('/v1/policies/defaults'),
    },
    {
      uri: 'purser://tokens',
      name: 'Token registry',
      description: 'Tokens, wrapped native token and venues (with their contracts) of each supported chain',
      mimeType: 'application/json',
      read: () => viaApi('/v1/tokens'),
    },
    {
      uri: 'purser://openapi',
      name: 'OpenAPI document',
      description: 'The OpenAPI 3.1 document of the HTTP API the tools call',
      mimeType: 'application/json',
      read: () => viaApi('/v1/openapi.json'),
    },
  ];
}

const validators = new WeakMap<McpTool, ValidateFunction>();
const ajv = createAjv();

function argumentsProblem(tool: McpTool, args: Record<string, unknown>): string | null {
  let validate = validators.get(tool);
  if (!validate) {
    validate = ajv.compile(tool.inputSchema);
    validators.set(tool, validate);
  }
  return validate(args) ? null : ajv.errorsText(validate.errors, { dataVar: 'arguments' });
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * A tool's answer: the API's body as text and as structured content, with the HTTP status in
 * `http_status`, set after the body's fields so a body's own `status` (an intent's, an order's)
 * never hides it; an error answer is a tool error.
 */
export function toolResult(answer: HttpAnswer): CallToolResult {
  const body = parse(answer.body);
  const structured =
    body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
  return {
    content: [{ type: 'text', text: structured ? JSON.stringify(structured, null, 2) : answer.body }],
    ...(structured ? { structuredContent: { ...structured, http_status: answer.status } } : {}),
    ...(answer.status >= 400 ? { isError: true } : {}),
  };
}

/**
 * One schema validator for every server: the protocol SDK would build a new Ajv instance (its
 * vocabularies and meta-schemas) for each, and the HTTP endpoint builds a server per request.
 */
let sharedValidator: AjvJsonSchemaValidator | null = null;

export function createMcpServer(options: McpServerOptions): Server {
  sharedValidator ??= new AjvJsonSchemaValidator();
  const server = new Server(
    { name: 'purser', version: API_VERSION },
    {
      jsonSchemaValidator: sharedValidator,
      capabilities: { tools: {}, resources: {} },
      instructions:
        "Purser is a treasury API for autonomous agents. Tools call its HTTP API with this connection's API key; " +
        'their errors carry the error body (code, message, remediation, next). Mutations take idempotency_key: ' +
        'repeat a call with the same key after a failure and the first answer is replayed, not repeated.',
    },
  );
  const listed = options.tools.filter((t) => toolAllowed(t, options.credential));
  const byName = new Map(options.tools.map((t) => [t.name, t]));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: listed.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: t.annotations,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(McpErrorCode.InvalidParams, `Unknown tool ${request.params.name}.`);
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const problem = argumentsProblem(tool, args);
    if (problem) {
      const refusal = new AppError('INVALID_REQUEST', `The tool's arguments are invalid: ${problem}.`, {
        remediation: `Call ${tool.name} with arguments matching its input schema (tools/list).`,
      });
      return toolResult({
        status: 400,
        body: JSON.stringify(errorBody(refusal, newId('req'), options.publicUrl)),
      });
    }
    // Out of the credential's scope: the API's guard refuses it, with its own error body.
    return toolResult(await options.call(requestOf(tool, args, options.authorization)));
  });
  const all = resources(options);
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: all.map(({ uri, name, description, mimeType }) => ({ uri, name, description, mimeType })),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const resource = all.find((r) => r.uri === request.params.uri);
    if (!resource) throw new McpError(McpErrorCode.InvalidParams, `Unknown resource ${request.params.uri}.`);
    return { contents: [{ uri: resource.uri, mimeType: resource.mimeType, text: await resource.read() }] };
  });
  return server;
}

/**
 * The credential behind an Authorization header, from GET /v1/auth/session; or the API's refusal
 * (its status and error body) when there is none.
 */
export async function credentialOf(
  call: ApiCaller,
  authorization: string,
): Promise<{ credential: ToolCredential } | { refusal: HttpAnswer }> {
  const answer = await call({ method: 'GET', url: '/v1/auth/session', headers: { authorization } });
  if (answer.status !== 200) return { refusal: answer };
  const { credential } = JSON.parse(answer.body) as { credential: ToolCredential };
  return { credential };
}
